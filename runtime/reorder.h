/* Puts the records of several CPUs back in time order.  Each CPU holds its
 * records for a while before they reach the ring buffer (bpf/ut.h,
 * ut_batch_end), so one CPU's records arrive in order but late against
 * another's: they wait here, one queue per CPU, until the reader knows no
 * CPU can still send an older one (the watermark), and leave merged by
 * timestamp.  They always leave in time order: a record that arrives older
 * than one released already (the queues were full and let records go past
 * the watermark, or a hit was preempted for longer than the reader waits)
 * is dropped, and the next release begins with a UT_EVENT_LOST record
 * (bpf/records.h) saying how many and since when. */
#ifndef UT_REORDER_H
#define UT_REORDER_H
#include <stddef.h>
#include <stdint.h>

struct ut_reorder;

/* Length of the record at rec (it starts with struct ut_rec_hdr,
 * bpf/records.h) with avail bytes left in its sample; 0 when it is
 * malformed, which drops the rest of the sample. */
typedef size_t ut_record_len_fn(void *ctx, const void *rec, size_t avail);

/* Called for each record released, in time order; non-zero stops the
 * release (the rest stays queued). */
typedef int ut_record_fn(void *ctx, const void *rec, size_t size);

struct ut_reorder *ut_reorder_new(unsigned ncpus, ut_record_len_fn *len, void *len_ctx);
void ut_reorder_free(struct ut_reorder *r);

/* Queues a copy of each record of the sample (a ring buffer sample: records
 * one after another).  A record naming a CPU past ncpus goes to the last
 * queue. */
void ut_reorder_add(struct ut_reorder *r, const void *sample, size_t size);

/* Releases the queued records with timestamps up to watermark, oldest
 * first, to fn, and then more of the oldest while over max_queued remain
 * (memory stays bounded when the watermark is held back: those leave
 * before records another CPU may still send).  Returns the number
 * released. */
long ut_reorder_release(struct ut_reorder *r, uint64_t watermark, size_t max_queued, ut_record_fn *fn,
			void *ctx);

/* Records queued. */
size_t ut_reorder_queued(const struct ut_reorder *r);

/* Records dropped for arriving late, in all. */
uint64_t ut_reorder_late(const struct ut_reorder *r);

#endif
