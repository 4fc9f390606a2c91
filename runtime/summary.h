/* Printing the script's maps at exit: text like bpftrace (log2 histograms
 * drawn in ASCII) or JSON. */
#ifndef UT_SUMMARY_H
#define UT_SUMMARY_H
#include <stdbool.h>
#include <stdio.h>

#include "compiler/aggregations.h"
#include "compiler/program.h"

struct bpf_object;
struct ut_user_maps;

/* Prints every map of prog: BPF maps from the loaded object, user-side
 * maps from the reader's tables (user). */
void ut_print_maps(const struct ut_program *prog, struct bpf_object *obj, const struct ut_user_maps *user, FILE *out);
/* The version of --json's document (docs/json.md): a new one when a field
 * changes its meaning or goes; fields may be added within a version. */
#define UT_JSON_SCHEMA 1

/* The maps as a JSON object {"@name": [...], ...}, private ones left out. */
void ut_maps_json(const struct ut_program *prog, struct bpf_object *obj, const struct ut_user_maps *user, FILE *out);
/* The maps in Prometheus's text format (the metrics endpoint): counts as
 * counters, hist() and lhist() as histograms (in seconds when the map's
 * name ends in _ns, _us, _ms or _s), other numbers as gauges; a map's keys
 * are labels named after the expressions that gave them.  Private maps,
 * text values and tuples are left out. */
void ut_maps_prometheus(const struct ut_program *prog, struct bpf_object *obj, const struct ut_user_maps *user,
			FILE *out);
/* A label's value in that format: quoted, \\, \" and \n escaped. */
void ut_prometheus_label_value(FILE *out, const char *s);
/* One entry of a map as numbers (ut_map_visit): its keys' text (", "
 * between them), the number the summary shows (an average for avg() and
 * stats()), and for a histogram the bucket it counts. */
struct ut_map_row {
	const char *key;
	int64_t value;
	bool bucket;
	uint64_t index;
	struct ut_bucket_bounds bounds;
};
/* Calls row for each entry of map i, in no order; maps of text values or
 * tuples give none. */
void ut_map_visit(const struct ut_program *prog, unsigned i, struct bpf_object *obj, const struct ut_user_maps *user,
		  void (*row)(void *ctx, const struct ut_map_row *r), void *ctx);
/* print(@x, top, div): the map named name ("@x") as bpftrace prints it,
 * its top entries (all: 0), aggregations divided by div (0, 1: not). */
void ut_print_map_named(const struct ut_program *prog, struct bpf_object *obj, const struct ut_user_maps *user,
			const char *name, uint64_t top, uint64_t div, FILE *out);
/* clear(@x): deletes every entry of the map named name. */
void ut_clear_map(const struct ut_program *prog, struct bpf_object *obj, struct ut_user_maps *user, const char *name);
/* zero(@x): every entry of the map named name keeps its key, its value
 * zeros (a count or sum of 0; a slot a keyless count never hit). */
void ut_zero_map(const struct ut_program *prog, struct bpf_object *obj, struct ut_user_maps *user, const char *name);
/* A copy of a map's entries as a script reads them: n entries of stride
 * bytes, each its key, then at value_offset its value: a plain value as
 * it is (a string's bytes), an aggregation's number as an s64 (a
 * histogram's: its bucket's count, the bucket in the key's last 8 bytes). */
struct ut_map_entries {
	unsigned char *entries;
	uint32_t n, stride, value_offset;
};
/* Map i's entries, from the reader's table or the kernel's map; false
 * when it cannot be read (out is then empty). */
bool ut_map_entries_read(const struct ut_program *prog, unsigned i, struct bpf_object *obj,
			 const struct ut_user_maps *user, struct ut_map_entries *out);
void ut_map_entries_free(struct ut_map_entries *es);
/* Whether m, a BPF hash map, holds all the entries it can: the kernel then
 * refused new keys, without a word (the probes are detached: nothing
 * writes it meanwhile). */
bool ut_kernel_map_full(const struct ut_map *m, struct bpf_object *obj);


#endif
