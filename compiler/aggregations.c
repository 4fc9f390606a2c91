/* Aggregations: one row each, and the arithmetic of their slots in user
 * space (the same as BPF's: bpf/records.h). */
#include <inttypes.h>
#include <linux/types.h>
#include <stdio.h>
#include <string.h>

#include "bpf/records.h"
#include "compiler/aggregations.h"

/* count, sum, buckets: an __s64 that adds (wrapping, as in BPF) */
static void take_add(void *slot, int64_t v)
{
	int64_t *p = slot;
	*p = (int64_t)((uint64_t)*p + (uint64_t)v);
}
static void take_avg(void *slot, int64_t v) { ut_avg_take(slot, v); }
static void take_min(void *slot, int64_t v) { ut_minmax_take(slot, v, 1); }
static void take_max(void *slot, int64_t v) { ut_minmax_take(slot, v, 0); }

static uint64_t bucket_log2(int64_t v, const struct ut_map *m)
{
	(void)m;
	return ut_log2_bucket(v);
}
static uint64_t bucket_linear(int64_t v, const struct ut_map *m)
{
	return ut_lin_bucket(v, m->lhist_min, m->lhist_max, m->lhist_step);
}

/* Sums and counts add; an {avg} adds both. */
static void combine_add(struct ut_avg *total, const struct ut_avg *cpu)
{
	total->sum = (__s64)((__u64)total->sum + (__u64)cpu->sum);
	total->count += cpu->count;
}
/* A CPU that never saw the key has its slot unset. */
static void combine_min(struct ut_avg *total, const struct ut_avg *cpu)
{
	if (cpu->count)
		ut_minmax_take(total, cpu->sum, 1);
}
static void combine_max(struct ut_avg *total, const struct ut_avg *cpu)
{
	if (cpu->count)
		ut_minmax_take(total, cpu->sum, 0);
}

static int64_t shown_value(const struct ut_avg *total) { return total->sum; }
static int64_t shown_mean(const struct ut_avg *total)
{
	return total->count ? total->sum / (int64_t)total->count : 0;
}

/* 4096 as "4K": powers of 1024 by their unit */
static void human(uint64_t v, char *buf, size_t len)
{
	static const char *units[] = {"", "K", "M", "G", "T", "P"};
	int u = 0;
	while (v >= 1024 && v % 1024 == 0 && u < 5) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, "%" PRIu64 "%s", v, units[u]);
}

static void label_log2(const struct ut_map *m, uint64_t b, char *buf, size_t len)
{
	(void)m;
	char lo[32], hi[32];
	if (b == 0) {
		snprintf(buf, len, "(..., 0)");
	} else if (b == 1) {
		snprintf(buf, len, "[0]");
	} else if (b == 2) {
		snprintf(buf, len, "[1]");
	} else {
		human(1ULL << (b - 2), lo, sizeof(lo));
		human(b - 1 >= 64 ? UINT64_MAX : 1ULL << (b - 1), hi, sizeof(hi));
		snprintf(buf, len, "[%s, %s)", lo, hi);
	}
}

static void bounds_log2(const struct ut_map *m, uint64_t b, struct ut_bucket_bounds *out)
{
	(void)m;
	if (b == 0)
		*out = (struct ut_bucket_bounds){.max = -1, .has_max = true};
	else if (b == 1 || b == 2)
		*out = (struct ut_bucket_bounds){.min = (int64_t)b - 1, .max = (int64_t)b - 1, .has_min = true, .has_max = true};
	else
		*out = (struct ut_bucket_bounds){.min = (int64_t)(1ULL << (b - 2)),
						 .max = b - 1 >= 63 ? INT64_MAX : (int64_t)((1ULL << (b - 1)) - 1),
						 .has_min = true, .has_max = true};
}

static void bounds_linear(const struct ut_map *m, uint64_t b, struct ut_bucket_bounds *out)
{
	int64_t nb = (int64_t)ut_lin_bucket(m->lhist_max, m->lhist_min, m->lhist_max, m->lhist_step) - 1;
	if (b == 0)
		*out = (struct ut_bucket_bounds){.max = m->lhist_min - 1, .has_max = true};
	else if ((int64_t)b > nb)
		*out = (struct ut_bucket_bounds){.min = m->lhist_max, .has_min = true};
	else
		*out = (struct ut_bucket_bounds){.min = m->lhist_min + ((int64_t)b - 1) * m->lhist_step,
						 .max = m->lhist_min + (int64_t)b * m->lhist_step - 1, .has_min = true,
						 .has_max = true};
}

static void label_linear(const struct ut_map *m, uint64_t b, char *buf, size_t len)
{
	/* the buckets inside: the last one's number, less one */
	int64_t nb = (int64_t)ut_lin_bucket(m->lhist_max, m->lhist_min, m->lhist_max, m->lhist_step) - 1;
	if (b == 0)
		snprintf(buf, len, "(..., %" PRId64 ")", m->lhist_min);
	else if ((int64_t)b > nb)
		snprintf(buf, len, "[%" PRId64 ", ...)", m->lhist_max);
	else
		snprintf(buf, len, "[%" PRId64 ", %" PRId64 ")", m->lhist_min + ((int64_t)b - 1) * m->lhist_step,
			 m->lhist_min + (int64_t)b * m->lhist_step);
}

/* stats(): its count, average and total, as bpftrace prints them */
static void text_stats(const struct ut_avg *total, char *buf, size_t len)
{
	snprintf(buf, len, "count %" PRIu64 ", average %" PRId64 ", total %" PRId64, (uint64_t)total->count,
		 shown_mean(total), (int64_t)total->sum);
}

static void json_stats(const struct ut_avg *total, char *buf, size_t len)
{
	snprintf(buf, len, "{\"count\":%" PRIu64 ",\"average\":%" PRId64 ",\"total\":%" PRId64 "}",
		 (uint64_t)total->count, shown_mean(total), (int64_t)total->sum);
}

const struct ut_agg_kind ut_aggs[] = {
	[UT_AGG_COUNT] = {.name = "count", .nargs = 0, .value_size = 8, .zero_is_unset = true,
			  .bpf_take = "ut_agg_add", .take = take_add, .combine = combine_add, .shown = shown_value},
	[UT_AGG_SUM] = {.name = "sum", .nargs = 1, .value_size = 8,
			.bpf_take = "ut_agg_add", .take = take_add, .combine = combine_add, .shown = shown_value},
	[UT_AGG_AVG] = {.name = "avg", .nargs = 1, .value_size = 16, .zero_is_unset = true,
			.bpf_take = "ut_agg_avg", .take = take_avg, .combine = combine_add, .shown = shown_mean},
	[UT_AGG_MIN] = {.name = "min", .nargs = 1, .value_size = 16, .zero_is_unset = true,
			.bpf_take = "ut_agg_min", .take = take_min, .combine = combine_min, .shown = shown_value},
	[UT_AGG_MAX] = {.name = "max", .nargs = 1, .value_size = 16, .zero_is_unset = true,
			.bpf_take = "ut_agg_max", .take = take_max, .combine = combine_max, .shown = shown_value},
	[UT_AGG_HIST] = {.name = "hist", .nargs = 1, .value_size = 8, .zero_is_unset = true,
			 .bpf_take = "ut_agg_add", .bpf_bucket = "ut_log2_bucket", .take = take_add,
			 .bucket = bucket_log2, .combine = combine_add, .shown = shown_value, .bucket_label = label_log2,
			 .bucket_bounds = bounds_log2},
	[UT_AGG_LHIST] = {.name = "lhist", .nargs = 4, .value_size = 8, .zero_is_unset = true,
			  .bpf_take = "ut_agg_add", .bpf_bucket = "ut_lin_bucket", .take = take_add,
			  .bucket = bucket_linear, .combine = combine_add, .shown = shown_value,
			  .bucket_label = label_linear, .bucket_bounds = bounds_linear},
	/* plain values: shared maps, one copy (strings: their own size) */
	[UT_AGG_LAST] = {.nargs = 1, .value_size = 8, .combine = combine_add, .shown = shown_value},
	[UT_AGG_STATS] = {.name = "stats", .nargs = 1, .value_size = 16, .zero_is_unset = true,
			  .bpf_take = "ut_agg_avg", .take = take_avg, .combine = combine_add, .shown = shown_mean,
			  .value_text = text_stats, .value_json = json_stats},
};

const struct ut_agg_kind *ut_agg_named(const char *name)
{
	for (unsigned i = 0; i < UT_AGG_KINDS; i++)
		if (ut_aggs[i].name && strcmp(ut_aggs[i].name, name) == 0)
			return &ut_aggs[i];
	return NULL;
}

const struct ut_summary_percentile ut_summary_percentiles[UT_SUMMARY_PERCENTILES] = {
	{"p50", 500000}, {"p90", 900000}, {"p99", 990000}, {"p99.9", 999000},
};

int64_t ut_hist_percentile(const struct ut_map *m, const uint64_t *buckets, const int64_t *counts, size_t n,
			   uint32_t ppm)
{
	uint64_t total = 0;
	for (size_t i = 0; i < n; i++)
		total += counts[i] > 0 ? (uint64_t)counts[i] : 0;
	if (!total)
		return 0;
	unsigned __int128 scaled = (unsigned __int128)total * (ppm < UT_PERCENTILE_WHOLE ? ppm : UT_PERCENTILE_WHOLE);
	uint64_t rank = (uint64_t)((scaled + UT_PERCENTILE_WHOLE - 1) / UT_PERCENTILE_WHOLE), seen = 0;
	if (rank < 1)
		rank = 1;
	for (size_t i = 0; i < n; i++) {
		uint64_t c = counts[i] > 0 ? (uint64_t)counts[i] : 0;
		if (seen + c < rank) {
			seen += c;
			continue;
		}
		struct ut_bucket_bounds b;
		ut_aggs[m->agg].bucket_bounds(m, buckets[i], &b);
		if (!b.has_min)
			return b.max;
		if (!b.has_max)
			return b.min;
		__int128 width = (__int128)b.max - b.min;
		return (int64_t)(b.min + width * (__int128)(rank - seen) / (__int128)c);
	}
	return 0;
}
