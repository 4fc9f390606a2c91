# Turns docs/usage.txt into the --help string (mode=c) or the man page
# uring-trace(1) (mode=man).  The text above the line ".man" is the --help
# text; the man page also gets the sections below it.
#
#   awk -v mode=c -f docs/usage.awk docs/usage.txt > usage.c
#   awk -v mode=man -v version=0.1.0 -v prefix=/usr/local -f docs/usage.awk docs/usage.txt > uring-trace.1

function cstr(s) {
	gsub(/\\/, "\\\\", s); gsub(/"/, "\\\"", s); gsub(/%/, "%%", s)
	return s
}
function roff(s) {
	if (prefix != "") gsub(/PREFIX/, prefix, s)
	gsub(/\\/, "\\e", s); gsub(/-/, "\\-", s)
	if (s ~ /^[.']/) s = "\\&" s
	return s
}
# "  -o FILE    text": the term ends at the first run of two spaces.
function term_split(line,    body, at) {
	body = substr(line, 3)
	at = index(body, "  ")
	if (at == 0) { term = body; desc = ""; return }
	term = substr(body, 1, at - 1)
	desc = body; sub(/^[^ ]+( [^ ]+)*  +/, "", desc)
}
BEGIN {
	section = "head"
	if (mode == "c") {
		print "/* Generated from docs/usage.txt by docs/usage.awk: edit those, not this. */"
		print "#include \"runtime/usage.h\""
		print ""
		print "const char ut_usage_text[] ="
	} else if (mode == "man") {
		print ".\\\" Generated from docs/usage.txt by docs/usage.awk: edit those, not this."
		printf ".TH URING\\-TRACE 1 \"\" \"uring-trace %s\" \"User Commands\"\n", version
		print ".SH NAME"
		print "uring\\-trace \\- trace io_uring and the Linux IO stack with BPF into Perfetto traces"
	} else {
		print "usage.awk: set mode=c or mode=man" > "/dev/stderr"
		exit 2
	}
}
mode == "c" {
	if ($0 == ".man") { done = 1 }
	if (!done) printf "\t\"%s\\n\"\n", cstr($0)
	next
}
# ---- man ----
$0 == ".man" { section = "extra"; next }
section == "head" && /^Usage: / {
	print ".SH SYNOPSIS"
	s = $0; sub(/^Usage: +/, "", s)
	synopsis(s)
	section = "synopsis"; next
}
section == "synopsis" && /^ +[^ ]/ { s = $0; sub(/^ +/, "", s); print ".br"; synopsis(s); next }
section == "synopsis" && /^$/ { print ".SH DESCRIPTION"; section = "desc"; next }
section == "desc" && /^Options:$/ { print ".SH OPTIONS"; section = "options"; next }
section == "desc" && /^$/ { print ".PP"; next }
section == "desc" { print roff($0); next }
section == "options" && /^  -/ { term_split($0); print ".TP"; print ".B " roff(term); print roff(desc); next }
section == "options" && /^   +[^ ]/ { s = $0; sub(/^ +/, "", s); print roff(s); next }
section == "options" && /^$/ { print ".PP"; section = "desc"; next }
section == "extra" && /^[A-Z][A-Z ]+$/ { print ".SH " $0; next }
section == "extra" && /^  [^ ].*[^ ]  +[^ ]/ { term_split($0); print ".TP"; print ".B " roff(term); print roff(desc); next }
section == "extra" && /^  / { s = $0; sub(/^ +/, "", s); print roff(s); next }
section == "extra" && /^$/ { next }
section == "extra" { print roff($0); next }
function synopsis(s,    rest) {
	rest = s; sub(/^uring-trace */, "", rest)
	print ".B uring\\-trace"
	if (rest != "") print roff(rest)
}
END {
	if (mode == "c") print "\t;"
}
