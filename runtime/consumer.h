/* Reads records from the ut_events ring buffer and the per-probe counters
 * (ut_counters) of a loaded object. */
#ifndef UT_CONSUMER_H
#define UT_CONSUMER_H
#include <stddef.h>
#include <stdint.h>

struct bpf_object;
struct ut_consumer;

/* Called for each record (it starts with struct ut_rec_hdr, bpf/ut.h).
 * Return 0 to go on, non-zero to stop the current poll/drain. */
typedef int ut_record_fn(void *ctx, const void *rec, size_t size);

/* NULL with err when the object has no ut_events ring buffer. */
struct ut_consumer *ut_consumer_new(struct bpf_object *obj, ut_record_fn *fn, void *ctx,
				    char *err, size_t errlen);
void ut_consumer_free(struct ut_consumer *c);

/* The BPF side wakes the reader only past ut_wakeup_bytes of pending data,
 * so poll with a short timeout (50-100 ms) to bound the delay.  Returns the
 * number of records handled, or a negative errno (-EINTR on a signal). */
int ut_consumer_poll(struct ut_consumer *c, int timeout_ms);

/* Reads everything pending without waiting; after detach this is the
 * final drain.  Records handled, or a negative errno. */
int ut_consumer_drain(struct ut_consumer *c);

/* Records emitted and lost (ring buffer full) by one probe, summed over
 * CPUs.  probe == nprobes is the thread-name records. */
struct ut_probe_totals {
	uint64_t emitted, lost;
};
int ut_consumer_counters(struct ut_consumer *c, uint32_t probe, struct ut_probe_totals *out);

#endif
