#!/bin/bash
#
# test/static_checks.sh: checks that need no server.
#   - one version: default_version of partner_svc.control (tracked by
#     git) is the version of META.json (and of what it provides), the
#     Makefile reads EXTVERSION from it, and no source file or Makefile
#     writes a version literal of its own;
#   - the frozen install scripts and the upgrade directories make a path
#     from every released version to the current one;
#   - released files are frozen: no symbolic link under sql/upgrade/, and
#     the install script and upgrade files of every released version match
#     sql/released.sha256;
#   - from 0.3--0.4 on, no upgrade file drops a view;
#   - test/schedule lists every regression test (test/sql/*.sql) and
#     nothing else, so make installcheck skips none;
#   - docs/*.md, README.md and test/downstream/README.md name no file
#     outside the repository (no machine paths, no design or specification
#     files that are not in it);
#   - the include graph of src/ (test/include_graph.pl): the layer folders
#     in one order (no file includes a header of a higher folder or names
#     what one declares; test/include_graph_test.sh proves the check fails
#     on planted uses), no cycle of uses between files, no header included
#     by more than half of the .c files, the sandbox shares no header with
#     the extension;
#   - no route string of a partner service outside the operation
#     catalogue (test/route_strings.sh);
#   - no call to a partner service built, and no field of a catalogue row
#     re-encoded, outside the call module; the HTTP transport private to
#     it (test/call_check.sh);
#   - no global variable written outside the module that defines it
#     (test/global_writes.pl; test/global_writes_test.sh plants writes);
#   - at most two functions over 120 lines in src/ (the sandbox aside),
#     each with a line " * Long: ..." in the comment above it that says
#     why (test/function_length.pl);
#   - every foreign table of the catalogue is a value of option resource
#     in docs/reference.md and has a section in docs/foreign-tables.md;
#   - no test of the PostgreSQL version outside src/base/pg_compat.h, and
#     no pg_attribute_noreturn() (gone in 18) outside it either;
#   - comments cite docs/ pages, never the specification documents;
#   - the GUCs: every one is a row of the one table in src/base/guc.c (no
#     DefineCustom*Variable elsewhere), each is documented in
#     docs/reference.md; the 0.3 strings of src/base/guc_legacy.c and every
#     successor they name are in docs/upgrades.md, and each successor is
#     a row of the table.
# Run from anywhere; exits non-zero and says why on the first kind of
# failure found (all failures of that kind are listed).
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
fail=0
bad() { echo "static_checks: $*" >&2; fail=1; }

# --- versions ---
ver=$(sed -n "s/^default_version[[:space:]]*=[[:space:]]*'\(.*\)'/\1/p" partner_svc.control 2>/dev/null)
[ -n "$ver" ] || bad "no default_version in partner_svc.control"
git -C "$root" ls-files --error-unmatch partner_svc.control >/dev/null 2>&1 ||
	bad "partner_svc.control is not tracked by git (it is the one place the version is written)"
[ ! -e partner_svc.control.in ] || bad "partner_svc.control.in exists: partner_svc.control is tracked, not generated"
grep -qE '^EXTVERSION[[:space:]]*:?=[[:space:]]*\$\(shell sed .*partner_svc\.control\)' Makefile ||
	bad "the Makefile does not read EXTVERSION from partner_svc.control"
if grep -nE '^[[:space:]]*[A-Z_]*VERSION[[:space:]]*[:?]?=[[:space:]]*[0-9]' Makefile src/sandbox/Makefile; then
	bad "a version literal in a Makefile (it comes from partner_svc.control)"
fi
meta=$(perl -MJSON::PP -e 'local $/; my $m = JSON::PP->new->decode(<STDIN>);
	print join(" ", $m->{version}, map { $m->{provides}{$_}{version} } sort keys %{ $m->{provides} })' <META.json) ||
	bad "META.json is not valid JSON"
for v in $meta; do
	[ "$v" = "$ver" ] || bad "META.json says version $v, partner_svc.control $ver"
done
# the Debian package (debian/, docs/install.md): its version is the
# extension's, and its majors (debian/pgversions) are those of META.json's
# range of PostgreSQL, which has an upper bound (a bare "15.0.0" reads as
# "15 or later" on PGXN).
debver=$(sed -n '1s/^partner-svc (\([^)]*\)).*/\1/p' debian/changelog 2>/dev/null)
[ "$debver" = "$ver" ] || bad "debian/changelog says version '$debver', partner_svc.control $ver"
pgrange=$(perl -MJSON::PP -e 'local $/; print JSON::PP->new->decode(<STDIN>)->{prereqs}{runtime}{requires}{PostgreSQL} // ""' <META.json 2>/dev/null)
if [[ "$pgrange" =~ ^\>=\ ?([0-9]+)\.0\.0,\ ?\<\ ?([0-9]+)\.0\.0$ ]]; then
	majors=$(seq "${BASH_REMATCH[1]}" $((BASH_REMATCH[2] - 1)) | tr '\n' ' ')
	pgversions=$(sed -e 's/#.*//' debian/pgversions 2>/dev/null | tr -s '[:space:]' '\n' | sed '/^$/d' | tr '\n' ' ')
	[ "$pgversions" = "$majors" ] || bad "debian/pgversions lists '$pgversions', META.json's PostgreSQL '$pgrange' means '$majors'"
else
	bad "META.json requires PostgreSQL '$pgrange', not a range '>= NN.0.0, < MM.0.0' of the supported majors"
fi
if grep -rnE '#define[[:space:]]+(PSVC|SANDBOX)_VERSION[[:space:]]+"[0-9]' src; then
	bad "a version literal in the sources (it comes from partner_svc.control)"
fi
if [ -x src/sandbox/partner_svc_sandbox ]; then
	sbver=$(src/sandbox/partner_svc_sandbox --version 2>/dev/null)
	[ "$sbver" = "partner_svc_sandbox $ver" ] || bad "the built sandbox's --version says '$sbver', partner_svc.control $ver"
fi
[ ! -f "sql/partner_svc--$ver.sql" ] || ! git -C "$root" ls-files --error-unmatch "sql/partner_svc--$ver.sql" >/dev/null 2>&1 ||
	bad "sql/partner_svc--$ver.sql is tracked; it is built from sql/install/"

# --- upgrade path: every frozen version has a path up to EXTVERSION ---
for f in sql/partner_svc--*.sql; do
	base=$(basename "$f" .sql)
	v=${base#partner_svc--}
	case "$v" in *--*|"$ver") continue ;; esac
	cur=$v
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		[ "$cur" = "$ver" ] && break
		next=$(ls -d sql/upgrade/"$cur"--* 2>/dev/null | head -n 1)
		[ -n "$next" ] || break
		cur=${next##*--}
	done
	[ "$cur" = "$ver" ] || bad "no upgrade path from $v to $ver under sql/upgrade/"
done
for d in sql/upgrade/*--*; do
	[ -d "$d" ] || continue
	ls "$d"/*.sql >/dev/null 2>&1 || bad "$d holds no .sql file"
done

# --- released files are frozen: no link under sql/upgrade/ (a link follows
# whatever its target becomes), and every file of a released version (its
# install script, the files of the upgrade directory that leads to it) is
# listed in sql/released.sha256 with the checksum it was released with ---
links=$(find sql/upgrade -type l 2>/dev/null; git ls-files -s sql/upgrade 2>/dev/null | awk '$1 == "120000" { print $4 }')
if [ -n "$links" ]; then
	bad "symbolic links under sql/upgrade/ (an upgrade step is a file of its own):"
	echo "$links" | sort -u | sed 's/^/    /' >&2
fi
manifest=sql/released.sha256
if [ ! -f "$manifest" ]; then
	bad "$manifest is missing"
else
	released=$(for f in sql/partner_svc--*.sql; do
		v=$(basename "$f" .sql); v=${v#partner_svc--}
		case "$v" in *--*|"$ver") continue ;; esac
		echo "$f"
		for d in sql/upgrade/*--"$v"; do
			[ -d "$d" ] && ls "$d"/* 2>/dev/null
		done
	done | sort)
	listed=$(awk '{ sub(/^\*/, "", $2); print $2 }' "$manifest" | sort)
	if [ "$released" != "$listed" ]; then
		bad "the files of released versions and $manifest differ (< released, not listed; > listed, not released):"
		diff <(echo "$released") <(echo "$listed") | grep '^[<>]' | sed 's/^/    /' >&2
	fi
	changed=$(sha256sum --quiet -c "$manifest" 2>&1 | grep -v "^sha256sum: WARNING")
	if [ -n "$changed" ]; then
		bad "files of released versions changed (they are frozen; docs/upgrades.md):"
		echo "$changed" | sed 's/^/    /' >&2
	fi
fi

# --- an update keeps every view with its dependents and grants: from
# 0.3--0.4 on, no upgrade file drops a view (CREATE OR REPLACE VIEW, new
# columns at the end; docs/upgrades.md#views-keep-their-dependents-and-grants).
# 0.1--0.2 and 0.2--0.3 were released before the rule and are frozen ---
drops=$(for d in sql/upgrade/*--*; do
	case "$(basename "$d")" in 0.1--0.2|0.2--0.3) continue ;; esac
	grep -il -E '^[[:space:]]*DROP[[:space:]]+(MATERIALIZED[[:space:]]+)?VIEW' "$d"/*.sql 2>/dev/null
done)
if [ -n "$drops" ]; then
	bad "upgrade files that drop a view (a user's view on it blocks the update, a GRANT on it is lost; use CREATE OR REPLACE VIEW):"
	echo "$drops" | sed 's/^/    /' >&2
fi

# --- test/schedule and test/sql/ agree ---
scheduled=$(sed -e 's/#.*//' test/schedule | tr -s '[:space:]' '\n' | sed '/^$/d' | sort)
tests=$(for f in test/sql/*.sql; do basename "$f" .sql; done | sort)
if [ "$scheduled" != "$tests" ]; then
	bad "test/schedule and test/sql/*.sql differ:"
	diff <(echo "$scheduled") <(echo "$tests") | sed 's/^/    /' >&2
fi
for t in $tests; do
	[ -f "test/expected/$t.out" ] || bad "test/sql/$t.sql has no test/expected/$t.out"
done

# --- docs name nothing outside the repository ---
docs=(README.md docs/*.md test/downstream/README.md)
if grep -nE '(^|[^[:alnum:]_.])(/work/|/usr/|/opt/|/root/|/home/|/etc/|/var/)|shared/|DESIGN(\.md)?|STYLE\.md|spec/[[:alnum:]]|/spec\b' "${docs[@]}"; then
	bad "the lines above name files outside the repository (or machine paths)"
fi

# --- source files the docs name exist, and errors.md names the file that
# holds the tables it mirrors ---
for f in $(grep -ohE '`src/[[:alnum:]_/]+\.[ch]`' "${docs[@]}" | tr -d '`' | sort -u); do
	[ -f "$f" ] || bad "the docs name $f, which does not exist"
done
rules_file=$(grep -oE 'failure_rules\[\]` in[[:space:]]*$|failure_rules\[\]` in `src/[[:alnum:]_/]+\.c`' docs/errors.md | grep -oE 'src/[[:alnum:]_/]+\.c')
if [ -z "$rules_file" ]; then
	rules_file=$(tr '\n' ' ' <docs/errors.md | grep -oE 'failure_rules\[\]` in[[:space:]]+`src/[[:alnum:]_/]+\.c`' | grep -oE 'src/[[:alnum:]_/]+\.c')
fi
for table in status_rules failure_rules; do
	grep -qE "^static const [A-Za-z]+ $table\[\] = " "${rules_file:-/dev/null}" 2>/dev/null ||
		bad "docs/errors.md says $table[] is in '${rules_file:-?}', which does not define it"
done

# --- layering: one header per module, no cycle of uses, no header that
# most files include, the sandbox apart (test/include_graph.pl) ---
perl test/include_graph.pl -q || bad "the include graph is broken (perl test/include_graph.pl prints it)"
# and the check of direction fails on a use planted against the order
bash test/include_graph_test.sh >/dev/null || bad "test/include_graph.pl passes a use against the order of the folders (test/include_graph_test.sh)"

# --- no global written outside the module that defines it
# (test/global_writes.pl), and the check fails on planted writes ---
perl test/global_writes.pl >/dev/null || bad "a global written outside its module (perl test/global_writes.pl lists where)"
bash test/global_writes_test.sh >/dev/null || bad "test/global_writes.pl passes a planted write, or fails an allowed one (test/global_writes_test.sh)"

# --- function length: at most two functions over 120 lines in src/ (the
# sandbox aside), each with the reason written above it ---
perl test/function_length.pl >/dev/null || bad "functions too long (perl test/function_length.pl -v lists them)"
bash test/function_length_test.sh >/dev/null || bad "test/function_length.pl passes a planted long function (test/function_length_test.sh)"

# --- every foreign table of the catalogue is documented: a value of the
# option resource in docs/reference.md, a section of docs/foreign-tables.md
# (the recipe of docs/architecture.md lists both) ---
for r in $(sed -n 's/.*{\.resource = "\([a-z_]*\)".*/\1/p' src/catalog/endpoints.c); do
	grep -qE "^\| \`resource\` \|.*\`$r\`" docs/reference.md ||
		bad "resource $r (src/catalog/endpoints.c) is not a value of option resource in docs/reference.md"
	grep -qE "^#+ .*\`$r\`" docs/foreign-tables.md ||
		bad "resource $r (src/catalog/endpoints.c) has no section in docs/foreign-tables.md"
done

# --- the differences between PostgreSQL majors are in src/base/pg_compat.h
# only: no version test anywhere else in the extension ---
if grep -nE '^\s*#\s*(if|elif|ifdef|ifndef).*(PG_VERSION_NUM|PSVC_PG[0-9]+_GTE|PG_MODULE_MAGIC_EXT)' \
	$(find src -name '*.[ch]' ! -path 'src/sandbox/*' ! -name pg_compat.h); then
	bad "the lines above test the PostgreSQL version outside src/base/pg_compat.h"
fi
# an API one major retired, written where pg_compat.h's newer form belongs
# (18 removed pg_attribute_noreturn(); the modules write pg_noreturn)
if grep -nE '\bpg_attribute_noreturn\b' \
	$(find src -name '*.[ch]' ! -path 'src/sandbox/*' ! -name pg_compat.h); then
	bad "the lines above use pg_attribute_noreturn(), which PostgreSQL 18 removed: write pg_noreturn (src/base/pg_compat.h)"
fi

# --- no route of a partner service outside the operation catalogue ---
bash test/route_strings.sh "$root" || bad "route strings outside the catalogue (test/route_strings.sh)"

# --- calls are built by the call module only ---
bash test/call_check.sh "$root" || bad "calls built or catalogue fields re-encoded outside the call module (test/call_check.sh)"

# --- comments cite pages of docs/, never the specification documents,
# which are not in the repository ---
if grep -rnE '[Dd]ocuments? 00[0-2]\b|00[0-2]_[0-9a-f]{16}\.txt' src; then
	bad "the lines above cite a specification document; cite the docs/ page that describes the service"
fi

# --- the GUCs: one table, documented; the 0.3 strings mapped ---
# No cap on their number: a tunable with a unit and a range is a setting
# of its own; docs/reference.md groups them.
gucs=$(sed -n '/^static const PsvcGuc gucs\[\] = {$/,/^};$/p' src/base/guc.c |
	sed -n 's/^[[:space:]]*{\.name = "\([a-z_]*\)".*/\1/p')
n_gucs=$(printf '%s\n' "$gucs" | grep -c .)
[ "$n_gucs" -gt 0 ] || bad "no table of GUCs found in src/base/guc.c (static const PsvcGuc gucs[] = {...})"
if grep -n 'DefineCustom[A-Za-z]*Variable' src/*.c src/*/*.c 2>/dev/null | grep -v '^src/base/guc\.c:'; then
	bad "a GUC defined outside the table of src/base/guc.c"
fi
# the strings of 0.3 (src/base/guc_legacy.c): kept only to name their
# successors, documented in docs/upgrades.md, not in the reference
legacy=$(sed -n 's/^static const LegacySetting [a-z_]* = {"partner_svc\.\([a-z_]*\)".*/\1/p' src/base/guc_legacy.c)
[ -n "$legacy" ] || bad "no 0.3 setting found in src/base/guc_legacy.c"
for g in $gucs; do
	if grep -qx "$g" <<<"$legacy"; then
		grep -q "partner_svc\.$g\b" docs/upgrades.md || bad "0.3 setting partner_svc.$g is not in docs/upgrades.md"
		continue
	fi
	grep -q "\`partner_svc\.$g\`" docs/reference.md || bad "GUC partner_svc.$g is not documented in docs/reference.md"
done
# every successor a 0.3 key names is a setting, and docs/upgrades.md maps it
for g in $(sed -n 's/^[[:space:]]*{"[a-z_]*", "\([a-z_]*\)"},$/\1/p' src/base/guc_legacy.c); do
	grep -qx "$g" <<<"$gucs" || bad "src/base/guc_legacy.c names partner_svc.$g, which is no row of src/base/guc.c"
	grep -q "partner_svc\.$g\b" docs/upgrades.md || bad "partner_svc.$g (a successor of a 0.3 key) is not in docs/upgrades.md"
done

[ "$fail" -eq 0 ] && echo "static checks: versions ($ver), upgrade path, released files, schedule, docs, include graph, route strings, calls, GUCs ($n_gucs): ok"
exit "$fail"
