#include "runtime/decode.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include <linux/types.h>

#include "bpf/records.h"
#include "engine/engine.h"
#include "kernel/disks.h"
#include "runtime/findings.h"
#include "runtime/recorder.h"
#include "runtime/spool.h"
#include "runtime/stacks.h"
#include "runtime/user_side.h"

const char *ut_errno_name(int e)
{
	return e > 0 ? strerrorname_np(e) : NULL;
}

static bool field_in_record(const struct ut_field *f, size_t size)
{
	return f->offset <= size && f->size <= size - f->offset;
}

static uint64_t field_u64(const struct ut_field *f, const void *rec)
{
	uint64_t v;
	memcpy(&v, (const char *)rec + f->offset, sizeof(v));
	return v;
}

static const char *table_name(const struct ut_program *prog, int table, int64_t key)
{
	if (table < 0 || (unsigned)table >= prog->ntables)
		return NULL;
	const struct ut_table *t = &prog->tables[table];
	for (unsigned i = 0; i < t->nentries; i++)
		if (t->entries[i].key == key)
			return t->entries[i].name;
	return NULL;
}

/* buf = prefix + s, cut to len: most values are names (event names, table
 * entries, errno names), and snprintf was a sixth of the reader's time. */
static void copy_text(char *buf, size_t len, const char *prefix, const char *s, size_t n)
{
	size_t p = strlen(prefix);
	if (p >= len)
		p = len - 1;
	memcpy(buf, prefix, p);
	if (n > len - 1 - p)
		n = len - 1 - p;
	memcpy(buf + p, s, n);
	buf[p + n] = 0;
}

/* ---- display kinds: how user space shows a value (program.h, enum
 * ut_display), a row each.  The script function that gives one is a row
 * of the compiler's calls[] (compiler/builtins.c). ---- */

/* The number as its field's type reads. */
static void text_number(const struct ut_value *v, const struct ut_field *f, uint64_t raw, char *buf, size_t len)
{
	(void)v;
	if (f->type == UT_F_PTR)
		snprintf(buf, len, "0x%" PRIx64, raw);
	else if (f->type == UT_F_S64)
		snprintf(buf, len, "%" PRId64, (int64_t)raw);
	else
		snprintf(buf, len, "%" PRIu64, raw);
}

static bool arg_number(uint64_t raw, const struct ut_field *f, struct ut_arg *a)
{
	a->kind = f->type == UT_F_PTR ? UT_ARG_PTR : f->type == UT_F_S64 ? UT_ARG_INT : UT_ARG_UINT;
	a->u = raw;   /* the bits of a->i too */
	return true;
}

static void text_hex(const struct ut_value *v, const struct ut_field *f, uint64_t raw, char *buf, size_t len)
{
	(void)v;
	(void)f;
	snprintf(buf, len, "0x%" PRIx64, raw);
}

static bool arg_hex(uint64_t raw, const struct ut_field *f, struct ut_arg *a)
{
	(void)f;
	a->kind = UT_ARG_PTR;
	a->u = raw;
	return true;
}

static bool arg_koid(uint64_t raw, const struct ut_field *f, struct ut_arg *a)
{
	(void)f;
	a->kind = UT_ARG_KOID;
	a->u = raw;
	return true;
}

/* negative values as "-EAGAIN"; others stay numbers */
static void text_errno(const struct ut_value *v, const struct ut_field *f, uint64_t raw, char *buf, size_t len)
{
	(void)v;
	(void)f;
	int64_t s = (int64_t)raw;
	const char *name = s < 0 && s > -4096 ? ut_errno_name((int)-s) : NULL;
	if (name)
		copy_text(buf, len, "-", name, strlen(name));
	else
		snprintf(buf, len, "%" PRId64, s);
}

static bool arg_errno(uint64_t raw, const struct ut_field *f, struct ut_arg *a)
{
	(void)f;
	if ((int64_t)raw < 0)
		return false;
	a->kind = UT_ARG_INT;
	a->i = (int64_t)raw;
	return true;
}

/* a value the table does not name (own_text names the others) */
static void text_signed(const struct ut_value *v, const struct ut_field *f, uint64_t raw, char *buf, size_t len)
{
	(void)v;
	(void)f;
	snprintf(buf, len, "%" PRId64, (int64_t)raw);
}

static void text_disk(const struct ut_value *v, const struct ut_field *f, uint64_t raw, char *buf, size_t len)
{
	(void)v;
	(void)f;
	ut_disk_name(raw, buf, len);
}

static void text_stack(const struct ut_value *v, const struct ut_field *f, uint64_t raw, char *buf, size_t len)
{
	(void)v;
	(void)f;
	snprintf(buf, len, "%s", ut_stack_text(raw));
}

/* the frames, one a line: longer than an argument's text */
static bool arg_stack(uint64_t raw, const struct ut_field *f, struct ut_arg *a)
{
	(void)f;
	a->kind = UT_ARG_STR;
	a->s = ut_stack_text(raw);
	return true;
}

/* The wall-clock time of a CLOCK_MONOTONIC time (bpf_ktime_get_ns()) as
 * strftime's format fmt gives it, with %f for its microseconds (as
 * bpftrace's strftime). */
/* The clocks' difference, read once: every time of a run is moved by the
 * same amount (read at each call, it moved by a microsecond or so from one
 * to the next).  Once for all threads (the trace's converter shows times
 * too). */
static uint64_t real_minus_mono;
static pthread_once_t real_minus_mono_once = PTHREAD_ONCE_INIT;

static void read_real_minus_mono(void)
{
	struct timespec mono, real;
	clock_gettime(CLOCK_MONOTONIC, &mono);
	clock_gettime(CLOCK_REALTIME, &real);
	real_minus_mono = ((uint64_t)real.tv_sec * 1000000000 + (uint64_t)real.tv_nsec) -
			  ((uint64_t)mono.tv_sec * 1000000000 + (uint64_t)mono.tv_nsec);
}

void ut_wall_time_text(const char *fmt, uint64_t mono_ns, char *buf, size_t len)
{
	pthread_once(&real_minus_mono_once, read_real_minus_mono);
	/* in unsigned arithmetic: a damaged or made-up time may be any value */
	int64_t wall = (int64_t)(mono_ns + real_minus_mono);
	time_t secs = (time_t)(wall / 1000000000);
	char usecs[8], expanded[256];
	snprintf(usecs, sizeof(usecs), "%06lld", (long long)(wall % 1000000000 / 1000));
	size_t at = 0;
	for (const char *p = fmt; *p && at + 8 < sizeof(expanded); p++) {
		if (p[0] == '%' && p[1] == 'f') {
			memcpy(expanded + at, usecs, 6);
			at += 6;
			p++;
		} else if (p[0] == '%' && p[1]) {
			expanded[at++] = *p++;
			expanded[at++] = *p;
		} else {
			expanded[at++] = *p;
		}
	}
	expanded[at] = 0;
	struct tm tm;
	if (len && (!localtime_r(&secs, &tm) || !strftime(buf, len, expanded, &tm)))
		buf[0] = 0;
}

static void text_time(const struct ut_value *v, const struct ut_field *f, uint64_t raw, char *buf, size_t len)
{
	(void)f;
	ut_wall_time_text(v->text ? v->text : "%H:%M:%S", raw, buf, len);
}

/* A frame's function alone, as bpftrace's ksym() and usym() show it:
 * "vfs_read" of "vfs_read+0x4e" (an address without a symbol stays). */
static void function_of_frame(char *frame)
{
	char *plus = strstr(frame, "+0x");
	if (plus && plus != frame)
		*plus = 0;
}

static void text_ksym(const struct ut_value *v, const struct ut_field *f, uint64_t raw, char *buf, size_t len)
{
	(void)v;
	(void)f;
	ut_kernel_frame(raw, buf, len);
	function_of_frame(buf);
}

static void text_usym(const struct ut_value *v, const struct ut_field *f, uint64_t raw, char *buf, size_t len)
{
	(void)v;
	(void)f;
	snprintf(buf, len, "%s", ut_stack_text(raw));
	function_of_frame(buf);
}

/* buf()'s bytes (the first is their count) as bpftrace's %r prints them */
static void text_buf(const unsigned char *b, size_t size, char *out, size_t len)
{
	size_t n = size ? b[0] : 0, at = 0;
	if (n > size - 1)
		n = size - 1;
	for (size_t i = 1; i <= n && at + 5 <= len; i++) {
		if (b[i] >= 0x20 && b[i] < 0x7f)
			out[at++] = (char)b[i];
		else
			at += (size_t)snprintf(out + at, len - at, "\\x%02x", b[i]);
	}
	if (len)
		out[at < len ? at : len - 1] = 0;
}

static const struct ut_display_kind displays[] = {
	[UT_SHOW_PLAIN] = {.number = true, .text = text_number, .arg = arg_number},
	[UT_SHOW_HEX] = {.text = text_hex, .arg = arg_hex},
	[UT_SHOW_KOID] = {.number = true, .text = text_number, .arg = arg_koid},
	[UT_SHOW_ERRNO] = {.text = text_errno, .arg = arg_errno},
	[UT_SHOW_TABLE] = {.text = text_signed},
	[UT_SHOW_DISK] = {.text = text_disk},
	[UT_SHOW_KSTACK] = {.frames = true, .text = text_stack, .arg = arg_stack},
	[UT_SHOW_USTACK] = {.frames = true, .text = text_stack, .arg = arg_stack},
	[UT_SHOW_STRING] = {.text = text_number},   /* a map's string value: its text is the string */
	[UT_SHOW_TIME] = {.text = text_time},
	[UT_SHOW_KSYM] = {.text = text_ksym},
	[UT_SHOW_USYM] = {.text = text_usym},
	[UT_SHOW_BUF] = {.text = text_number},   /* a string field's: ut_value_text */
};

const struct ut_display_kind *ut_display_kind(enum ut_display d)
{
	return &displays[d];
}

/* One printf directive (spec, ending in its conversion) applied to value v. */
static size_t format_one(const struct ut_program *prog, const struct ut_field *fields, unsigned nfields,
			 const void *rec, size_t size, const struct ut_value *v, const char *spec, size_t speclen,
			 char *out, size_t len)
{
	char conv = spec[speclen - 1];
	char f[32];
	size_t n = 0;
	/* flags and width only; length modifiers are ours to choose */
	for (size_t i = 0; i < speclen - 1 && n < sizeof(f) - 4; i++)
		if (spec[i] != 'l')
			f[n++] = spec[i];
	bool numeric = v->kind == UT_VAL_FIELD && v->field < nfields && fields[v->field].type != UT_F_STR &&
		       (conv != 's' || displays[v->display].number);
	if (numeric && field_in_record(&fields[v->field], size)) {
		uint64_t raw = field_u64(&fields[v->field], rec);
		if (conv == 'p') {
			return (size_t)snprintf(out, len, "0x%" PRIx64, raw);
		}
		if (conv == 'c') {
			return (size_t)snprintf(out, len, "%c", (char)raw);
		}
		if (conv == 's')
			conv = fields[v->field].type == UT_F_S64 ? 'd' : 'u';
		f[n++] = 'l';
		f[n++] = 'l';
		f[n++] = conv;
		f[n] = 0;
		if (conv == 'd' || conv == 'i')
			return (size_t)snprintf(out, len, f, (long long)raw);
		return (size_t)snprintf(out, len, f, (unsigned long long)raw);
	}
	char text[512];
	ut_value_text(prog, fields, nfields, rec, size, v, text, sizeof(text));
	f[n++] = 's';
	f[n] = 0;
	return (size_t)snprintf(out, len, f, text);
}

/* The program's own string for v where it has one: a literal, or a
 * table's entry for the field's value; NULL otherwise. */
static const char *own_text(const struct ut_program *prog, const struct ut_field *fields, unsigned nfields,
			    const void *rec, size_t size, const struct ut_value *v)
{
	if (v->kind == UT_VAL_TEXT)
		return v->text;
	if (v->kind == UT_VAL_FIELD && v->display == UT_SHOW_TABLE && v->field < nfields &&
	    field_in_record(&fields[v->field], size) && fields[v->field].type != UT_F_STR)
		return table_name(prog, v->table, (int64_t)field_u64(&fields[v->field], rec));
	return NULL;
}

void ut_value_text(const struct ut_program *prog, const struct ut_field *fields, unsigned nfields,
		   const void *rec, size_t size, const struct ut_value *v, char *buf, size_t len)
{
	if (!len)
		return;
	buf[0] = 0;
	const char *own = own_text(prog, fields, nfields, rec, size, v);
	if (own) {
		copy_text(buf, len, "", own, strlen(own));
		return;
	}
	switch (v->kind) {
	case UT_VAL_FORMAT: {
		size_t at = 0;
		unsigned next = 0;
		for (const char *p = v->text ? v->text : ""; *p && at + 1 < len; p++) {
			if (*p != '%') {
				buf[at++] = *p;
				continue;
			}
			if (p[1] == '%') {
				buf[at++] = '%';
				p++;
				continue;
			}
			struct ut_directive d = ut_format_directive(p);
			if (!d.conv || next >= v->nfmt)
				break;
			size_t w = format_one(prog, fields, nfields, rec, size, &v->fmt[next++], p, d.len, buf + at,
					      len - at);
			p += d.len - 1;
			at += w < len - at ? w : len - at - 1;
		}
		buf[at < len ? at : len - 1] = 0;
		return;
	}
	case UT_VAL_FIELD:
		break;
	default:
		return;
	}
	if (v->field >= nfields || !field_in_record(&fields[v->field], size))
		return;
	const struct ut_field *f = &fields[v->field];
	if (f->type == UT_F_STR && v->display == UT_SHOW_BUF) {
		text_buf((const unsigned char *)rec + f->offset, f->size, buf, len);
		return;
	}
	if (f->type == UT_F_STR) {
		copy_text(buf, len, "", (const char *)rec + f->offset, strnlen((const char *)rec + f->offset, f->size));
		return;
	}
	displays[v->display].text(v, f, field_u64(f, rec), buf, len);
}

/* The value as text: the program's own string where there is one, else
 * written into buf.  The trace writer finds a string it has seen at the
 * same address without hashing it. */
static const char *value_str(const struct ut_program *prog, const struct ut_field *fields, unsigned nfields,
			     const void *rec, size_t size, const struct ut_value *v, char *buf, size_t len)
{
	const char *own = own_text(prog, fields, nfields, rec, size, v);
	if (own)
		return own;
	ut_value_text(prog, fields, nfields, rec, size, v, buf, len);
	return buf;
}

/* The argument of value v, in a record holding all its event's fields
 * (ut_decode_trace checks its size: the loader checked each field against
 * it).  Inlined, and a plain number without its display kind's call: every
 * argument of every record comes here (3.7 M of them in a 3 s fio
 * capture), and the call's prologue and the indirect call were half of
 * its instructions. */
static inline __attribute__((always_inline)) void to_arg(const struct ut_program *prog, const struct ut_event *ev,
							 const void *rec, size_t size, const char *name,
							 const struct ut_value *v, struct ut_decoded_args *out)
{
	if (out->n >= UT_DECODED_ARGS_MAX || v->kind == UT_VAL_NONE)
		return;
	struct ut_arg *a = &out->args[out->n];
	a->name = name;
	if (v->kind == UT_VAL_FIELD && ev->fields[v->field].type != UT_F_STR) {
		const struct ut_field *f = &ev->fields[v->field];
		uint64_t raw = field_u64(f, rec);
		const struct ut_display_kind *show = &displays[v->display];
		if (v->display == UT_SHOW_PLAIN ? arg_number(raw, f, a) : show->arg && show->arg(raw, f, a)) {
			out->n++;
			return;
		}
	}
	a->kind = UT_ARG_STR;
	a->s = value_str(prog, ev->fields, ev->nfields, rec, size, v, out->text[out->n], sizeof(out->text[0]));
	out->n++;
}

void ut_decode_arg(const struct ut_program *p, const struct ut_event *ev, const void *rec, size_t size, unsigned i,
		   struct ut_decoded_args *out)
{
	if (i < ev->nargs)
		to_arg(p, ev, rec, size, ev->args[i].name, &ev->args[i].value, out);
}

enum ut_severity ut_finding_severity(const struct ut_event *ev, const void *rec, size_t size)
{
	const struct ut_value *v = &ev->args[UT_FINDING_SEVERITY].value;
	const struct ut_field *f = v->kind == UT_VAL_FIELD ? &ev->fields[v->field] : NULL;
	int64_t level = f && f->type != UT_F_STR && field_in_record(f, size) ? (int64_t)field_u64(f, rec) : UT_INFO;
	return level <= UT_INFO ? UT_INFO : level >= UT_CRIT ? UT_CRIT : (enum ut_severity)level;
}

/* A finding's first record (runtime/findings.c counts the others): an
 * instant on the thread it was made on (uring-trace's own in BEGIN and
 * END), "TAG: message", with its severity, message, fix and evidence. */
static void finding_instant(const struct ut_program *p, struct ut_engine *e, const struct ut_rec_hdr *h,
			    const struct ut_event *ev, const void *rec, size_t size)
{
	char message[512], fix[512], name[600];
	ut_value_text(p, ev->fields, ev->nfields, rec, size, &ev->args[UT_FINDING_MESSAGE].value, message,
		      sizeof(message));
	ut_value_text(p, ev->fields, ev->nfields, rec, size, &ev->args[UT_FINDING_FIX].value, fix, sizeof(fix));
	snprintf(name, sizeof(name), "%s: %s", ev->name.text, message);
	struct ut_decoded_args args;
	args.args[0] = (struct ut_arg){.name = "severity", .kind = UT_ARG_STR,
				       .s = ut_severity_names[ut_finding_severity(ev, rec, size)]};
	args.args[1] = (struct ut_arg){.name = "message", .kind = UT_ARG_STR, .s = message};
	args.args[2] = (struct ut_arg){.name = "fix", .kind = UT_ARG_STR, .s = fix};
	args.n = 3;
	for (unsigned i = UT_FINDING_PARTS; i < ev->nargs; i++)
		if (strcmp(ev->args[i].name, UT_FINDING_KEY) != 0)
			ut_decode_arg(p, ev, rec, size, i, &args);
	struct ut_track thread = {.kind = UT_TRACK_THREAD, .pid = h->pid, .tid = h->tid};
	ut_instant(e, h->ts, &thread, "finding", name, args.args, args.n);
}

static void thread_record(struct ut_engine *e, const struct ut_rec_hdr *h, const void *rec, size_t size)
{
	const struct ut_thread_rec *t = rec;
	if (size < sizeof(*t))
		return;
	char comm[17], pcomm[17];
	snprintf(comm, sizeof(comm), "%.*s", (int)strnlen(t->comm, 16), t->comm);
	snprintf(pcomm, sizeof(pcomm), "%.*s", (int)strnlen(t->pcomm, 16), t->pcomm);
	ut_engine_thread_name(e, h->pid, h->tid, comm);
	ut_engine_process_name(e, h->pid, pcomm);
}

static void lost_record(struct ut_engine *e, const void *rec, size_t size)
{
	const struct ut_lost_rec *l = rec;
	if (size < sizeof(*l))
		return;
	if (l->reason == UT_LOST_SHED) {
		ut_requests_shed(e, l->h.ts, l->since, l->count);
		return;
	}
	ut_events_lost(e, l->h.ts, l->since, l->count,
		       l->reason == UT_LOST_LATE ? "records that reached the reader too late to be put in order"
						 : "probe hits with no room in the ring buffer");
}

/* The field of ev's scheduling value v (compiler/program.h); NULL when
 * absent or not in the record. */
static const struct ut_field *sched_field(const struct ut_event *ev, size_t size, enum ut_sched_value v)
{
	unsigned i = ev->sched_field[v];
	if (!i || i > ev->nfields || !field_in_record(&ev->fields[i - 1], size))
		return NULL;
	return &ev->fields[i - 1];
}

static uint64_t sched_u64(const struct ut_event *ev, const void *rec, size_t size, enum ut_sched_value v,
			  uint64_t absent)
{
	const struct ut_field *f = sched_field(ev, size, v);
	return f && f->type != UT_F_STR ? field_u64(f, rec) : absent;
}

/* The string of scheduling value v in buf; NULL when absent or empty. */
static const char *sched_str(const struct ut_event *ev, const void *rec, size_t size, enum ut_sched_value v,
			     char *buf, size_t len)
{
	const struct ut_field *f = sched_field(ev, size, v);
	if (!f || f->type != UT_F_STR)
		return NULL;
	const char *s = (const char *)rec + f->offset;
	copy_text(buf, len, "", s, strnlen(s, f->size));
	return buf[0] ? buf : NULL;
}

#define COMM_BUFFER 64

static void sched_record(struct ut_engine *e, const struct ut_rec_hdr *h, const struct ut_event *ev,
			 const void *rec, size_t size)
{
	uint32_t cpu = (uint32_t)sched_u64(ev, rec, size, UT_SV_CPU, h->cpu);
	char first[COMM_BUFFER], second[COMM_BUFFER];
	if (ev->op == UT_EV_SCHED_WAKEUP) {
		struct ut_sched_thread woken = {
			.pid = (uint32_t)sched_u64(ev, rec, size, UT_SV_PID, 0),
			.tid = (uint32_t)sched_u64(ev, rec, size, UT_SV_TID, 0),
			.name = sched_str(ev, rec, size, UT_SV_COMM, first, sizeof(first)),
		};
		ut_sched_wakeup(e, h->ts, cpu, &woken);
		return;
	}
	struct ut_sched_thread prev = {
		.pid = (uint32_t)sched_u64(ev, rec, size, UT_SV_PREV_PID, 0),
		.tid = (uint32_t)sched_u64(ev, rec, size, UT_SV_PREV_TID, 0),
		.name = sched_str(ev, rec, size, UT_SV_PREV_COMM, first, sizeof(first)),
	};
	struct ut_sched_thread next = {
		.pid = (uint32_t)sched_u64(ev, rec, size, UT_SV_NEXT_PID, 0),
		.tid = (uint32_t)sched_u64(ev, rec, size, UT_SV_NEXT_TID, 0),
		.name = sched_str(ev, rec, size, UT_SV_NEXT_COMM, second, sizeof(second)),
	};
	uint32_t state = sched_u64(ev, rec, size, UT_SV_PREEMPT, 0)
				 ? UT_TASK_RUNNING
				 : (uint32_t)sched_u64(ev, rec, size, UT_SV_PREV_STATE, 0);
	ut_sched_switch(e, h->ts, cpu, &prev, state, &next);
}

/* The group and keys of a trace record holding all its event's fields
 * (0 where its event has none). */
static inline const char *record_place(const struct ut_program *p, const struct ut_event *ev, const void *rec,
				       uint64_t *gkey, uint64_t *key)
{
	*gkey = ev->group_key.kind == UT_VAL_FIELD ? field_u64(&ev->fields[ev->group_key.field], rec) : 0;
	*key = ev->key.kind == UT_VAL_FIELD ? field_u64(&ev->fields[ev->key.field], rec) : 0;
	return ev->group >= 0 && (unsigned)ev->group < p->ngroups ? p->groups[ev->group] : NULL;
}

bool ut_decode_place(const struct ut_program *p, const void *rec, size_t size, struct ut_record_place *out)
{
	const struct ut_rec_hdr *h = rec;
	if (size < sizeof(*h) || h->event >= p->nevents || size < p->events[h->event].size)
		return false;
	const struct ut_event *ev = &p->events[h->event];
	out->op = ev->op;
	out->group = record_place(p, ev, rec, &out->group_key, &out->key) ? ev->group : -1;
	if (out->group < 0)
		out->group_key = (uint64_t)h->pid << 32 | h->tid;
	out->sched_out = out->sched_in = 0;
	if (ev->op == UT_EV_SCHED_SWITCH) {
		out->sched_out = (uint32_t)sched_u64(ev, rec, size, UT_SV_PREV_TID, 0);
		out->sched_in = (uint32_t)sched_u64(ev, rec, size, UT_SV_NEXT_TID, 0);
	} else if (ev->op == UT_EV_SCHED_WAKEUP) {
		out->sched_out = (uint32_t)sched_u64(ev, rec, size, UT_SV_TID, 0);
	}
	return true;
}

void ut_decode_trace(const struct ut_program *p, struct ut_engine *e, const void *rec, size_t size)
{
	const struct ut_rec_hdr *h = rec;
	if (h->event == UT_EVENT_THREAD) {
		thread_record(e, h, rec, size);
		return;
	}
	if (h->event == UT_EVENT_LOST) {
		lost_record(e, rec, size);
		return;
	}
	if (h->event >= p->nevents || size < p->events[h->event].size)
		return;
	const struct ut_event *ev = &p->events[h->event];
	if (ev->op == UT_EV_SCHED_SWITCH || ev->op == UT_EV_SCHED_WAKEUP) {
		sched_record(e, h, ev, rec, size);
		return;
	}
	if (ev->op == UT_EV_FINDING) {
		finding_instant(p, e, h, ev, rec, size);
		return;
	}
	char name_text[512];
	const char *name = ev->name.kind == UT_VAL_TEXT
				   ? ev->name.text
				   : value_str(p, ev->fields, ev->nfields, rec, size, &ev->name, name_text, sizeof(name_text));
	struct ut_decoded_args args;
	args.n = 0;
	for (unsigned i = 0; i < ev->nargs; i++)
		to_arg(p, ev, rec, size, ev->args[i].name, &ev->args[i].value, &args);
	uint64_t gkey, key;
	const char *group = record_place(p, ev, rec, &gkey, &key);
	const char *flow = ev->flow >= 0 && (unsigned)ev->flow < p->nflows ? p->flows[ev->flow] : NULL;
	struct ut_track track = {.kind = UT_TRACK_THREAD, .pid = h->pid, .tid = h->tid};
	if (group)
		track = (struct ut_track){.kind = UT_TRACK_GROUP, .group = group, .key = gkey};
	switch (ev->op) {
	case UT_EV_SLICE_BEGIN:
		ut_slice_begin(e, h->ts, &track, ev->category, name, args.args, args.n);
		break;
	case UT_EV_SLICE_END:
		ut_slice_end(e, h->ts, &track, args.args, args.n);
		break;
	case UT_EV_INSTANT:
		ut_instant(e, h->ts, &track, ev->category, name, args.args, args.n);
		break;
	case UT_EV_COUNTER:
		ut_counter(e, h->ts, &track, name, args.args, args.n);
		break;
	case UT_EV_FLOW_BEGIN: case UT_EV_FLOW_STEP: case UT_EV_FLOW_END:
		if (flow)
			ut_flow(e, h->ts, h->pid, h->tid,
				ev->op == UT_EV_FLOW_BEGIN ? UT_FLOW_BEGIN : ev->op == UT_EV_FLOW_STEP ? UT_FLOW_STEP : UT_FLOW_END,
				flow, key, ev->category, name, args.args, args.n);
		break;
	case UT_EV_SPAN_BEGIN:
		if (group)
			ut_span_begin(e, h->ts, group, gkey, key, ev->category, name, args.args, args.n);
		break;
	case UT_EV_SPAN_PHASE:
		if (group)
			ut_span_phase(e, h->ts, group, gkey, key, name, args.args, args.n);
		break;
	case UT_EV_SPAN_END:
		if (group)
			ut_span_end(e, h->ts, group, gkey, key, name[0] ? name : NULL, args.args, args.n);
		break;
	case UT_EV_GROUP_NAME:
		if (group)
			ut_engine_group_name(e, group, gkey, name);
		break;
	default:
		break;
	}
}

/* A record of the trace: to the flight recorder, which hands it to an
 * engine if it is still in its window when a snapshot is written; to the
 * spool, whose thread hands it to the engine; or to the engine now. */
static void to_trace(struct ut_decoder *d, const void *rec, size_t size)
{
	if (d->recorder)
		ut_recorder_add(d->recorder, rec, size);
	else if (d->spool)
		ut_spool_add(d->spool, rec, size);
	else if (d->engine)
		ut_decode_trace(d->prog, d->engine, rec, size);
}

/* cat(path): the file's contents, as it is when the reader gets the
 * record; at most CAT_MAX_BYTES of it.  Not a FIFO or a device, whose
 * read could block the reader. */
#define CAT_MAX_BYTES (1 << 20)

static void print_file(FILE *out, const char *path)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		fprintf(stderr, "uring-trace: cat(): cannot read %s: %s\n", path, fd < 0 ? strerror(errno) : "not a file");
		if (fd >= 0)
			close(fd);
		return;
	}
	char buf[65536];
	size_t left = CAT_MAX_BYTES;
	ssize_t n;
	while (left && (n = read(fd, buf, left < sizeof(buf) ? left : sizeof(buf))) > 0) {
		fwrite(buf, 1, (size_t)n, out);
		left -= (size_t)n;
	}
	close(fd);
}

static void decode_one(struct ut_decoder *d, const void *rec, size_t size)
{
	const struct ut_rec_hdr *h = rec;
	if (h->event == UT_EVENT_LOST) {
		const struct ut_lost_rec *l = rec;
		if (size < sizeof(*l)) {
			d->malformed++;
			return;
		}
		if (l->reason == UT_LOST_LATE)
			d->lost_late += l->count;
		to_trace(d, rec, size);
		return;
	}
	if (h->event < d->prog->nevents && d->prog->events[h->event].op == UT_EV_HIT) {
		/* not a record of the trace: the records its statements emit are */
		if (d->user_side)
			ut_user_side_run(d->user_side, d, rec, size);
		else
			d->malformed++;
		return;
	}
	if (d->user_side && !ut_user_side_keeps(d->user_side, rec, size))
		return;   /* --sample dropped its flow */
	d->records++;
	if (!d->first_ts || h->ts < d->first_ts)
		d->first_ts = h->ts;
	if (h->ts > d->last_ts)
		d->last_ts = h->ts;
	if (h->event == UT_EVENT_THREAD) {
		if (size >= sizeof(struct ut_thread_rec))
			to_trace(d, rec, size);
		return;
	}
	if (h->event >= d->prog->nevents) {
		d->malformed++;
		return;
	}
	const struct ut_program *p = d->prog;
	const struct ut_event *ev = &p->events[h->event];
	if (size < ev->size) {   /* the ring's records have their event's size: see ut_decode_record_len */
		d->malformed++;
		return;
	}
	switch (ev->op) {
	case UT_EV_SNAPSHOT:
		if (!d->snapshot_ts)
			d->snapshot_ts = h->ts;
		return;
	case UT_EV_TIME: {
		char when[256];
		ut_wall_time_text(ev->name.text ? ev->name.text : "", h->ts, when, sizeof(when));
		if (d->print_out)
			fputs(when, d->print_out);
		return;
	}
	case UT_EV_JOIN: {
		/* the strings, sep between them, and a newline */
		uint64_t n = ev->nfields ? field_u64(&ev->fields[0], rec) : 0;
		for (uint64_t i = 1; d->print_out && i <= n && i < ev->nfields; i++) {
			const struct ut_field *f = &ev->fields[i];
			if (f->type == UT_F_STR && field_in_record(f, size))
				fprintf(d->print_out, "%s%.*s", i > 1 && ev->name.text ? ev->name.text : "",
					(int)strnlen((const char *)rec + f->offset, f->size), (const char *)rec + f->offset);
		}
		if (d->print_out)
			fputc('\n', d->print_out);
		return;
	}
	case UT_EV_PRINT_MAP:
		if (d->print_map && ev->name.kind == UT_VAL_TEXT && ev->nfields == 2)
			d->print_map(d->maps_ctx, ev->name.text, field_u64(&ev->fields[0], rec),
				     field_u64(&ev->fields[1], rec));
		return;
	case UT_EV_ZERO:
		if (d->zero_map && ev->name.kind == UT_VAL_TEXT)
			d->zero_map(d->maps_ctx, ev->name.text);
		return;
	case UT_EV_FINDING: {
		/* kept in the findings; the first of its tag and key is marked in
		 * the trace, and its first at --snapshot-on's severity or above
		 * takes a snapshot */
		enum ut_severity severity = ut_finding_severity(ev, rec, size);
		int before = d->findings ? ut_findings_take(d->findings, p, ev, rec, size) : -1;
		if (d->snapshot_findings && severity >= d->snapshot_on && before < (int)d->snapshot_on && !d->snapshot_ts)
			d->snapshot_ts = h->ts;
		if (before < 0)
			to_trace(d, rec, size);
		return;
	}
	case UT_EV_PRINT: case UT_EV_CAT: case UT_EV_EXIT: case UT_EV_CLEAR: {
		char name_text[512];
		const char *name = value_str(p, ev->fields, ev->nfields, rec, size, &ev->name, name_text,
					     sizeof(name_text));
		if (ev->op == UT_EV_PRINT && d->print_out)
			fputs(name, d->print_out);
		else if (ev->op == UT_EV_CAT && d->print_out)
			print_file(d->print_out, name);
		else if (ev->op == UT_EV_EXIT && !d->exit_requested) {
			d->exit_requested = true;
			d->exit_ts = h->ts;
			if (d->shared_exit_ts)   /* the kernel's probes stop too */
				*d->shared_exit_ts = h->ts;
		}
		else if (ev->op == UT_EV_CLEAR && d->clear_map)
			d->clear_map(d->maps_ctx, name);
		return;
	}
	default:
		to_trace(d, rec, size);
	}
}

static void declare_value(struct ut_engine *e, const struct ut_value *v)
{
	if (v->kind == UT_VAL_TEXT)
		ut_engine_stable_string(e, v->text);
}

void ut_decode_declare_names(const struct ut_program *p, struct ut_engine *e)
{
	for (unsigned i = 0; i < p->nevents; i++) {
		const struct ut_event *ev = &p->events[i];
		ut_engine_stable_string(e, ev->category);
		declare_value(e, &ev->name);
		for (unsigned a = 0; a < ev->nargs; a++) {
			ut_engine_stable_string(e, ev->args[a].name);
			declare_value(e, &ev->args[a].value);
		}
	}
	for (unsigned i = 0; i < p->ngroups; i++)
		ut_engine_stable_string(e, p->groups[i]);
	for (unsigned i = 0; i < p->nflows; i++)
		ut_engine_stable_string(e, p->flows[i]);
	for (unsigned t = 0; t < p->ntables; t++)
		for (unsigned i = 0; i < p->tables[t].nentries; i++)
			ut_engine_stable_string(e, p->tables[t].entries[i].name);
}

/* A sample holds records one after another, each as long as its event's
 * layout says (bpf/ut.h, ut_batch_begin). */
size_t ut_decode_record_len(struct ut_decoder *d, const void *rec, size_t avail)
{
	const struct ut_rec_hdr *h = rec;
	size_t len = 0;
	if (avail >= sizeof(*h)) {
		if (h->event == UT_EVENT_THREAD)
			len = sizeof(struct ut_thread_rec);
		else if (h->event == UT_EVENT_LOST)
			len = sizeof(struct ut_lost_rec);
		else if (h->event < d->prog->nevents)
			len = d->prog->events[h->event].size;
	}
	if (len < sizeof(*h) || len > avail) {
		d->malformed++;
		return 0;
	}
	return len;
}

bool ut_decode_exited(struct ut_decoder *d)
{
	if (!d->exit_requested && d->shared_exit_ts && *d->shared_exit_ts) {
		d->exit_requested = true;
		d->exit_ts = *d->shared_exit_ts;
	}
	return d->exit_requested;
}

/* Whether a record of time ts comes after the script's exit(): tracing
 * ended then, as if detached, even though the probes ran on until they or
 * the reader saw it. */
static bool after_exit(struct ut_decoder *d, uint64_t ts)
{
	return ut_decode_exited(d) && ts > d->exit_ts;
}

void ut_decode_record(struct ut_decoder *d, const void *rec, size_t size)
{
	if (size < sizeof(struct ut_rec_hdr)) {
		d->malformed++;
		return;
	}
	if (!after_exit(d, ((const struct ut_rec_hdr *)rec)->ts))
		decode_one(d, rec, size);
}

void ut_decode_read_end(struct ut_decoder *d)
{
	bool exited = ut_decode_exited(d);
	d->shared_exit_ts = NULL;
	if (exited)
		d->exit_ts = UINT64_MAX;
}
