/* What the running kernel offers, as the compiler sees it: tracepoints
 * (tracefs format files) and types (vmlinux BTF through libbpf's BTF API).
 * The checker resolves probes and fields through this; nothing else in the
 * compiler reads tracefs or BTF directly. */
#ifndef UT_KERNEL_H
#define UT_KERNEL_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct btf;
struct ut_kernel;

/* Opens lazily: tracefs is mounted on first use if needed (when we may),
 * BTF is loaded on first use.  Paths can be overridden for tests with the
 * environment variables UT_TRACEFS (a directory laid out like
 * /sys/kernel/tracing) and UT_BTF (a BTF file). */
struct ut_kernel *ut_kernel_open(void);
void ut_kernel_close(struct ut_kernel *k);
/* Last error text (why a tracefs or BTF look-up failed), or "". */
const char *ut_kernel_error(const struct ut_kernel *k);
/* Kernel release (uname -r), for messages. */
const char *ut_kernel_release(const struct ut_kernel *k);

/* A field of a classic tracepoint record, from its format file.  common_*
 * fields are left out. */
struct ut_tp_field {
	char *name;
	char *c_type;        /* as written in the format: "unsigned int", "void *", "char[16]" */
	uint32_t offset, size;
	bool is_signed;
	bool is_pointer;
	bool is_string;      /* char array, or __data_loc char[] */
	bool is_data_loc;    /* __data_loc: u32 (len << 16 | offset); c_type
	                      * then omits the prefix: "char[]", "u64[]" */
	uint32_t array_len;  /* element count for arrays, else 0 */
};

struct ut_tracepoint {
	char *category, *name;
	uint32_t id;               /* from the id file */
	unsigned nfields;
	struct ut_tp_field *fields;
};

/* NULL when the tracepoint does not exist here.  Cached; owned by k. */
const struct ut_tracepoint *ut_kernel_tracepoint(struct ut_kernel *k, const char *category,
						 const char *name);
/* Tracepoints whose "category:name" matches a glob (*, ?, [..]), sorted.
 * Returns the count; *out is a malloc'ed array of malloc'ed strings
 * "category:name" (free with ut_strv_free). -1 on error. */
int ut_kernel_tracepoints_matching(struct ut_kernel *k, const char *glob, char ***out);
/* BTF functions (kprobe/fentry targets) matching a glob, same contract. */
int ut_kernel_functions_matching(struct ut_kernel *k, const char *glob, char ***out);
void ut_strv_free(char **v, int n);

/* BTF access.  Type ids are vmlinux BTF ids; 0 is void. */
const struct btf *ut_kernel_btf(struct ut_kernel *k);

/* Resolved shape of a BTF type, typedefs and qualifiers stripped. */
enum ut_ktype_kind {
	UT_KT_VOID, UT_KT_INT, UT_KT_BOOL, UT_KT_ENUM, UT_KT_PTR,
	UT_KT_STRUCT, UT_KT_UNION, UT_KT_ARRAY, UT_KT_FUNC_PROTO, UT_KT_OTHER
};

struct ut_ktype {
	enum ut_ktype_kind kind;
	int32_t id;          /* resolved id (after typedefs/modifiers) */
	uint32_t size;       /* bytes; pointers 8 */
	bool is_signed;
	int32_t target;      /* PTR: pointee id (resolved); ARRAY: element id (resolved too) */
	uint32_t nelems;     /* ARRAY */
	bool is_char;        /* INT of size 1 named char/signed char/unsigned char */
	char name[128];      /* STRUCT/UNION/ENUM: tag name ("io_kiocb"), INT: "unsigned int" */
};

int ut_kernel_type(struct ut_kernel *k, int32_t id, struct ut_ktype *out);
/* C spelling of a type for generated code: "struct io_kiocb *", "u64",
 * "enum req_opf".  Writes into buf; returns buf. */
/* Qualifiers are dropped; pointers to anonymous structs/unions, functions
 * or arrays are "void *"; arrays are "char[16]".  "" when the type cannot
 * be spelled (an anonymous struct/union by value, a bad id, no BTF). */
const char *ut_kernel_type_c(struct ut_kernel *k, int32_t id, char *buf, size_t len);
/* id of the type named name of BTF kind (BTF_KIND_TYPEDEF, ...), or -1. */
int32_t ut_kernel_find(struct ut_kernel *k, const char *name, int kind);
/* id of the typedef btf_trace_NAME that stands for BTF tracepoint NAME
 * (what a tp_btf or raw_tp program is loaded against), or -1. */
int32_t ut_kernel_tp_btf_typedef(struct ut_kernel *k, const char *tp_name);
/* id of `struct NAME` (or union), or -1. */
int32_t ut_kernel_struct(struct ut_kernel *k, const char *name);

/* What a pointer of C type c_type points to ("struct __kernel_timespec *",
 * "const char *const *": the BTF id of the struct, of a char pointer), as
 * tracepoint formats spell pointers; 0 when unknown. */
int32_t ut_kernel_c_pointee(struct ut_kernel *k, const char *c_type);

/* A member of a struct or union, searched through anonymous members.
 * offset_bits is from the start of the outer struct. */
struct ut_member {
	int32_t type;        /* member type id (unresolved: keep typedef names) */
	uint32_t offset_bits;
	uint32_t bitfield_size;  /* 0 unless a bitfield */
	bool via_anon;       /* found inside an anonymous struct/union */
};
/* 0 and *out when found, -1 otherwise. */
int ut_kernel_member(struct ut_kernel *k, int32_t struct_id, const char *member,
		     struct ut_member *out);
/* Names of all members (through anonymous members), for suggestions.
 * Returns the count; *out is malloc'ed (free with ut_strv_free). */
int ut_kernel_member_names(struct ut_kernel *k, int32_t struct_id, char ***out);

/* Parameters of a function or of a BTF-typed tracepoint. */
struct ut_param {
	char name[64];       /* "" when BTF has no name */
	int32_t type;        /* unresolved type id */
};
/* tp_btf: from typedef btf_trace_NAME (a pointer to a prototype whose first
 * parameter is the void *ctx, left out).  -1 when absent. */
/* Its parameters are unnamed in BTF; names come from FUNC __traceiter_NAME
 * (same prototype, named).  For both functions *out is malloc'ed: free(). */
int ut_kernel_tp_btf_params(struct ut_kernel *k, const char *tp_name,
			    struct ut_param **out, unsigned *n);
/* kprobe/fentry: parameters and return type of BTF FUNC `func`.  -1 when absent. */
/* A varargs "..." marker is left out. */
int ut_kernel_func_params(struct ut_kernel *k, const char *func,
			  struct ut_param **out, unsigned *n, int32_t *ret_type);
/* The types of a BTF tracepoint's (tracepoint) or a function's parameters
 * (and its return type, after "->"), as C: "struct io_kiocb *, int".  A
 * compiled probe body reads its arguments by position, so a kernel whose
 * signature differs from the compiling kernel's must not run it.
 * -1 when absent (or longer than len). */
int ut_kernel_signature(struct ut_kernel *k, const char *name, bool tracepoint, char *buf, size_t len);
/* Value of an enumerator (any enum in BTF), e.g. "IORING_OP_READV". */
int ut_kernel_enum_value(struct ut_kernel *k, const char *enumerator, int64_t *value);

/* Whether the running kernel (not a module) has a symbol of that name in
 * /proc/kallsyms: what kaddr() and libbpf's __ksym externs resolve.  Data
 * symbols are there only with CONFIG_KALLSYMS_ALL. */
bool ut_kernel_has_symbol(const char *name);

/* The candidate closest to name by edit distance, when close enough to be
 * a likely typo (distance <= max(1, strlen/3)); NULL otherwise. */
const char *ut_suggest(const char *name, char *const *candidates, unsigned n);

#endif
