/* The reader's side of a script as C for the host (split execution): the
 * same statements runtime/user_side.c interprets, one function a hit
 * event, built by the in-process clang and loaded by runtime/native.c. */
#ifndef UT_GEN_NATIVE_H
#define UT_GEN_NATIVE_H
#include <stdint.h>

#include "compiler/program.h"

/* The C of p's user side (malloc'ed), or NULL when it has none: for each
 * UT_EV_HIT event e with statements, `int ut_hit_<e>(struct ut_native_env
 * *, const unsigned char *record)`, 0 when the hit ended, 1 when it ran
 * out of steps (UT_HIT_MAX_STEPS).  It calls the reader through the
 * ut_native_* functions below, and memcpy, memmove, memset. */
char *ut_gen_native(const struct ut_program *p);

/* What the generated code calls, by these names (runtime/user_side.c). */
#define UT_NATIVE_CALLS(X) \
	X(ut_native_lookup) X(ut_native_value) X(ut_native_add) X(ut_native_take) \
	X(ut_native_delete) X(ut_native_emit) X(ut_native_entries) X(ut_native_percentile) \
	X(ut_native_enum)

/* A copy of a map's entries that a loop over it goes over
 * (ut_native_entries; the generated code declares it alike): n entries of
 * stride bytes, each its key, then at value_offset its value. */
struct ut_native_map_entries {
	const unsigned char *entries;
	uint32_t n, stride, value_offset;
};

#endif
