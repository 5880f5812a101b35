#!/bin/bash
#
# test/recipe_walk.sh: walks the recipe "A list endpoint as a foreign
# table" of docs/architecture.md in a scratch copy of the tree, editing
# every file the recipe lists and nothing else, and proves the result
# whole: make (whose check of the catalogue must pass), the static checks
# (the docs name the new table), and the regression tests the recipe says
# change (RECIPE_TESTS below) with the new table planned and explained.
# A file the recipe forgets fails one of them.
#
# The scratch copy is installed into PG_BIN's PostgreSQL for its tests,
# so the tree itself is installed again at the end (a trap), as
# test/run_tests.sh has it.  Runs as root (the cluster and pg_regress run
# as postgres), like test/run_major.sh; about a minute.
#
# Usage: PG_BIN=... bash test/recipe_walk.sh [-a]   (-a: every regression
# test, to find which ones the recipe changes)
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$root/test/lib.sh"
# the regression tests a new list table changes (the recipe lists their
# expected files)
RECIPE_TESTS="extension options fdw_setup fdw_movies"
all=
[ "${1:-}" = "-a" ] && all=1

work=$(make_workdir)
tree=$work/tree
cleanup()
{
	stop_cluster
	rm -rf "$work"
	build_install "$root" >/dev/null 2>&1 || echo "recipe_walk: could not install the tree again" >&2
}
trap cleanup EXIT

mkdir -p "$tree"
tar -C "$root" --exclude=./.git --exclude='*.o' --exclude='*.bc' --exclude='*.so' \
	--exclude=./.built_with --exclude=./tmp_check --exclude=./results -cf - . | tar -C "$tree" -xf -

# edit FILE PERL: the recipe's change of one file; it must change it
edit()
{
	local before
	before=$(md5sum <"$tree/$1")
	perl -0pi -e "$2" "$tree/$1"
	[ "$(md5sum <"$tree/$1")" != "$before" ] || { echo "recipe_walk: the edit of $1 changed nothing" >&2; exit 1; }
}

# 1. the operation's id
edit src/catalog/catalog.h 's/(\tPSVC_OP_MOVIE_FAQS,\n)/$1\tPSVC_OP_MOVIE_QUOTES,\n/'
# 2. its row
edit src/catalog/catalog.c 's{("questions and answers about a movie"\),\n)}{$1\t[PSVC_OP_MOVIE_QUOTES] = MOVIE_LIST("movie_quotes",\n\t\t\t\t\t\t\t\t\t   "/v1/movies/{movie}/content/quotes",\n\t\t\t\t\t\t\t\t\t   "quotes of a movie"),\n}'
# 3. its columns and the table's row
edit src/catalog/endpoints.c 's{(static const PsvcColumnDef faqs_cols\[\] = \{)}{static const PsvcColumnDef quotes_cols[] = {\n\tMOVIE_KEY,\n\t{"position", "integer", PSVC_COL_FIELD, "position", NULL, false},\n\t{"text", "text", PSVC_COL_FIELD, "text", NULL, false},\n\tRAW\n};\n\n$1}'
edit src/catalog/endpoints.c 's{(\tCOLS\(faqs_cols\)\},\n)}{$1\t{.resource = "movie_quotes", .list = psvc_op(PSVC_OP_MOVIE_QUOTES),\n\t\t.description = "Quotes of a movie",\n\tCOLS(quotes_cols)},\n}'
# 4. the expected files and the docs that list the resources
edit test/expected/options.out 's/movie_faqs, concert_events/movie_faqs, movie_quotes, concert_events/g'
# IMPORT FOREIGN SCHEMA movies lists the new table, with its comment
edit test/expected/fdw_movies.out 's/( movie_faqs\n)( movie_themes\n movie_timeline\n movies\n)\(9 rows\)/$1 movie_quotes\n$2(10 rows)/; s/( movie_faqs\n)( movie_themes\n movie_timeline\n)\(8 rows\)/$1 movie_quotes\n$2(9 rows)/; s{(\n movie_faqs +\|[^\n]*\n)((?: movie[_a-z]* +\|[^\n]*\n)+)\(9 rows\)}{$1 movie_quotes      | Quotes of a movie (service movies). Reads GET /v1/movies/\{movie\}/content/quotes. Required: WHERE movie = ... (or movie = ANY(...), or a join on movie).\n$2(10 rows)}'
edit docs/reference.md 's/`movie_faqs`, `concert_events`/`movie_faqs`, `movie_quotes`, `concert_events`/g'
edit docs/foreign-tables.md 's/### `movie_themes`, `movie_timeline`, `movie_characters`, `movie_faqs` \(service `movies`\)/### `movie_themes`, `movie_timeline`, `movie_characters`, `movie_faqs`, `movie_quotes` (service `movies`)/'

echo "== recipe_walk: make"
make -C "$tree" -s -j2 PG_CONFIG="$PG_BIN/pg_config" >"$work/make.log" 2>&1 ||
	{ tail -20 "$work/make.log"; echo "recipe_walk: the build failed" >&2; exit 1; }
grep -q 'catalog_check: .* operations, .* tables: ok' "$work/make.log" ||
	{ echo "recipe_walk: make did not check the catalogue" >&2; exit 1; }
echo "== recipe_walk: static checks"
# they ask git which files are tracked: the copy's files are
git -C "$tree" init -q && git -C "$tree" add -A >/dev/null 2>&1
bash "$tree/test/static_checks.sh" >"$work/static.log" 2>&1 ||
	{ cat "$work/static.log"; echo "recipe_walk: the static checks fail" >&2; exit 1; }
make -C "$tree" -s install PG_CONFIG="$PG_BIN/pg_config" PATH_BINDIR= >/dev/null || exit 1
chown -R postgres: "$tree"

start_cluster "$work" || exit 1
mp()
{
	runuser -u postgres -- env PATH="$PG_BIN:$PATH" PGHOST="$PGHOST" PGPORT="$PGPORT" \
		PGUSER=postgres make -C "$tree" --no-print-directory PG_CONFIG="$PG_BIN/pg_config" "$@"
}
tests=$RECIPE_TESTS
[ -n "$all" ] && tests=$(sed -e 's/#.*//' "$tree/test/schedule" | tr -s '[:space:]' ' ')
echo "== recipe_walk: regression tests $tests"
if ! mp installcheck REGRESS="$tests" TAP_TESTS= >"$work/regress.log" 2>&1; then
	cat "$work/regress.log"
	[ -s "$tree/regression.diffs" ] && head -80 "$tree/regression.diffs"
	echo "recipe_walk: the regression tests the recipe changes fail" >&2
	exit 1
fi
# the new table: created, planned with its route, explained
out=$(runuser -u postgres -- "$PG_BIN/psql" -X -A -t -h "$PGHOST" -p "$PGPORT" -d contrib_regression 2>&1 <<'SQL'
CREATE FOREIGN TABLE recipe_quotes (movie text, "position" integer, text text)
  SERVER movies OPTIONS (resource 'movie_quotes');
EXPLAIN (VERBOSE, COSTS OFF) SELECT * FROM recipe_quotes WHERE movie = 'inception';
SQL
)
if ! grep -q 'Partner Request: GET /v1/movies/inception/content/quotes' <<<"$out"; then
	echo "$out"
	echo "recipe_walk: the new table does not plan its route" >&2
	exit 1
fi
echo "recipe_walk: the recipe's files make a table that builds, passes the static checks and $RECIPE_TESTS, and plans its route"
