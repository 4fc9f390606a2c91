/* What root runs code from.  Running as root, uring-trace loads code it
 * keeps on disk (cached BPF objects, the reader's compiled code, whole
 * compiled programs) and the clang library: a file another user could
 * write or replace would run with root's rights.  Root trusts a file only
 * when it and every directory above it are owned by root and writable by
 * root alone; a directory above may be writable by all when it is sticky
 * (/tmp), where no one can rename or remove what is not theirs.  Symbolic
 * links are not followed to the file.
 *
 * Other users load what they choose: for them every check passes and
 * files are read as ut_read_file reads them. */
#ifndef UT_BASE_TRUST_H
#define UT_BASE_TRUST_H
#include <stdbool.h>
#include <stddef.h>

/* Whether dir (an existing directory) is trusted; *real gets its path with
 * no symbolic link (use that from then on: a link on the way could be
 * changed).  false with why ("/home/u/.cache is owned by uid 1000, not
 * root").  parent: dir is where a directory will be made, and may be
 * sticky and writable by all (/tmp) as the directories above it. */
bool ut_trusted_dir(const char *dir, bool parent, char *real, size_t reallen, char *why, size_t whylen);

/* Whether path is a regular file there (for root: trusted, and itself not
 * a symbolic link); false with why and errno (ENOENT: there is none). */
bool ut_trusted_file(const char *path, char *why, size_t whylen);

/* ut_read_file of a trusted file, opened without following a link
 * (O_NOFOLLOW) and checked on the open file (fstat).  -1 with errno; when
 * the file exists but is not trusted, errno is EPERM and why says why. */
int ut_read_trusted_file(const char *path, void **data, size_t *len, char *why, size_t whylen);

#endif
