/* Fuchsia trace format (FXT) writer and reader: the public surface the
 * runtime and the command line use.  Record-level details stay inside
 * engine/. */
#ifndef UT_FXT_H
#define UT_FXT_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct fxt_writer;

/* Opens path for writing ("-" is not allowed); a name ending in ".gz" is
 * gzip-compressed.  Writes magic, provider info and the initialization
 * record (1 tick = 1 ns).  On failure returns NULL and a message in err. */
struct fxt_writer *fxt_writer_open(const char *path, char *err, size_t errlen);
/* Flushes buffered records; a trace flushed is valid up to that point. */
int fxt_writer_flush(struct fxt_writer *w);
/* Flushes and closes; returns 0, or -1 with the first write error in err. */
int fxt_writer_close(struct fxt_writer *w, char *err, size_t errlen);
/* First write error seen (NULL if none): writes never fail silently. */
const char *fxt_writer_error(const struct fxt_writer *w);
uint64_t fxt_writer_bytes(const struct fxt_writer *w);
/* Has the file system hold room for the file up to `bytes` (fallocate,
 * its size unchanged): false when there is none (a full disk, a quota);
 * true when the file system cannot hold room, or it is not a file. */
bool fxt_writer_hold_room(struct fxt_writer *w, uint64_t bytes);
/* The event records in the file and its size in *bytes: after a write
 * error, those before the buffer that failed (the file is cut there, on a
 * record boundary, when it is a regular file); with gzip, those handed to
 * zlib.  Flush first to count everything. */
uint64_t fxt_writer_events_written(const struct fxt_writer *w, uint64_t *bytes);
/* Wall-clock time spent handing buffers to the file (write, or zlib). */
uint64_t fxt_writer_write_ns(const struct fxt_writer *w);

#endif
