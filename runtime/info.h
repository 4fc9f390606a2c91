/* `uring-trace --info`: what this host offers, for bug reports. */
#ifndef UT_INFO_H
#define UT_INFO_H
#include <stdio.h>

/* Prints kernel, BTF, tracefs, probe kinds (found by trial), capabilities,
 * lockdown, cache and compiler; returns 0 when tracing can work here. */
int ut_print_info(FILE *out);

#endif
