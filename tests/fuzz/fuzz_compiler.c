/* libFuzzer target for the compiler front end: the input is script text.
 * Each input is parsed alone (lexer + parser) and then compiled (checker +
 * code generator) against the kernel that UT_BTF and UT_TRACEFS name (make
 * fuzz unpacks tests/kernel/6.18 there; without them, the running one), as
 * -e text or, for inputs of odd length, from a file.  Errors are expected
 * and go to /dev/null; crashes, sanitizer reports, leaks and hangs are bugs.
 *
 * Build and run: make fuzz [FUZZ_SECONDS=60] (tests/fuzz/fuzz.mk). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/compiler.h"
#include "compiler/diag.h"
#include "kernel/kernel.h"
#include "compiler/parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct ut_kernel *kernel;
static FILE *devnull;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 64 * 1024)
		return 0;
	if (!kernel) {
		kernel = ut_kernel_open();
		devnull = fopen("/dev/null", "w");
		if (!kernel || !devnull)
			abort();
	}
	/* Script text is a C string: bytes after a NUL are ignored. */
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;

	struct diag d;
	diag_init(&d, devnull);
	diag_add_source(&d, "fuzz.ut", text);
	struct node *items = ut_parse("fuzz.ut", text, &d);
	node_free(items);
	diag_free(&d);

	diag_init(&d, devnull);
	/* No stdlib and no -I: imports can only find files in the current
	 * directory (make fuzz runs in a scratch directory).  Inputs of odd
	 * length are compiled from a file, to reach the file reader too. */
	struct ut_compile_opts o = {.file = NULL, .text = text};
	if (size % 2) {
		FILE *f = fopen("fuzz-input.ut", "wb");
		if (!f)
			abort();
		fwrite(data, 1, size, f);
		fclose(f);
		o.file = "fuzz-input.ut";
		o.text = NULL;
	}
	struct ut_program *p = ut_compile(&o, kernel, &d);
	if (p && !p->bpf_c)
		abort();   /* a program without C and without errors */
	if (!p && d.errors == 0)
		abort();   /* a failure that reported nothing */
	ut_program_free(p);
	diag_free(&d);
	free(text);
	return 0;
}
