#!/bin/bash
#
# test/readme_check.sh: runs the shell commands README.md shows, as a
# reader would type them, in a throwaway environment: a copy of the
# repository (with what make built) in a temporary directory, and a clean
# environment (env -i: a default PATH, a fresh HOME; PG_BIN passed on when
# set, since the repository's scripts take it).  It needs the extension
# installed (make install), as README's reader has done by then.
#
# Every line of every ```sh block is a command, run with bash from the
# copy's root, and must exit 0, except:
#   - bash test/run_tests.sh: the suite that runs this check; not run
#     again (it would recurse);
#   - partner_svc_sandbox ...: a server that runs until stopped; it must
#     print "partner_svc_sandbox listening on http://127.0.0.1:PORT" (what
#     README promises) within 10 s, and is then stopped.
# A block that is not meant to be run is fenced as ```text or ``` instead.
# The output of bash test/demo.sh is then compared with README's session
# excerpt (test/readme_session.pl): every statement shown there, with its
# output, must be what the demo printed.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
readme=$root/README.md

mapfile -t commands < <(awk '
	/^```sh[[:space:]]*$/ { inblock = 1; next }
	/^```/ { inblock = 0; next }
	inblock && NF > 0 && $1 !~ /^#/ { print }
' "$readme")
if [ ${#commands[@]} -eq 0 ]; then
	echo "readme_check: no commands in README.md's sh blocks" >&2
	exit 1
fi

tmp=$(mktemp -d /tmp/psvc_readme.XXXXXX)
pid=
cleanup() {
	[ -z "$pid" ] || { kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; }
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
chmod 755 "$tmp"
mkdir -p "$tmp/repo" "$tmp/home"
tar -C "$root" --exclude=./.git --exclude=./tmp_check --exclude=./results -cf - . | tar -C "$tmp/repo" -xf -

clean_env=(env -i HOME="$tmp/home" PATH=${PG_BIN:+$PG_BIN:}/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
	LANG=C.UTF-8 TERM=dumb)
[ -z "${PG_BIN:-}" ] || clean_env+=(PG_BIN="$PG_BIN")

fail=0
n=0
for cmd in "${commands[@]}"; do
	n=$((n + 1))
	echo "---- README command $n: $cmd"
	case "$cmd" in
		"bash test/run_tests.sh"*)
			echo "     (not run: it is the suite running this check)"
			continue ;;
		partner_svc_sandbox*)
			(cd "$tmp/repo" && exec "${clean_env[@]}" bash -c "exec $cmd") >"$tmp/out" 2>&1 &
			pid=$!
			ok=
			for _ in $(seq 1 200); do
				if grep -qE '^partner_svc_sandbox listening on http://127\.0\.0\.1:[0-9]+$' "$tmp/out"; then
					ok=1
					break
				fi
				kill -0 "$pid" 2>/dev/null || break
				sleep 0.05
			done
			kill "$pid" 2>/dev/null
			wait "$pid" 2>/dev/null
			pid=
			cat "$tmp/out"
			if [ -n "$ok" ]; then
				echo "     ok: it listens as README says"
			else
				echo "     FAILED: no 'partner_svc_sandbox listening on http://127.0.0.1:PORT' line"
				fail=1
			fi
			continue ;;
	esac
	(cd "$tmp/repo" && "${clean_env[@]}" bash -c "$cmd") >"$tmp/out" 2>&1
	rc=$?
	if [ "$rc" -eq 0 ]; then
		tail -n 5 "$tmp/out"
		echo "     ok"
	else
		cat "$tmp/out"
		echo "     FAILED (exit status $rc)"
		fail=1
	fi
	case "$cmd" in
		"bash test/demo.sh"*)
			session_checked=1
			perl "$root/test/readme_session.pl" "$readme" "$tmp/out" || fail=1 ;;
	esac
done
if [ -z "${session_checked:-}" ]; then
	echo "readme_check: README.md runs no bash test/demo.sh, so its session excerpt is not checked" >&2
	fail=1
fi
[ "$fail" -eq 0 ] && echo "readme_check: all ${#commands[@]} commands of README.md work as written, and its session excerpt is what the demo prints"
exit "$fail"
