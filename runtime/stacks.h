/* The stacks that kstack and ustack record (the ut_stacks map, written by
 * the code compiler/gen.c generates), as text: kernel frames named from
 * /proc/kallsyms, user frames from the ELF symbols of the files the
 * process mapped.  A process's mappings are read while it exists, so the
 * frames of one that is gone before they were named stay addresses. */
#ifndef UT_STACKS_H
#define UT_STACKS_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "compiler/program.h"

struct bpf_object;

/* Starts on a loaded object (nothing to do when it has no ut_stacks).
 * watch: the -p/-c process, whose mappings are read on every poll while
 * it runs (it may end before its stacks are named); 0 for none. */
void ut_stacks_open(struct bpf_object *obj, const struct ut_program *prog, pid_t watch);

/* Called in the trace loop: names the frames of the stacks recorded since
 * the last call, while their processes exist. */
void ut_stacks_poll(void);

/* Stack id's frames, one a line ("vfs_read+0x4e"); "" for none (id 0).
 * The text lives until ut_stacks_close. */
const char *ut_stack_text(uint64_t id);

void ut_stacks_close(void);

/* One frame as text: "name+0xOFFSET", else "FILE+0xOFFSET" (user frames
 * in a file without a symbol there), else the address. */
void ut_kernel_frame(uint64_t ip, char *buf, size_t len);
void ut_user_frame(pid_t pid, uint64_t ip, char *buf, size_t len);

#endif
