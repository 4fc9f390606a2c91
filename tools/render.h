/* `uring-trace render`: draws an FXT trace as an SVG picture (processes
 * and their threads, groups and their lanes, nested slices, counters,
 * instants, flow arrows and threads' states on a time axis), for a quick look or a bug
 * report without Perfetto.  It is a consumer of the FXT reader and knows
 * nothing of io_uring. */
#ifndef UT_SVG_RENDER_H
#define UT_SVG_RENDER_H
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define SVG_DEFAULT_WIDTH 1200u
#define SVG_MIN_WIDTH 600u
#define SVG_MAX_WIDTH 20000u

struct svg_render_options {
	const char *input;
	const char *output;      /* "-" writes to stdout */
	bool has_from, has_to;
	double from_ms, to_ms;   /* the window, in ms after the trace's first event */
	double busiest_ms;       /* > 0: the window of this length holding the most events */
	unsigned width;          /* pixels; 0 = SVG_DEFAULT_WIDTH */
	/* When nonly > 0, only threads whose name or process name contains
	 * one of these (or whose tid or pid is one of them) are drawn. */
	const char *const *only;
	size_t nonly;
};

/* Reads the trace twice (names and time range, then the drawing) and
 * writes the SVG.  Returns 0; 1 when the trace cannot be opened or the SVG
 * cannot be written, or the trace is damaged (the SVG is still written,
 * with what could be read); 2 when the options select nothing (an empty
 * window).  Messages go to err. */
int svg_render(const struct svg_render_options *o, FILE *err);

#endif
