/* Lexer, parser and checker: scripts parsed into AST shapes, locations
 * and messages; whole compilations (against the running kernel) that must
 * succeed or fail with given errors. */
#include "compiler/passes.h"
#include "compiler/parse.h"
#include "tests/unit/check.h"

#include <stdlib.h>

/* ---- parsing ---- */

struct parsed {
	struct diag d;
	struct node *items;
	char *msgs;      /* what the diag printed */
	size_t msgs_len;
	FILE *out;
};

static void parse(struct parsed *p, const char *text)
{
	memset(p, 0, sizeof(*p));
	p->out = open_memstream(&p->msgs, &p->msgs_len);
	diag_init(&p->d, p->out);
	diag_add_source(&p->d, "t.ut", text);
	p->items = ut_parse("t.ut", text, &p->d);
	fflush(p->out);
}

static void parsed_free(struct parsed *p)
{
	node_free(p->items);
	diag_free(&p->d);
	fclose(p->out);
	free(p->msgs);
}

static bool at(const struct node *n, int line, int col)
{
	return n && n->loc.line == line && n->loc.col == col;
}

static bool has(const char *haystack, const char *needle)
{
	return haystack && strstr(haystack, needle) != NULL;
}

static void test_probe_specs(void)
{
	struct parsed p;
	parse(&p, "tracepoint:io_uring:io_uring_complete { }");
	struct node *b = p.items;
	CHECK("spec: one probe block", b && b->kind == N_PROBE_BLOCK && !b->next);
	CHECK("spec: one alternative list", b && b->a && b->a->kind == N_PROBE_ALTS && !b->a->next);
	CHECK_STR("spec: one token", b && b->a ? b->a->a->str : NULL, "tracepoint:io_uring:io_uring_complete");
	CHECK("spec: not optional", b && b->a && b->a->num == 0);
	CHECK("spec: no predicate", b && !b->b);
	CHECK("spec: empty block", b && b->c && b->c->kind == N_BLOCK && !b->c->a);
	parsed_free(&p);

	parse(&p, "tracepoint:io_uring:* { }");
	CHECK_STR("spec: wildcard is one token", p.items ? p.items->a->a->str : NULL, "tracepoint:io_uring:*");
	parsed_free(&p);

	parse(&p, "uprobe:/usr/lib/x86_64-linux-gnu/liburing.so.2:io_uring_submit { }");
	CHECK_STR("spec: uprobe path is one token", p.items ? p.items->a->a->str : NULL,
		  "uprobe:/usr/lib/x86_64-linux-gnu/liburing.so.2:io_uring_submit");
	parsed_free(&p);

	parse(&p, "tracepoint:a:b | tracepoint:c:d? { }");
	struct node *alts = p.items ? p.items->a : NULL;
	CHECK("alternatives: two specs in one list", alts && node_list_len(alts->a) == 2 && !alts->next);
	CHECK_STR("alternatives: second", alts && alts->a->next ? alts->a->next->str : NULL, "tracepoint:c:d");
	CHECK("alternatives: '?' makes the list optional", alts && alts->num == 1);
	parsed_free(&p);

	parse(&p, "tracepoint:a:b, kprobe:f, BEGIN { }");
	CHECK("comma list: three probes", p.items && node_list_len(p.items->a) == 3);
	CHECK_STR("comma list: BEGIN is a spec", p.items ? p.items->a->next->next->a->str : NULL, "BEGIN");
	parsed_free(&p);

	parse(&p, "probe submit = tracepoint:a:b | tracepoint:c:d;\nsubmit { }");
	struct node *al = p.items;
	CHECK("alias: declared", al && al->kind == N_ALIAS && al->a && node_list_len(al->a->a) == 2);
	CHECK_STR("alias: name", al ? al->str : NULL, "submit");
	CHECK("alias: used as a probe", al && al->next && al->next->kind == N_PROBE_BLOCK);
	CHECK_STR("alias: use is a spec", al && al->next ? al->next->a->a->str : NULL, "submit");
	parsed_free(&p);
}

static void test_predicates(void)
{
	struct parsed p;
	parse(&p, "BEGIN /(pid / 2) == 1 && tid > 3/ { }");
	struct node *pred = p.items ? p.items->b : NULL;
	CHECK("predicate: parsed", pred && pred->kind == N_BINOP && pred->op == OP_AND);
	struct node *eq = pred ? pred->a : NULL;
	CHECK("predicate: == on the left", eq && eq->kind == N_BINOP && eq->op == OP_EQ);
	CHECK("predicate: division inside parentheses", eq && eq->a->kind == N_BINOP && eq->a->op == '/');
	CHECK("predicate: block follows", p.items && p.items->c && p.items->c->kind == N_BLOCK);
	parsed_free(&p);

	parse(&p, "BEGIN { $x = 6 / 3 / 2; }");
	struct node *s = p.items ? p.items->c->a : NULL;
	CHECK("body: '/' divides", s && s->kind == N_LOCAL_ASSIGN && s->a->kind == N_BINOP && s->a->op == '/');
	CHECK("body: division is left-associative", s && s->a->a->kind == N_BINOP && s->a->b->kind == N_INT);
	parsed_free(&p);

	parse(&p, "const HALF = 10 / 2;\nfn third(x) = x / 3;\nBEGIN { }");
	CHECK("top level: const divides", p.items && p.items->kind == N_CONST && p.items->a->op == '/');
	CHECK("top level: fn divides", p.items && p.items->next && p.items->next->b->op == '/');
	CHECK("top level: no errors", p.d.errors == 0);
	parsed_free(&p);

	parse(&p, "probe s = tracepoint:a:b;\ns /pid == 1/ { }");
	CHECK("alias use takes a predicate", p.items && p.items->next && p.items->next->b &&
	      p.items->next->b->op == OP_EQ);
	parsed_free(&p);
}

static void test_statements(void)
{
	struct parsed p;
	parse(&p, "BEGIN {\n  if (pid == 1) { exit(); } else if (pid == 2) { @a = 1; } else { @b++; }\n}");
	struct node *i = p.items ? p.items->c->a : NULL;
	CHECK("if: parsed", i && i->kind == N_IF && i->b && i->b->kind == N_BLOCK);
	CHECK("else if: nested N_IF", i && i->c && i->c->kind == N_IF);
	CHECK("else: block of the inner if", i && i->c && i->c->c && i->c->c->kind == N_BLOCK);
	struct node *inc = i && i->c && i->c->c ? i->c->c->a : NULL;
	CHECK("++: map assignment adding 1", inc && inc->kind == N_MAP_ASSIGN && inc->op == '+' &&
	      inc->b->kind == N_INT && inc->b->num == 1);
	CHECK("if: location", at(i, 2, 3));
	parsed_free(&p);

	parse(&p, "BEGIN { @m[comm, pid] = count(); @t -= 2; delete(@m[\"x\", 1]); }");
	struct node *s = p.items ? p.items->c->a : NULL;
	CHECK("map: two keys", s && s->kind == N_MAP_ASSIGN && node_list_len(s->a->a) == 2);
	CHECK("map: value is a call", s && s->b->kind == N_CALL && strcmp(s->b->str, "count") == 0);
	CHECK("map: -=", s && s->next && s->next->op == '-');
	CHECK("delete: a call statement", s && s->next && s->next->next && s->next->next->kind == N_EXPR_STMT);
	parsed_free(&p);

	parse(&p, "BEGIN { flow request[1] begin \"submit\" with op = 2, x = 3;"
		  " span ring[1] phase request[2] \"wq\"; slice end on ring[3]; instant \"i\" on thread; }");
	s = p.items ? p.items->c->a : NULL;
	CHECK("flow: begin with a name and two arguments", s && s->kind == N_FLOW && s->op == OP_BEGIN &&
	      s->b && s->b->kind == N_STR && node_list_len(s->c) == 2);
	CHECK_STR("flow: key kind", s ? s->a->str : NULL, "request");
	s = s ? s->next : NULL;
	CHECK("span: phase", s && s->kind == N_SPAN && s->op == OP_PHASE && s->d && s->d->kind == N_STR);
	s = s ? s->next : NULL;
	CHECK("slice: end on a track", s && s->kind == N_SLICE && s->op == OP_END && s->b && s->b->kind == N_KEYREF);
	s = s ? s->next : NULL;
	CHECK("instant: on thread is the default track", s && s->kind == N_INSTANT && !s->b);
	parsed_free(&p);

	parse(&p, "BEGIN { $p = probe; $t = pid ? tid:cpu; }");
	s = p.items ? p.items->c->a : NULL;
	CHECK("'probe' in a body is a name", p.d.errors == 0 && s && s->a->kind == N_IDENT &&
	      strcmp(s->a->str, "probe") == 0);
	CHECK("a:b in a body is not a probe spec", s && s->next && s->next->a->kind == N_TERNARY);
	parsed_free(&p);

	parse(&p, "BEGIN { $x = (struct io_kiocb *)args.req; $y = (u32)-1; }");
	s = p.items ? p.items->c->a : NULL;
	CHECK_STR("cast: struct pointer spelling", s && s->a->kind == N_CAST ? s->a->str : NULL, "struct io_kiocb *");
	CHECK("cast: field of args", s && s->a->a->kind == N_FIELD && strcmp(s->a->a->str, "req") == 0);
	CHECK_STR("cast: integer", s && s->next ? s->next->a->str : NULL, "u32");
	parsed_free(&p);

	parse(&p, "BEGIN { $f = curtask.files.fdt.fd[3]; $n = names[1]; $m = -$p[2]; $v = @m[1]; }");
	s = p.items ? p.items->c->a : NULL;
	CHECK("index: of a field chain", p.d.errors == 0 && s && s->a->kind == N_INDEX && s->a->a->kind == N_FIELD &&
	      strcmp(s->a->a->str, "fd") == 0 && s->a->b->kind == N_INT);
	s = s ? s->next : NULL;
	CHECK("index: a name is a table lookup", s && s->a->kind == N_INDEX && s->a->a->kind == N_IDENT &&
	      strcmp(s->a->a->str, "names") == 0);
	s = s ? s->next : NULL;
	CHECK("index: binds tighter than unary minus", s && s->a->kind == N_UNOP && s->a->a->kind == N_INDEX);
	s = s ? s->next : NULL;
	CHECK("index: @m[k] is the map's entry", s && s->a->kind == N_MAP_REF && node_list_len(s->a->a) == 1);
	parsed_free(&p);
}

static void test_loops(void)
{
	struct parsed p;
	parse(&p, "BEGIN {\n  for ($i : 0..N * 2) { if ($i == 3) { break; } continue; }\n}");
	struct node *f = p.items ? p.items->c->a : NULL;
	CHECK("for: parsed", p.d.errors == 0 && f && f->kind == N_FOR);
	CHECK_STR("for: variable", f ? f->str : NULL, "$i");
	CHECK("for: start", f && f->a && f->a->kind == N_INT && f->a->num == 0);
	CHECK("for: end is an expression", f && f->b && f->b->kind == N_BINOP && f->b->op == '*' &&
	      f->b->a->kind == N_IDENT);
	CHECK("for: body is a block", f && f->c && f->c->kind == N_BLOCK);
	struct node *b = f && f->c ? f->c->a : NULL;
	CHECK("for: break inside an if", b && b->kind == N_IF && b->b->a && b->b->a->kind == N_BREAK);
	CHECK("for: continue", b && b->next && b->next->kind == N_CONTINUE);
	CHECK("for: location", at(f, 2, 3));
	CHECK("for: break location", b && at(b->b->a, 2, 40));
	parsed_free(&p);

	/* '..' between numbers, names and negatives, without spaces */
	parse(&p, "BEGIN { for ($j : -4..-1) { for ($k:A..B+1) { } } }");
	f = p.items ? p.items->c->a : NULL;
	CHECK("for: negative bounds", p.d.errors == 0 && f && f->a->kind == N_UNOP && f->b->kind == N_UNOP);
	struct node *in = f && f->c ? f->c->a : NULL;
	CHECK("for: nested, names as bounds", in && in->kind == N_FOR && in->a->kind == N_IDENT &&
	      in->b->kind == N_BINOP);
	parsed_free(&p);

	parse(&p, "BEGIN { $x += 2; $y -= pid; $z++; }");
	struct node *s = p.items ? p.items->c->a : NULL;
	CHECK("local +=: $x = $x + 2", p.d.errors == 0 && s && s->kind == N_LOCAL_ASSIGN && s->a->kind == N_BINOP &&
	      s->a->op == '+' && s->a->a->kind == N_LOCAL && strcmp(s->a->a->str, "$x") == 0 && s->a->b->num == 2);
	s = s ? s->next : NULL;
	CHECK("local -=", s && s->kind == N_LOCAL_ASSIGN && s->a->op == '-' && s->a->b->kind == N_IDENT);
	s = s ? s->next : NULL;
	CHECK("local ++", s && s->kind == N_LOCAL_ASSIGN && s->a->op == '+' && s->a->b->kind == N_INT &&
	      s->a->b->num == 1);
	parsed_free(&p);

	parse(&p, "BEGIN { for (i : 0..3) { } }");
	CHECK("for: the variable is a local", p.d.errors == 1 && has(p.msgs, "syntax error"));
	parsed_free(&p);
	parse(&p, "BEGIN { for ($i : 0..3) @x = 1; }");
	CHECK("for: the body is a block", p.d.errors == 1 && has(p.msgs, "syntax error"));
	parsed_free(&p);
	parse(&p, "BEGIN { for ($i : 0, 3) { } }");
	CHECK("for: bounds with '..'", p.d.errors == 1 && has(p.msgs, "syntax error"));
	parsed_free(&p);
}

static void test_strings(void)
{
	struct parsed p;
	parse(&p, "BEGIN { printf(\"a\\tb\\n\\x41\\\\\\\"\"); }");
	struct node *call = p.items ? p.items->c->a->a : NULL;
	CHECK("escapes: no errors", p.d.errors == 0);
	CHECK_STR("escapes: decoded", call && call->a ? call->a->str : NULL, "a\tb\nA\\\"");
	parsed_free(&p);

	parse(&p, "BEGIN { printf(\"ab\\q\"); }");
	CHECK("bad escape: an error", p.d.errors == 1 && !p.items);
	CHECK("bad escape: located at the backslash", has(p.msgs, "t.ut:1:19: error: unknown escape '\\q'"));
	parsed_free(&p);

	parse(&p, "BEGIN { printf(\"\\x\"); }");
	CHECK("\\x without digits: an error", p.d.errors == 1 && has(p.msgs, "bad \\x escape"));
	parsed_free(&p);

	parse(&p, "BEGIN { printf(\"abc); }\n");
	CHECK("unterminated string: reported", has(p.msgs, "t.ut:1:16: error: unterminated string"));
	parsed_free(&p);

	parse(&p, "BEGIN { }\n/* open\n\n");
	CHECK("unterminated comment: at its start", has(p.msgs, "t.ut:2:1: error: unterminated comment"));
	parsed_free(&p);

	parse(&p, "BEGIN { } // comment\n# also a comment\n/* block\n comment */ END { }");
	CHECK("comments: skipped", p.d.errors == 0 && node_list_len(p.items) == 2);
	CHECK("comments: END located after a block comment", p.items && at(p.items->next, 4, 13));
	parsed_free(&p);
}

static void test_locations(void)
{
	struct parsed p;
	parse(&p, "\n  BEGIN {\n\t$x = 1 + 22;\n    @m[comm] = count();\n}\n");
	struct node *b = p.items;
	CHECK("location: probe block at its spec", at(b, 2, 3));
	CHECK("location: block at '{'", b && at(b->c, 2, 9));
	struct node *s = b ? b->c->a : NULL;
	CHECK("location: tab counts as one column", at(s, 3, 2));
	CHECK("location: binary operator at the operator", s && at(s->a, 3, 9));
	CHECK("location: right operand", s && at(s->a->b, 3, 11));
	CHECK("location: map assignment", s && at(s->next, 4, 5));
	CHECK("location: call", s && s->next && at(s->next->b, 4, 16));
	CHECK_STR("location: file name", s ? s->loc.file : NULL, "t.ut");
	parsed_free(&p);

	parse(&p, "BEGIN { $x = 1 }");
	CHECK("syntax error: reported once", p.d.errors == 1 && !p.items);
	CHECK("syntax error: at the unexpected token", has(p.msgs, "t.ut:1:16: error: syntax error: unexpected '}'"));
	CHECK("syntax error: quotes the line with a caret",
	      has(p.msgs, "    1 | BEGIN { $x = 1 }\n      |                ^\n"));
	parsed_free(&p);

	parse(&p, "BEGIN {\n  $x = 1;\n");
	CHECK("end of input: after the last token", has(p.msgs, "t.ut:2:10: error: syntax error: unexpected end of file"));
	parsed_free(&p);

	parse(&p, "BEGIN { $x = 1 $ 2; }");
	CHECK("bad character: reported", has(p.msgs, "t.ut:1:16: error: unexpected character '$'"));
	parsed_free(&p);

	parse(&p, "BEGIN { $a = 1 1; }\nEND { $b = 2 2; }\nBEGIN { $c = 3 3; }");
	CHECK("recovery: one error per bad statement", p.d.errors == 3);
	parsed_free(&p);

	struct strbuf many = {0};
	for (int i = 0; i < 30; i++)
		sb_puts(&many, "BEGIN { $a = 1 1; }\n");
	parse(&p, many.s);
	CHECK("too many errors: counted", p.d.errors == 30);
	CHECK("too many errors: printing stops", has(p.msgs, "too many errors") && !has(p.msgs, "t.ut:21:"));
	parsed_free(&p);
	sb_free(&many);

	parse(&p, "");
	CHECK("empty text: no items, no errors", !p.items && p.d.errors == 0);
	parsed_free(&p);

	struct strbuf deep = {0};
	sb_puts(&deep, "BEGIN { $x = 1");
	for (int i = 0; i < 300; i++)
		sb_puts(&deep, " + 1");
	sb_puts(&deep, "; }");
	parse(&p, deep.s);
	CHECK("deep expression: one error", p.d.errors == 1 && has(p.msgs, "nested too deeply (more than 256 levels)"));
	parsed_free(&p);
	sb_free(&deep);
	sb_puts(&deep, "BEGIN { $x = 1");
	for (int i = 0; i < 250; i++)
		sb_puts(&deep, " + 1");
	sb_puts(&deep, "; }");
	parse(&p, deep.s);
	CHECK("250 levels are fine", p.d.errors == 0 && p.items);
	parsed_free(&p);
	sb_free(&deep);
}

/* ---- checking and generating ---- */

static struct ut_kernel *kernel;

struct compiled {
	struct diag d;
	struct ut_program *prog;
	char *msgs;
	size_t msgs_len;
	char *ast;
	size_t ast_len;
};

static void compile_text(struct compiled *c, const char *text, const char *const *defines, unsigned ndefines)
{
	memset(c, 0, sizeof(*c));
	FILE *out = open_memstream(&c->msgs, &c->msgs_len);
	FILE *ast = open_memstream(&c->ast, &c->ast_len);
	diag_init(&c->d, out);
	struct ut_compile_opts o = {.text = text, .dump = UT_DUMP_TYPED, .dump_to = ast, .defines = defines, .ndefines = ndefines};
	c->prog = ut_compile(&o, kernel, &c->d);
	fclose(out);
	fclose(ast);
}

static void compiled_free(struct compiled *c)
{
	ut_program_free(c->prog);
	free(c->msgs);
	free(c->ast);
}

/* The script must compile; returns the C (valid until compiled_free). */
static bool compiles(const char *name, struct compiled *c, const char *text)
{
	compile_text(c, text, NULL, 0);
	bool ok = c->prog && c->prog->bpf_c && c->d.errors == 0;
	CHECK(name, ok);
	if (!ok)
		printf("    %s", c->msgs ? c->msgs : "");
	return ok;
}

/* The script must fail with `errors` errors, the first containing want. */
static void fails(const char *name, const char *text, int errors, const char *want)
{
	struct compiled c;
	compile_text(&c, text, NULL, 0);
	bool ok = !c.prog && c.d.errors == errors && has(c.msgs, want);
	CHECK(name, ok);
	if (!ok)
		printf("    %d errors:\n%s", c.d.errors, c.msgs ? c.msgs : "");
	compiled_free(&c);
}

static void test_checker(void)
{
	struct compiled c;
	if (compiles("check: tracepoint with a map", &c,
		     "tracepoint:sched:sched_switch /args.prev_pid != 0/ { @[args.prev_comm] = count(); }")) {
		CHECK("check: one probe", c.prog->nprobes == 1 && c.prog->probes[0].nalts == 1);
		CHECK("check: section", has(c.prog->bpf_c, "SEC(\"tracepoint/sched/sched_switch\")"));
		CHECK("check: predicate in C", has(c.prog->bpf_c, "if (!("));
		CHECK("check: AST dump has types", has(c.ast, "field \"prev_pid\" : s32 = arg 1  @1:37"));
	}
	compiled_free(&c);

	/* a BTF probe records its argument types for the loader to compare,
	 * unless the body reads none (then any kernel's types will do) */
	if (compiles("check: raw_tp reading no argument", &c, "raw_tp:sched:sched_process_exit { @exits = count(); }"))
		CHECK("check: no signature kept", c.prog->nprobes == 1 && c.prog->probes[0].nalts == 1 &&
		      !c.prog->probes[0].alts[0].signature);
	compiled_free(&c);
	if (compiles("check: raw_tp reading an argument", &c,
		     "raw_tp:sched:sched_process_exit { @exits[args.p.pid] = count(); }"))
		CHECK("check: its signature kept", c.prog->nprobes == 1 && c.prog->probes[0].nalts == 1 &&
		      c.prog->probes[0].alts[0].signature && has(c.prog->probes[0].alts[0].signature, "task_struct"));
	compiled_free(&c);

	if (compiles("check: alternatives, only existing ones kept", &c,
		     "tracepoint:io_uring:io_uring_submit_sqe | tracepoint:io_uring:io_uring_submit_req { @n = count(); }"))
		CHECK("check: one probe with an alternative", c.prog->nprobes == 1 && c.prog->probes[0].nalts >= 1);
	compiled_free(&c);

	if (compiles("check: optional absent probe", &c,
		     "tracepoint:io_uring:not_here_at_all? { @n = count(); } BEGIN { exit(); }"))
		CHECK("check: the optional probe has no alternative", c.prog->nprobes == 2 && c.prog->probes[0].nalts == 0 &&
		      c.prog->probes[0].optional);
	compiled_free(&c);

	if (compiles("check: wildcard expands to one probe per match", &c,
		     "tracepoint:io_uring:io_uring_submit_re* { @n = count(); }"))
		CHECK("check: wildcard matched", c.prog->nprobes >= 1);
	compiled_free(&c);

	if (compiles("check: script strings are escaped in C", &c,
		     "BEGIN { $s = \"\\\"); } evil(); /*\"; printf(\"%s\\n\", $s); exit(); }"))
		CHECK("check: the quote stays in the literal", has(c.prog->bpf_c, "= \"\\\"); } evil(); /*\";"));
	compiled_free(&c);

	if (compiles("check: macros expand", &c, "fn twice(x) = x * 2;\nBEGIN { printf(\"%d\\n\", twice(twice(3))); exit(); }"))
		CHECK("check: macro body in C", has(c.prog->bpf_c, "(__u64)(3LL) * (__u64)(2LL)"));
	compiled_free(&c);

	const char *defs[] = {"LIMIT=77"};
	compile_text(&c, "const LIMIT = 5;\nBEGIN { printf(\"%d\\n\", LIMIT); exit(); }", defs, 1);
	CHECK("check: -D overrides a constant", c.prog && has(c.prog->bpf_c, "77LL") && !has(c.prog->bpf_c, "5LL"));
	compiled_free(&c);

	/* 0xffffffffffffffff is 2^64-1, not -1: compared and shown unsigned */
	if (compiles("check: literals above INT64_MAX", &c,
		     "tracepoint:sched:sched_switch { @big[args.prev_state > 0x8000000000000000] = count(); "
		     "@max = 0xffffffffffffffff; @small = 7; }")) {
		CHECK("check: literal above INT64_MAX typed u64", has(c.ast, "int 9223372036854775808 : u64"));
		CHECK("check: literal 2^64-1 typed u64", has(c.ast, "int 18446744073709551615 : u64"));
		CHECK("check: literal in C unsigned", has(c.prog->bpf_c, "9223372036854775808ULL") &&
						       has(c.prog->bpf_c, "18446744073709551615ULL") &&
						       !has(c.prog->bpf_c, "-1LL"));
		CHECK("check: compared unsigned", has(c.prog->bpf_c, "> (__u64)(9223372036854775808ULL)"));
		CHECK("check: small literal as before", has(c.ast, "int 7 : u64"));
	}
	compiled_free(&c);
	const char *big_defs[] = {"BIG=0xffffffffffffffff", "NEG=-5"};
	compile_text(&c, "const BIG = 1;\nconst NEG = 1;\nBEGIN { printf(\"%u %d\\n\", BIG, NEG); exit(); }", big_defs, 2);
	CHECK("check: -D above INT64_MAX is unsigned, a negative one signed",
	      c.prog && has(c.prog->bpf_c, "18446744073709551615ULL") && has(c.prog->bpf_c, "-5LL"));
	compiled_free(&c);
	const char *huge_defs[] = {"BIG=0x1ffffffffffffffff"};
	compile_text(&c, "const BIG = 1;\nBEGIN { printf(\"%u\\n\", BIG); exit(); }", huge_defs, 1);
	CHECK("check: -D over 64 bits fails", !c.prog && has(c.msgs, "does not fit in 64 bits"));
	compiled_free(&c);

	/* a uprobe's binary and function are checked here, so alternatives and
	 * '?' work for uprobes as for kernel probes */
	if (compiles("check: uprobe alternatives take the first present", &c,
		     "uprobe:/no/such/binary:main | uprobe:/bin/bash:no_such_function | uprobe:/bin/bash:readline "
		     "{ @n = count(); }"))
		CHECK("check: only the present uprobe kept", c.prog->probes[0].nalts == 1 &&
							     strcmp(c.prog->probes[0].alts[0].target, "/bin/bash:readline") == 0);
	compiled_free(&c);
	if (compiles("check: optional absent uprobe", &c, "uprobe:/bin/bash:no_such_function? { @n = count(); } BEGIN { exit(); }"))
		CHECK("check: the optional uprobe has no alternative", c.prog->probes[0].nalts == 0);
	compiled_free(&c);

	const char *bad_defs[] = {"NOPE=1"};
	compile_text(&c, "BEGIN { exit(); }", bad_defs, 1);
	CHECK("check: -D of an undeclared constant fails", !c.prog && has(c.msgs, "NOPE"));
	compiled_free(&c);

	if (compiles("check: signed division has no sdiv", &c,
		     "tracepoint:sched:sched_switch { @x = sum((args.prev_prio - 200) / args.next_prio); }"))
		CHECK("check: magnitudes divided", has(c.prog->bpf_c, "0 - (__u64)"));
	compiled_free(&c);

	fails("fail: unknown field with suggestion", "tracepoint:io_uring:io_uring_complete { @[args.ress] = count(); }", 1,
	      "-e:1:48: error: no argument 'ress' in tracepoint:io_uring:io_uring_complete (did you mean 'res'?)");
	fails("fail: map with two value types", "BEGIN { @m = 1; @m = comm; exit(); }", 1, "@m holds");
	fails("fail: map key counts", "BEGIN { @m[1] = 1; @m[1, 2] = 1; }", 1, "used with 2 keys here but 1");
	fails("fail: several errors reported", "BEGIN { $a = nope1; $b = nope2(); $c = $nope3; }", 3, "nope1");
	fails("fail: no probes", "const A = 1;", 1, "the script has no probes");
	fails("fail: syntax error stops before checking", "BEGIN { $a = ; $b = nope; }", 1, "syntax error");
	fails("fail: import not found", "import \"surely_not_a_module\";\nBEGIN { }", 1, "cannot find module 'surely_not_a_module'");
	fails("fail: aggregation read", "BEGIN { @c = count(); $x = @c; }", 1, "holds an aggregation");
	fails("fail: recursive macro", "fn f(x) = f(x) + 1;\nBEGIN { $x = f(1); }", 1, "recursive");
	fails("fail: constant cycle", "const A = A + 1;\nBEGIN { $x = A; }", 1, "defined in terms of itself");
	fails("fail: lhist bounds", "BEGIN { @h = lhist(1, 10, 0, 1); }", 1, "lhist() needs min < max");
	fails("fail: lhist bounds from constants", "const KB = 1024;\nBEGIN { @h = lhist(1, KB, -KB, 1); }", 1,
	      "lhist() needs min < max");
	if (compiles("lhist: constant bounds folded", &c,
		     "const KB = 1024;\nBEGIN { @h = lhist(5, -KB, 64 * KB, 4 * KB); exit(); }"))
		CHECK("lhist: bounds -1024..65536 step 4096", c.prog->maps[0].lhist_min == -1024 &&
							       c.prog->maps[0].lhist_max == 65536 &&
							       c.prog->maps[0].lhist_step == 4096);
	compiled_free(&c);
	/* for loops: bounds folded, the variable scoped to the body */
	const char *loop_defs[] = {"N=6"};
	compile_text(&c, "const N = 2;\nconst M = N * 3 - 1;\nBEGIN { $s = 0; for ($i : M - N..M + 1) { $s += $i; }\n"
		     "for ($i : 0..(M << 1) / 2 % 7) { $s++; } printf(\"%d\\n\", $s); exit(); }", loop_defs, 1);
	/* (the head between them asks the numbers iterator where the kernel has it) */
	CHECK("loop: bounds folded with -D", c.prog && has(c.prog->bpf_c, "for (l_i = 11LL;") &&
						     has(c.prog->bpf_c, "l_i < 18LL; l_i++) {"));
	CHECK("loop: bounds with shifts and %", c.prog && has(c.prog->bpf_c, "for (l_i = 0LL;") &&
							has(c.prog->bpf_c, "l_i < 3LL; l_i++) {"));
	CHECK("loop: the variable reused by a second loop", c.prog && has(c.ast, "for \"$i\" = local 1  @3:1"));
	CHECK("loop: the variable is a signed 64-bit local", c.prog && has(c.prog->bpf_c, "__s64 l_i = 0;"));
	compiled_free(&c);
	if (compiles("loop: records in a loop", &c,
		     "tracepoint:sched:sched_switch { for ($i : 0..100) { instant \"x\" with i = $i; } }")) {
		CHECK("loop: the stage holds at most UT_LOOP_STAGE_BYTES", has(c.prog->bpf_c, "ut_batch_cap __attribute__((unused)) = 2048;"));
		CHECK("loop: each iteration sends a full stage", has(c.prog->bpf_c, "if (ut_batch && ut_off > ut_batch_cap - 32U)"));
		CHECK("loop: ut_off reloaded, masked", has(c.prog->bpf_c, "& ut_off_mask;") &&
		      has(c.prog->bpf_c, "ut_off_mask = 0xfff;"));
		/* past the mask (4095), room for the largest record (32 bytes) */
		CHECK("loop: the stage rounded up, a record past the mask", has(c.prog->bpf_c, "#define UT_BATCH_BYTES 4128"));
	}
	compiled_free(&c);
	if (compiles("loop: records that all fit", &c,
		     "tracepoint:sched:sched_switch { for ($i : 0..4) { instant \"x\"; } instant \"y\"; }")) {
		CHECK("loop: the stage holds every record", has(c.prog->bpf_c, "ut_batch_cap __attribute__((unused)) = 120;"));
		CHECK("loop: nothing sent early", !has(c.prog->bpf_c, "bpf_ringbuf_output"));
	}
	compiled_free(&c);
	fails("fail: loop bound from a constant cycle", "const A = A + 1;\nBEGIN { for ($i : 0..A) { } }", 1,
	      "defined in terms of itself");
	fails("fail: loop bound divides by zero", "BEGIN { for ($i : 0..4 / 0) { } }", 1, "division by zero");
	fails("fail: loop variable of a string local", "BEGIN { $s = comm; for ($s : 0..2) { } }", 1,
	      "$s is already a local of this probe (assigned at 1:9)");
	fails("fail: loop variable read in a later probe's loop only", "BEGIN { for ($i : 0..2) { } $j = $i; }", 1,
	      "exists only in its body");
	fails("fail: unknown struct", "BEGIN { $x = ((struct nope_nope *)0).a; }", 1, "no struct nope_nope");
}

int main(void)
{
	test_probe_specs();
	test_predicates();
	test_statements();
	test_loops();
	test_strings();
	test_locations();
	kernel = ut_kernel_open();
	CHECK("kernel opened", kernel != NULL);
	if (kernel) {
		test_checker();
		ut_kernel_close(kernel);
	}
	CHECK_DONE();
}
