/* Minimal unit-test helpers: each CHECK prints PASS/FAIL lines that
 * tests/run.sh counts. */
#ifndef UT_TEST_CHECK_H
#define UT_TEST_CHECK_H
#include <stdio.h>
#include <string.h>

static int check_failures;

#define CHECK(name, cond)                                                    \
	do {                                                                     \
		if (cond) {                                                          \
			printf("PASS %s\n", name);                                       \
		} else {                                                             \
			printf("FAIL %s: %s (%s:%d)\n", name, #cond, __FILE__, __LINE__); \
			check_failures++;                                                \
		}                                                                    \
	} while (0)

#define CHECK_STR(name, got, want)                                           \
	do {                                                                     \
		const char *g_ = (got), *w_ = (want);                                \
		if (g_ && w_ && strcmp(g_, w_) == 0) {                               \
			printf("PASS %s\n", name);                                       \
		} else {                                                             \
			printf("FAIL %s: got \"%s\", want \"%s\" (%s:%d)\n", name,       \
			       g_ ? g_ : "(null)", w_ ? w_ : "(null)", __FILE__, __LINE__); \
			check_failures++;                                                \
		}                                                                    \
	} while (0)

#define CHECK_DONE() return check_failures ? 1 : 0

#endif
