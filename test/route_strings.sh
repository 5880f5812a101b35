#!/bin/bash
#
# test/route_strings.sh: no route of a partner service outside the
# operation catalogue.
#
# Every call the extension makes to a partner service is a row of the
# catalogue (src/catalog/catalog.c, and any src/catalog_*.c); nothing else in the
# extension's sources (src/*.c, src/*.h; the sandbox under src/sandbox/ is
# a separate program and is not checked) may hold a route.  This script
# strips C comments, then looks at every string literal: one that starts
# with a path of a partner service, or with a method and such a path
# ("GET /orders/{id}", as the rate-limit table writes them), fails the
# check.  The paths are the first segments of the routes of the documents
# (orders and webhooks, movie content, catalog, todos, generation, files
# and uploads, scheduler).  The listener's own routes (/webhooks/...) are
# ours, not a partner's, and are not among them.
#
# Before checking the sources, the script checks itself: a planted route
# literal in a scratch file must be found, and the same literal in a
# comment must not, so the check cannot pass by matching nothing.
#
# Usage: test/route_strings.sh [REPO_DIR]; exits non-zero and lists the
# offending lines on failure.
set -uo pipefail

root=${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
cd "$root" || exit 2

# First path segments of the partner routes (documents 000, 001, 002).
segments='public|orders|products|users|validate-vehicle|transaction|transactions|mcp|v1|movies|concerts|awards|books|collections|todos|files|uploads|api'

# Prints FILE:LINE: LITERAL for every route literal of the files given.
scan() {
	perl -e '
		my $segments = shift;
		my $route = qr#^(?:(?:GET|POST|PUT|DELETE|PATCH|HEAD)\s+)?/(?:$segments)(?:[/?{]|\z)#;
		my $found = 0;
		for my $file (@ARGV) {
			open(my $fh, "<", $file) or die "$file: $!";
			local $/;
			my $src = <$fh>;
			close $fh;
			# comments become blanks (their newlines kept), literals stay
			$src =~ s{("(?:\\.|[^"\\\n])*")|(\x27(?:\\.|[^\x27\\\n])*\x27)|(/\*.*?\*/|//[^\n]*)}{
				defined $1 ? $1 : defined $2 ? $2 : do { (my $c = $3) =~ s/[^\n]/ /g; $c }
			}gse;
			my $line = 1;
			while ($src =~ m{(\n)|"((?:\\.|[^"\\\n])*)"}g) {
				if (defined $1) { $line++; next; }
				my $lit = $2;
				if ($lit =~ $route) {
					print "$file:$line: \"$lit\"\n";
					$found++;
				}
			}
		}
		exit($found ? 1 : 0);
	' "$segments" "$@"
}

# --- the check checks something ---
scratch=$(mktemp -d "${TMPDIR:-/tmp}/route_strings.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
printf '%s\n' '/* a comment may say "/public/orders/{id}" */' \
	'static const char *r = "/v1/movies/{movie}/content/themes";' >"$scratch/planted.c"
out=$(scan "$scratch/planted.c")
if [ $? -eq 0 ] || ! grep -q 'planted.c:2: "/v1/movies' <<<"$out" || grep -q 'planted.c:1:' <<<"$out"; then
	echo "route_strings: the check does not find a planted route literal (or finds one in a comment):" >&2
	echo "$out" >&2
	exit 2
fi
printf '%s\n' 'static const char *r = "GET /orders/{id}";' >"$scratch/planted2.c"
if scan "$scratch/planted2.c" >/dev/null; then
	echo "route_strings: the check does not find a planted \"METHOD /route\" literal" >&2
	exit 2
fi

# --- the extension's sources, catalogue excluded ---
# (src/*.[ch] and the layer folders src/*/*.[ch], the sandbox left out)
files=()
catalog=
for f in src/*.c src/*.h src/*/*.c src/*/*.h; do
	case "$f" in
		src/sandbox/*) ;;
		*/catalog.c | */catalog_*.c) [ "${f##*/}" = catalog.c ] && catalog=$f ;;
		*) [ -f "$f" ] && files+=("$f") ;;
	esac
done
out=$(scan "${files[@]}")
if [ $? -ne 0 ]; then
	echo "route_strings: route strings of partner services outside the catalogue ($catalog):" >&2
	echo "$out" | sed 's/^/    /' >&2
	echo "route_strings: add an operation to $catalog and refer to it instead." >&2
	exit 1
fi
# the catalogue itself must have routes, or the file names above are stale
if [ -z "$catalog" ] || scan "$catalog" >/dev/null; then
	echo "route_strings: no route found in the catalogue (${catalog:-no catalog.c}); is it elsewhere?" >&2
	exit 1
fi
echo "route strings: none outside the catalogue (${#files[@]} files checked)"
