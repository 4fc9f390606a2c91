/* Loading the reader's compiled user side (compiler/gen_native.h): an
 * x86-64 relocatable ELF object, as clang writes it, placed in memory of
 * the tracer's own and relocated here.  No linker and no file: the object
 * comes from the cache or from a .uto.  Other hosts, and objects with
 * what this loader does not know, run the interpreter (the caller's). */
#ifndef UT_NATIVE_H
#define UT_NATIVE_H
#include <stdbool.h>
#include <stddef.h>

/* A function the object may call, by name. */
struct ut_native_symbol {
	const char *name;
	void *address;
};

struct ut_native;

/* Whether this host runs compiled code (x86-64); elsewhere none is built
 * and the reader interprets. */
bool ut_native_supported(void);

/* The loaded object, its undefined symbols resolved from calls[]; NULL
 * with err when it cannot be (not x86-64, a relocation or section this
 * loader does not handle, a call to something not in calls[]). */
struct ut_native *ut_native_load(const void *obj, size_t len, const struct ut_native_symbol *calls,
				 unsigned ncalls, char *err, size_t errlen);
/* The address of the object's global function name, or NULL. */
void *ut_native_find(const struct ut_native *n, const char *name);
void ut_native_free(struct ut_native *n);

#endif
