/* The user side of a probe (split execution): runs the statements the
 * compiler placed in the reader over each UT_EV_HIT record, in time order
 * with every other record.  Map statements update the reader's maps
 * (runtime/user_maps.h); trace constructs, printf, exit and clear fill a
 * record laid out as the kernel would have, which the decoder then
 * handles as if it came from the ring. */
#ifndef UT_USER_SIDE_H
#define UT_USER_SIDE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "compiler/program.h"

struct bpf_object;
struct ut_decoder;
struct ut_user_maps;

struct ut_user_side;

/* The user side of prog (loaded from a .uto, checked there, or made by
 * the compiler), over its user-side maps.  sample_permyriad: --sample
 * (0 or 10000: every flow). */
struct ut_user_side *ut_user_side_new(const struct ut_program *prog, struct ut_user_maps *maps,
				      uint32_t sample_permyriad);
void ut_user_side_free(struct ut_user_side *u);
/* The loaded object holding the maps the kernel keeps, which loops over
 * maps and percentile() read whole (until set, such maps read as empty). */
void ut_user_side_kernel_maps(struct ut_user_side *u, struct bpf_object *obj);

/* Runs hits with the compiled user side in obj (compiler/gen_native.h,
 * built from this program) where it has a function for the hit's event,
 * the interpreter elsewhere.  false with err when obj cannot be loaded:
 * the interpreter runs every hit. */
bool ut_user_side_compiled(struct ut_user_side *u, const void *obj, size_t len, char *err, size_t errlen);
/* How many events' hits run compiled code. */
unsigned ut_user_side_compiled_events(const struct ut_user_side *u);
/* Builds the program's user side with the clang wrapper (from the cache
 * when there) and has u run it, as ut_user_side_compiled: 1, 0 when the
 * program has no user side, -1 with err.  For tests and fuzzing: the
 * tracer builds it with the BPF object (runtime/main.c). */
int ut_user_side_build(struct ut_user_side *u, char *err, size_t errlen);
/* Whether UT_INTERPRET=1 asks the reader to interpret, compiled code or
 * not (tests compare the two; benchmarks measure them). */
bool ut_user_side_interpret_asked(void);

/* --sample: whether the trace keeps record rec (size bytes).  The user
 * side samples every point of the flow kinds it emits points of (and
 * their spans), those the kernel writes too: the compiler has the kernel
 * sample none of them (compiler/placement.c), so that one decision covers
 * a whole flow. */
bool ut_user_side_keeps(struct ut_user_side *u, const void *rec, size_t size);

/* Runs the statements of the UT_EV_HIT record rec (size bytes); the
 * records they emit go to d. */
void ut_user_side_run(struct ut_user_side *u, struct ut_decoder *d, const void *rec, size_t size);

#endif
