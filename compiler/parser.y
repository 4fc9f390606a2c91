%{
/* Grammar of .ut scripts.  Actions only build the AST; all meaning is
 * given by the checker. */
#include <stdlib.h>
#include <string.h>
#include "compiler/parse.h"
%}

%code requires {
#include "compiler/ast.h"
struct parse_ctx;
}

%code {
#include "base/alloc.h"
#include "lexer.h"
#define LOC(l) ((struct ut_loc){ctx->file, (l).first_line, (l).first_column})
static void yyerror(YYLTYPE *loc, void *scanner, struct parse_ctx *ctx, const char *msg);
static struct node *mk(enum node_kind k, YYLTYPE l, struct parse_ctx *ctx)
{
	return node_new(k, LOC(l));
}
/* Expressions nest at most this deep (1+1+1+... or -----x): the checker,
 * the code generator and the AST walkers recurse on them. */
#define MAX_EXPR_DEPTH 256
static struct node *nest(struct parse_ctx *ctx, struct node *n)
{
	int d = 0;
	const struct node *kids[] = {n->a, n->b, n->c};
	for (int i = 0; i < 3; i++)
		for (const struct node *k = kids[i]; k; k = k->next)
			d = k->depth > d ? k->depth : d;
	n->depth = d + 1;
	if (n->depth == MAX_EXPR_DEPTH + 1)
		diag_error(ctx->diag, n->loc, "expression nested too deeply (more than %d levels)", MAX_EXPR_DEPTH);
	return n;
}
/* A spec's fields: declared record fields go to a, computed arguments to b. */
static void split_spec_fields(struct node *spec, struct node *fields)
{
	struct node_list declared = {0}, computed = {0};
	while (fields) {
		struct node *f = fields;
		fields = f->next;
		f->next = NULL;
		node_list_push(f->op == ':' ? &declared : &computed, f);
	}
	spec->a = declared.head;
	spec->b = computed.head;
}
/* $x OP= e as $x = $x OP e: the checker sees a plain assignment. */
static struct node *local_update(struct parse_ctx *ctx, char *name, YYLTYPE l, int op, struct node *e, YYLTYPE opl)
{
	struct node *n = mk(N_LOCAL_ASSIGN, l, ctx), *v = mk(N_LOCAL, l, ctx);
	n->str = name;
	v->str = xstrdup(name);
	n->a = mk(N_BINOP, opl, ctx);
	n->a->op = op;
	n->a->a = v;
	n->a->b = e;
	n->a = nest(ctx, n->a);
	return n;
}
/* sizeof()'s and offsetof()'s words: "struct NAME", or a member's name */
static struct node *type_node(struct parse_ctx *ctx, YYLTYPE l, char *struct_name, char *member)
{
	struct node *n = mk(N_TYPE, l, ctx);
	n->str = struct_name ? xasprintf("struct %s", struct_name) : member;
	free(struct_name);
	return n;
}

/* A message or fix of a finding: fmt(text, values...), as records keep
 * formats. */
static struct node *format_call(struct parse_ctx *ctx, YYLTYPE l, char *text, struct node *values)
{
	struct node *n = mk(N_CALL, l, ctx);
	n->str = xstrdup("fmt");
	n->a = mk(N_STR, l, ctx);
	n->a->str = text;
	n->a->next = values;
	return n;
}

/* finding "TAG"[keys] SEVERITY "message", values... fix "...", values...
 * with name = value, ...: the statement builtin finding() (statements.c),
 * its parts where its check finds them.  'finding' and 'fix' are no
 * keywords: scripts may have names of theirs. */
static struct node *finding_stmt(struct parse_ctx *ctx, YYLTYPE l, char *word, YYLTYPE tag_l, char *tag,
				 struct node *keys, struct node *severity, struct node *message, char *fix_word,
				 YYLTYPE fix_l, struct node *fix, struct node *with)
{
	if (strcmp(word, "finding") != 0)
		diag_error(ctx->diag, LOC(l), "'%s \"...\"' is no statement (a finding is 'finding \"TAG\" SEVERITY "
			   "\"message\", values...')", word);
	if (fix_word && strcmp(fix_word, "fix") != 0)
		diag_error(ctx->diag, LOC(fix_l), "expected 'fix', 'with' or ';' after a finding's message, not '%s'",
			   fix_word);
	free(word);
	free(fix_word);
	struct node *call = mk(N_CALL, l, ctx);
	call->str = xstrdup("finding");
	call->num = FINDING_STATEMENT;
	call->a = mk(N_STR, tag_l, ctx);
	call->a->str = tag;
	call->a->next = severity;
	severity->next = message;
	call->b = keys;
	call->c = with;
	call->d = fix;
	struct node *stmt = mk(N_EXPR_STMT, l, ctx);
	stmt->a = call;
	return stmt;
}

/* "begin", "end", "step", "phase" are words only inside trace statements. */
static int phase_word(struct parse_ctx *ctx, const char *w, YYLTYPE l, bool allow_step, bool allow_phase)
{
	if (strcmp(w, "begin") == 0) return OP_BEGIN;
	if (strcmp(w, "end") == 0) return OP_END;
	if (allow_step && strcmp(w, "step") == 0) return OP_STEP;
	if (allow_phase && strcmp(w, "phase") == 0) return OP_PHASE;
	diag_error(ctx->diag, LOC(l), "expected %s, not '%s'",
		   allow_step ? "'begin', 'step' or 'end'" : allow_phase ? "'begin', 'phase' or 'end'" : "'begin' or 'end'", w);
	return OP_BEGIN;
}
}

%define api.pure full
%define parse.error verbose
%locations
%lex-param {void *scanner}
%parse-param {void *scanner} {struct parse_ctx *ctx}

%union {
	int64_t num;
	char *str;
	struct node *node;
	struct node_list list;   /* lists are built left to right, appended in O(1) */
	int op;
}

%token <num> INT
%token <str> STRING IDENT LOCAL MAPNAME PROBE_SPEC TYPE INCLUDE
%token IMPORT CONST TABLE FN PROBE UNFILTERED PRIVATE LRU CACHED IF ELSE RETURN FOR BREAK CONTINUE DOTDOT SLICE INSTANT COUNTER FLOW SPAN TRACK ON WITH STRUCT
%token EQ NE LE GE AND OR SHL SHR DEFAULT_OP INC ADD_ASSIGN SUB_ASSIGN PRED_OPEN PRED_CLOSE

%type <list> spec_fields items choices table_entries params probe_list alt_specs stmts exprs with_list map_names
%type <list> finding_keys format_values
%type <node> spec_field item choice table_entry probe_alts spec
%type <node> predicate block stmt if_stmt else_part expr opt_exprs map_ref keyref track with with_item opt_name cast_type
%type <num> opt_optional stars

%destructor { free($$); } <str>
%destructor { node_free($$); } <node>
%destructor { node_free($$.head); } <list>

%right '?' ':'
%right DEFAULT_OP
%left OR
%left AND
%left '|'
%left '^'
%left '&'
%left EQ NE
%left '<' '>' LE GE
%left SHL SHR
%left '+' '-'
%left '*' '/' '%'
%precedence UNARY
%precedence '.' '['

%start program

%%

program: items                         { ctx->items = $1.head; }
       ;

items: %empty                          { $$ = (struct node_list){0}; }
     | items item                      { $$ = $1; node_list_push(&$$, $2); }
     | items ';'                       { $$ = $1; }
     | items error ';'                 { $$ = $1; yyerrok; }
     | items error '}'                 { $$ = $1; yyerrok; }
     ;

item: IMPORT STRING ';'                { $$ = mk(N_IMPORT, @2, ctx); $$->str = $2; }
    | INCLUDE                          { $$ = mk(N_IMPORT, @1, ctx); $$->str = $1; $$->num = IMPORT_OF_HEADER; }
    | CONST IDENT '=' expr ';'         { $$ = mk(N_CONST, @2, ctx); $$->str = $2; $$->a = $4; }
    /* an option with a fixed set of values: const unit: "ns" | "us" | "ms" = "us"; */
    | CONST IDENT ':' choices '=' expr ';' { $$ = mk(N_CONST, @2, ctx); $$->str = $2; $$->a = $6; $$->b = $4.head; }
    | TABLE IDENT '=' '{' table_entries '}' { $$ = mk(N_TABLE, @2, ctx); $$->str = $2; $$->a = $5.head; }
    | TABLE IDENT '=' '{' table_entries ',' '}' { $$ = mk(N_TABLE, @2, ctx); $$->str = $2; $$->a = $5.head; }
    | FN IDENT '(' params ')' '=' expr ';' { $$ = mk(N_FN, @2, ctx); $$->str = $2; $$->a = $4.head; $$->b = $7; }
    | FN IDENT '(' params ')' block    { $$ = mk(N_FN, @2, ctx); $$->str = $2; $$->a = $4.head; $$->b = $6; }
    | PROBE IDENT '=' probe_list ';'   { $$ = mk(N_ALIAS, @2, ctx); $$->str = $2; $$->a = $4.head; }
    /* the script's bookkeeping maps: neither printed nor in the JSON */
    | PRIVATE map_names ';'            { $$ = mk(N_PRIVATE, @1, ctx); $$->a = $2.head; }
    /* bookkeeping maps that, when full, push out their least recently used entry */
    | LRU map_names ';'                { $$ = mk(N_LRU, @1, ctx); $$->a = $2.head; }
    /* maps of entries that come and go by the thousand a second: in the
     * kernel, a table of slots in front of each one's hash */
    | CACHED map_names ';'             { $$ = mk(N_CACHED, @1, ctx); $$->a = $2.head; }
    | probe_list predicate block       { $$ = mk(N_PROBE_BLOCK, @1, ctx); $$->a = $1.head; $$->b = $2; $$->c = $3; }
    /* runs for every task: -p, -c and --comm do not filter it */
    | UNFILTERED probe_list predicate block {
		$$ = mk(N_PROBE_BLOCK, @2, ctx); $$->a = $2.head; $$->b = $3; $$->c = $4; $$->num = 1;
	}
    ;

map_names: MAPNAME                    { $$ = (struct node_list){0}; node_list_push(&$$, mk(N_MAP_REF, @1, ctx)); $$.head->str = $1; }
         | map_names ',' MAPNAME      { struct node *m = mk(N_MAP_REF, @3, ctx); m->str = $3; $$ = $1; node_list_push(&$$, m); }
         ;
choices: choice                        { $$ = (struct node_list){0}; node_list_push(&$$, $1); }
       | choices '|' choice            { $$ = $1; node_list_push(&$$, $3); }
       ;
choice: INT                            { $$ = mk(N_INT, @1, ctx); $$->num = $1; }
      | '-' INT                        { $$ = mk(N_INT, @1, ctx); $$->num = (int64_t)(0 - (uint64_t)$2); }
      | STRING                         { $$ = mk(N_STR, @1, ctx); $$->str = $1; }
      ;
table_entries: table_entry                     { $$ = (struct node_list){0}; node_list_push(&$$, $1); }
             | table_entries ',' table_entry   { $$ = $1; node_list_push(&$$, $3); }
             ;
table_entry: INT ':' STRING                    { $$ = mk(N_TABLE_ENTRY, @1, ctx); $$->num = $1; $$->str = $3; }
           | '-' INT ':' STRING                { $$ = mk(N_TABLE_ENTRY, @1, ctx); $$->num = (int64_t)(0 - (uint64_t)$2); $$->str = $4; }
           ;

params: %empty                         { $$ = (struct node_list){0}; }
      | IDENT                          { $$ = (struct node_list){0}; node_list_push(&$$, mk(N_IDENT, @1, ctx)); $$.head->str = $1; }
      | params ',' IDENT               { struct node *p = mk(N_IDENT, @3, ctx); p->str = $3; $$ = $1; node_list_push(&$$, p); }
      ;

probe_list: probe_alts                 { $$ = (struct node_list){0}; node_list_push(&$$, $1); }
          | probe_list ',' probe_alts  { $$ = $1; node_list_push(&$$, $3); }
          ;
probe_alts: alt_specs opt_optional     { $$ = mk(N_PROBE_ALTS, @1, ctx); $$->a = $1.head; $$->num = $2; }
          ;
alt_specs: spec                        { $$ = (struct node_list){0}; node_list_push(&$$, $1); }
         | alt_specs '|' spec          { $$ = $1; node_list_push(&$$, $3); }
         ;
spec: PROBE_SPEC                       { $$ = mk(N_PROBE_SPEC, @1, ctx); $$->str = $1; }
    | PROBE_SPEC '(' spec_fields ')'   { $$ = mk(N_PROBE_SPEC, @1, ctx); $$->str = $1; split_spec_fields($$, $3.head); }
    | IDENT                            { $$ = mk(N_PROBE_SPEC, @1, ctx); $$->str = $1; }
    ;
/* Record fields of a tracepoint that may be absent on the compiling kernel
 * (tracepoint:io_uring:io_uring_submit_sqe(ctx: ptr, user_data: u64)), and
 * arguments computed from the alternative's own (tp_btf:io_uring:
 * io_uring_file_get(ctx = args.req.ctx)), so one body reads the same
 * args.NAME from every alternative. */
spec_fields: spec_field                   { $$ = (struct node_list){0}; node_list_push(&$$, $1); }
           | spec_fields ',' spec_field   { $$ = $1; node_list_push(&$$, $3); }
           ;
spec_field: IDENT ':' TYPE                { $$ = mk(N_WITH, @1, ctx); $$->str = $1; $$->op = ':'; $$->a = mk(N_IDENT, @3, ctx); $$->a->str = $3; }
          | IDENT ':' IDENT               { $$ = mk(N_WITH, @1, ctx); $$->str = $1; $$->op = ':'; $$->a = mk(N_IDENT, @3, ctx); $$->a->str = $3; }
          | IDENT '=' expr                { $$ = mk(N_WITH, @1, ctx); $$->str = $1; $$->op = '='; $$->a = $3; }
          ;
opt_optional: %empty                   { $$ = 0; }
            | '?'                      { $$ = 1; }
            ;

predicate: %empty                      { $$ = NULL; }
         | PRED_OPEN expr PRED_CLOSE   { $$ = $2; }
         ;

block: '{' stmts '}'                   { $$ = mk(N_BLOCK, @1, ctx); $$->a = $2.head; }
     ;

stmts: %empty                          { $$ = (struct node_list){0}; }
     | stmts stmt                      { $$ = $1; node_list_push(&$$, $2); }
     | stmts error ';'                 { $$ = $1; yyerrok; }
     ;

stmt: ';'                              { $$ = NULL; }
    | block                            { $$ = $1; }
    | expr ';'                         { $$ = mk(N_EXPR_STMT, @1, ctx); $$->a = $1; }
    | LOCAL '=' expr ';'               { $$ = mk(N_LOCAL_ASSIGN, @1, ctx); $$->str = $1; $$->a = $3; }
    /* $x += e, $x -= e, $x++: $x = $x + e, ... */
    | LOCAL ADD_ASSIGN expr ';'        { $$ = local_update(ctx, $1, @1, '+', $3, @2); }
    | LOCAL SUB_ASSIGN expr ';'        { $$ = local_update(ctx, $1, @1, '-', $3, @2); }
    | LOCAL INC ';'                    { struct node *one = mk(N_INT, @2, ctx); one->num = 1; $$ = local_update(ctx, $1, @1, '+', one, @2); }
    | map_ref '=' expr ';'             { $$ = mk(N_MAP_ASSIGN, @1, ctx); $$->a = $1; $$->op = '='; $$->b = $3; }
    | map_ref ADD_ASSIGN expr ';'      { $$ = mk(N_MAP_ASSIGN, @1, ctx); $$->a = $1; $$->op = '+'; $$->b = $3; }
    | map_ref SUB_ASSIGN expr ';'      { $$ = mk(N_MAP_ASSIGN, @1, ctx); $$->a = $1; $$->op = '-'; $$->b = $3; }
    | map_ref INC ';'                  { $$ = mk(N_MAP_ASSIGN, @1, ctx); $$->a = $1; $$->op = '+'; $$->b = mk(N_INT, @2, ctx); $$->b->num = 1; }
    | if_stmt                          { $$ = $1; }
    | RETURN ';'                       { $$ = mk(N_RETURN, @1, ctx); }
    /* for ($i : START..END) { ... }: $i takes START, START+1, ..., END-1 */
    | FOR '(' LOCAL ':' expr DOTDOT expr ')' block {
		$$ = mk(N_FOR, @1, ctx); $$->str = $3; $$->a = $5; $$->b = $7; $$->c = $9;
	}
    /* for ($kv : @m) { ... }: each entry of @m, $kv.0 its key, $kv.1 its value */
    | FOR '(' LOCAL ':' map_ref ')' block {
		$$ = mk(N_FOR_MAP, @1, ctx); $$->str = $3; $$->a = $5; $$->c = $7;
	}
    | BREAK ';'                        { $$ = mk(N_BREAK, @1, ctx); }
    | CONTINUE ';'                     { $$ = mk(N_CONTINUE, @1, ctx); }
    | SLICE IDENT opt_name track with ';' {
		$$ = mk(N_SLICE, @1, ctx); $$->op = phase_word(ctx, $2, @2, false, false); free($2);
		$$->a = $3; $$->b = $4; $$->c = $5;
		if ($$->op == OP_BEGIN && !$3)
			diag_error(ctx->diag, LOC(@1), "slice begin needs a name: slice begin \"name\";");
	}
    | INSTANT expr track with ';'      { $$ = mk(N_INSTANT, @1, ctx); $$->a = $2; $$->b = $3; $$->c = $4; }
    | COUNTER expr track '=' expr ';'  {
		$$ = mk(N_COUNTER, @1, ctx); $$->a = $2; $$->b = $3;
		$$->c = mk(N_WITH, @5, ctx); $$->c->str = xstrdup("value"); $$->c->a = $5;
	}
    | COUNTER expr track WITH with_list ';' { $$ = mk(N_COUNTER, @1, ctx); $$->a = $2; $$->b = $3; $$->c = $5.head; }
    | FLOW keyref IDENT opt_name with ';' {
		$$ = mk(N_FLOW, @1, ctx); $$->op = phase_word(ctx, $3, @3, true, false); free($3);
		$$->a = $2; $$->b = $4; $$->c = $5;
	}
    | SPAN keyref IDENT keyref opt_name with ';' {
		$$ = mk(N_SPAN, @1, ctx); $$->op = phase_word(ctx, $3, @3, false, true); free($3);
		$$->a = $2; $$->b = $4; $$->d = $5; $$->c = $6;
	}
    | TRACK keyref '=' expr ';'        { $$ = mk(N_TRACK_NAME, @1, ctx); $$->a = $2; $$->b = $4; }
    | IDENT STRING finding_keys expr STRING format_values with ';' {
		$$ = finding_stmt(ctx, @1, $1, @2, $2, $3.head, $4, format_call(ctx, @5, $5, $6.head), NULL, @1, NULL, $7);
	}
    | IDENT STRING finding_keys expr STRING format_values IDENT STRING format_values with ';' {
		$$ = finding_stmt(ctx, @1, $1, @2, $2, $3.head, $4, format_call(ctx, @5, $5, $6.head), $7, @7,
				  format_call(ctx, @8, $8, $9.head), $10);
	}
    /* sched switch with prev_pid = ..., ...; sched wakeup with pid = ..., ...;
     * ('sched' is no keyword: scripts have a const of that name) */
    | IDENT IDENT WITH with_list ';'  {
		$$ = mk(N_SCHED, @1, ctx); $$->c = $4.head;
		$$->op = strcmp($2, "switch") == 0 ? SCHED_SWITCH : SCHED_WAKEUP;
		if (strcmp($1, "sched") != 0 || (strcmp($2, "switch") != 0 && strcmp($2, "wakeup") != 0))
			diag_error(ctx->diag, LOC(@1), "'%s %s' is no statement (scheduling is 'sched switch with ...' "
				   "or 'sched wakeup with ...')", $1, $2);
		free($1);
		free($2);
	}
    ;

finding_keys: %empty                   { $$ = (struct node_list){0}; }
            | '[' exprs ']'            { $$ = $2; }
            ;
format_values: %empty                  { $$ = (struct node_list){0}; }
             | ',' exprs               { $$ = $2; }
             ;
else_part: %empty                      { $$ = NULL; }
         | ELSE block                  { $$ = $2; }
         | ELSE if_stmt                { $$ = $2; }
         ;
if_stmt: IF '(' expr ')' block else_part { $$ = mk(N_IF, @1, ctx); $$->a = $3; $$->b = $5; $$->c = $6; }
       ;

opt_name: %empty                       { $$ = NULL; }
        | STRING                       { $$ = mk(N_STR, @1, ctx); $$->str = $1; }
        | IDENT '(' opt_exprs ')'      { $$ = mk(N_CALL, @1, ctx); $$->str = $1; $$->a = $3; }
        | IDENT '[' expr ']'           { $$ = mk(N_INDEX, @1, ctx); $$->a = mk(N_IDENT, @1, ctx); $$->a->str = $1; $$->b = $3; }
        | LOCAL                        { $$ = mk(N_LOCAL, @1, ctx); $$->str = $1; }
        ;

track: %empty                          { $$ = NULL; }
     | ON keyref                       { $$ = $2; }
     | ON IDENT                        {
		$$ = NULL;
		if (strcmp($2, "thread") != 0)
			diag_error(ctx->diag, LOC(@2), "expected 'thread' or a track like ring[key] after 'on'");
		free($2);
	}
     ;

keyref: IDENT '[' expr ']'             { $$ = mk(N_KEYREF, @1, ctx); $$->str = $1; $$->a = $3; }
      ;

with: %empty                           { $$ = NULL; }
    | WITH with_list                   { $$ = $2.head; }
    ;
with_list: with_item                   { $$ = (struct node_list){0}; node_list_push(&$$, $1); }
         | with_list ',' with_item     { $$ = $1; node_list_push(&$$, $3); }
         ;
with_item: IDENT '=' expr              { $$ = mk(N_WITH, @1, ctx); $$->str = $1; $$->a = $3; }
         ;

/* @m[k] is the map's entry, not @m indexed: the '[' is shifted */
map_ref: MAPNAME %prec UNARY           { $$ = mk(N_MAP_REF, @1, ctx); $$->str = $1; }
       | MAPNAME '[' exprs ']'         { $$ = mk(N_MAP_REF, @1, ctx); $$->str = $1; $$->a = $3.head; $$ = nest(ctx, $$); }
       ;

exprs: expr                            { $$ = (struct node_list){0}; node_list_push(&$$, $1); }
     | exprs ',' expr                  { $$ = $1; node_list_push(&$$, $3); }
     ;
opt_exprs: %empty                      { $$ = NULL; }
         | exprs                       { $$ = $1.head; }
         ;

cast_type: TYPE                        { $$ = mk(N_IDENT, @1, ctx); $$->str = $1; }
         | STRUCT IDENT stars          {
		$$ = mk(N_IDENT, @1, ctx);
		$$->str = xasprintf("struct %s %.*s", $2, (int)$3, "********");
		free($2);
	}
         ;
stars: '*'                             { $$ = 1; }
     | stars '*'                       { $$ = $1 < 8 ? $1 + 1 : 8; }
     ;

/* the lexer's INT is the literal's 64 bits: negative only above INT64_MAX */
expr: INT                              { $$ = mk(N_INT, @1, ctx); $$->num = $1; $$->op = $1 < 0 ? 'u' : 0; }
    | STRING                           { $$ = mk(N_STR, @1, ctx); $$->str = $1; }
    | IDENT                            { $$ = mk(N_IDENT, @1, ctx); $$->str = $1; }
    | LOCAL                            { $$ = mk(N_LOCAL, @1, ctx); $$->str = $1; }
    | map_ref                          { $$ = $1; }
    | IDENT '(' opt_exprs ')'          { $$ = mk(N_CALL, @1, ctx); $$->str = $1; $$->a = $3; $$ = nest(ctx, $$); }
    /* sizeof(u32), sizeof(struct task_struct), offsetof(struct task_struct, pid) */
    | IDENT '(' cast_type ')'          { $$ = mk(N_CALL, @1, ctx); $$->str = $1; $$->a = $3; $3->kind = N_TYPE; }
    | IDENT '(' STRUCT IDENT ')'       { $$ = mk(N_CALL, @1, ctx); $$->str = $1; $$->a = type_node(ctx, @3, $4, NULL); }
    | IDENT '(' STRUCT IDENT ',' IDENT ')' {
		$$ = mk(N_CALL, @1, ctx); $$->str = $1; $$->a = type_node(ctx, @3, $4, NULL);
		$$->a->next = type_node(ctx, @6, NULL, $6);
	}
    | expr '[' expr ']'                { $$ = mk(N_INDEX, @1, ctx); $$->a = $1; $$->b = $3; $$ = nest(ctx, $$); }
    | expr '.' IDENT                   { $$ = mk(N_FIELD, @3, ctx); $$->a = $1; $$->str = $3; $$ = nest(ctx, $$); }
    /* a tuple's element: $t.0 */
    | expr '.' INT                     {
		$$ = mk(N_FIELD, @3, ctx); $$->a = $1; $$->str = xasprintf("%lld", (long long)$3); $$ = nest(ctx, $$);
	}
    | '(' expr ')'                     { $$ = $2; }
    /* a tuple: (a, b, ...) */
    | '(' expr ',' exprs ')'           { $$ = mk(N_TUPLE, @1, ctx); $2->next = $4.head; $$->a = $2; $$ = nest(ctx, $$); }
    | '(' cast_type ')' expr %prec UNARY { $$ = mk(N_CAST, @1, ctx); $$->str = $2->str; $2->str = NULL; node_free($2); $$->a = $4; $$ = nest(ctx, $$); }
    | '-' expr %prec UNARY             { $$ = mk(N_UNOP, @1, ctx); $$->op = '-'; $$->a = $2; $$ = nest(ctx, $$); }
    | '!' expr %prec UNARY             { $$ = mk(N_UNOP, @1, ctx); $$->op = '!'; $$->a = $2; $$ = nest(ctx, $$); }
    | '~' expr %prec UNARY             { $$ = mk(N_UNOP, @1, ctx); $$->op = '~'; $$->a = $2; $$ = nest(ctx, $$); }
    /* *p reads what p points to: p[0] */
    | '*' expr %prec UNARY             {
		$$ = mk(N_INDEX, @1, ctx); $$->op = '*'; $$->a = $2; $$->b = mk(N_INT, @1, ctx); $$ = nest(ctx, $$);
	}
    | expr '+' expr                    { $$ = mk(N_BINOP, @2, ctx); $$->op = '+'; $$->a = $1; $$->b = $3; $$ = nest(ctx, $$); }
    | expr '-' expr                    { $$ = mk(N_BINOP, @2, ctx); $$->op = '-'; $$->a = $1; $$->b = $3; $$ = nest(ctx, $$); }
    | expr '*' expr                    { $$ = mk(N_BINOP, @2, ctx); $$->op = '*'; $$->a = $1; $$->b = $3; $$ = nest(ctx, $$); }
    | expr '/' expr                    { $$ = mk(N_BINOP, @2, ctx); $$->op = '/'; $$->a = $1; $$->b = $3; $$ = nest(ctx, $$); }
    | expr '%' expr                    { $$ = mk(N_BINOP, @2, ctx); $$->op = '%'; $$->a = $1; $$->b = $3; $$ = nest(ctx, $$); }
    | expr '&' expr                    { $$ = mk(N_BINOP, @2, ctx); $$->op = '&'; $$->a = $1; $$->b = $3; $$ = nest(ctx, $$); }
    | expr '|' expr                    { $$ = mk(N_BINOP, @2, ctx); $$->op = '|'; $$->a = $1; $$->b = $3; $$ = nest(ctx, $$); }
    | expr '^' expr                    { $$ = mk(N_BINOP, @2, ctx); $$->op = '^'; $$->a = $1; $$->b = $3; $$ = nest(ctx, $$); }
    | expr SHL expr                    { $$ = mk(N_BINOP, @2, ctx); $$->op = OP_SHL; $$->a = $1; $$->b = $3; $$ = nest(ctx, $$); }
    | expr SHR expr                    { $$ = mk(N_BINOP, @2, ctx); $$->op = OP_SHR; $$->a = $1; $$->b = $3; $$ = nest(ctx, $$); }
    | expr '<' expr                    { $$ = mk(N_BINOP, @2, ctx); $$->op = '<'; $$->a = $1; $$->b = $3; $$ = nest(ctx, $$); }
    | expr '>' expr                    { $$ = mk(N_BINOP, @2, ctx); $$->op = '>'; $$->a = $1; $$->b = $3; $$ = nest(ctx, $$); }
    | expr LE expr                     { $$ = mk(N_BINOP, @2, ctx); $$->op = OP_LE; $$->a = $1; $$->b = $3; $$ = nest(ctx, $$); }
    | expr GE expr                     { $$ = mk(N_BINOP, @2, ctx); $$->op = OP_GE; $$->a = $1; $$->b = $3; $$ = nest(ctx, $$); }
    | expr EQ expr                     { $$ = mk(N_BINOP, @2, ctx); $$->op = OP_EQ; $$->a = $1; $$->b = $3; $$ = nest(ctx, $$); }
    | expr NE expr                     { $$ = mk(N_BINOP, @2, ctx); $$->op = OP_NE; $$->a = $1; $$->b = $3; $$ = nest(ctx, $$); }
    | expr AND expr                    { $$ = mk(N_BINOP, @2, ctx); $$->op = OP_AND; $$->a = $1; $$->b = $3; $$ = nest(ctx, $$); }
    | expr OR expr                     { $$ = mk(N_BINOP, @2, ctx); $$->op = OP_OR; $$->a = $1; $$->b = $3; $$ = nest(ctx, $$); }
    | expr DEFAULT_OP expr             { $$ = mk(N_DEFAULT, @2, ctx); $$->a = $1; $$->b = $3; $$ = nest(ctx, $$); }
    | expr '?' expr ':' expr           { $$ = mk(N_TERNARY, @2, ctx); $$->a = $1; $$->b = $3; $$->c = $5; $$ = nest(ctx, $$); }
    ;

%%

static void yyerror(YYLTYPE *loc, void *scanner, struct parse_ctx *ctx, const char *msg)
{
	/* bison says "syntax error, unexpected X, expecting Y": keep its words,
	 * they name the tokens. */
	(void)scanner;
	const char *m = strncmp(msg, "syntax error, ", 14) == 0 ? msg + 14 : msg;
	diag_error(ctx->diag, LOC(*loc), "syntax error: %s", m);
}

struct node *ut_parse(const char *file, const char *text, struct diag *d)
{
	struct parse_ctx ctx = {.diag = d, .file = file, .want_spec = true};
	yyscan_t scanner;
	if (yylex_init_extra(&ctx, &scanner))
		return NULL;
	YY_BUFFER_STATE buf = yy_scan_string(text, scanner);
	yyset_lineno(1, scanner);
	ctx.scanner = scanner;
	int errors_before = d->errors;
	int rc = yyparse(scanner, &ctx);
	yy_delete_buffer(buf, scanner);
	yylex_destroy(scanner);
	if (rc != 0 || d->errors > errors_before) {
		node_free(ctx.items);
		return NULL;
	}
	return ctx.items;
}
