/* Parser entry point and the state the lexer and parser share. */
#ifndef UT_PARSE_H
#define UT_PARSE_H
#include <stdbool.h>
#include "compiler/ast.h"
#include "compiler/diag.h"

struct parse_ctx {
	void *scanner;
	struct diag *diag;
	const char *file;     /* interned name used in locations */
	struct node *items;   /* the parsed top-level items */
	/* lexer state: probe specs ("kind:a:b") only start top-level items */
	int brace_depth, paren_depth;
	bool want_spec;       /* the next word may be a probe spec */
	bool in_probe_list;   /* after a spec: ',' and '|' lead to another */
	bool want_spec_after_alias; /* inside "probe NAME =" */
	bool in_pred;         /* between the predicate's slashes */
	bool in_spec_fields;  /* inside "kind:target(...)" */
	int last_token;
	/* where the last token ended: end of input is reported there */
	int end_line, end_col;
	struct ut_loc comment_loc;   /* start of the open block comment */
	int skipped_ifs;             /* #if nesting inside a skipped #ifndef BPFTRACE_HAVE_BTF */
};

/* Parses text (named file in messages) and returns its items, or NULL with
 * errors reported to d.  The text must outlive the diag (it is quoted). */
struct node *ut_parse(const char *file, const char *text, struct diag *d);

#endif
