#!/bin/bash
#
# test/function_length_test.sh: proves that test/function_length.pl fails
# on a function over 120 lines without its reason, and on a third one
# with its reason, in a scratch copy of src/; the unplanted copy passes.
# Run by test/static_checks.sh; needs no server and no build.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
fail=0

# long NAME REASON: a function of 125 statements, with REASON above it
long()
{
	printf '\n/*\n * A planted function.\n%s */\nint\n%s(int x)\n{\n' "$2" "$1"
	for _ in $(seq 1 125); do printf '\tx++;\n'; done
	printf '\treturn x;\n}\n'
}

cp -r "$root/src" "$scratch/src"
perl "$root/test/function_length.pl" "$scratch" >/dev/null ||
	{ echo "function_length_test: the unplanted copy fails the check" >&2; exit 1; }

long planted_silent '' >>"$scratch/src/catalog/catalog.c"
out=$(perl "$root/test/function_length.pl" "$scratch" 2>&1) && fail=1
grep -q 'planted_silent is 1[2-9][0-9] lines long and the comment above it says not why' <<<"$out" || fail=1

rm -rf "$scratch/src" && cp -r "$root/src" "$scratch/src"
for n in 1 2 3; do long "planted_$n" ' * Long: planted to be counted.
' >>"$scratch/src/catalog/catalog.c"; done
out=$(perl "$root/test/function_length.pl" "$scratch" 2>&1) && fail=1
grep -q 'functions over 120 lines (at most 2)' <<<"$out" || fail=1

[ "$fail" -eq 0 ] && echo "function_length_test: the check fails on a long function without its reason and on a third long one"
[ "$fail" -eq 0 ] || echo "function_length_test: the check passed a planted long function" >&2
exit "$fail"
