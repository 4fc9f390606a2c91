/* A compiled program: appending to its user side; reading its formats.
 * (Freeing it follows the description of its fields: program_fields.c.) */
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "compiler/program.h"

const char *const ut_severity_names[UT_SEVERITIES] = {"info", "warn", "crit"};

const char *const ut_sched_value_names[UT_SV_COUNT] = {
	[UT_SV_CPU] = "cpu", [UT_SV_PID] = "pid", [UT_SV_TID] = "tid", [UT_SV_COMM] = "comm",
	[UT_SV_PREV_PID] = "prev_pid", [UT_SV_PREV_TID] = "prev_tid", [UT_SV_PREV_STATE] = "prev_state",
	[UT_SV_PREV_COMM] = "prev_comm", [UT_SV_NEXT_PID] = "next_pid", [UT_SV_NEXT_TID] = "next_tid",
	[UT_SV_NEXT_COMM] = "next_comm", [UT_SV_PREEMPT] = "preempt",
};

void ut_event_index_sched(struct ut_event *ev)
{
	memset(ev->sched_field, 0, sizeof(ev->sched_field));
	if (ev->op != UT_EV_SCHED_SWITCH && ev->op != UT_EV_SCHED_WAKEUP)
		return;
	for (unsigned v = 0; v < UT_SV_COUNT; v++)
		for (unsigned i = 0; i < ev->nargs; i++)
			if (ev->args[i].name && strcmp(ev->args[i].name, ut_sched_value_names[v]) == 0) {
				const struct ut_value *val = &ev->args[i].value;
				if (val->kind == UT_VAL_FIELD && val->field < ev->nfields && val->field < UINT16_MAX)
					ev->sched_field[v] = (uint16_t)(val->field + 1);
				break;
			}
}

unsigned ut_program_add_uexpr(struct ut_program *p, const struct ut_uexpr *e)
{
	p->uexprs = xrealloc_array(p->uexprs, p->nuexprs + 1, sizeof(*p->uexprs));
	p->uexprs[p->nuexprs] = *e;
	p->uexprs[p->nuexprs].text = e->text ? xstrdup(e->text) : NULL;
	return p->nuexprs++;
}

unsigned ut_program_add_ustmts(struct ut_program *p, const struct ut_ustmt *s, unsigned n)
{
	p->ustmts = xrealloc_array(p->ustmts, p->nustmts + n, sizeof(*p->ustmts));
	memcpy(p->ustmts + p->nustmts, s, n * sizeof(*s));
	p->nustmts += n;
	return p->nustmts - n;
}

unsigned ut_program_add_ukeys(struct ut_program *p, const unsigned *exprs, unsigned n)
{
	p->ukeys = xrealloc_array(p->ukeys, p->nukeys + n, sizeof(*p->ukeys));
	memcpy(p->ukeys + p->nukeys, exprs, n * sizeof(*exprs));
	p->nukeys += n;
	return p->nukeys - n;
}

unsigned ut_uexpr_operands(const struct ut_uexpr *e, unsigned ops[3])
{
	ops[0] = e->a;
	ops[1] = e->b;
	ops[2] = e->c;
	switch (e->op) {
	case UT_UX_INT: case UT_UX_STR: case UT_UX_CAPTURED: case UT_UX_HEADER: case UT_UX_LOCAL: case UT_UX_MAP:
	case UT_UX_PERCENTILE: case UT_UX_ENUM:
		return 0;
	case UT_UX_NEG: case UT_UX_NOT: case UT_UX_BITNOT: case UT_UX_BOOL: case UT_UX_TRUNC: case UT_UX_STR_INT:
		return 1;
	case UT_UX_COND:
		return 3;
	default:   /* two: integers, or strings compared */
		return 2;
	}
}

const char *ut_format_next(const char *p, struct ut_directive *d)
{
	for (; (p = strchr(p, '%')); p++) {
		if (p[1] == '%') {
			p++;
			continue;
		}
		*d = ut_format_directive(p);
		return p;
	}
	return NULL;
}

struct ut_directive ut_format_directive(const char *p)
{
	struct ut_directive d = {.len = 1};
	unsigned long number = 0;
	for (; p[d.len] && strchr(UT_FORMAT_FLAGS, p[d.len]); d.len++) {
		char ch = p[d.len];
		if (ch < '0' || ch > '9') {
			number = 0;
			continue;
		}
		/* saturated: only whether it passes UT_FORMAT_MAX_WIDTH matters */
		number = number > UT_FORMAT_MAX_WIDTH ? number : number * 10 + (unsigned long)(ch - '0');
		if (number > d.widest)
			d.widest = number;
	}
	d.conv = p[d.len];
	if (d.conv)
		d.len++;
	return d;
}
