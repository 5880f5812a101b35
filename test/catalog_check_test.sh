#!/bin/bash
#
# test/catalog_check_test.sh: a malformed row of the catalogue fails the
# build.  In scratch copies of the tree, plants one malformed row at a
# time in src/catalog/ and runs make's check of the catalogue
# (src/catalog/catalog.checked, which "make" builds before anything is
# installed); each must fail and name the row.  The unplanted copy passes.
# Needs PG_BIN (the pg_config to build with); no server.  Run by
# test/run_tests.sh.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
fail=0

copy()
{
	rm -rf "$scratch/tree"
	mkdir -p "$scratch/tree"
	tar -C "$root" --exclude=./.git --exclude='*.o' --exclude='*.bc' --exclude='*.so' \
		--exclude=./test/catalog/catalog_check --exclude=./src/catalog/catalog.checked \
		--exclude=./tmp_check --exclude=./results -cf - . | tar -C "$scratch/tree" -xf -
}

check()
{
	make -C "$scratch/tree" -s PG_CONFIG="$PG_BIN/pg_config" src/catalog/catalog.checked 2>&1
}

# plant NAME FILE PERL EXPECTED: edits src/catalog/FILE of a fresh copy
# with the perl substitution PERL; the check must fail with EXPECTED.
plant()
{
	local name=$1 file=$2 edit=$3 expected=$4 out
	copy
	perl -0pi -e "$edit" "$scratch/tree/src/catalog/$file"
	if cmp -s "$root/src/catalog/$file" "$scratch/tree/src/catalog/$file"; then
		echo "catalog_check_test: $name: the planted edit changed nothing" >&2
		fail=1
		return
	fi
	if out=$(check); then
		echo "catalog_check_test: $name: the build passed a malformed row" >&2
		fail=1
	elif ! grep -qE "$expected" <<<"$out"; then
		echo "catalog_check_test: $name: the build failed, but not on the planted row:" >&2
		echo "$out" | tail -5 | sed 's/^/    /' >&2
		fail=1
	fi
}

copy
out=$(check) || { echo "catalog_check_test: the unplanted copy fails the check:"; echo "$out"; exit 1; } >&2

plant "route without its parameter" catalog.c \
	's{\.route = "/public/orders/\{id\}", \.params = \{&p_order_id\}}{.route = "/public/orders/{id}"}' \
	'operation "[a-z_]+": \{id\} of its route has no parameter definition'
plant "route not starting with /" catalog.c \
	's{\.route = "/api/notifications", \.safe = true}{.route = "api/notifications", .safe = true}' \
	'operation "notifications": operation [0-9]+ of the catalogue is incomplete'
plant "path column not in the route" endpoints.c \
	's{PSVC_COL_PATH, NULL, "jobId", true}{PSVC_COL_PATH, NULL, "job", true}' \
	'table "[a-z_]+": path column [a-z_]+ names no \{name\}'

[ "$fail" -eq 0 ] && echo "catalog_check_test: make fails on each of 3 malformed rows of the catalogue"
exit "$fail"
