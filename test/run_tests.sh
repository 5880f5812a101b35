#!/usr/bin/env bash
# run_tests.sh: the whole test suite of partner_svc, from a fresh Debian
# bookworm machine, as root, in one command, on every PostgreSQL major it
# can have here:
#   1. installs the packages it needs (test/setup.sh),
#   2. static checks (test/static_checks.sh): versions agree, released
#      files are unchanged, docs name no file outside the repository,
#      test/schedule lists every test, the layering holds; then make's
#      check of the catalogue fails on planted malformed rows
#      (test/catalog_check_test.sh) and the recipe of a new foreign table
#      is walked in a scratch copy (test/recipe_walk.sh),
#   3. for each major of PG_MAJORS (default "15 18"): 15 is Debian
#      bookworm's own package; any other is built from Debian's source
#      package, with assertions, by test/pg_build.sh into its cache
#      directory (kept between runs); then test/run_major.sh runs the
#      whole suite against it (pg_regress, TAP, the downstream kit, the
#      README's commands, the docs' SQL),
#   4. the Debian package: built, installed and tested (test/package_check.sh),
# and prints a result per major and a last line "suites: N passed, N failed".
#   PG_MAJORS="18" bash test/run_tests.sh     # one major only
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

majors=${PG_MAJORS:-15 18}
debian_major=15

bash test/setup.sh || exit 1

passed=0
failed=0
results=()

# The static checks read the built tree (the sandbox's --version): built
# against the first major.
first=${majors%% *}
if [ "$first" = "$debian_major" ]; then
	first_bin=/usr/lib/postgresql/$debian_major/bin
else
	first_bin=$(bash test/pg_build.sh "$first" | tail -n 1)
fi

echo "== static checks"
if (PG_BIN=$first_bin; source test/lib.sh && build_install "$root") && bash test/static_checks.sh; then
	passed=$((passed + 1))
	results+=("static checks: ok")
else
	failed=$((failed + 1))
	results+=("static checks: FAILED")
fi

# The catalogue is checked by make (a malformed row fails the build), and
# the recipe of a new foreign table (docs/architecture.md) is walked in a
# scratch copy, which is installed for its tests; the tree is installed
# again after it.  About a minute and a half.
echo
echo "== the catalogue and the recipe"
if PG_BIN=$first_bin bash test/catalog_check_test.sh && PG_BIN=$first_bin bash test/recipe_walk.sh; then
	passed=$((passed + 1))
	results+=("catalogue and recipe: ok")
else
	failed=$((failed + 1))
	results+=("catalogue and recipe: FAILED")
fi

# the major tested before is the one each later major's pg_upgrade
# scenario upgrades from (test/scenario/77_pg_upgrade.t)
old_bin=
for major in $majors; do
	echo
	echo "==== PostgreSQL $major"
	if [ "$major" = "$debian_major" ]; then
		bin=/usr/lib/postgresql/$major/bin
	elif ! bin=$(bash test/pg_build.sh "$major" | tail -n 1) || [ ! -x "$bin/pg_config" ]; then
		failed=$((failed + 1))
		results+=("PostgreSQL $major: could not be built (test/pg_build.sh)")
		continue
	fi
	log=$(mktemp /tmp/partner_svc_major.XXXXXX)
	PG_BIN=$bin PSVC_OLD_PG_BIN=$old_bin bash test/run_major.sh 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	grep -q '^build failed$' "$log" || old_bin=$bin
	line=$(grep -E '^suites: [0-9]+ passed, [0-9]+ failed$' "$log" | tail -n 1)
	rm -f "$log"
	p=$(echo "$line" | sed -n 's/^suites: \([0-9]*\) passed.*/\1/p')
	f=$(echo "$line" | sed -n 's/.* \([0-9]*\) failed$/\1/p')
	passed=$((passed + ${p:-0}))
	failed=$((failed + ${f:-0}))
	if [ "$rc" -ne 0 ] && [ "${f:-0}" -eq 0 ]; then
		failed=$((failed + 1))
	fi
	results+=("PostgreSQL $major ($("$bin/pg_config" --version)): ${p:-0} passed, ${f:-0} failed, exit $rc")
done

# The Debian package of every major installed from Debian's packages (15):
# built, installed with dpkg -i, tested as an autopkgtest would, removed.
echo
echo "== Debian package"
if bash test/package_check.sh; then
	passed=$((passed + 1))
	results+=("Debian package: ok")
else
	failed=$((failed + 1))
	results+=("Debian package: FAILED")
fi

echo
echo "== results per major"
printf '  %s\n' "${results[@]}"
echo
echo "suites: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
