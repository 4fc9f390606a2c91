/* Reads records from the ut_events ring buffer, in time order across CPUs
 * (runtime/reorder.h), and the per-probe counters (ut_counters) of a
 * loaded object. */
#ifndef UT_CONSUMER_H
#define UT_CONSUMER_H
#include <stddef.h>
#include <stdint.h>

#include "runtime/reorder.h"

struct bpf_object;
struct ut_consumer;

/* fn gets each record (it starts with struct ut_rec_hdr, bpf/records.h),
 * len says how long each record of a sample is; both get ctx.  NULL with
 * err when the object has no ut_events ring buffer. */
struct ut_consumer *ut_consumer_new(struct bpf_object *obj, ut_record_len_fn *len, ut_record_fn *fn,
				    void *ctx, char *err, size_t errlen);
void ut_consumer_free(struct ut_consumer *c);

/* Waits up to timeout_ms for records (at most 5 while some are queued);
 * every 5 ms, or at the end of the wait, sends what idle CPUs hold and
 * hands on the records no CPU can still precede.  Returns the number of
 * records handed on, or a negative errno (-EINTR on a signal).  Records
 * reach fn 5-10 ms after their hit while records flow, up to timeout_ms
 * later in a quiet trace. */
int ut_consumer_poll(struct ut_consumer *c, int timeout_ms);

/* Times a read stopped because the records queued reached their bound
 * (the reader fell behind the CPUs): each was handed on at once, the
 * oldest first, some ahead of records another CPU still held. */
uint64_t ut_consumer_full_reads(const struct ut_consumer *c);
/* Hits ut_consumer_drain_detached gave up waiting for. */
uint64_t ut_consumer_unsent_hits(const struct ut_consumer *c);
/* Requests the CPUs shed (bpf/ut.h, ut_shed_end), in all, as of a fresh
 * look at their states. */
uint64_t ut_consumer_shed(struct ut_consumer *c);

/* Where the reader's time went, wall clock: asleep waiting for records,
 * reading the ring buffer into the reorder queues (and asking idle CPUs
 * for what they hold), and handing records on in time order (to fn: the
 * script's statements in the reader, the engine, the trace writer). */
struct ut_reader_time {
	uint64_t waiting_ns, reading_ns, handing_on_ns;
};
const struct ut_reader_time *ut_consumer_time(const struct ut_consumer *c);

/* Sends what the CPUs hold and hands on every record that can go now,
 * including those of a BEGIN or END probe just run.  Records handed on,
 * or a negative errno. */
int ut_consumer_drain(struct ut_consumer *c);

/* After detach: drains until no CPU holds a record or runs a hit (one
 * that began before the detach may still run; its CPU's records wait for
 * it), for up to a second.  Hits still held then are counted lost. */
int ut_consumer_drain_detached(struct ut_consumer *c);

/* Records emitted and lost (ring buffer full) by one probe, summed over
 * CPUs.  probe == nprobes is the thread-name records and the records
 * ut_flush sends for an idle CPU (bpf/ut.h). */
struct ut_probe_totals {
	uint64_t emitted, lost;
};
int ut_consumer_counters(struct ut_consumer *c, uint32_t probe, struct ut_probe_totals *out);

#endif
