#!/bin/bash
#
# test/global_writes_test.sh: proves that test/global_writes.pl fails on a
# global written outside its module, and only then.  Each case copies src/
# and docs/architecture.md into a scratch directory and appends one
# function to a file: the planted writes must fail the check with a line
# that names them; the writes the check must let pass (through a pointer
# the global holds, by a file of the global's own module) must not.  The
# unplanted copy must pass.  Run by test/static_checks.sh; needs no server
# and no build.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
fail=0
n=0

fresh()
{
	rm -rf "$scratch/src" "$scratch/docs"
	cp -r "$root/src" "$scratch/src"
	mkdir -p "$scratch/docs" && cp "$root/docs/architecture.md" "$scratch/docs/"
}

# plant NAME FILE TEXT EXPECTED [FILE2 TEXT2]: appends TEXT to src/FILE
# (and TEXT2 to src/FILE2) of a fresh copy and expects the check to fail
# with a line matching EXPECTED.
plant()
{
	local name=$1 file=$2 text=$3 expected=$4 out
	fresh
	printf '\n%s\n' "$text" >>"$scratch/src/$file"
	[ $# -lt 6 ] || printf '\n%s\n' "$6" >>"$scratch/src/$5"
	n=$((n + 1))
	if out=$(perl "$root/test/global_writes.pl" "$scratch" 2>&1); then
		echo "global_writes_test: $name: the check passed a write planted in src/$file" >&2
		fail=1
	elif ! grep -qE "$expected" <<<"$out"; then
		echo "global_writes_test: $name: the check failed, but not on the planted write:" >&2
		echo "$out" | sed 's/^/    /' >&2
		fail=1
	fi
}

# allow NAME FILE TEXT: appends TEXT to src/FILE of a fresh copy and
# expects the check to pass.
allow()
{
	local name=$1 file=$2 text=$3 out
	fresh
	printf '\n%s\n' "$text" >>"$scratch/src/$file"
	if ! out=$(perl "$root/test/global_writes.pl" "$scratch" 2>&1); then
		echo "global_writes_test: $name: the check failed on src/$file, which writes no global of another module:" >&2
		echo "$out" | sed 's/^/    /' >&2
		fail=1
	fi
}

fresh
perl "$root/test/global_writes.pl" "$scratch" >/dev/null ||
	{ echo "global_writes_test: the unplanted copy fails the check" >&2; exit 1; }

# a module of the same folder (the cache writes the limiter's pointer)
plant "assignment" shmem/cache.c \
	'void cache_planted(void) { psvc_rl_shared = NULL; }' \
	'src/shmem/cache.c:[0-9]+ writes psvc_rl_shared, a global of module shmem/ratelimit.h'
# a higher folder writes a setting's variable
plant "compound assignment" webhook/webhook_store.c \
	'void store_planted(void) { psvc_guc_max_retries += 1; }' \
	'src/webhook/webhook_store.c:[0-9]+ writes psvc_guc_max_retries, a global of module base/guc.h'
plant "increment" deferred/deferred_send.c \
	'void send_planted(void) { psvc_guc_page_size++; }' \
	'src/deferred/deferred_send.c:[0-9]+ writes psvc_guc_page_size, a global of module base/guc.h'
plant "member" functions/functions.c \
	'void functions_planted(void) { psvc_wh_counters.planted = 0; }' \
	'src/functions/functions.c:[0-9]+ writes psvc_wh_counters, a global of module webhook/webhook.h'
plant "memset" deferred/deferred_queue.c \
	'void queue_planted(void) { memset(&psvc_wh_counters, 0, 1); }' \
	'src/deferred/deferred_queue.c:[0-9]+ writes psvc_wh_counters, a global of module webhook/webhook.h'
# a global defined and declared extern by hand, written from another file
plant "extern by hand" call/call.c \
	'extern int planted_global;
void call_planted(void) { planted_global = 1; }' \
	'src/call/call.c:[0-9]+ writes planted_global, a global of module json/json.h' \
	json/json_decode.c 'int planted_global = 0;'

allow "through a pointer" shmem/cache.c \
	'void cache_planted(void) { psvc_rl_shared->planted = 0; }'
allow "own module" shmem/quota.c \
	'void quota_planted(void) { psvc_rl_shared = NULL; }'
allow "comparison" deferred/deferred_send.c \
	'int send_planted(void) { return psvc_guc_page_size == 1; }'

[ "$fail" -eq 0 ] && echo "global_writes_test: the check fails on each of $n planted writes and passes 3 allowed ones"
exit "$fail"
