/* FXT writer: records are built in a large buffer and handed to write(2)
 * (or zlib) a whole buffer at a time, so the file always ends on a record
 * boundary.  Strings and threads are interned in the format's tables; when
 * a table is full the least recently used entry is evicted and its index is
 * reused by writing a new string/thread record for it. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "base/alloc.h"
#include "base/hashmap.h"
#include "base/lru.h"
#include "fxt/records.h"

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "FXT words are written in host order");

#define WRITE_BUFFER_BYTES (1u << 20)
#define ADDRESS_CACHE_SIZE 1024u /* power of two */
#define PINNED_INDEX_SIZE 4096u  /* power of two, twice FXT_PINNED_MAX */
#define TICKS_PER_SECOND 1000000000ull

/* A string of the table (an item of fxt_writer.strings), whose FXT index
 * is its index there plus one.  Its key is its hash and its length; two
 * strings of the same key (a hash collision) take the next hash value. */
struct string_slot {
	struct lru_link link;
	char *text;
	uint32_t len;
};

/* Where a string at this address was last interned.  Callers pass the same
 * names (a program's categories, event and argument names) again and again
 * from the same addresses: a hit needs only a comparison with the slot's
 * text, no hash and no probing.  The comparison also catches a slot given
 * to another string since, and a caller's buffer that now holds other text. */
struct address_hit {
	const char *s;
	uint16_t slot;
	bool pinned; /* s is a stable string in a pinned slot: no comparison */
};

/* A string declared stable (fxt_string_stable) and its slot once used. */
struct pinned_string {
	const char *s;
	uint16_t slot; /* 0 until first used */
};

/* The thread table: slot i (FXT index i + 1) holds the thread keyed
 * pid << 32 | tid.  A full table gives the slot of a thread not used
 * lately to the next one, chosen by a clock hand (a slot used since the
 * hand last passed it is passed over once): a record's look-up is a
 * store of its slot's mark, where an LRU list relinked an item at nearly
 * every record (a request's records alternate between its thread, its
 * ring's track and a lane). */
#define RECENT_THREADS 64u   /* power of two */
struct thread_table {
	uint64_t key[FXT_THREAD_SLOTS];
	bool used_lately[FXT_THREAD_SLOTS];
	uint32_t count, hand;
	struct hmap index;   /* key -> slot */
	/* the slot of a key looked up lately, by the key's hash: most look-ups
	 * need no probe of the index */
	uint64_t recent_key[RECENT_THREADS];
	uint8_t recent_slot[RECENT_THREADS];
};

struct fxt_writer {
	char *path;
	int fd;
	gzFile gz; /* NULL for a plain file */
	uint64_t *buf;
	size_t buf_words;
	uint64_t bytes;
	/* in the file: whole buffers written before the first error */
	uint64_t bytes_written, events_written;
	uint64_t events_buffered;
	uint64_t write_ns;   /* in write(2) or gzwrite */
	bool room_unheld;    /* the file system holds no room ahead (fallocate unsupported) */
	char error[256];

	/* when a table is full, its least recently used entry goes; a stable
	 * string's is kept for good.  No entry is removed but to be replaced
	 * at once: the entries are those of indexes 0 to count - 1. */
	struct lru_set strings;   /* struct string_slot */
	struct address_hit by_address[ADDRESS_CACHE_SIZE];
	struct pinned_string pinned[PINNED_INDEX_SIZE]; /* by address */
	unsigned npinned;

	struct thread_table threads;
};

static void set_error(struct fxt_writer *w, const char *what, const char *why)
{
	if (!w->error[0])
		snprintf(w->error, sizeof(w->error), "%s %s: %s", what, w->path, why);
}

/* False when data could not be written whole (the error is kept). */
static bool write_out(struct fxt_writer *w, const void *data, size_t len)
{
	if (w->error[0])
		return false; /* the file is already broken; the first error is kept */
	if (w->gz) {
		if (len && gzwrite(w->gz, data, (unsigned)len) != (int)len) {
			int errnum;
			const char *msg = gzerror(w->gz, &errnum);
			set_error(w, "write", errnum == Z_ERRNO ? strerror(errno) : msg);
			return false;
		}
		return true;
	}
	const char *p = data;
	while (len) {
		ssize_t n = write(w->fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			set_error(w, "write", n < 0 ? strerror(errno) : "no progress");
			return false;
		}
		p += n;
		len -= (size_t)n;
	}
	return true;
}

/* A buffer that could not be written whole (a full disk) is taken back
 * from the file, which then ends after the last whole record: a trace
 * readable up to there. */
static void drain_buffer(struct fxt_writer *w)
{
	bool had_error = w->error[0] != 0;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	bool written = write_out(w, w->buf, w->buf_words * 8);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	w->write_ns += (uint64_t)((t1.tv_sec - t0.tv_sec) * 1000000000ll + (t1.tv_nsec - t0.tv_nsec));
	if (written) {
		w->bytes_written += w->buf_words * 8;
		w->events_written += w->events_buffered;
	} else if (!had_error && !w->gz && ftruncate(w->fd, (off_t)w->bytes_written) != 0) {
		/* not a regular file (/dev/full, a pipe): nothing to take back */
	}
	w->buf_words = 0;
	w->events_buffered = 0;
}

/* Space for one whole record of nwords words. */
static uint64_t *reserve(struct fxt_writer *w, size_t nwords)
{
	if (w->buf_words + nwords > WRITE_BUFFER_BYTES / 8)
		drain_buffer(w);
	uint64_t *p = w->buf + w->buf_words;
	w->buf_words += nwords;
	w->bytes += nwords * 8;
	return p;
}

static size_t words_for_bytes(size_t len)
{
	return (len + 7) / 8;
}

/* Copies len bytes at p, zero-padding to a whole word. */
static void put_padded(uint64_t *p, const char *s, size_t len)
{
	size_t words = words_for_bytes(len);
	if (words)
		p[words - 1] = 0;
	memcpy(p, s, len);
}

/* Length of s as stored: cut at FXT_MAX_STRING_LEN on a UTF-8 boundary. */
static size_t stored_length(const char *s)
{
	size_t len = strnlen(s, FXT_MAX_STRING_LEN + 1);
	if (len > FXT_MAX_STRING_LEN) {
		len = FXT_MAX_STRING_LEN;
		while (len > 0 && ((unsigned char)s[len] & 0xc0) == 0x80)
			len--;
	}
	return len;
}

static struct string_slot *string_slot(const struct fxt_writer *w, uint16_t slot)
{
	return lru_at(&w->strings, slot - 1u);
}

static uint16_t slot_of(const struct fxt_writer *w, const struct string_slot *slot)
{
	return (uint16_t)(lru_index(&w->strings, slot) + 1);
}

static size_t address_home(const char *s)
{
	uintptr_t a = (uintptr_t)s;
	return (size_t)(a ^ a >> 10);
}

static struct address_hit *address_hit(struct fxt_writer *w, const char *s)
{
	return &w->by_address[address_home(s) & (ADDRESS_CACHE_SIZE - 1)];
}

/* s's entry among the stable strings, or the empty entry where it would go. */
static struct pinned_string *pinned_entry(struct fxt_writer *w, const char *s)
{
	const size_t mask = PINNED_INDEX_SIZE - 1;
	size_t pos = address_home(s) & mask;
	while (w->pinned[pos].s && w->pinned[pos].s != s)
		pos = (pos + 1) & mask;
	return &w->pinned[pos];
}

bool fxt_string_is_stable(struct fxt_writer *w, const char *s)
{
	return s && w->npinned && pinned_entry(w, s)->s == s;
}

void fxt_string_stable(struct fxt_writer *w, const char *s)
{
	if (!s || !s[0] || w->npinned >= FXT_PINNED_MAX)
		return;
	struct pinned_string *p = pinned_entry(w, s);
	if (!p->s) {
		p->s = s;
		w->npinned++;
	}
}

/* The slot holding s, found by content; 0 if none, and in *key then the
 * key s would take. */
static uint16_t string_find(struct fxt_writer *w, const char *s, size_t len, uint64_t hash, uint64_t *key)
{
	for (*key = hash;; ++*key) {
		struct string_slot *slot = lru_find(&w->strings, *key, len);
		if (!slot)
			return 0;
		if (memcmp(slot->text, s, len) == 0)
			return slot_of(w, slot);
	}
}

/* Gives s a slot (the least recently used one when all are taken) and
 * writes its string record. */
static uint16_t string_add(struct fxt_writer *w, const char *s, size_t len, uint64_t key)
{
	if (w->strings.count == FXT_STRING_SLOTS) {
		struct string_slot *oldest = lru_oldest(&w->strings);
		free(oldest->text);
		lru_remove(&w->strings, oldest);   /* its index is the next one added */
	}
	struct string_slot *slot = lru_add(&w->strings, key, len);
	slot->text = xcalloc(len + 1, 1);
	memcpy(slot->text, s, len);
	slot->len = (uint32_t)len;
	uint16_t i = slot_of(w, slot);

	size_t words = 1 + words_for_bytes(len);
	uint64_t *p = reserve(w, words);
	p[0] = FXT_REC_STRING | (uint64_t)words << 4 | (uint64_t)i << 16 | (uint64_t)len << 32;
	put_padded(p + 1, s, len);
	return i;
}

/* s's string reference past the first look (string_ref): compared, or
 * found by its text, or added.  Apart, so that the common case is a few
 * instructions with no registers to save. */
static __attribute__((noinline)) uint16_t string_ref_slow(struct fxt_writer *w, const char *s,
							     struct address_hit *hit)
{
	if (hit->s == s) {
		struct string_slot *slot = string_slot(w, hit->slot);
		/* strncmp stops at s's end; then s[len] is inside s */
		if (strncmp(slot->text, s, slot->len) == 0 && !s[slot->len]) {
			lru_touch(&w->strings, slot);
			return hit->slot;
		}
	}
	struct pinned_string *pin = w->npinned ? pinned_entry(w, s) : NULL;
	if (pin && !pin->s)
		pin = NULL;
	if (pin && pin->slot) {
		*hit = (struct address_hit){.s = s, .slot = pin->slot, .pinned = true};
		return pin->slot;
	}
	size_t len = stored_length(s);
	uint64_t key;
	uint16_t i = string_find(w, s, len, hmap_hash_bytes(s, len), &key);
	if (i)
		lru_touch(&w->strings, string_slot(w, i));
	else
		i = string_add(w, s, len, key);
	if (pin) { /* a stable string's slot is its own for good */
		lru_keep(&w->strings, string_slot(w, i));
		pin->slot = i;
	}
	*hit = (struct address_hit){.s = s, .slot = i, .pinned = pin != NULL};
	return i;
}

/* Most strings are a program's names, interned and pinned: found by their
 * address alone. */
static inline uint16_t string_ref(struct fxt_writer *w, const char *s)
{
	if (!s || !s[0])
		return 0;
	struct address_hit *hit = address_hit(w, s);
	if (hit->s == s && hit->pinned)
		return hit->slot;
	return string_ref_slow(w, s, hit);
}

uint16_t fxt_string_ref(struct fxt_writer *w, const char *s)
{
	return string_ref(w, s);
}

uint16_t fxt_stable_ref(struct fxt_writer *w, const char *s)
{
	if (!s || !s[0])
		return 0;
	struct address_hit *hit = address_hit(w, s);
	if (hit->s == s && hit->pinned)
		return hit->slot;
	return fxt_string_is_stable(w, s) ? string_ref_slow(w, s, hit) : 0;
}

static size_t recent_thread(uint64_t key)
{
	return (size_t)(key * 0x9e3779b97f4a7c15ull >> 58) & (RECENT_THREADS - 1);
}

/* A slot for a new thread: a free one, or the first the clock hand finds
 * not used since it last passed (its thread leaves the index). */
static uint32_t thread_slot_free(struct thread_table *t)
{
	if (t->count < FXT_THREAD_SLOTS)
		return t->count++;
	while (t->used_lately[t->hand]) {
		t->used_lately[t->hand] = false;
		t->hand = (t->hand + 1) % FXT_THREAD_SLOTS;
	}
	uint32_t slot = t->hand;
	t->hand = (t->hand + 1) % FXT_THREAD_SLOTS;
	hmap_remove(&t->index, t->key[slot], 0);
	return slot;
}

uint8_t fxt_thread_ref(struct fxt_writer *w, uint32_t pid, uint32_t tid)
{
	struct thread_table *t = &w->threads;
	uint64_t key = (uint64_t)pid << 32 | tid;
	size_t r = recent_thread(key);
	uint32_t slot = t->recent_slot[r];
	if (t->recent_key[r] != key || slot >= t->count || t->key[slot] != key) {
		uint64_t *found = hmap_find(&t->index, key, 0);
		if (found) {
			slot = (uint32_t)*found;
		} else {
			slot = thread_slot_free(t);
			t->key[slot] = key;
			bool created;
			*hmap_insert(&t->index, key, 0, &created) = slot;
			uint64_t *p = reserve(w, 3);
			p[0] = FXT_REC_THREAD | 3ull << 4 | (uint64_t)(slot + 1) << 16;
			p[1] = pid;
			p[2] = tid;
		}
		t->recent_key[r] = key;
		t->recent_slot[r] = (uint8_t)slot;
	}
	t->used_lately[slot] = true;
	return (uint8_t)(slot + 1);
}

struct encoded_arg {
	uint64_t header, value;
	unsigned words; /* 1 or 2 */
};

/* Integers that fit in 32 bits use the one-word int32/uint32 forms. */
static struct encoded_arg encode_arg(struct fxt_writer *w, const struct ut_arg *a)
{
	struct encoded_arg e = { 0, 0, 1 };
	uint64_t type;
	switch (a->kind) {
	case UT_ARG_INT:
		if (a->i >= INT32_MIN && a->i <= INT32_MAX) {
			type = FXT_ARG_INT32;
			e.header = (uint64_t)(uint32_t)(int32_t)a->i << 32;
		} else {
			type = FXT_ARG_INT64;
			e.value = (uint64_t)a->i;
			e.words = 2;
		}
		break;
	case UT_ARG_UINT:
		if (a->u <= UINT32_MAX) {
			type = FXT_ARG_UINT32;
			e.header = a->u << 32;
		} else {
			type = FXT_ARG_UINT64;
			e.value = a->u;
			e.words = 2;
		}
		break;
	case UT_ARG_DOUBLE:
		type = FXT_ARG_DOUBLE;
		memcpy(&e.value, &a->d, 8);
		e.words = 2;
		break;
	case UT_ARG_BOOL:
		type = FXT_ARG_BOOL;
		e.header = (uint64_t)(a->b ? 1 : 0) << 32;
		break;
	case UT_ARG_STR:
		type = FXT_ARG_STRING;
		e.header = (uint64_t)string_ref(w, a->s) << 32;
		break;
	case UT_ARG_PTR:
		type = FXT_ARG_POINTER;
		e.value = a->u;
		e.words = 2;
		break;
	case UT_ARG_KOID:
		type = FXT_ARG_KOID;
		e.value = a->u;
		e.words = 2;
		break;
	default: /* not a kind the API defines: keep the name, drop the value */
		type = FXT_ARG_NULL;
		break;
	}
	e.header |= type | (uint64_t)e.words << 4 | (uint64_t)string_ref(w, a->name) << 16;
	return e;
}

static unsigned encode_args(struct fxt_writer *w, const struct ut_arg *args, unsigned nargs,
			    struct encoded_arg *out)
{
	unsigned words = 0;
	for (unsigned i = 0; i < nargs; i++) {
		out[i] = encode_arg(w, &args[i]);
		words += out[i].words;
	}
	return words;
}

static uint64_t *put_args(uint64_t *p, const struct encoded_arg *enc, unsigned nargs)
{
	for (unsigned i = 0; i < nargs; i++) {
		*p++ = enc[i].header;
		if (enc[i].words == 2)
			*p++ = enc[i].value;
	}
	return p;
}

static bool event_has_type_word(enum fxt_event_type type)
{
	return type == FXT_EV_COUNTER || type >= FXT_EV_DURATION_COMPLETE;
}

/* An event record with its thread and names interned already (refs):
 * interning may write string and thread records, which must come before
 * the event. */
struct event_refs {
	uint64_t thread, cat, name;
};

static struct event_refs event_refs(struct fxt_writer *w, uint32_t pid, uint32_t tid, const char *category,
				    const char *name)
{
	return (struct event_refs){fxt_thread_ref(w, pid, tid), string_ref(w, category), string_ref(w, name)};
}

/* Inlined: a call passing the refs costs more than the flow point saves. */
static inline __attribute__((always_inline)) void write_event(struct fxt_writer *w, enum fxt_event_type type,
							      uint64_t ts, struct event_refs refs,
							      const struct ut_arg *args, unsigned nargs,
							      uint64_t type_word)
{
	if (nargs > FXT_MAX_ARGS)
		nargs = FXT_MAX_ARGS;
	uint64_t thread = refs.thread, cat = refs.cat, nm = refs.name;
	struct encoded_arg enc[FXT_MAX_ARGS];
	size_t words = 2 + encode_args(w, args, nargs, enc) + event_has_type_word(type);

	uint64_t *p = reserve(w, words);
	w->events_buffered++;
	p[0] = FXT_REC_EVENT | (uint64_t)words << 4 | (uint64_t)type << 16 | (uint64_t)nargs << 20 |
	       thread << 24 | cat << 32 | nm << 48;
	p[1] = ts;
	p = put_args(p + 2, enc, nargs);
	if (event_has_type_word(type))
		*p = type_word;
}

void fxt_write_event(struct fxt_writer *w, enum fxt_event_type type, uint64_t ts,
		     uint32_t pid, uint32_t tid, const char *category, const char *name,
		     const struct ut_arg *args, unsigned nargs, uint64_t type_word)
{
	write_event(w, type, ts, event_refs(w, pid, tid, category, name), args, nargs, type_word);
}

/* The instant's refs serve the flow record too: the instant's arguments
 * intern strings after them, but those take the least recently used
 * slots, not the ones just used. */
void fxt_write_flow_point(struct fxt_writer *w, enum fxt_event_type flow, uint64_t ts, uint32_t pid,
			  uint32_t tid, const char *category, const char *name, const struct ut_arg *args,
			  unsigned nargs, uint64_t correlation_id)
{
	struct event_refs refs = event_refs(w, pid, tid, category, name);
	write_event(w, FXT_EV_INSTANT, ts, refs, args, nargs, 0);
	write_event(w, flow, ts, refs, NULL, 0, correlation_id);
}

void fxt_write_kernel_object(struct fxt_writer *w, enum fxt_object_type type, uint64_t koid,
			     const char *name, const struct ut_arg *args, unsigned nargs)
{
	if (nargs > FXT_MAX_ARGS)
		nargs = FXT_MAX_ARGS;
	uint64_t nm = string_ref(w, name);
	struct encoded_arg enc[FXT_MAX_ARGS];
	size_t words = 2 + encode_args(w, args, nargs, enc);

	uint64_t *p = reserve(w, words);
	p[0] = FXT_REC_KERNEL_OBJECT | (uint64_t)words << 4 | (uint64_t)type << 16 | nm << 24 |
	       (uint64_t)nargs << 40;
	p[1] = koid;
	put_args(p + 2, enc, nargs);
}

/* A scheduling record: header, timestamp, the thread words, arguments. */
static void write_scheduling(struct fxt_writer *w, enum fxt_sched_type type, uint64_t fields,
			     uint64_t ts, const uint64_t *tids, unsigned ntids,
			     const struct ut_arg *args, unsigned nargs)
{
	if (nargs > FXT_MAX_ARGS)
		nargs = FXT_MAX_ARGS;
	struct encoded_arg enc[FXT_MAX_ARGS];
	size_t words = 2 + ntids + encode_args(w, args, nargs, enc);

	uint64_t *p = reserve(w, words);
	p[0] = FXT_REC_SCHEDULING | (uint64_t)words << 4 | (uint64_t)nargs << 16 | fields |
	       (uint64_t)type << 60;
	p[1] = ts;
	memcpy(p + 2, tids, ntids * sizeof(*tids));
	put_args(p + 2 + ntids, enc, nargs);
}

void fxt_write_context_switch(struct fxt_writer *w, uint64_t ts, uint32_t cpu,
			      enum fxt_thread_state outgoing, uint64_t outgoing_tid,
			      uint64_t incoming_tid, const struct ut_arg *args, unsigned nargs)
{
	uint64_t tids[] = { outgoing_tid, incoming_tid };
	uint64_t fields = (uint64_t)(cpu & FXT_MAX_CPU) << 20 | (uint64_t)(outgoing & 0xf) << 36;
	write_scheduling(w, FXT_SCHED_CONTEXT_SWITCH, fields, ts, tids, 2, args, nargs);
}

void fxt_write_thread_wakeup(struct fxt_writer *w, uint64_t ts, uint32_t cpu, uint64_t tid,
			     const struct ut_arg *args, unsigned nargs)
{
	uint64_t fields = (uint64_t)(cpu & FXT_MAX_CPU) << 20;
	write_scheduling(w, FXT_SCHED_THREAD_WAKEUP, fields, ts, &tid, 1, args, nargs);
}

static void write_preamble(struct fxt_writer *w)
{
	*reserve(w, 1) = FXT_MAGIC;

	size_t name_len = strlen(FXT_PROVIDER_NAME);
	size_t words = 1 + words_for_bytes(name_len);
	uint64_t *p = reserve(w, words);
	p[0] = FXT_REC_METADATA | (uint64_t)words << 4 | (uint64_t)FXT_META_PROVIDER_INFO << 16 |
	       (uint64_t)FXT_PROVIDER_ID << 20 | (uint64_t)name_len << 52;
	put_padded(p + 1, FXT_PROVIDER_NAME, name_len);

	/* after provider info, which resets the tick rate */
	p = reserve(w, 2);
	p[0] = FXT_REC_INITIALIZATION | 2ull << 4;
	p[1] = TICKS_PER_SECOND;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && strcmp(s + n - m, suffix) == 0;
}

struct fxt_writer *fxt_writer_open(const char *path, char *err, size_t errlen)
{
	if (strcmp(path, "-") == 0) {
		snprintf(err, errlen, "cannot write a trace to standard output");
		return NULL;
	}
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		snprintf(err, errlen, "open %s: %s", path, strerror(errno));
		return NULL;
	}
	gzFile gz = NULL;
	if (ends_with(path, ".gz")) {
		gz = gzdopen(fd, "wb");
		if (!gz) {
			snprintf(err, errlen, "gzip %s: cannot start compression", path);
			close(fd);
			return NULL;
		}
	}
	struct fxt_writer *w = xcalloc(1, sizeof(*w));
	w->path = xcalloc(strlen(path) + 1, 1);
	strcpy(w->path, path);
	w->fd = fd;
	w->gz = gz;
	w->buf = xcalloc(WRITE_BUFFER_BYTES / 8, 8);
	lru_init(&w->strings, sizeof(struct string_slot));
	write_preamble(w);
	return w;
}

int fxt_writer_flush(struct fxt_writer *w)
{
	drain_buffer(w);
	/* a sync flush makes everything so far decompressible on its own */
	if (w->gz && !w->error[0] && gzflush(w->gz, Z_SYNC_FLUSH) != Z_OK)
		set_error(w, "flush", "gzip flush failed");
	return w->error[0] ? -1 : 0;
}

const char *fxt_writer_error(const struct fxt_writer *w)
{
	return w->error[0] ? w->error : NULL;
}

uint64_t fxt_writer_bytes(const struct fxt_writer *w)
{
	return w->bytes;
}

uint64_t fxt_writer_events_written(const struct fxt_writer *w, uint64_t *bytes)
{
	*bytes = w->bytes_written;
	return w->events_written;
}

uint64_t fxt_writer_write_ns(const struct fxt_writer *w)
{
	return w->write_ns;
}

bool fxt_writer_hold_room(struct fxt_writer *w, uint64_t bytes)
{
	struct stat st;
	if (w->room_unheld || fstat(w->fd, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size >= bytes)
		return true;
	/* blocks past the end of the file, its size unchanged: the writes that
	 * reach them cannot fail for room */
	if (fallocate(w->fd, FALLOC_FL_KEEP_SIZE, st.st_size, (off_t)(bytes - (uint64_t)st.st_size)) == 0)
		return true;
	if (errno == ENOSPC || errno == EDQUOT)
		return false;
	w->room_unheld = true;   /* a full disk then cuts the file where a write fails */
	return true;
}

int fxt_writer_close(struct fxt_writer *w, char *err, size_t errlen)
{
	drain_buffer(w);
	/* the room held past the end goes back to the file system */
	struct stat st;
	if (!w->room_unheld && fstat(w->fd, &st) == 0 && S_ISREG(st.st_mode) && ftruncate(w->fd, st.st_size) != 0) {
		/* kept allocated: harmless */
	}
	if (w->gz) {
		int rc = gzclose(w->gz); /* finishes the stream and closes fd */
		if (rc != Z_OK)
			set_error(w, "close", rc == Z_ERRNO ? strerror(errno) : "gzip error");
	} else if (close(w->fd) != 0) {
		set_error(w, "close", strerror(errno));
	}
	int rc = 0;
	if (w->error[0]) {
		snprintf(err, errlen, "%s", w->error);
		rc = -1;
	}
	for (uint32_t i = 0; i < w->strings.count; i++)
		free(((struct string_slot *)lru_at(&w->strings, i))->text);
	lru_free(&w->strings);
	hmap_free(&w->threads.index);
	free(w->buf);
	free(w->path);
	free(w);
	return rc;
}
