/* Block devices by name and by number, read from sysfs: /sys/class/block
 * lists every disk and partition; /sys/dev/block/MAJ:MIN links to one. */
#include "kernel/disks.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void ut_disk_name(uint64_t dev, char *buf, size_t len)
{
	unsigned major = (unsigned)(dev >> 20), minor = (unsigned)(dev & 0xfffff);
	char path[64], target[PATH_MAX];
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u", major, minor);
	ssize_t n = readlink(path, target, sizeof(target) - 1);
	if (n <= 0) {
		snprintf(buf, len, "%u:%u", major, minor);
		return;
	}
	target[n] = 0;
	const char *slash = strrchr(target, '/');
	snprintf(buf, len, "%s", slash ? slash + 1 : target);
}

/* The disks of this machine in name order, space-separated, for messages. */
static void list_disks(char *buf, size_t len)
{
	size_t used = 0;
	buf[0] = 0;
	struct dirent **names;
	int n = scandir("/sys/block", &names, NULL, alphasort);
	for (int i = 0; i < n; i++) {
		if (names[i]->d_name[0] != '.' && used + 1 < len) {
			int w = snprintf(buf + used, len - used, "%s%s", used ? " " : "", names[i]->d_name);
			used += w > 0 ? (size_t)w : 0;
		}
		free(names[i]);
	}
	if (n >= 0)
		free(names);
}

int ut_disk_lookup(const char *name, uint32_t *dev, char *err, size_t errlen)
{
	char path[PATH_MAX], disks[512];
	unsigned major, minor;
	snprintf(path, sizeof(path), "/sys/class/block/%s/dev", name);
	FILE *f = strchr(name, '/') ? NULL : fopen(path, "r");
	int got = f ? fscanf(f, "%u:%u", &major, &minor) : 0;
	if (f)
		fclose(f);
	if (got != 2) {
		list_disks(disks, sizeof(disks));
		snprintf(err, errlen, "there is no disk '%s' on this machine; its disks are: %s", name,
			 disks[0] ? disks : "(none)");
		return -1;
	}
	snprintf(path, sizeof(path), "/sys/class/block/%s/partition", name);
	if (access(path, F_OK) == 0) {
		snprintf(path, sizeof(path), "/sys/class/block/%s/..", name);
		char whole[PATH_MAX];
		const char *slash = realpath(path, whole) ? strrchr(whole, '/') : NULL;
		snprintf(err, errlen, "'%s' is a partition; block requests are counted per disk: give its disk%s%s",
			 name, slash ? ", " : "", slash ? slash + 1 : "");
		return -1;
	}
	*dev = (major << 20) | minor;
	return 0;
}
