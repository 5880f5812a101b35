#!/bin/bash
#
# test/regress.sh: run the pg_regress suite of partner_svc.
#
# Usage: PSVC_SANDBOX_URL=http://127.0.0.1:PORT test/regress.sh [REPO_DIR]
#
# REPO_DIR defaults to the directory above this script.  The extension must
# already be installed (make install); the sandbox must already be running
# at PSVC_SANDBOX_URL, which the tests read with psql's \getenv so that the
# port never appears in expected output.
#
# pg_regress runs a throw-away instance (--temp-instance) that preloads
# partner_svc and listens on 127.0.0.1 only, on a free port.  PostgreSQL
# refuses to run as root, and the repository may live where the postgres
# user cannot read (/root), so as root the inputs are copied to a fresh
# temporary directory owned by postgres and pg_regress runs as postgres.
#
# The tests are every test/sql/*.sql, in the order
# of test/schedule (every test must be listed there).
# On failure regression.diffs is printed.  The exit status is pg_regress's.
# PSVC_REGRESS_KEEP=1 keeps the temporary directory (results/, logs) and
# prints its path.

set -euo pipefail

repo=${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
repo=$(cd "$repo" && pwd)

if [ -z "${PSVC_SANDBOX_URL:-}" ]; then
	echo "regress.sh: PSVC_SANDBOX_URL is not set (URL of a running sandbox)" >&2
	exit 2
fi

pg_config=${PG_CONFIG:-pg_config}
bindir=$("$pg_config" --bindir)
pg_regress=$("$pg_config" --pkglibdir)/pgxs/src/test/regress/pg_regress
if [ ! -x "$pg_regress" ]; then
	echo "regress.sh: pg_regress not found at $pg_regress" >&2
	exit 2
fi

# The test list: every test/sql/*.sql.
tests=()
while IFS= read -r f; do
	name=$(basename "$f" .sql)
	case "$name" in
		partner_svc--*) ;;
		*) tests+=("$name") ;;
	esac
done < <(find "$repo/test/sql" -maxdepth 1 -name '*.sql' | LC_ALL=C sort)
if [ ${#tests[@]} -eq 0 ]; then
	echo "regress.sh: no tests in $repo/test/sql" >&2
	exit 2
fi

# test/schedule gives the order (tests that build on others' objects come
# after them); every test must be in it, so none is silently skipped.
schedule="$repo/test/schedule"
if [ -f "$schedule" ]; then
	ordered=()
	while IFS= read -r line; do
		line=${line%%#*}
		line=$(echo "$line" | tr -d '[:space:]')
		[ -n "$line" ] && ordered+=("$line")
	done <"$schedule"
	for t in "${tests[@]}"; do
		found=
		for o in "${ordered[@]}"; do [ "$o" = "$t" ] && found=1; done
		if [ -z "$found" ]; then
			echo "regress.sh: test/sql/$t.sql is not listed in test/schedule" >&2
			exit 2
		fi
	done
	for o in "${ordered[@]}"; do
		[ -f "$repo/test/sql/$o.sql" ] || { echo "regress.sh: test/schedule names missing test/sql/$o.sql" >&2; exit 2; }
	done
	tests=("${ordered[@]}")
fi

# A port nothing listens on yet; pg_regress moves on by itself should it be
# taken in the meantime.
port_in_use() {
	(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}
port=$((20000 + RANDOM % 20000))
while port_in_use "$port"; do
	port=$((port + 1))
done

work=$(mktemp -d /tmp/psvc_regress.XXXXXX)
cleanup() {
	if [ -n "${PSVC_REGRESS_KEEP:-}" ]; then
		echo "regress.sh: kept $work"
	else
		rm -rf "$work"
	fi
}
trap cleanup EXIT

mkdir "$work/sql" "$work/expected"
for t in "${tests[@]}"; do
	cp "$repo/test/sql/$t.sql" "$work/sql/"
	if [ -f "$repo/test/expected/$t.out" ]; then
		cp "$repo/test/expected/$t.out" "$work/expected/"
	fi
done
cat > "$work/temp.conf" <<EOF
shared_preload_libraries = 'partner_svc'
listen_addresses = '127.0.0.1'
EOF

as_db_user=()
if [ "$(id -u)" -eq 0 ]; then
	chown -R postgres: "$work"
	as_db_user=(runuser -u postgres --)
fi

cd "$work"
status=0
"${as_db_user[@]}" env PSVC_SANDBOX_URL="$PSVC_SANDBOX_URL" \
	"$pg_regress" \
	--bindir="$bindir" \
	--temp-instance="$work/tmp_check" \
	--temp-config="$work/temp.conf" \
	--host=127.0.0.1 \
	--port="$port" \
	--inputdir="$work" \
	--outputdir="$work" \
	"${tests[@]}" || status=$?

if [ "$status" -ne 0 ]; then
	if [ -s "$work/regression.diffs" ]; then
		echo "======== regression.diffs ========"
		cat "$work/regression.diffs"
	elif [ -f "$work/log/postmaster.log" ]; then
		# no diffs: the instance itself failed
		echo "======== postmaster.log (last 50 lines) ========"
		tail -n 50 "$work/log/postmaster.log"
	fi
fi
exit "$status"
