/* `uring-trace dump`: every record of a trace as a line of text. */
#include <inttypes.h>
#include <stdio.h>

#include "fxt/fxt.h"
#include "fxt/reader.h"
#include "tools/tools.h"

/* Prints s with quotes, escaping what is not printable ASCII. */
void tool_print_quoted(FILE *out, const char *s)
{
	fputc('"', out);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(out, "\\%c", *p);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(out, "\\x%02x", *p);
		else
			fputc(*p, out);
	}
	fputc('"', out);
}

static void print_args(FILE *out, const struct fxt_record_view *v)
{
	for (unsigned k = 0; k < v->nargs; k++) {
		const struct fxt_arg_view *a = &v->args[k];
		fputs(k ? ", " : " args={", out);
		fprintf(out, "%s: ", a->name);
		switch (a->type) {
		case FXT_ARG_NULL:
			fputs("null", out);
			break;
		case FXT_ARG_INT32:
			fprintf(out, "int32 %" PRId64, a->i);
			break;
		case FXT_ARG_INT64:
			fprintf(out, "int64 %" PRId64, a->i);
			break;
		case FXT_ARG_UINT32:
			fprintf(out, "uint32 %" PRIu64, a->u);
			break;
		case FXT_ARG_UINT64:
			fprintf(out, "uint64 %" PRIu64, a->u);
			break;
		case FXT_ARG_DOUBLE:
			fprintf(out, "double %.17g", a->d);
			break;
		case FXT_ARG_STRING:
			fputs("string ", out);
			tool_print_quoted(out, a->s);
			break;
		case FXT_ARG_POINTER:
			fprintf(out, "pointer 0x%" PRIx64, a->u);
			break;
		case FXT_ARG_KOID:
			fprintf(out, "koid %" PRIu64, a->u);
			break;
		case FXT_ARG_BOOL:
			fputs(a->u ? "bool true" : "bool false", out);
			break;
		}
	}
	if (v->nargs)
		fputc('}', out);
}

static void dump_record(FILE *out, const struct fxt_record_view *v)
{
	fprintf(out, "0x%08" PRIx64 " ", v->offset);
	switch (v->type) {
	case FXT_REC_METADATA:
		if (v->subtype == FXT_META_TRACE_INFO) {
			fputs("magic", out);
		} else if (v->subtype == FXT_META_PROVIDER_INFO) {
			fprintf(out, "provider_info id=%" PRIu64 " name=", v->value);
			tool_print_quoted(out, v->text);
		} else {
			fprintf(out, "metadata type=%u", v->subtype);
		}
		break;
	case FXT_REC_INITIALIZATION:
		fprintf(out, "initialization ticks_per_second=%" PRIu64, v->value);
		break;
	case FXT_REC_STRING:
		fprintf(out, "string index=%u ", v->index);
		tool_print_quoted(out, v->text);
		break;
	case FXT_REC_THREAD:
		fprintf(out, "thread index=%u pid=%" PRIu64 " tid=%" PRIu64, v->index, v->pid, v->tid);
		break;
	case FXT_REC_EVENT:
		fprintf(out, "event %s ts=%" PRIu64 " pid=%" PRIu64 " tid=%" PRIu64 " cat=",
			fxt_event_type_name(v->subtype), v->ts, v->pid, v->tid);
		tool_print_quoted(out, v->category);
		fputs(" name=", out);
		tool_print_quoted(out, v->name);
		print_args(out, v);
		if (v->subtype == FXT_EV_COUNTER)
			fprintf(out, " counter_id=%" PRIu64, v->value);
		else if (v->subtype == FXT_EV_DURATION_COMPLETE)
			fprintf(out, " end_ts=%" PRIu64, v->value);
		else if (v->has_type_word)
			fprintf(out, " id=%" PRIu64, v->value);
		break;
	case FXT_REC_KERNEL_OBJECT:
		fprintf(out, "kernel_object %s koid=%" PRIu64 " name=", fxt_object_type_name(v->subtype),
			v->koid);
		tool_print_quoted(out, v->name);
		print_args(out, v);
		break;
	case FXT_REC_SCHEDULING:
		if (v->subtype == FXT_SCHED_CONTEXT_SWITCH)
			fprintf(out, "context_switch ts=%" PRIu64 " cpu=%u outgoing_tid=%" PRIu64
				" outgoing_state=%s incoming_tid=%" PRIu64, v->ts, v->cpu, v->tid,
				fxt_thread_state_name(v->outgoing_state), v->incoming_tid);
		else if (v->subtype == FXT_SCHED_THREAD_WAKEUP)
			fprintf(out, "thread_wakeup ts=%" PRIu64 " cpu=%u tid=%" PRIu64, v->ts, v->cpu, v->tid);
		else
			fprintf(out, "scheduling type=%u words=%zu", v->subtype, v->words);
		print_args(out, v);
		break;
	default:
		fprintf(out, "record type=%u words=%zu", v->type, v->words);
		break;
	}
	fputc('\n', out);
}

int fxt_dump(const char *path, FILE *out)
{
	struct fxt_reader *r = fxt_reader_open(path, out);
	if (!r)
		return 1;
	struct fxt_record_view v;
	enum fxt_next_result res;
	while ((res = fxt_reader_next(r, &v)) != FXT_NEXT_END && res != FXT_NEXT_FATAL) {
		if (res == FXT_NEXT_RECORD)
			dump_record(out, &v);
		else
			fprintf(out, "0x%08" PRIx64 " malformed record type=%u words=%zu\n", v.offset,
				v.type, v.words);
	}
	uint64_t kept = 0;
	for (const char *e; (e = fxt_reader_error(r, kept)); kept++)
		fprintf(out, "error: %s\n", e);
	if (fxt_reader_error_count(r) > kept)
		fprintf(out, "error: ... %" PRIu64 " errors in all\n", fxt_reader_error_count(r));
	int rc = fxt_reader_error_count(r) ? 1 : 0;
	fxt_reader_close(r);
	return rc;
}

