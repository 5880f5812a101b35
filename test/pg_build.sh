#!/usr/bin/env bash
# pg_build.sh MAJOR: builds PostgreSQL MAJOR from Debian's own source
# package into a cache directory the machine keeps between runs, and prints
# the bindir of the result on its last line.  For the majors Debian ships
# no binary package of on this machine (docs/testing.md, "Majors").
#
#   bash test/pg_build.sh 18          # build (or reuse) 18, print its bindir
#   PSVC_PG_CACHE=/some/dir bash test/pg_build.sh 18
#   PSVC_PG_FLAVOR=release bash test/pg_build.sh 18   # no assertions: benchmarks
#
# The source package comes through a temporary apt configuration: a deb-src
# line for the suite that carries the major, with its own lists directory,
# so the system's apt configuration is never changed.  The mirror is the one
# this machine's own apt sources name for Debian (no host is written here).
# The server is built with assertions (--enable-cassert): an assert-enabled
# server catches memory-context, locking and relcache mistakes that a
# production build hides.  A build whose source version and options match
# the cache's stamp is reused as is.
set -euo pipefail

major=${1:?usage: pg_build.sh MAJOR}
cache=${PSVC_PG_CACHE:-/var/cache/partner_svc/postgresql}

# The suite of Debian that carries each major's source package.  16 is in
# none any more; a suite whose files are not served yet fails at download
# with apt's own message.
case "$major" in
	16) echo "pg_build.sh: no Debian suite carries postgresql-16 any more" >&2; exit 2 ;;
	17) suite=trixie ;;
	18) suite=sid ;;
	19) suite=experimental ;;
	*) echo "pg_build.sh: major $major is not one partner_svc builds from source" >&2; exit 2 ;;
esac

# PSVC_PG_FLAVOR=release builds without assertions, into MAJOR-release,
# for the benchmarks (an assert-enabled server is several times slower);
# the tests always use the default, assert.
flavor=${PSVC_PG_FLAVOR:-assert}
configure_opts=(--enable-tap-tests --with-openssl --with-icu --without-readline --without-llvm)
case "$flavor" in
	assert) configure_opts=(--enable-cassert --enable-debug "${configure_opts[@]}") ;;
	release) ;;
	*) echo "pg_build.sh: PSVC_PG_FLAVOR is assert or release, not \"$flavor\"" >&2; exit 2 ;;
esac

# The build needs these besides what test/setup.sh installs: the 18 tarball
# no longer ships the generated parser files.
need=(bison flex libicu-dev zlib1g-dev pkg-config libssl-dev libipc-run-perl make gcc perl)
missing=()
for p in "${need[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
	echo "pg_build.sh: installing ${missing[*]}" >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null ||
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null; }
fi

# The mirror: the first URI of the machine's own apt sources that serves
# Debian's main archive (not the security one), in either format.
mirror()
{
	local f
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		awk 'BEGIN { RS = ""; FS = "\n" }
			{ uri = ""; suites = ""
			  for (i = 1; i <= NF; i++) {
				if ($i ~ /^URIs:/) { sub(/^URIs:[ \t]*/, "", $i); split($i, u, /[ \t]+/); uri = u[1] }
				if ($i ~ /^Suites:/) suites = $i
			  }
			  if (uri != "" && uri !~ /security/ && suites ~ /(bookworm|trixie|sid|stable)([ \t]|$)/) { print uri; exit } }' "$f"
	done
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		awk '$1 == "deb" && $0 !~ /security/ && $0 ~ / (bookworm|trixie|sid|stable) / {
			for (i = 2; i <= NF; i++) if ($i !~ /^\[/ && $i !~ /\]$/) { print $i; exit } }' "$f"
	done
}
uri=$(mirror | head -n 1)
[ -n "$uri" ] || { echo "pg_build.sh: no Debian mirror in this machine's apt sources" >&2; exit 1; }

dest=$cache/$major
[ "$flavor" = assert ] || dest=$cache/$major-$flavor
mkdir -p "$cache"
apt_dir=$(mktemp -d "$cache/apt.XXXXXX")
trap 'rm -rf "$apt_dir"' EXIT
mkdir -p "$apt_dir/lists/partial" "$apt_dir/parts" "$apt_dir/src"
echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $uri $suite main" >"$apt_dir/sources.list"
apt_opts=(-o "Dir::Etc::sourcelist=$apt_dir/sources.list" -o "Dir::Etc::sourceparts=$apt_dir/parts"
	-o "Dir::State::Lists=$apt_dir/lists" -o "APT::Get::List-Cleanup=0" -o "Debug::NoLocking=1"
	-o "APT::Sandbox::User=root")
version=
if apt-get "${apt_opts[@]}" update -qq >&2; then
	version=$(apt-cache "${apt_opts[@]}" showsrc "postgresql-$major" 2>/dev/null |
		sed -n 's/^Version: //p' | sort -V | tail -n 1)
fi
if [ -z "$version" ]; then
	# the mirror cannot say: a build already in the cache serves
	if [ -x "$dest/bin/pg_config" ] && [ -s "$dest/.stamp" ]; then
		echo "pg_build.sh: suite $suite lists no postgresql-$major now; using the cached $(cut -d' ' -f2 "$dest/.stamp")" >&2
		echo "$dest/bin"
		exit 0
	fi
	echo "pg_build.sh: suite $suite lists no source package postgresql-$major" >&2
	exit 1
fi

stamp="postgresql-$major $version ${configure_opts[*]}"
if [ -x "$dest/bin/pg_config" ] && [ "$(cat "$dest/.stamp" 2>/dev/null)" = "$stamp" ]; then
	echo "pg_build.sh: PostgreSQL $major ($version) already built in $dest" >&2
	echo "$dest/bin"
	exit 0
fi

echo "pg_build.sh: downloading postgresql-$major $version ($suite)" >&2
(cd "$apt_dir/src" && apt-get "${apt_opts[@]}" source --download-only -qq "postgresql-$major=$version" >&2)
tarball=$(ls "$apt_dir"/src/postgresql-"$major"_*.orig.tar.* | head -n 1)
[ -f "$tarball" ] || { echo "pg_build.sh: no upstream tarball in the source package" >&2; exit 1; }

# A fresh source tree each time the stamp changes: PostgreSQL's makefiles
# do not track headers, so a tree configured with other options is not
# reused.
src=$cache/src-$major-$flavor
rm -rf "$src" "$dest"
mkdir -p "$src"
tar -C "$src" --strip-components=1 -xf "$tarball"
echo "pg_build.sh: building PostgreSQL $major in $dest (several minutes)" >&2
(
	cd "$src"
	./configure --prefix="$dest" "${configure_opts[@]}" >"$cache/configure-$major-$flavor.log" 2>&1 ||
		{ tail -n 30 "$cache/configure-$major-$flavor.log" >&2; exit 1; }
	make -s -j"$(nproc)" >"$cache/make-$major-$flavor.log" 2>&1 || { tail -n 40 "$cache/make-$major-$flavor.log" >&2; exit 1; }
	make -s install >>"$cache/make-$major-$flavor.log" 2>&1 || { tail -n 40 "$cache/make-$major-$flavor.log" >&2; exit 1; }
	make -s -C contrib/citext install >>"$cache/make-$major-$flavor.log" 2>&1 ||
		{ tail -n 40 "$cache/make-$major-$flavor.log" >&2; exit 1; }
)
rm -rf "$src"
echo "$stamp" >"$dest/.stamp"
echo "pg_build.sh: PostgreSQL $major ($version) built in $dest" >&2
echo "$dest/bin"
