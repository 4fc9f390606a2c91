#include "runtime/consumer.h"

#include <linux/types.h>

#include "bpf/records.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Per-CPU value of ut_counters, as laid out in bpf/ut.h. */
struct ut_consumer {
	struct ring_buffer *rb;
	ut_record_fn *fn;
	void *ctx;
	int counters_fd;            /* -1 when the object has no ut_counters */
	unsigned ncpus;
	struct ut_probe_counters *per_cpu;   /* bpf/records.h */
};

static int on_record(void *ctx, void *data, size_t size)
{
	struct ut_consumer *c = ctx;
	return c->fn(c->ctx, data, size);
}

struct ut_consumer *ut_consumer_new(struct bpf_object *obj, ut_record_fn *fn, void *ctx,
				    char *err, size_t errlen)
{
	struct bpf_map *events = bpf_object__find_map_by_name(obj, "ut_events");
	if (!events || bpf_map__fd(events) < 0) {
		snprintf(err, errlen, "the BPF object has no loaded ut_events ring buffer");
		return NULL;
	}
	struct ut_consumer *c = calloc(1, sizeof(*c));
	int ncpus = libbpf_num_possible_cpus();
	if (!c || ncpus <= 0) {
		snprintf(err, errlen, "cannot set up the ring buffer reader: %s",
			 c ? strerror(-ncpus) : "out of memory");
		free(c);
		return NULL;
	}
	c->fn = fn;
	c->ctx = ctx;
	c->ncpus = (unsigned)ncpus;
	struct bpf_map *counters = bpf_object__find_map_by_name(obj, "ut_counters");
	c->counters_fd = counters ? bpf_map__fd(counters) : -1;
	c->per_cpu = calloc(c->ncpus, sizeof(*c->per_cpu));
	c->rb = ring_buffer__new(bpf_map__fd(events), on_record, c, NULL);
	if (!c->rb || !c->per_cpu) {
		snprintf(err, errlen, "cannot set up the ring buffer reader: %s", strerror(errno));
		ut_consumer_free(c);
		return NULL;
	}
	return c;
}

void ut_consumer_free(struct ut_consumer *c)
{
	if (!c)
		return;
	ring_buffer__free(c->rb);
	free(c->per_cpu);
	free(c);
}

int ut_consumer_poll(struct ut_consumer *c, int timeout_ms)
{
	int n = ring_buffer__poll(c->rb, timeout_ms);
	/* The BPF side wakes the reader only every ut_wakeup_bytes, and epoll
	 * reports the ring only after a wake-up: read what a quiet trace left
	 * (an exit(), a print) when the wait times out. */
	if (n == 0)
		n = ring_buffer__consume(c->rb);
	return n;
}

int ut_consumer_drain(struct ut_consumer *c)
{
	return ring_buffer__consume(c->rb);
}

int ut_consumer_counters(struct ut_consumer *c, uint32_t probe, struct ut_probe_totals *out)
{
	*out = (struct ut_probe_totals){0};
	if (c->counters_fd < 0)
		return -ENOENT;
	if (bpf_map_lookup_elem(c->counters_fd, &probe, c->per_cpu) != 0)
		return -errno;
	for (unsigned cpu = 0; cpu < c->ncpus; cpu++) {
		out->emitted += c->per_cpu[cpu].emitted;
		out->lost += c->per_cpu[cpu].lost;
	}
	return 0;
}
