/* The table of probe kinds (probes/kinds.c): every kind has its row, the
 * hooks its flags need, and is found by its names.  A row missing or
 * short of a hook would fail only when a script uses that kind. */
#include <stdbool.h>
#include <stdio.h>

#include "probes/kind.h"
#include "tests/unit/check.h"

int main(void)
{
	char name[96];
	for (unsigned kind = 0; kind < UT_PROBE_KIND_COUNT; kind++) {
		const struct probe_kind_def *def = probe_kind_def(kind);
		snprintf(name, sizeof(name), "kind_%u_has_a_row", kind);
		CHECK(name, def && def->kind == kind && def->name);
		if (!def)
			continue;
		snprintf(name, sizeof(name), "%s_found_by_name", def->name);
		CHECK(name, probe_kind_find(def->name) == def);
		if (def->short_name) {
			snprintf(name, sizeof(name), "%s_found_by_short_name", def->name);
			CHECK(name, probe_kind_find(def->short_name) == def);
		}
		snprintf(name, sizeof(name), "%s_compiles", def->name);
		CHECK(name, def->resolve && def->header);
		/* any kind may be an alternative of an attached probe */
		snprintf(name, sizeof(name), "%s_exists", def->name);
		CHECK(name, def->exists != NULL);
		if (def->runs == PROBE_ATTACHED) {
			snprintf(name, sizeof(name), "%s_attaches", def->name);
			CHECK(name, def->trial && def->attach);
		}
		snprintf(name, sizeof(name), "%s_lists", def->name);
		CHECK(name, !def->list == !def->list_args && (!def->wildcards || def->list));
		if (def->entry_kind) {
			snprintf(name, sizeof(name), "%s_says_where_args_are", def->name);
			CHECK(name, def->args_elsewhere && probe_kind_find(def->entry_kind));
		}
		if (def->info_target) {
			snprintf(name, sizeof(name), "%s_tried_by_info", def->name);
			CHECK(name, def->runs == PROBE_ATTACHED);
		}
	}
	char names[256];
	probe_kind_names(names, sizeof(names));
	CHECK_STR("names_for_messages", names,
		  "tracepoint, tp_btf, raw_tp, kprobe, kretprobe, fentry, fexit, uprobe, uretprobe, interval, BEGIN, END, profile, software, hardware or usdt");
	CHECK("unknown_kind", probe_kind_find("kprobee") == NULL);
	CHECK_DONE();
}
