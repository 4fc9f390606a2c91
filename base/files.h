/* Whole files and file descriptors, read and written completely; each
 * returns 0, or -1 with errno set. */
#ifndef UT_BASE_FILES_H
#define UT_BASE_FILES_H
#include <stddef.h>

/* The file's bytes in *data (malloc'd, with a NUL after them, so text
 * files can be used as strings); a directory fails with EISDIR. */
int ut_read_file(const char *path, void **data, size_t *len);
/* The same from fd, open for reading at its start; fd is closed. */
int ut_read_open_file(int fd, void **data, size_t *len);
/* Written to a temporary name next to path, then renamed over it. */
int ut_write_file_atomic(const char *path, const void *data, size_t len);
/* That temporary name, unique per process ("" when too long). */
void ut_temp_path(char *tmp, size_t len, const char *path);
/* read(2) until len bytes came (EIO at the end of the file first). */
int ut_read_all(int fd, void *data, size_t len);
int ut_write_all(int fd, const void *data, size_t len);

#endif
