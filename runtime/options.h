/* What the command line asks for: runtime/main.c parses it into struct
 * options; the listing and the tracing session read their share. */
#ifndef UT_OPTIONS_H
#define UT_OPTIONS_H
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct options {
	const char *script;
	const char *program;        /* -e */
	const char *output;         /* -o */
	pid_t pid;                  /* -p */
	const char *command;        /* -c */
	const char *comm;           /* --comm */
	double duration;            /* -d, seconds; 0 = until stopped */
	double sample_pct;          /* --sample */
	size_t buffer_bytes;        /* --buffer */
	const char *list;           /* -l */
	bool list_given;
	bool emit_c, dump_ast, compile_only, verbose, quiet, summary_only;
	const char *json;
	const char *includes[32];
	unsigned nincludes;
	const char *defines[64];     /* -D NAME=VALUE, script flags --NAME[=VALUE] */
	unsigned ndefines;
	char *flag_defines[64];
};

#endif
