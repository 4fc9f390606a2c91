/* Printing the script's maps at exit: text like bpftrace (log2 histograms
 * drawn in ASCII) or JSON. */
#ifndef UT_SUMMARY_H
#define UT_SUMMARY_H
#include <stdbool.h>
#include <stdio.h>

#include "compiler/program.h"

struct bpf_object;
struct ut_user_maps;

/* Prints every map of prog: BPF maps from the loaded object, user-side
 * maps from the reader's tables (user). */
void ut_print_maps(const struct ut_program *prog, struct bpf_object *obj, const struct ut_user_maps *user, FILE *out);
/* The maps as a JSON object {"@name": [...], ...}. */
void ut_maps_json(const struct ut_program *prog, struct bpf_object *obj, const struct ut_user_maps *user, FILE *out);
/* Deletes every entry of the map named name ("@x"). */
void ut_clear_map(const struct ut_program *prog, struct bpf_object *obj, struct ut_user_maps *user, const char *name);


#endif
