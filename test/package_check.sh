#!/usr/bin/env bash
# test/package_check.sh: the Debian package (debian/), as a DBA and an
# autopkgtest get it.  As root, on a Debian machine whose PostgreSQL comes
# from Debian's packages:
#   1. installs with apt-get the build dependencies that are missing
#      (debhelper, postgresql-server-dev-all, dpkg-dev and the libraries;
#      apt-get update only if an install fails);
#   2. builds the packages with dpkg-buildpackage -us -uc -b in a copy of
#      the tree in a temporary directory: one postgresql-NN-partner-svc for
#      every major of debian/pgversions whose postgresql-server-dev-NN is
#      installed (pg_buildext supported-versions);
#   3. for each: waits (5 minutes at most) until no server of that major's
#      Debian binaries runs (dpkg would replace and then remove the library
#      under it: stop the suite's own cluster before), keeps a copy of the
#      files of the system the package will replace (a make install of a
#      tree, e.g. by test/run_tests.sh), installs it with dpkg -i and checks
#      that the installed files are the package's (dpkg --verify);
#   4. a throw-away cluster of that major (test/lib.sh's start_cluster: the
#      postgres user, loopback, a free port, preloading partner_svc), and
#      make installcheck of the tests of debian/tests/schedule from a copy
#      of the tree (the extension from the package, and the sandbox too:
#      test/with_sandbox.sh starts the one of PostgreSQL's bindir); then the
#      example downstream suite through the packaged partner_svc_regress
#      (the kit), as debian/tests/installcheck, the autopkgtest, does;
#   5. dpkg -r, puts the files kept in 3 back and the links to
#      partner_svc_sandbox and partner_svc_regress in /usr/local/bin as they
#      were, even when interrupted.
# Prints "package check: ok" or "package check: FAILED (why)", and exits
# non-zero on failure.  Takes about two minutes.  It uses the system's
# PostgreSQL majors, whatever PG_BIN says.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# start_cluster and stop_cluster; PG_BIN is set below for each major.
source "$root/test/lib.sh"
link_dir=/usr/local/bin
kit_programs=(partner_svc_sandbox partner_svc_regress)

# verify PACKAGE: its installed files are the package's (dpkg --verify
# prints a line per changed file, and exits 0 all the same).
verify()
{
	local out
	out=$(dpkg --verify "$1" 2>&1)
	[ -z "$out" ] && return 0
	echo "$out" | head -n 10
	return 1
}

fail()
{
	echo "package check: FAILED ($*)"
	exit 1
}

[ "$(id -u)" -eq 0 ] || fail "run it as root: it installs packages"
command -v dpkg >/dev/null && [ -x /usr/share/postgresql-common/supported-versions ] ||
	fail "not a Debian machine with postgresql-common"

# --- 1. build dependencies ---
# postgresql-server-dev-all (pg_buildext's debhelper add-on) must be the
# version of the installed postgresql-common: a newer one would upgrade
# postgresql-common while other clusters of the machine run.
export DEBIAN_FRONTEND=noninteractive
common_version=$(dpkg-query -W -f='${Version}' postgresql-common 2>/dev/null)
missing=()
for p in debhelper postgresql-server-dev-all dpkg-dev make gcc libcurl4-openssl-dev \
	libjansson-dev libmicrohttpd-dev libssl-dev; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' && continue
	if [ "$p" = postgresql-server-dev-all ] && [ -n "$common_version" ]; then
		missing+=("$p=$common_version")
	else
		missing+=("$p")
	fi
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "package_check: installing ${missing[*]}"
	apt_opts=(-y -qq --no-install-recommends)
	apt-get install "${apt_opts[@]}" "${missing[@]}" >/dev/null 2>&1 ||
		{ apt-get update -qq && apt-get install "${apt_opts[@]}" "${missing[@]}" >/dev/null; } ||
		fail "could not install ${missing[*]}"
fi

# --- state to restore, and cleanup ---
work=$(mktemp -d /tmp/psvc_package.XXXXXX)
chmod 755 "$work"
declare -A link_before=() link_inode=()
for p in "${kit_programs[@]}"; do
	link_before[$p]=$(readlink "$link_dir/$p" 2>/dev/null || echo -)
	link_inode[$p]=$(stat -c %i "$link_dir/$p" 2>/dev/null || echo -)
done
installed_pkg=  # the package installed now, whose files to restore
saved_tar=      # the files it replaced

# restore: removes the installed package and puts back what it replaced.
restore()
{
	local rc=0 p now
	stop_cluster 2>/dev/null
	if [ -n "$installed_pkg" ]; then
		dpkg -r "$installed_pkg" >"$work/dpkg-r.log" 2>&1 || { cat "$work/dpkg-r.log"; rc=1; }
		installed_pkg=
	fi
	if [ -n "$saved_tar" ]; then
		tar -C / -xpf "$saved_tar" || rc=1
		saved_tar=
	fi
	for p in "${kit_programs[@]}"; do
		now=$(readlink "$link_dir/$p" 2>/dev/null || echo -)
		[ "$now" = "${link_before[$p]}" ] && continue
		if [ "${link_before[$p]}" = - ]; then
			rm -f "$link_dir/$p"
		else
			ln -sfn "${link_before[$p]}" "$link_dir/$p" || rc=1
		fi
	done
	return "$rc"
}
cleanup()
{
	restore || echo "package_check: could not restore everything (see above)"
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- 2. build, in a copy of the tree (what make built in it included:
# debian/rules' clean must cope with a tree built in place) ---
src=$work/build/partner-svc
mkdir -p "$src"
tar -C "$root" --exclude=./.git --exclude=./tmp_check --exclude=./results -cf - . | tar -C "$src" -xf -
echo "package_check: dpkg-buildpackage -us -uc -b"
(cd "$src" && dpkg-buildpackage -us -uc -b) >"$work/build.log" 2>&1 ||
	{ tail -n 40 "$work/build.log"; fail "dpkg-buildpackage failed"; }
# The build installs with DESTDIR: the Makefile's install-path makes no
# link in /usr/local/bin then, though it runs as root (not even the same
# link again: the inode tells).
for p in "${kit_programs[@]}"; do
	[ "$(readlink "$link_dir/$p" 2>/dev/null || echo -)" = "${link_before[$p]}" ] &&
		[ "$(stat -c %i "$link_dir/$p" 2>/dev/null || echo -)" = "${link_inode[$p]}" ] ||
		fail "the package build made $link_dir/$p"
done
versions=$(cd "$src" && PG_SUPPORTED_VERSIONS=installed pg_buildext supported-versions)
[ -n "$versions" ] || fail "no major of debian/pgversions is installed"

# The tests come from the tree, in a copy the postgres user owns.
tree=$work/tree
mkdir -p "$tree"
tar -C "$root" --exclude=./.git --exclude=./tmp_check --exclude=./results -cf - . | tar -C "$tree" -xf -
chown -R postgres: "$tree"
tests=$(sed -e 's/#.*//' "$root/debian/tests/schedule" | xargs)
[ -n "$tests" ] || fail "debian/tests/schedule lists no test"

for v in $versions; do
	pkg=postgresql-$v-partner-svc
	deb=$(ls "$work"/build/"${pkg}"_*.deb 2>/dev/null | head -n 1)
	[ -n "$deb" ] || fail "dpkg-buildpackage made no $pkg"
	PG_BIN=/usr/lib/postgresql/$v/bin

	# --- 3. install ---
	! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'ok installed' ||
		fail "$pkg is installed on this machine: the check would remove it"
	# Not under a running server of this major (another suite's): dpkg
	# would replace, then remove, the library it loads.  Waits 5 minutes
	# at most.
	for _ in $(seq 1 60); do
		busy=$(for e in /proc/[0-9]*/exe; do
			[ "$(readlink "$e" 2>/dev/null)" = "$PG_BIN/postgres" ] && { e=${e#/proc/}; echo "${e%/exe}"; }
		done | head -n 3 | xargs)
		[ -z "$busy" ] && break
		echo "package_check: a server of $PG_BIN runs (pid $busy); waiting for it to stop"
		sleep 5
	done
	[ -z "$busy" ] || fail "a server of $PG_BIN still runs (pid $busy): dpkg -i would replace its files"
	dpkg-deb -c "$deb" | awk '$1 !~ /^d/ { sub(/^\./, "", $6); print $6 }' >"$work/files"
	grep -qx "$PG_BIN/partner_svc_sandbox" "$work/files" && grep -qx "$PG_BIN/partner_svc_regress" "$work/files" &&
		grep -qx "/usr/share/postgresql/$v/extension/partner_svc_sandbox_helpers.control" "$work/files" &&
		grep -qx "/usr/lib/postgresql/$v/lib/partner_svc.so" "$work/files" ||
		fail "$pkg lacks the library, the sandbox, the runner or the helpers extension"
	! grep -q '^/usr/local/' "$work/files" || fail "$pkg has files in /usr/local"
	while read -r f; do [ -e "$f" ] || [ -L "$f" ] && echo "${f#/}"; done <"$work/files" >"$work/existing"
	if [ -s "$work/existing" ]; then
		tar -C / -cpf "$work/saved.tar" -T "$work/existing" || fail "could not keep the files $pkg replaces"
		saved_tar=$work/saved.tar
	fi
	echo "package_check: dpkg -i $(basename "$deb") ($(wc -l <"$work/existing") of its files were there and are kept)"
	installed_pkg=$pkg
	dpkg -i "$deb" >"$work/dpkg-i.log" 2>&1 || { cat "$work/dpkg-i.log"; fail "dpkg -i $pkg failed"; }
	verify "$pkg" || fail "the files of $pkg are not those of the package"
	for p in "${kit_programs[@]}"; do
		[ "$(dpkg-query -S "$PG_BIN/$p" 2>/dev/null)" = "$pkg: $PG_BIN/$p" ] || fail "$PG_BIN/$p is not $pkg's"
	done

	# --- 4. test against the installed files ---
	mkdir "$work/pg$v" && chown postgres: "$work/pg$v"
	start_cluster "$work/pg$v" || fail "the cluster of $v did not start"
	echo "package_check: make installcheck REGRESS='$tests' against PostgreSQL $v"
	if ! runuser -u postgres -- env PATH="$PG_BIN:$PATH" PGHOST="$PGHOST" PGPORT="$PGPORT" PGUSER=postgres \
		make -C "$tree" --no-print-directory PG_CONFIG="$PG_BIN/pg_config" installcheck \
		REGRESS="$tests" TAP_TESTS= >"$work/installcheck.log" 2>&1; then
		cat "$work/installcheck.log"
		[ ! -s "$tree/regression.diffs" ] || cat "$tree/regression.diffs"
		fail "make installcheck against $pkg"
	fi
	grep -E '^with_sandbox.sh: sandbox at|^(test|ok|not ok) |tests passed' "$work/installcheck.log"
	stop_cluster
	echo "package_check: $PG_BIN/partner_svc_regress test/downstream"
	"$PG_BIN/partner_svc_regress" "$tree/test/downstream" >"$work/downstream.log" 2>&1 ||
		{ cat "$work/downstream.log"; fail "the downstream suite through $pkg's partner_svc_regress"; }
	grep -E '^(test|ok|not ok) |tests passed' "$work/downstream.log"
	verify "$pkg" || fail "the files of $pkg changed during the tests (another make install?)"

	# --- 5. remove, put back ---
	restore || fail "could not restore what $pkg replaced"
	dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' && fail "$pkg is still installed"
	while read -r f; do
		[ -e "/$f" ] || [ -L "/$f" ] || fail "/$f, there before, is missing"
	done <"$work/existing"
	echo "package_check: $pkg removed, $(wc -l <"$work/existing") files put back"
done

echo "package check: ok ($(for v in $versions; do echo "postgresql-$v-partner-svc"; done | xargs) built, installed, tested, removed)"
