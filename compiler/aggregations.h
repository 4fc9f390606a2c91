/* Aggregations: a row each of ut_aggs[] (aggregations.c), indexed by enum
 * ut_agg (program.h).  The compiler checks a call and writes the kernel's
 * update from its row; the reader's maps take values and the summary
 * combines and prints them from it.  A new aggregation is a row, and the
 * functions its slot needs if no other row has them. */
#ifndef UT_AGGREGATIONS_H
#define UT_AGGREGATIONS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "compiler/program.h"

struct ut_avg;   /* a slot of a value and a count (bpf/records.h) */

/* A histogram bucket's values: min to max, both included; a bucket
 * without a lower (values below the first) or upper bound has none. */
struct ut_bucket_bounds {
	int64_t min, max;
	bool has_min, has_max;
};

struct ut_agg_kind {
	const char *name;           /* the script's function: "avg" (NULL: plain values) */
	unsigned nargs;             /* the value, then constant bounds (lhist: min, max, step) */
	uint32_t value_size;        /* a key's slot: 8, an __s64; 16, struct ut_avg */
	/* a slot of zeros was never taken a value (a sum of zeros is one):
	 * the map of a keyless one is a per-CPU array's slot */
	bool zero_is_unset;
	/* the kernel's update: bpf/ut.h's function taking a value into a
	 * key's slot, f(map, key, v); with a bucket function (bpf/records.h)
	 * of the value (and the bounds), the key ends in the value's bucket
	 * and the slot takes 1 */
	const char *bpf_take;
	const char *bpf_bucket;
	/* user space: the reader's maps take a value into a slot as BPF does
	 * (a bucketed one takes 1 in the bucket's key) */
	void (*take)(void *slot, int64_t v);
	uint64_t (*bucket)(int64_t v, const struct ut_map *m);
	/* the summary: one CPU's slot into the total, the number it prints
	 * (and sorts by), and a bucket's label */
	void (*combine)(struct ut_avg *total, const struct ut_avg *cpu);
	int64_t (*shown)(const struct ut_avg *total);
	void (*bucket_label)(const struct ut_map *m, uint64_t bucket, char *buf, size_t len);
	void (*bucket_bounds)(const struct ut_map *m, uint64_t bucket, struct ut_bucket_bounds *out);
	/* a total that is more than one number (stats): its text, and its
	 * JSON object; NULL: the number shown */
	void (*value_text)(const struct ut_avg *total, char *buf, size_t len);
	void (*value_json)(const struct ut_avg *total, char *buf, size_t len);
};

extern const struct ut_agg_kind ut_aggs[UT_AGG_KINDS];

/* Percentiles in parts per million: p50 is 500000, p99.9 999000. */
#define UT_PERCENTILE_WHOLE 1000000u
/* The summary's: p50, p90, p99 and p99.9. */
#define UT_SUMMARY_PERCENTILES 4
extern const struct ut_summary_percentile {
	const char *name;   /* "p99.9" */
	uint32_t ppm;
} ut_summary_percentiles[UT_SUMMARY_PERCENTILES];

/* A histogram's value at a percentile (ppm of its values are at or below
 * it), from its n buckets (ascending, each with its count): the bucket
 * holding the value of rank ceil(total * ppm / 10^6), the k-th of the c
 * values of its bucket [min, max], is min + (max - min) * k / c; an open
 * bucket gives its one bound.  0 for no values. */
int64_t ut_hist_percentile(const struct ut_map *m, const uint64_t *buckets, const int64_t *counts, size_t n,
			   uint32_t ppm);
/* The aggregation called name, or NULL. */
const struct ut_agg_kind *ut_agg_named(const char *name);

#endif
