/* The description of struct ut_program (program_fields.h) and what follows
 * it: saving a .uto's tables, loading them, freeing a program and printing
 * it.  The order of the fields here is their order in the file. */
#include "compiler/program_fields.h"

#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/bytes.h"
#include "compiler/aggregations.h"

#define NO_STRING 0xffffffffu

/* ---- the description ---- */

#define FIELD(type, name_, kind_, ...) {.name = #name_, .kind = kind_, .offset = offsetof(type, name_), __VA_ARGS__}
#define ARRAY(type, name_, n, of_) FIELD(type, name_, PF_ARRAY, .count = offsetof(type, n), .of = &of_)
#define ALONG(type, name_, n, of_) FIELD(type, name_, PF_ALONG, .count = offsetof(type, n), .of = &of_)
#define STRUCT(linkage, name_, type, check, depth, ...)                                                           \
	static const struct pf_field name_##_fields[] = {__VA_ARGS__};                                                 \
	linkage const struct pf_struct name_ = {#type, sizeof(struct type), name_##_fields,                             \
						sizeof(name_##_fields) / sizeof(name_##_fields[0]), depth, check}

/* An array of strings or of unsigned: each element a struct of one field. */
static const struct pf_field text_field[] = {{.name = "", .kind = PF_STR, .text = true}};
static const struct pf_struct pf_text = {"text", sizeof(char *), text_field, 1, 0, NULL};
static const struct pf_field unsigned_field[] = {{.name = "", .kind = PF_UNSIGNED}};
static const struct pf_struct pf_unsigned = {"unsigned", sizeof(unsigned), unsigned_field, 1, 0, NULL};

/* numbers are 8 bytes: the decoder reads them so */
static bool field_ok(const void *s)
{
	const struct ut_field *f = s;
	return f->size <= 4096 && f->offset <= 65536 && (f->type == UT_F_STR || f->size == 8);
}

static bool event_ok(const void *s)
{
	return ((const struct ut_event *)s)->nlocals <= UT_ULOCALS_MAX;
}

/* lhist's buckets */
static bool map_ok(const void *s)
{
	const struct ut_map *m = s;
	return m->agg >= UT_AGG_KINDS || ut_aggs[m->agg].nargs <= 1 || m->lhist_step > 0;
}

static bool disk_ok(const void *s)
{
	return ((const struct ut_disk_ref *)s)->name != NULL;
}

static const struct pf_struct pf_value;

STRUCT(static, pf_field_layout, ut_field, field_ok, 0,
	FIELD(struct ut_field, type, PF_UNSIGNED, .below = UT_F_STR + 1),
	FIELD(struct ut_field, offset, PF_UNSIGNED),
	FIELD(struct ut_field, size, PF_UNSIGNED));

/* a format's values nest at most 4 deep */
STRUCT(static, pf_value, ut_value, NULL, 4,
	FIELD(struct ut_value, kind, PF_UNSIGNED, .below = UT_VAL_TEXT + 1),
	FIELD(struct ut_value, field, PF_UNSIGNED),
	FIELD(struct ut_value, display, PF_UNSIGNED, .below = UT_SHOW_COUNT),
	FIELD(struct ut_value, table, PF_INT),
	FIELD(struct ut_value, text, PF_STR),
	ARRAY(struct ut_value, fmt, nfmt, pf_value));

STRUCT(static, pf_alt, ut_alt, NULL, 0,
	FIELD(struct ut_alt, kind, PF_UNSIGNED),
	FIELD(struct ut_alt, target, PF_STR),
	FIELD(struct ut_alt, prog_name, PF_STR),
	FIELD(struct ut_alt, signature, PF_STR));

STRUCT(static, pf_probe, ut_probe, NULL, 0,
	FIELD(struct ut_probe, spec, PF_STR),
	FIELD(struct ut_probe, loc, PF_LOC),
	FIELD(struct ut_probe, optional, PF_BOOL),
	ARRAY(struct ut_probe, alts, nalts, pf_alt));

STRUCT(static, pf_named_value, ut_named_value, NULL, 0,
	FIELD(struct ut_named_value, name, PF_STR),
	FIELD(struct ut_named_value, value, PF_STRUCT, .of = &pf_value));

STRUCT(static, pf_ulocal, ut_ulocal, NULL, 0,
	FIELD(struct ut_ulocal, is_str, PF_BOOL),
	FIELD(struct ut_ulocal, size, PF_U16, .below = UT_ULOCAL_MAX_BYTES + 1));

STRUCT(static, pf_event, ut_event, event_ok, 0,
	FIELD(struct ut_event, op, PF_UNSIGNED),
	FIELD(struct ut_event, loc, PF_LOC),
	FIELD(struct ut_event, size, PF_UNSIGNED),
	ARRAY(struct ut_event, fields, nfields, pf_field_layout),
	FIELD(struct ut_event, category, PF_STR),
	FIELD(struct ut_event, name, PF_STRUCT, .of = &pf_value),
	FIELD(struct ut_event, group, PF_INT),
	FIELD(struct ut_event, group_key, PF_STRUCT, .of = &pf_value),
	FIELD(struct ut_event, flow, PF_INT),
	FIELD(struct ut_event, key, PF_STRUCT, .of = &pf_value),
	ARRAY(struct ut_event, args, nargs, pf_named_value),
	FIELD(struct ut_event, body, PF_UNSIGNED),
	FIELD(struct ut_event, nbody, PF_UNSIGNED),
	ARRAY(struct ut_event, locals, nlocals, pf_ulocal));

STRUCT(static, pf_table_entry, ut_table_entry, NULL, 0,
	FIELD(struct ut_table_entry, key, PF_I64),
	FIELD(struct ut_table_entry, name, PF_STR, .text = true));

STRUCT(static, pf_table, ut_table, NULL, 0,
	FIELD(struct ut_table, name, PF_STR),
	ARRAY(struct ut_table, entries, nentries, pf_table_entry));

STRUCT(static, pf_map, ut_map, map_ok, 0,
	FIELD(struct ut_map, name, PF_STR),
	FIELD(struct ut_map, bpf_name, PF_STR),
	FIELD(struct ut_map, agg, PF_UNSIGNED),
	FIELD(struct ut_map, lhist_min, PF_I64),
	FIELD(struct ut_map, lhist_max, PF_I64),
	FIELD(struct ut_map, lhist_step, PF_I64),
	ARRAY(struct ut_map, keys, nkeys, pf_field_layout),
	ALONG(struct ut_map, key_show, nkeys, pf_value),
	ALONG(struct ut_map, key_names, nkeys, pf_text),
	FIELD(struct ut_map, key_size, PF_UNSIGNED),
	FIELD(struct ut_map, value_size, PF_UNSIGNED),
	FIELD(struct ut_map, value_show, PF_STRUCT, .of = &pf_value),
	ARRAY(struct ut_map, tuple_fields, ntuple, pf_field_layout),
	ALONG(struct ut_map, tuple_show, ntuple, pf_value),
	FIELD(struct ut_map, user_side, PF_BOOL),
	FIELD(struct ut_map, is_private, PF_BOOL),
	FIELD(struct ut_map, is_lru, PF_BOOL));

STRUCT(static, pf_disk, ut_disk_ref, disk_ok, 0,
	FIELD(struct ut_disk_ref, name, PF_STR),
	FIELD(struct ut_disk_ref, loc, PF_LOC));

static bool enum_ok(const void *s)
{
	const struct ut_enum_ref *e = s;
	return e->name != NULL && e->use < UT_ENUM_USES;
}

STRUCT(static, pf_enum, ut_enum_ref, enum_ok, 0,
	FIELD(struct ut_enum_ref, name, PF_STR),
	FIELD(struct ut_enum_ref, loc, PF_LOC),
	FIELD(struct ut_enum_ref, use, PF_UNSIGNED),
	FIELD(struct ut_enum_ref, fallback, PF_I64));   /* value: set when loaded */

STRUCT(static, pf_uexpr, ut_uexpr, NULL, 0,
	FIELD(struct ut_uexpr, op, PF_UNSIGNED),
	FIELD(struct ut_uexpr, is_str, PF_BOOL),
	FIELD(struct ut_uexpr, sgn, PF_BOOL),
	FIELD(struct ut_uexpr, n, PF_U16),
	FIELD(struct ut_uexpr, a, PF_UNSIGNED),
	FIELD(struct ut_uexpr, b, PF_UNSIGNED),
	FIELD(struct ut_uexpr, c, PF_UNSIGNED),
	FIELD(struct ut_uexpr, i, PF_I64),
	FIELD(struct ut_uexpr, text, PF_STR),
	FIELD(struct ut_uexpr, field, PF_UNSIGNED),
	FIELD(struct ut_uexpr, which, PF_UNSIGNED),
	FIELD(struct ut_uexpr, slot, PF_UNSIGNED),
	FIELD(struct ut_uexpr, map, PF_UNSIGNED),
	FIELD(struct ut_uexpr, keys, PF_UNSIGNED),
	FIELD(struct ut_uexpr, nkeys, PF_UNSIGNED));

STRUCT(static, pf_ustmt, ut_ustmt, NULL, 0,
	FIELD(struct ut_ustmt, op, PF_UNSIGNED),
	FIELD(struct ut_ustmt, loc, PF_LOC),
	FIELD(struct ut_ustmt, a, PF_UNSIGNED),
	FIELD(struct ut_ustmt, b, PF_UNSIGNED),
	FIELD(struct ut_ustmt, slot, PF_UNSIGNED),
	FIELD(struct ut_ustmt, map, PF_UNSIGNED),
	FIELD(struct ut_ustmt, keys, PF_UNSIGNED),
	FIELD(struct ut_ustmt, nkeys, PF_UNSIGNED),
	FIELD(struct ut_ustmt, event, PF_UNSIGNED),
	FIELD(struct ut_ustmt, body, PF_UNSIGNED),
	FIELD(struct ut_ustmt, nbody, PF_UNSIGNED),
	FIELD(struct ut_ustmt, body2, PF_UNSIGNED),
	FIELD(struct ut_ustmt, nbody2, PF_UNSIGNED));

/* the strings first: locations name their files among them */
STRUCT(, pf_program, ut_program, NULL, 0,
	ARRAY(struct ut_program, strings, nstrings, pf_text),
	ARRAY(struct ut_program, probes, nprobes, pf_probe),
	ARRAY(struct ut_program, events, nevents, pf_event),
	ARRAY(struct ut_program, groups, ngroups, pf_text),
	ARRAY(struct ut_program, flows, nflows, pf_text),
	ARRAY(struct ut_program, tables, ntables, pf_table),
	ARRAY(struct ut_program, maps, nmaps, pf_map),
	ARRAY(struct ut_program, disks, ndisks, pf_disk),
	ARRAY(struct ut_program, enums, nenums, pf_enum),
	ARRAY(struct ut_program, uexprs, nuexprs, pf_uexpr),
	ARRAY(struct ut_program, ustmts, nustmts, pf_ustmt),
	ARRAY(struct ut_program, ukeys, nukeys, pf_unsigned),
	FIELD(struct ut_program, bpf_c, PF_STR, .unsaved = true));

/* Enums are saved as the unsigned they are. */
_Static_assert(sizeof(enum ut_field_type) == sizeof(unsigned), "an enum field is 4 bytes");

/* ---- reaching fields ---- */

static void *at(const void *s, size_t offset)
{
	return (char *)s + offset;
}

static unsigned count_of(const void *s, const struct pf_field *f)
{
	return *(const unsigned *)at(s, f->count);
}

static void *array_of(const void *s, const struct pf_field *f)
{
	return *(void **)at(s, f->offset);
}

/* ---- saving ---- */

void pf_write(struct pf_writer *w, const void *p, size_t n)
{
	grow_array((void **)&w->buf, &w->cap, w->len + n, 1);
	memcpy(w->buf + w->len, p, n);
	w->len += n;
}

void pf_write_u32(struct pf_writer *w, uint32_t v) { pf_write(w, &v, 4); }
void pf_write_u64(struct pf_writer *w, uint64_t v) { pf_write(w, &v, 8); }

static void write_str(struct pf_writer *w, const char *s)
{
	uint32_t n = s ? (uint32_t)strlen(s) : NO_STRING;
	pf_write_u32(w, n);
	if (s)
		pf_write(w, s, n);
}

static void save_struct(struct pf_writer *w, const struct pf_struct *d, const void *s)
{
	for (const struct pf_field *f = d->fields; f < d->fields + d->nfields; f++) {
		const void *v = at(s, f->offset);
		switch (f->kind) {
		case PF_UNSIGNED: pf_write_u32(w, *(const unsigned *)v); break;
		case PF_INT: pf_write_u32(w, (uint32_t)*(const int *)v); break;
		case PF_U16: pf_write_u32(w, *(const uint16_t *)v); break;
		case PF_BOOL: pf_write_u32(w, *(const bool *)v); break;
		case PF_I64: pf_write_u64(w, (uint64_t)*(const int64_t *)v); break;
		case PF_STR:
			if (!f->unsaved)
				write_str(w, *(char *const *)v);
			break;
		case PF_LOC: {
			const struct ut_loc *l = v;
			write_str(w, l->file);
			pf_write_u32(w, (uint32_t)l->line);
			pf_write_u32(w, (uint32_t)l->col);
			break;
		}
		case PF_STRUCT: save_struct(w, f->of, v); break;
		case PF_ARRAY: case PF_ALONG: {
			/* an array along another that a program made by hand left
			 * out (a map's key names) is saved as zeros */
			static const unsigned char zeros[256];
			unsigned n = count_of(s, f);
			const char *elems = array_of(s, f);
			if (f->kind == PF_ARRAY)
				pf_write_u32(w, n);
			for (unsigned i = 0; i < n; i++)
				save_struct(w, f->of, elems ? (const void *)(elems + i * f->of->size) : (const void *)zeros);
			break;
		}
		}
	}
}

void pf_save(struct pf_writer *w, const struct ut_program *p)
{
	save_struct(w, &pf_program, p);
}

/* ---- loading ---- */

struct loader {
	struct byte_reader *in;
	const struct ut_program *p;   /* its strings, read first, for locations */
};

/* The fewest bytes a struct of d takes in a file: what a count of them
 * must leave room for. */
static size_t min_bytes(const struct pf_struct *d)
{
	size_t n = 0;
	for (const struct pf_field *f = d->fields; f < d->fields + d->nfields; f++) {
		switch (f->kind) {
		case PF_I64: n += 8; break;
		case PF_LOC: n += 12; break;
		case PF_STRUCT: n += min_bytes(f->of); break;
		case PF_ALONG: break;
		case PF_STR: n += f->unsaved ? 0 : 4; break;
		default: n += 4; break;   /* a number, or an array's count */
		}
	}
	return n;
}

static char *load_str(struct loader *l)
{
	uint32_t n = byte_u32(l->in);
	if (n == NO_STRING || l->in->bad)
		return NULL;
	if (n > l->in->left) {
		l->in->bad = true;
		return NULL;
	}
	char *s = xmalloc((size_t)n + 1);
	byte_read(l->in, s, n);
	s[n] = 0;
	return s;
}

/* A file's name is one of the program's strings: NULL when it is none. */
static const char *load_file(struct loader *l)
{
	char *file = load_str(l);
	const char *found = NULL;
	for (unsigned i = 0; file && i < l->p->nstrings; i++)
		if (strcmp(l->p->strings[i], file) == 0)
			found = l->p->strings[i];
	free(file);
	return found;
}

static void load_struct(struct loader *l, const struct pf_struct *d, void *s, unsigned depth);

/* n structs of d into a new array: n must fit in what is left. */
static void *load_array(struct loader *l, const struct pf_struct *d, unsigned n, unsigned depth)
{
	char *a = xcalloc(n ? n : 1, d->size);
	for (unsigned i = 0; i < n && !l->in->bad; i++)
		load_struct(l, d, a + i * d->size, depth);
	return a;
}

static void load_struct(struct loader *l, const struct pf_struct *d, void *s, unsigned depth)
{
	for (const struct pf_field *f = d->fields; f < d->fields + d->nfields && !l->in->bad; f++) {
		void *v = at(s, f->offset);
		uint32_t u;
		switch (f->kind) {
		case PF_UNSIGNED: case PF_INT: case PF_U16: case PF_BOOL:
			u = byte_u32(l->in);
			if (f->below && u >= f->below)
				l->in->bad = true;
			if (f->kind == PF_UNSIGNED)
				*(unsigned *)v = u;
			else if (f->kind == PF_INT)
				*(int *)v = (int)u;
			else if (f->kind == PF_U16)
				*(uint16_t *)v = (uint16_t)u;
			else
				*(bool *)v = u != 0;
			break;
		case PF_I64: *(int64_t *)v = (int64_t)byte_u64(l->in); break;
		case PF_STR:
			if (!f->unsaved)
				*(char **)v = load_str(l);
			if (f->text && !*(char **)v)
				*(char **)v = xstrdup("");
			break;
		case PF_LOC: {
			struct ut_loc *loc = v;
			loc->file = load_file(l);
			loc->line = (int)byte_u32(l->in);
			loc->col = (int)byte_u32(l->in);
			break;
		}
		case PF_STRUCT:
			load_struct(l, f->of, v, f->of == d ? depth + 1 : 0);
			break;
		case PF_ARRAY: case PF_ALONG: {
			unsigned *n = at(s, f->count);
			unsigned next = f->of == d ? depth + 1 : 0;
			if (f->kind == PF_ARRAY) {
				size_t least = min_bytes(f->of);
				*n = byte_u32(l->in);
				if (l->in->bad || (least && *n > l->in->left / least) || (*n && f->of == d && next > d->max_depth)) {
					l->in->bad = true;
					*n = 0;
					break;
				}
			}
			*(void **)v = load_array(l, f->of, *n, next);
			break;
		}
		}
	}
	if (!l->in->bad && d->ok && !d->ok(s))
		l->in->bad = true;
}

bool pf_load(struct byte_reader *in, struct ut_program *p)
{
	struct loader l = {in, p};
	load_struct(&l, &pf_program, p, 0);
	return !in->bad;
}

/* ---- freeing ---- */

static void free_struct(const struct pf_struct *d, void *s)
{
	for (const struct pf_field *f = d->fields; f < d->fields + d->nfields; f++) {
		void *v = at(s, f->offset);
		if (f->kind == PF_STR) {
			free(*(char **)v);
		} else if (f->kind == PF_STRUCT) {
			free_struct(f->of, v);
		} else if ((f->kind == PF_ARRAY || f->kind == PF_ALONG) && array_of(s, f)) {
			for (unsigned i = 0; i < count_of(s, f); i++)
				free_struct(f->of, (char *)array_of(s, f) + i * f->of->size);
			free(array_of(s, f));
		}
	}
}

void ut_program_free(struct ut_program *p)
{
	if (!p)
		return;
	free_struct(&pf_program, p);
	free(p);
}

/* ---- printing ---- */

static void dump_str(const char *s, FILE *out)
{
	if (!s) {
		fputs("NULL", out);
		return;
	}
	fputc('"', out);
	for (; *s; s++)
		if (*s == '"' || *s == '\\')
			fprintf(out, "\\%c", *s);
		else if ((unsigned char)*s < ' ')
			fprintf(out, "\\x%02x", (unsigned char)*s);
		else
			fputc(*s, out);
	fputc('"', out);
}

/* A struct's saved fields on one line: name=value, arrays in brackets. */
static void dump_inline(const struct pf_struct *d, const void *s, FILE *out)
{
	bool single = d->nfields == 1 && !d->fields[0].name[0];   /* a string, an unsigned */
	for (const struct pf_field *f = d->fields; f < d->fields + d->nfields; f++) {
		const void *v = at(s, f->offset);
		if (f->unsaved)
			continue;
		if (!single)
			fprintf(out, "%s%s=", f == d->fields ? "" : " ", f->name);
		switch (f->kind) {
		case PF_UNSIGNED: fprintf(out, "%u", *(const unsigned *)v); break;
		case PF_INT: fprintf(out, "%d", *(const int *)v); break;
		case PF_U16: fprintf(out, "%u", *(const uint16_t *)v); break;
		case PF_BOOL: fprintf(out, "%d", *(const bool *)v); break;
		case PF_I64: fprintf(out, "%lld", (long long)*(const int64_t *)v); break;
		case PF_STR: dump_str(*(char *const *)v, out); break;
		case PF_LOC: {
			const struct ut_loc *l = v;
			fprintf(out, "%s:%d:%d", l->file ? l->file : "?", l->line, l->col);
			break;
		}
		case PF_STRUCT:
			fputc('{', out);
			dump_inline(f->of, v, out);
			fputc('}', out);
			break;
		case PF_ARRAY: case PF_ALONG:
			fputc('[', out);
			for (unsigned i = 0; i < count_of(s, f); i++) {
				fputs(i ? ", " : "", out);
				bool braces = f->of->nfields > 1;
				fputs(braces ? "{" : "", out);
				dump_inline(f->of, (const char *)array_of(s, f) + i * f->of->size, out);
				fputs(braces ? "}" : "", out);
			}
			fputc(']', out);
			break;
		}
	}
}

void pf_dump(const struct ut_program *p, FILE *out)
{
	const struct pf_struct *d = &pf_program;
	for (const struct pf_field *f = d->fields; f < d->fields + d->nfields; f++) {
		if (f->unsaved)
			continue;
		unsigned n = count_of(p, f);
		fprintf(out, "%s: %u\n", f->name, n);
		for (unsigned i = 0; i < n; i++) {
			fprintf(out, "  %u: ", i);
			dump_inline(f->of, (const char *)array_of(p, f) + i * f->of->size, out);
			fputc('\n', out);
		}
	}
}
