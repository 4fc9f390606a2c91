/* The live view (--live[=INTERVAL]): every interval, what each of the
 * script's maps did in it: counts as rates a second, histograms as their
 * values a second and the interval's p50, p99 and p99.9, other numbers as
 * they are; and the findings made so far.  On a terminal it redraws one
 * screen in place; elsewhere it prints one plain block an interval. */
#ifndef UT_LIVE_H
#define UT_LIVE_H
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "compiler/program.h"

struct bpf_object;
struct ut_findings;
struct ut_user_maps;
struct ut_live;

/* tracing: a trace is written (the headline's rate is its events'); without
 * one (--summary-only) the kernel counts most hits itself and the rate is
 * of the records the reader still gets. */
struct ut_live *ut_live_new(const struct ut_program *prog, FILE *out, bool tracing);
/* Draws the interval of dt seconds that ends now (its first starts with
 * the trace); events and lost: the tracer's totals so far. */
void ut_live_draw(struct ut_live *l, struct bpf_object *obj, const struct ut_user_maps *user,
		  struct ut_findings *findings, double dt, uint64_t events, uint64_t lost);
void ut_live_free(struct ut_live *l);

#endif
