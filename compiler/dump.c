/* --dump typed and --dump resources: what the check and resources passes
 * leave, as text for people (and the tests in tests/compiler/dump). */
#include <stdio.h>
#include <string.h>

#include "compiler/aggregations.h"
#include "compiler/passes.h"

static void alt_title(const struct alt_ctx *a, FILE *f)
{
	fprintf(f, "# probe %u alternative %u: %s (%s%s%s)\n", a->probe_index, (unsigned)(a->alt - a->probe->alts),
		a->spec, probe_kind_name(a->alt->kind), a->target[0] ? " " : "", a->target);
}

static void maps_typed(const struct compiler *c, FILE *f)
{
	char buf[64];
	for (unsigned i = 0; i < c->nmaps; i++) {
		const struct map_info *m = &c->maps[i];
		fprintf(f, "map %u %s[", i, m->name);
		for (unsigned k = 0; k < m->nkeys; k++)
			fprintf(f, "%s%s", k ? ", " : "", type_text(&m->key_types[k], buf, sizeof(buf)));
		if (m->kind == MAP_AGG)
			fprintf(f, "] = %s()", ut_aggs[m->agg].name);
		else
			fprintf(f, "] : %s", type_text(&m->value_type, buf, sizeof(buf)));
		fprintf(f, "%s%s\n", m->is_private ? " private" : "", m->is_lru ? " lru" : "");
	}
}

void dump_typed(struct compiler *c, FILE *f)
{
	char buf[64];
	for (unsigned i = 0; i < c->nalts; i++) {
		const struct alt_ctx *a = c->alts[i];
		alt_title(a, f);
		for (unsigned j = 0; j < a->nargs; j++)
			fprintf(f, "arg %u %s : %s\n", j, a->args[j].name, type_text(&a->args[j].type, buf, sizeof(buf)));
		for (unsigned j = 0; j < a->ncomputed_args; j++) {
			fprintf(f, "computed arg %u %s =\n", j, a->computed_args[j].field->str);
			ast_dump(a->computed_args[j].value, 1, true, f);
		}
		for (unsigned j = 0; j < a->nlocals; j++)
			fprintf(f, "local %u %s : %s\n", j, a->locals[j].name, type_text(&a->locals[j].type, buf, sizeof(buf)));
		if (a->pred) {
			fprintf(f, "predicate\n");
			ast_dump(a->pred, 1, true, f);
		}
		ast_dump(a->block, 0, true, f);
	}
	maps_typed(c, f);
}

static const char *const field_types[] = {
	[UT_F_S64] = "s64", [UT_F_U64] = "u64", [UT_F_BOOL] = "bool", [UT_F_PTR] = "ptr", [UT_F_STR] = "str",
};

static const char *const displays[UT_SHOW_COUNT] = {
	[UT_SHOW_PLAIN] = "plain", [UT_SHOW_HEX] = "hex", [UT_SHOW_KOID] = "koid", [UT_SHOW_ERRNO] = "errno",
	[UT_SHOW_TABLE] = "table", [UT_SHOW_DISK] = "disk", [UT_SHOW_KSTACK] = "kstack", [UT_SHOW_USTACK] = "ustack",
	[UT_SHOW_STRING] = "string", [UT_SHOW_TIME] = "time", [UT_SHOW_KSYM] = "ksym",
	[UT_SHOW_USYM] = "usym",
};

static const char *const event_ops[UT_EV_OP_COUNT] = {
	[UT_EV_SLICE_BEGIN] = "slice begin", [UT_EV_SLICE_END] = "slice end", [UT_EV_INSTANT] = "instant",
	[UT_EV_COUNTER] = "counter", [UT_EV_FLOW_BEGIN] = "flow begin", [UT_EV_FLOW_STEP] = "flow step",
	[UT_EV_FLOW_END] = "flow end", [UT_EV_SPAN_BEGIN] = "span begin", [UT_EV_SPAN_PHASE] = "span phase",
	[UT_EV_SPAN_END] = "span end", [UT_EV_GROUP_NAME] = "track name", [UT_EV_PRINT] = "printf", [UT_EV_CAT] = "cat",
	[UT_EV_EXIT] = "exit", [UT_EV_CLEAR] = "clear", [UT_EV_HIT] = "hit", [UT_EV_SNAPSHOT] = "snapshot",
	[UT_EV_PRINT_MAP] = "print map", [UT_EV_ZERO] = "zero", [UT_EV_TIME] = "time", [UT_EV_JOIN] = "join",
	[UT_EV_SCHED_SWITCH] = "context switch", [UT_EV_SCHED_WAKEUP] = "wakeup", [UT_EV_FINDING] = "finding",
};

static void value_dump(const struct ut_value *v, FILE *f)
{
	switch (v->kind) {
	case UT_VAL_FIELD:
		fprintf(f, "f%u %s", v->field, displays[v->display]);
		if (v->display == UT_SHOW_TABLE)
			fprintf(f, " %d", v->table);
		else if (v->display == UT_SHOW_TIME)
			fprintf(f, " \"%s\"", v->text);
		break;
	case UT_VAL_TEXT: fprintf(f, "\"%s\"", v->text); break;
	case UT_VAL_FORMAT:
		fprintf(f, "format \"%s\"", v->text);
		for (unsigned i = 0; i < v->nfmt; i++) {
			fprintf(f, i ? ", " : " of ");
			value_dump(&v->fmt[i], f);
		}
		break;
	default: fprintf(f, "none"); break;
	}
}

/* The statements of a body that send the stage first: records after a
 * loop, and loops whose records may not all fit. */
static enum walk_next stage_dump(struct node *n, void *ctx)
{
	FILE *f = ctx;
	if (n->kind == N_FOR && n->stage_bytes)
		fprintf(f, "  for @%d:%d: %u bytes an iteration%s\n", n->loc.line, n->loc.col, n->stage_bytes,
			n->stage_full ? ", each sends a full stage first" : "");
	else if (n->stage_full)
		fprintf(f, "  %s @%d:%d: sends a full stage first\n", node_kind_name(n->kind), n->loc.line, n->loc.col);
	return WALK_INTO;
}

static const char *const storages[] = {
	[MAP_SHARED_HASH] = "hash", [MAP_PERCPU_HASH] = "per-CPU hash", [MAP_PERCPU_SLOT] = "per-CPU slot",
};

void dump_resources(struct compiler *c, FILE *f)
{
	const struct ut_program *p = c->prog;
	for (unsigned i = 0; i < p->nmaps; i++) {
		const struct ut_map *m = &p->maps[i];
		fprintf(f, "map %u %s: %s%s, key %u bytes {", i, m->name, m->is_lru ? "LRU " : "",
			storages[c->maps[i].storage], m->key_size);
		for (unsigned k = 0; k < m->nkeys; k++)
			fprintf(f, "%s%s at %u", k ? ", " : " ", field_types[m->keys[k].type], m->keys[k].offset);
		fprintf(f, " }, value %u bytes\n", m->value_size);
	}
	for (unsigned i = 0; i < p->nevents; i++) {
		const struct ut_event *ev = &p->events[i];
		fprintf(f, "event %u @%d:%d: %s, %u bytes {", i, ev->loc.line, ev->loc.col, event_ops[ev->op], ev->size);
		for (unsigned k = 0; k < ev->nfields; k++)
			fprintf(f, "%s%s[%u] at %u", k ? ", " : " ", field_types[ev->fields[k].type], ev->fields[k].size,
				ev->fields[k].offset);
		fprintf(f, " }\n  name ");
		value_dump(&ev->name, f);
		if (ev->group >= 0) {
			fprintf(f, "\n  track %s ", p->groups[ev->group]);
			value_dump(&ev->group_key, f);
		}
		if (ev->flow >= 0) {
			fprintf(f, "\n  flow %s ", p->flows[ev->flow]);
			value_dump(&ev->key, f);
		}
		for (unsigned k = 0; k < ev->nargs; k++) {
			fprintf(f, "\n  arg %s ", ev->args[k].name);
			value_dump(&ev->args[k].value, f);
		}
		fprintf(f, "\n");
	}
	for (unsigned i = 0; i < c->nalts; i++) {
		const struct alt_ctx *a = c->alts[i];
		alt_title(a, f);
		fprintf(f, "stage %u bytes", a->stage.bytes);
		if (a->stage.reloads)
			fprintf(f, ", offsets through the stage under %#x", a->stage.off_mask);
		fprintf(f, "; %u path() buffers\n", a->path_calls);
		walk_list(a->block, &(struct walker){.expansions = true, .pre = stage_dump, .ctx = f});
	}
	fprintf(f, "largest stage %u bytes, %u path() buffers, stacks %s\n", c->max_stage_bytes, c->path_slots,
		c->uses_stacks ? "yes" : "no");
}

/* --dump placement: the side of each statement, local and map, and why
 * what is in the kernel is there (placement.c). */

static void placed_dump(const struct placed *p, FILE *f)
{
	if (p->why)
		fprintf(f, "kernel: %s (%s:%d:%d)\n", p->why, p->at.file, p->at.line, p->at.col);
	else
		fprintf(f, "reader\n");
}

static void sides_dump(const struct node *n, int depth, FILE *f)
{
	for (; n; n = n->next) {
		if (n->kind == N_BLOCK) {
			sides_dump(n->a, depth, f);
			continue;
		}
		bool macro = n->kind == N_EXPR_STMT && calls_function(stmt_call(n));
		char sides[32] = "";
		static const char *const names[] = {"kernel", "reader", "captures"};
		for (unsigned b = 0; b < 3; b++)
			if (n->side & (1u << b))
				snprintf(sides + strlen(sides), sizeof(sides) - strlen(sides), "%s%s", sides[0] ? "+" : "", names[b]);
		fprintf(f, "%*s%-22s %s%s%s @%d:%d\n", depth * 2 + 2, "", sides[0] ? sides : "-", node_kind_name(n->kind),
			macro || n->kind == N_EXPR_STMT ? " " : "", macro || n->kind == N_EXPR_STMT ? n->a->str : "",
			n->loc.line, n->loc.col);
		if (macro)
			sides_dump(n->a->resolved, depth + 1, f);
		else if (n->kind == N_IF) {
			sides_dump(n->b, depth + 1, f);
			if (n->c) {
				fprintf(f, "%*selse\n", depth * 2 + 2, "");
				sides_dump(n->c, depth + 1, f);
			}
		} else if (n->kind == N_FOR || n->kind == N_FOR_MAP)
			sides_dump(n->c, depth + 1, f);
	}
}

void dump_placement(struct compiler *c, FILE *f)
{
	const struct ut_program *p = c->prog;
	char buf[64];
	if (c->opts->no_trace)
		fprintf(f, "# no trace (--summary-only): %u trace statements compiled out, %u writes of maps nothing "
			"reads then, %u probes left out (they only drew)\n", c->compiled_out, c->dead_writes, c->probes_idle);
	for (unsigned i = 0; i < c->nalts; i++) {
		const struct alt_ctx *a = c->alts[i];
		alt_title(a, f);
		if (a->all_kernel.why) {
			fprintf(f, "all in the kernel: %s (%s:%d:%d)\n", a->all_kernel.why, a->all_kernel.at.file,
				a->all_kernel.at.line, a->all_kernel.at.col);
		} else {
			const struct ut_event *hit = &p->events[a->hit_event];
			fprintf(f, "hit record: event %d, %u bytes, %u captured values\n", a->hit_event, hit->size,
				a->ncaptures);
			for (unsigned k = 0; k < a->ncaptures; k++)
				fprintf(f, "  f%u %s @%d:%d%s\n", k, type_text(&a->captures[k]->type, buf, sizeof(buf)),
					a->captures[k]->loc.line, a->captures[k]->loc.col,
					a->captured[k] == CAPTURED_FIRST ? ", as the record is reserved"
					: a->captured[k] == CAPTURED_AT_SET ? ", as its local is set" : "");
		}
		for (unsigned j = 0; j < a->nlocals; j++) {
			fprintf(f, "local %s: ", a->locals[j].name);
			placed_dump(&a->locals[j].kernel, f);
		}
		sides_dump(a->block, 0, f);
	}
	for (unsigned i = 0; i < c->nmaps; i++) {
		fprintf(f, "map %u %s: ", i, c->maps[i].name);
		placed_dump(&c->maps[i].kernel, f);
		if (c->maps[i].memo >= 0)
			fprintf(f, "  its reads remembered per CPU until it is written (slot %d)\n", c->maps[i].memo);
	}
	for (unsigned i = 0; i < p->nflows; i++)
		if (c->flow_in_reader[i])
			fprintf(f, "flow %s: sampled by the reader\n", p->flows[i]);
}

/* --dump reuse: the map reads whose value the kernel's C holds already,
 * and the values it keeps for them (reuse.c). */

static enum walk_next reuse_dump(struct node *n, void *ctx)
{
	static const char *const what[] = {
		[REUSE_OFFERED] = "the predicate's look-up, ut_pread_%u: the body does not take it",
		[REUSE_KEPT] = "the predicate's look-up, kept in ut_pread_%u for the body",
		[REUSE_PREDICATE] = "the predicate's value, ut_pread_%u",
		[REUSE_ADDED] = "the value the add before it left, ut_added_%u",
		[REUSE_ADD] = "an add, its value left in ut_added_%u",
	};
	FILE *f = ctx;
	if (n->reuse == REUSE_NONE)
		return WALK_INTO;
	fprintf(f, "  %s @%d:%d: ", n->kind == N_MAP_ASSIGN ? n->a->str : n->str, n->loc.line, n->loc.col);
	fprintf(f, what[n->reuse], n->reuse_var);
	fputc('\n', f);
	return WALK_INTO;
}

void dump_reuse(struct compiler *c, FILE *f)
{
	for (unsigned i = 0; i < c->nalts; i++) {
		struct alt_ctx *a = c->alts[i];
		const struct walker dump = {.expansions = true, .pre = reuse_dump, .ctx = f};
		alt_title(a, f);
		fprintf(f, "predicate look-ups the body may take: %u; adds: %u\n", a->npred_reads, a->nadded);
		if (a->pred)
			walk_tree(a->pred, &dump);
		for (unsigned j = 0; j < a->ncomputed_args; j++)
			walk_tree(a->computed_args[j].value, &dump);
		walk_list(a->block, &dump);
	}
}
