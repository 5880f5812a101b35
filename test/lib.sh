# lib.sh: shared by run_tests.sh and demo.sh: build and install, start and
# stop the sandbox.  Sourced, not run.

PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
export PATH="$PG_BIN:$PATH"

# build_install ROOT: builds the extension and the sandbox, installs both.
# Only an install into Debian's own PostgreSQL (PG_BIN under
# /usr/lib/postgresql) links partner_svc_sandbox and partner_svc_regress
# into /usr/local/bin; an install into a major built by test/pg_build.sh,
# or a private copy, leaves those links alone (PATH_BINDIR=).
build_install()
{
	local root=$1 links=()
	case "$PG_BIN" in
		/usr/lib/postgresql/*) ;;
		*) links=(PATH_BINDIR=) ;;
	esac
	# Objects built against another major are not reused: PGXS tracks no
	# PostgreSQL header, so the tree is cleaned when the pg_config changes.
	if [ "$(cat "$root/.built_with" 2>/dev/null)" != "$PG_BIN/pg_config" ]; then
		make -C "$root" -s clean PG_CONFIG="$PG_BIN/pg_config" >/dev/null 2>&1
	fi
	make -C "$root" -s -j2 PG_CONFIG="$PG_BIN/pg_config" >/dev/null || return 1
	echo "$PG_BIN/pg_config" >"$root/.built_with"
	make -C "$root" -s install PG_CONFIG="$PG_BIN/pg_config" "${links[@]}" >/dev/null
}

# start_sandbox WORKDIR ARGS...: starts the installed sandbox as the postgres
# user on a free loopback port; sets SANDBOX_PID and SANDBOX_URL.
start_sandbox()
{
	local dir=$1
	shift
	rm -f "$dir/sandbox.port"
	setpriv --reuid=postgres --regid=postgres --init-groups "$PG_BIN/partner_svc_sandbox" --port 0 \
		--port-file "$dir/sandbox.port" "$@" >"$dir/sandbox.log" 2>&1 &
	SANDBOX_PID=$!
	for _ in $(seq 1 200); do
		[ -s "$dir/sandbox.port" ] && break
		if ! kill -0 "$SANDBOX_PID" 2>/dev/null; then
			cat "$dir/sandbox.log" >&2
			return 1
		fi
		sleep 0.05
	done
	[ -s "$dir/sandbox.port" ] || { echo "sandbox did not start" >&2; return 1; }
	SANDBOX_URL="http://127.0.0.1:$(cat "$dir/sandbox.port")"
	export SANDBOX_URL
}

stop_sandbox()
{
	if [ -n "${SANDBOX_PID:-}" ]; then
		kill "$SANDBOX_PID" 2>/dev/null || true
		wait "$SANDBOX_PID" 2>/dev/null || true
		SANDBOX_PID=
	fi
}

# workdir: a fresh directory the postgres user can write.
make_workdir()
{
	local d
	d=$(mktemp -d /tmp/partner_svc.XXXXXX)
	chown postgres: "$d"
	chmod 755 "$d"
	echo "$d"
}

# free_port: a TCP port on 127.0.0.1 that nobody listens on right now.
free_port()
{
	perl -MIO::Socket::INET -e \
		'my $s = IO::Socket::INET->new(Listen => 1, LocalAddr => "127.0.0.1", LocalPort => 0) or die; print $s->sockport'
}

# start_cluster WORKDIR: a throw-away cluster owned by postgres, listening on
# 127.0.0.1 and a socket in WORKDIR, preloading partner_svc.  Sets PGHOST,
# PGPORT, PGUSER.
start_cluster()
{
	local dir=$1
	PGPORT=$(free_port)
	runuser -u postgres -- "$PG_BIN/initdb" -D "$dir/data" -A trust -U postgres >"$dir/initdb.log" 2>&1 ||
		{ cat "$dir/initdb.log" >&2; return 1; }
	cat >>"$dir/data/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $PGPORT
unix_socket_directories = '$dir'
shared_preload_libraries = 'partner_svc'
CONF
	runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$dir/data" -l "$dir/postgres.log" -w start >/dev/null ||
		{ cat "$dir/postgres.log" >&2; return 1; }
	export PGHOST=$dir PGPORT PGUSER=postgres
	CLUSTER_DIR=$dir
}

stop_cluster()
{
	if [ -n "${CLUSTER_DIR:-}" ]; then
		runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$CLUSTER_DIR/data" -m fast -w stop >/dev/null 2>&1 || true
		CLUSTER_DIR=
	fi
}

# start_stack SANDBOX_ARGS...: a fresh workdir ($work), a sandbox and a
# cluster in it, all stopped and removed when the script exits.  For the
# demo and the benchmarks, which all need exactly this.
start_stack()
{
	work=$(make_workdir)
	trap 'stop_cluster; stop_sandbox; rm -rf "$work"' EXIT
	trap 'exit 130' INT TERM
	start_sandbox "$work" "$@" || { echo "sandbox did not start" >&2; return 1; }
	start_cluster "$work" || { echo "cluster did not start" >&2; return 1; }
}
