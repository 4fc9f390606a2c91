/* `uring-trace -l [PATTERN]` (runtime/list.c). */
#ifndef UT_LIST_H
#define UT_LIST_H
#include <stdbool.h>

/* Prints the probes matching pattern (kind:glob; default tracepoint:*),
 * with_arguments: and the arguments each one's body can read.  Returns
 * the exit status: 0 when something matched. */
int ut_list_probes(const char *pattern, bool with_arguments);

#endif
