/* Freeing a compiled program; appending to its user side; reading its
 * formats. */
#include <stdlib.h>
#include <string.h>

#include "compiler/compiler.h"
#include "compiler/program.h"

static void value_free(struct ut_value *v)
{
	for (unsigned i = 0; i < v->nfmt; i++)
		value_free(&v->fmt[i]);
	free(v->fmt);
	free(v->text);
}

void ut_program_free(struct ut_program *p)
{
	if (!p)
		return;
	free(p->bpf_c);
	for (unsigned i = 0; i < p->nprobes; i++) {
		for (unsigned a = 0; a < p->probes[i].nalts; a++) {
			free(p->probes[i].alts[a].target);
			free(p->probes[i].alts[a].prog_name);
			free(p->probes[i].alts[a].signature);
		}
		free(p->probes[i].alts);
		free(p->probes[i].spec);
	}
	free(p->probes);
	for (unsigned i = 0; i < p->nevents; i++) {
		struct ut_event *e = &p->events[i];
		free(e->fields);
		free(e->category);
		value_free(&e->name);
		value_free(&e->group_key);
		value_free(&e->key);
		for (unsigned a = 0; a < e->nargs; a++) {
			free(e->args[a].name);
			value_free(&e->args[a].value);
		}
		free(e->args);
		free(e->locals);
	}
	free(p->events);
	for (unsigned i = 0; i < p->ngroups; i++)
		free(p->groups[i]);
	free(p->groups);
	for (unsigned i = 0; i < p->nflows; i++)
		free(p->flows[i]);
	free(p->flows);
	for (unsigned i = 0; i < p->ntables; i++) {
		for (unsigned e = 0; e < p->tables[i].nentries; e++)
			free(p->tables[i].entries[e].name);
		free(p->tables[i].entries);
		free(p->tables[i].name);
	}
	free(p->tables);
	for (unsigned i = 0; i < p->nmaps; i++) {
		struct ut_map *m = &p->maps[i];
		free(m->name);
		free(m->bpf_name);
		free(m->keys);
		for (unsigned k = 0; k < m->nkeys; k++)
			value_free(&m->key_show[k]);
		free(m->key_show);
		value_free(&m->value_show);
		for (unsigned k = 0; k < m->ntuple; k++)
			value_free(&m->tuple_show[k]);
		free(m->tuple_fields);
		free(m->tuple_show);
	}
	free(p->maps);
	for (unsigned i = 0; i < p->nstrings; i++)
		free(p->strings[i]);
	free(p->strings);
	for (unsigned i = 0; i < p->ndisks; i++)
		free(p->disks[i].name);
	free(p->disks);
	for (unsigned i = 0; i < p->nuexprs; i++)
		free(p->uexprs[i].text);
	free(p->uexprs);
	free(p->ustmts);
	free(p->ukeys);
	free(p);
}

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
