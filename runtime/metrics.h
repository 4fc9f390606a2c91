/* The metrics endpoint (--metrics [ADDR:]PORT): the script's maps, the
 * findings and the tracer's own counts in Prometheus's text format over
 * HTTP while tracing, served by libmicrohttpd from a thread of its own.
 *
 * The reader renders the text (it owns the maps) and hands it over; the
 * server only copies the latest text out.  A scrape asks for a fresh one
 * and waits for it at most half a second, then takes what there is: a
 * slow or hostile client costs the reader nothing but a render a
 * scrape, and never holds it. */
#ifndef UT_METRICS_H
#define UT_METRICS_H
#include <stdbool.h>
#include <stddef.h>

struct ut_metrics;

/* Listens on where: "PORT" or ":PORT" (localhost), "ADDR:PORT" ("0.0.0.0:9090"
 * for every interface, "[::1]:9090").  NULL with why (a port in use, a
 * malformed address). */
struct ut_metrics *ut_metrics_start(const char *where, char *why, size_t len);
/* The address it listens on, as given back to the user ("127.0.0.1:9090"). */
const char *ut_metrics_address(const struct ut_metrics *m);
/* Whether a scrape waits for fresh text. */
bool ut_metrics_wanted(struct ut_metrics *m);
/* The text to serve from now on (copied). */
void ut_metrics_publish(struct ut_metrics *m, const char *text, size_t len);
void ut_metrics_stop(struct ut_metrics *m);

#endif
