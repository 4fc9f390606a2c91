/* Helpers of the kinds' compiler hooks (probes/resolve.c): the arguments a
 * body reads and their types, the program's context, absent targets.
 * Internal to probes/. */
#ifndef UT_PROBES_RESOLVE_H
#define UT_PROBES_RESOLVE_H
#include "compiler/passes.h"
#include "probes/kind.h"

/* Adds an argument of the alternative; cexpr (malloc'ed) reads it in C. */
struct probe_arg *probe_add_arg(struct alt_ctx *a, const char *name, struct type t, char *cexpr);
struct type probe_int_type(int size, bool sgn);
/* The C type of an integer of size bytes: "__u32", "__s64"... */
const char *probe_int_c_type(uint32_t size, bool sgn);

/* A kernel function's parameters and return value (kprobe, fentry and
 * their returns).  ret: a return probe (retval); in_regs: the arguments
 * are read from pt_regs (kprobes), else from the typed context array. */
int probe_resolve_function(struct compiler *c, struct alt_ctx *a, const char *target, struct ut_loc loc, bool ret,
			   bool in_regs);
/* BTF-typed parameters read from the context array (tp_btf, raw_tp,
 * fentry).  direct: pointers to BTF types are read as the verifier's
 * trusted pointers (not raw_tp's plain integers). */
void probe_typed_params(struct compiler *c, struct alt_ctx *a, struct ut_param *params, unsigned n, struct ut_loc loc,
			bool direct);
/* The argument types of BTF target name, so another kernel with other
 * ones does not run this body (ut_alt.signature); NULL when unknown. */
char *probe_signature(struct compiler *c, const char *name, bool tracepoint);
/* arg0 .. arg(n-1): the first n argument registers, raw (kprobes, uprobes). */
void probe_register_args(struct alt_ctx *a, unsigned n);

/* The context of BTF kinds: SEC("KIND/TARGET") and a __u64 *ctx array. */
void probe_header_ctx_array(struct compiler *c, struct alt_ctx *a, struct strbuf *out);

/* "SPEC does not exist on kernel R": the error at loc of an absent target. */
void probe_absent(struct compiler *c, struct ut_loc loc, const char *spec);
/* Notes the name closest to target among those def->list gives for glob
 * ("did you mean KIND:NAME?").  by_name: the names are "category:name",
 * target is the name.  Returns how many names matched glob; -1 when no
 * suggestion is sought (a target too long to compare, or empty). */
int probe_note_closest(struct compiler *c, const struct probe_kind_def *def, const char *target, const char *glob,
		       bool by_name);

/* The absent hook of kernel function kinds: the error, and the closest
 * function of the same first letter. */
void probe_absent_function(struct compiler *c, const struct probe_kind_def *def, struct ut_loc loc, const char *spec,
			   const char *target);

/* -l -v of kernel functions (list_args hooks): their parameters, and with
 * the _retval variant their return value too. */
void probe_list_function_args(struct ut_kernel *k, const char *name, FILE *out);
void probe_list_function_args_retval(struct ut_kernel *k, const char *name, FILE *out);
/* -l -v: BTF parameters as "    type name", then "    type retval" when
 * ret >= 0. */
void probe_list_params(struct ut_kernel *k, const struct ut_param *params, unsigned n, int32_t ret, FILE *out);

#endif
