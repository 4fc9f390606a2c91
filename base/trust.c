#include "base/trust.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/files.h"

/* Only root's loads are checked: another user runs what they choose. */
static bool checked(void)
{
	return geteuid() == 0;
}

/* One file or directory as root trusts it; a sticky directory above the
 * one used may be writable by all. */
static bool trusted_stat(const struct stat *st, const char *path, bool sticky_ok, char *why, size_t len)
{
	if (st->st_uid != 0) {
		snprintf(why, len, "%s is owned by uid %u, not root", path, (unsigned)st->st_uid);
		return false;
	}
	bool sticky = S_ISDIR(st->st_mode) && (st->st_mode & S_ISVTX);
	if ((st->st_mode & (S_IWGRP | S_IWOTH)) && !(sticky_ok && sticky)) {
		snprintf(why, len, "%s is writable by %s", path,
			 (st->st_mode & S_IWOTH) ? "every user" : "its group");
		return false;
	}
	return true;
}

/* real (a path with no symbolic link) and every directory above it; real
 * itself may be sticky and writable by all when a directory is to be made
 * in it (parent). */
static bool trusted_chain(const char *real, bool parent, char *why, size_t len)
{
	char prefix[PATH_MAX];
	size_t n = strlen(real);
	if (real[0] != '/' || n >= sizeof(prefix)) {
		snprintf(why, len, "%s is not an absolute path", real);
		return false;
	}
	struct stat st;
	if (n > 1 && (lstat("/", &st) != 0 || !trusted_stat(&st, "/", true, why, len)))
		return false;
	for (size_t end = 1; end <= n; end++) {
		if (end < n && real[end] != '/')
			continue;
		memcpy(prefix, real, end);
		prefix[end] = 0;
		if (lstat(prefix, &st) != 0) {
			snprintf(why, len, "%s: %s", prefix, strerror(errno));
			return false;
		}
		if (S_ISLNK(st.st_mode)) {   /* replaced since it was resolved */
			snprintf(why, len, "%s is a symbolic link", prefix);
			return false;
		}
		if (!trusted_stat(&st, prefix, end < n || parent, why, len))
			return false;
	}
	return true;
}

bool ut_trusted_dir(const char *dir, bool parent, char *real, size_t reallen, char *why, size_t whylen)
{
	char resolved[PATH_MAX];
	if (!realpath(dir, resolved)) {
		snprintf(why, whylen, "%s: %s", dir, strerror(errno));
		return false;
	}
	if ((size_t)snprintf(real, reallen, "%s", resolved) >= reallen) {
		snprintf(why, whylen, "%s: path too long", dir);
		return false;
	}
	return !checked() || trusted_chain(resolved, parent, why, whylen);
}

/* path's directory resolved, and its last name: the file is then reached
 * through no link but, maybe, itself. */
static bool split_real(const char *path, char *real, size_t len, char *why, size_t whylen)
{
	const char *slash = strrchr(path, '/');
	const char *name = slash ? slash + 1 : path;
	char dir[PATH_MAX], resolved[PATH_MAX];
	snprintf(dir, sizeof(dir), "%.*s", !slash ? 1 : slash == path ? 1 : (int)(slash - path), slash ? path : ".");
	if (!*name) {
		snprintf(why, whylen, "%s is not a file", path);
		return false;
	}
	if (!realpath(dir, resolved)) {
		snprintf(why, whylen, "%s: %s", dir, strerror(errno));
		return false;
	}
	if ((size_t)snprintf(real, len, "%s/%s", strcmp(resolved, "/") ? resolved : "", name) >= len) {
		snprintf(why, whylen, "%s: path too long", path);
		errno = ENAMETOOLONG;
		return false;
	}
	return true;
}

bool ut_trusted_file(const char *path, char *why, size_t whylen)
{
	struct stat st;
	if (!checked()) {
		if (stat(path, &st) != 0) {
			snprintf(why, whylen, "%s: %s", path, strerror(errno));
			return false;
		}
		if (S_ISREG(st.st_mode))
			return true;
		snprintf(why, whylen, "%s is not a regular file", path);
		errno = EPERM;
		return false;
	}
	char real[PATH_MAX];
	if (!split_real(path, real, sizeof(real), why, whylen))
		return false;
	if (lstat(real, &st) != 0) {
		snprintf(why, whylen, "%s: %s", path, strerror(errno));
		return false;
	}
	if (!S_ISREG(st.st_mode))
		snprintf(why, whylen, "%s is %s", path, S_ISLNK(st.st_mode) ? "a symbolic link" : "not a regular file");
	else if (trusted_chain(real, false, why, whylen))
		return true;
	errno = EPERM;
	return false;
}

int ut_read_trusted_file(const char *path, void **data, size_t *len, char *why, size_t whylen)
{
	if (!checked())
		return ut_read_file(path, data, len);
	char real[PATH_MAX];
	if (!split_real(path, real, sizeof(real), why, whylen))
		return -1;
	int fd = open(real, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ELOOP) {
			snprintf(why, whylen, "%s is a symbolic link", path);
			errno = EPERM;
		}
		return -1;
	}
	/* the open file is the one checked: a rename after the open changes nothing */
	struct stat st;
	bool ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
	if (!ok)
		snprintf(why, whylen, "%s is not a regular file", path);
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%.*s", (int)(strrchr(real, '/') - real), real);
	if (!ok || !trusted_stat(&st, path, false, why, whylen) || !trusted_chain(dir[0] ? dir : "/", false, why, whylen)) {
		close(fd);
		errno = EPERM;
		return -1;
	}
	return ut_read_open_file(fd, data, len);
}
