#!/bin/bash
#
# test/include_graph_test.sh: proves that test/include_graph.pl fails on a
# use against the order of the layer folders.  Each case copies src/ into a
# scratch directory, plants one use from the lowest folder (src/catalog/)
# or a low one up to the highest ones, and expects the check to fail with
# a line that names the planted use; the unplanted copy must pass.  Run by
# test/static_checks.sh; needs no server and no build.
#
# Cases: an include of a higher header, a call declared extern by hand (no
# include), a type, an enumerator and a macro of a higher header named in
# a lower header or file, and _PG_init (which no header declares) called
# from below.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
fail=0

# plant NAME FILE TEXT EXPECTED: appends TEXT to src/FILE of a fresh copy
# and expects the check to fail with a line matching EXPECTED.
plant()
{
	local name=$1 file=$2 text=$3 expected=$4 out
	rm -rf "$scratch/src" && cp -r "$root/src" "$scratch/src"
	printf '\n%s\n' "$text" >>"$scratch/src/$file"
	if out=$(perl "$root/test/include_graph.pl" -q "$scratch" 2>&1); then
		echo "include_graph_test: $name: the check passed a planted use in src/$file" >&2
		fail=1
	elif ! grep -qE "$expected" <<<"$out"; then
		echo "include_graph_test: $name: the check failed, but not on the planted use:" >&2
		echo "$out" | sed 's/^/    /' >&2
		fail=1
	fi
}

cp -r "$root/src" "$scratch/src"
perl "$root/test/include_graph.pl" -q "$scratch" >/dev/null ||
	{ echo "include_graph_test: the unplanted copy fails the check" >&2; exit 1; }

plant "include" catalog/catalog.c \
	'#include "deferred.h"
void catalog_planted(void) { psvc_deferred_init(); }' \
	'src/catalog/catalog.c \(folder catalog\) includes deferred.h of the higher folder deferred'
plant "extern by hand" json/json_decode.c \
	'extern void psvc_deferred_init(void);
void json_planted(void) { psvc_deferred_init(); }' \
	'src/json/json_decode.c \(folder json\) names psvc_deferred_init of deferred.h'
plant "type in a header" catalog/catalog.h \
	'struct PsvcSettleCreate *catalog_planted(void);' \
	'src/catalog/catalog.h \(folder catalog\) names PsvcSettleCreate of functions.h'
plant "enumerator" catalog/endpoints.c \
	'int catalog_planted(void) { return PSVC_PRIV_RESOURCE; }' \
	'src/catalog/endpoints.c \(folder catalog\) names PSVC_PRIV_RESOURCE of fdw.h'
plant "macro" base/guc.c \
	'#ifdef PSVC_OPERATION_FUNCTION
#endif' \
	'src/base/guc.c \(folder base\) names PSVC_OPERATION_FUNCTION of functions.h'
plant "composition root" catalog/catalog.c \
	'extern void _PG_init(void);
void catalog_planted(void) { _PG_init(); }' \
	'src/catalog/catalog.c \(folder catalog\) names _PG_init of partner_svc.c of the higher folder init'

[ "$fail" -eq 0 ] && echo "include_graph_test: the check fails on each of 6 planted uses against the order"
exit "$fail"
