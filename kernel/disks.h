/* Block devices by name and by number, for diskdev() and diskname().
 * Numbers are the block tracepoints' encoding: (major << 20) | minor. */
#ifndef UT_DISKS_H
#define UT_DISKS_H
#include <stddef.h>
#include <stdint.h>

/* The name of block device dev ("vda", "loop0"), or "MAJOR:MINOR" when
 * this machine has no such device. */
void ut_disk_name(uint64_t dev, char *buf, size_t len);

/* The number of the disk called name; -1 with a reason in err when there
 * is no such disk or it is a partition (block requests belong to disks). */
int ut_disk_lookup(const char *name, uint32_t *dev, char *err, size_t errlen);

#endif
