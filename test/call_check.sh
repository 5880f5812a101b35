#!/bin/bash
#
# test/call_check.sh: every call to a partner service is built by the call
# module, from its row of the catalogue only.
#
# The call module (src/call/call.h, src/call/call.c and the HTTP transport it keeps
# private: src/call/http.c, src/call/http_attempt.c, src/call/http_wait.c, src/call/http_url.c,
# src/call/http_errors.c, src/call/http_int.h) is the only code that fills a
# PsvcCall and the only code that talks HTTP.  Outside it, in the
# extension's sources (src/LAYER/*.c, src/LAYER/*.h; the sandbox is a separate program
# and is not checked), after C comments and string literals are blanked,
# this script fails on:
#   - a call built by hand: a PsvcCall value (not a pointer), a
#     sizeof(PsvcCall), a compound literal, or a store into a field of a
#     variable or parameter declared PsvcCall * (psvc_call_make and the
#     psvc_call_set_* functions build calls);
#   - a catalogue field re-encoded: a field of a struct set to a row's
#     ->method, ->route or ->safe, anything set from a row's ->safe (the
#     row is read where it is needed, never copied into a struct or a
#     flag; text formatted from a row, a message, is not a copy), or a
#     row's method compared (what a method implies, retries and caching,
#     the call module decides from the row's safe);
#   - the transport used directly: an include of http_int.h or
#     curl/curl.h, a psvc_http_* or curl_* name;
# and, everywhere in src/ (the module included), on the names of the
# retired request interface: PsvcHttpRequest, PsvcHttpResponse and its
# flags (retry_unsafe, unsafe, return_errors, return_unknown,
# report_transport_errors, outcome_unknown).  The catalogue's own files
# (src/catalog/catalog.c, src/catalog/endpoints.c) define the rows and are not checked for
# re-encoding.
#
# Before checking the sources, the script checks itself: each kind of
# planted violation in a scratch file must be found, and the same text in
# a comment or a string literal must not, so the check cannot pass by
# matching nothing.
#
# Usage: test/call_check.sh [REPO_DIR]; exits non-zero and lists the
# offending lines on failure.
set -uo pipefail

root=${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
cd "$root" || exit 2

# Prints FILE:LINE: WHAT for every violation in the files given; the
# first argument is "outside" (all checks) or "module" (retired names
# only), the second "rows" when the files define catalogue rows.
scan() {
	perl -e '
		my $where = shift;
		my $found = 0;
		for my $file (@ARGV) {
			open(my $fh, "<", $file) or die "$file: $!";
			local $/;
			my $src = <$fh>;
			close $fh;
			my $rows = ($file =~ m{(?:^|/)(?:catalog|endpoints)\.c\z});
			# comments and literals become blanks (newlines kept); an
			# include keeps its name
			$src =~ s{(#\s*include\s*(?:"[^"\n]*"|<[^>\n]*>))|("(?:\\.|[^"\\\n])*")|(\x27(?:\\.|[^\x27\\\n])*\x27)|(/\*.*?\*/|//[^\n]*)}{
				defined $1 ? $1 : do { (my $c = defined $2 ? $2 : defined $3 ? $3 : $4) =~ s/[^\n]/ /g; $c }
			}gse;
			my @checks = (
				[qr/\bPsvcHttp(?:Request|Response)\b/, "the retired request interface"],
				[qr/\b(?:retry_unsafe|unsafe|return_errors|return_unknown|report_transport_errors|outcome_unknown)\b/,
				 "a flag of the retired request interface"],
			);
			if ($where eq "outside") {
				push @checks,
					[qr/\bPsvcCall\s+(?!\*)[A-Za-z_]\w*\s*[;=\[,)]/, "a PsvcCall built by hand (a value)"],
					[qr/\bsizeof\s*\(\s*PsvcCall\s*\)/, "a PsvcCall built by hand (sizeof)"],
					[qr/\(\s*PsvcCall\s*\)\s*\{/, "a PsvcCall built by hand (compound literal)"],
					[qr/#\s*include\s*["<](?:http_int\.h|http\.h|curl\/curl\.h)[">]/, "the HTTP transport included"],
					[qr/\b(?:psvc_http_\w+|curl_\w+|CURL\w*)\b/, "the HTTP transport used"];
				push @checks,
					[qr/(?:->|\.)\w+(?:\s*\[[^\]\n]*\])?\s*(?:[-+*\/|&]?=)(?!=)[^;,]*?->\s*(?:method|route|safe)\b[^;,]*;/,
					 "a field of a catalogue row copied"],
					[qr/\b\w+\s*=(?!=)[^;]*?->\s*safe\b/, "a row'"'"'s safe re-encoded"],
					[qr/\bstr(?:n?case)?n?cmp\s*\([^;]*?(?:->|\.)method\b/, "a method compared (retries and caching follow the row'"'"'s safe)"]
					unless $rows;
				# stores into a call: names declared PsvcCall *name
				my %calls;
				$calls{$1} = 1 while $src =~ /\bPsvcCall\s*\*\s*(?:const\s+)?([A-Za-z_]\w*)/g;
				for my $name (keys %calls) {
					push @checks, [qr/\b\Q$name\E\s*->\s*\w+(?:\s*\[[^\]\n]*\])?\s*(?:[-+*\/|&]?=)(?!=)/,
								   "a field of PsvcCall $name set by hand"];
				}
			}
			my @lines = split /\n/, $src, -1;
			for my $i (0 .. $#lines) {
				for my $c (@checks) {
					if ($lines[$i] =~ $c->[0]) {
						print "$file:", $i + 1, ": $c->[1]\n";
						$found++;
					}
				}
			}
		}
		exit($found ? 1 : 0);
	' "$@"
}

# --- the check checks something ---
scratch=$(mktemp -d "${TMPDIR:-/tmp}/call_check.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
cat >"$scratch/planted.c" <<'EOF'
/* in a comment: call->op = op; req->method = op->method; PsvcHttpRequest r; */
static const char *s = "call->path[0] = v; #include \"http_int.h\"";
static void f(PsvcCall *call, const PsvcOperation *op)
{
	PsvcCall	c = {0};
	bool		again = op->safe;
	t->route = op->route;
	if (strcmp(op->method, "GET") == 0)
		call->path[0] = s;
	call->body_len = 0;
	psvc_http_start(call, NULL);
	r.return_errors = true;
}
#include "http_int.h"
EOF
out=$(scan outside "$scratch/planted.c")
want=(
	'planted.c:5: a PsvcCall built by hand (a value)'
	'planted.c:6: a row'"'"'s safe re-encoded'
	'planted.c:7: a field of a catalogue row copied'
	'planted.c:8: a method compared'
	'planted.c:9: a field of PsvcCall call set by hand'
	'planted.c:10: a field of PsvcCall call set by hand'
	'planted.c:11: the HTTP transport used'
	'planted.c:12: a flag of the retired request interface'
	'planted.c:14: the HTTP transport included'
)
for w in "${want[@]}"; do
	if ! grep -qF "$w" <<<"$out"; then
		echo "call_check: the check does not find a planted violation: $w" >&2
		echo "$out" >&2
		exit 2
	fi
done
if grep -qE 'planted\.c:(1|2|3):' <<<"$out"; then
	echo "call_check: the check finds violations in a comment, a literal or a parameter:" >&2
	echo "$out" >&2
	exit 2
fi

# --- the extension's sources ---
module=()
outside=()
for f in src/*.c src/*.h src/*/*.c src/*/*.h; do
	[ -f "$f" ] || continue
	case "$f" in
		src/sandbox/*) ;;
		*/call.[ch] | */http.c | */http_*.c | */http_int.h) module+=("$f") ;;
		*) outside+=("$f") ;;
	esac
done
out=$( { scan outside "${outside[@]}"; scan module "${module[@]}"; } )
if [ -n "$out" ]; then
	echo "call_check: calls built or re-encoded outside the call module (src/call/call.h):" >&2
	echo "$out" | sed 's/^/    /' >&2
	echo "call_check: make calls with psvc_call_make() and read the row where it is needed." >&2
	exit 1
fi
echo "call check: calls built only by the call module (${#outside[@]} files checked, ${#module[@]} in the module)"
