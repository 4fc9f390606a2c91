#include "base/files.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/alloc.h"

/* read(2) until len bytes came: 0, or -1 with errno (EIO at end of file). */
int ut_read_all(int fd, void *data, size_t len)
{
	char *p = data;
	while (len) {
		ssize_t r = read(fd, p, len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			errno = r == 0 ? EIO : errno;
			return -1;
		}
		p += r;
		len -= (size_t)r;
	}
	return 0;
}

int ut_write_all(int fd, const void *data, size_t len)
{
	const char *p = data;
	while (len) {
		ssize_t w = write(fd, p, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -1;
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

int ut_read_open_file(int fd, void **data, size_t *len)
{
	struct stat st;
	int failed = fstat(fd, &st) != 0 ? errno : S_ISDIR(st.st_mode) ? EISDIR : 0;
	if (failed) {
		close(fd);
		errno = failed;
		return -1;
	}
	size_t size = (size_t)st.st_size;
	char *buf = xmalloc(size + 1);   /* + NUL so text files can be used as strings */
	if (ut_read_all(fd, buf, size) != 0) {
		int saved = errno;
		free(buf);
		close(fd);
		errno = saved;
		return -1;
	}
	close(fd);
	buf[size] = 0;
	*data = buf;
	*len = size;
	return 0;
}

int ut_read_file(const char *path, void **data, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	return fd < 0 ? -1 : ut_read_open_file(fd, data, len);
}

void ut_temp_path(char *tmp, size_t len, const char *path)
{
	if ((size_t)snprintf(tmp, len, "%s.tmp.%d", path, (int)getpid()) >= len)
		tmp[0] = 0;   /* too long: the open fails, as for path itself */
}

int ut_write_file_atomic(const char *path, const void *data, size_t len)
{
	char tmp[PATH_MAX];
	ut_temp_path(tmp, sizeof(tmp), path);
	/* a new file: never through a link someone left at the temporary name */
	unlink(tmp);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	if (ut_write_all(fd, data, len) != 0) {
		int saved = errno;
		close(fd);
		unlink(tmp);
		errno = saved;
		return -1;
	}
	if (close(fd) != 0 || rename(tmp, path) != 0) {
		int saved = errno;
		unlink(tmp);
		errno = saved;
		return -1;
	}
	return 0;
}

