#!/usr/bin/env bash
# side_by_side.sh: the benchmarks of the request path, old code against
# new, on the same machine, alternately.  As root:
#
#   bash test/bench/side_by_side.sh [--small] [--benches "fdw func cache ratelimit quota"]
#        [--timeout SECONDS] [--lock-wait SECONDS] [--hold-lock] [--keep] OLD_REV [ROUNDS]
#
#   1. copies OLD_REV (git archive) and the current tree (as it is on disk,
#      uncommitted changes included) into a temporary directory, and gives
#      the old copy the current tree's harness (test/lib.sh, test/setup.sh,
#      test/bench/), so both are measured by the same scripts; builds both
#      (no install, no lock);
#   2. ROUNDS times (default 3): for each benchmark, runs it on one tree and
#      then on the other, old first in odd rounds and new first in even
#      ones, so a drift of the machine favours neither.  Each run installs
#      its tree and measures (the benchmark's own script does both) under
#      flock /tmp/psvc_install.lock, the lock of every install on the
#      machine, and within --timeout seconds (default 1200);
#   3. reads the key figures each benchmark prints (times, rates, and the
#      ratios against the baselines it measures in the same run) and prints,
#      per figure, the median over the rounds of old and of new, the median
#      of each round's own new/old, and a verdict: "ok" within 5% (a time
#      at most 1.05x old, a rate or a "higher is better" ratio at least
#      0.95x), "WORSE" beyond it, "base" for a baseline that is no code of
#      partner_svc (the plain libcurl clients), "-" for a figure shown for
#      information.
#
# The sizes, per benchmark (--small: the smallest that still measure
# something, to check the harness; a decision needs the default sizes and
# several rounds on a quiet machine):
#              default                              --small
#   fdw        --reps 3 (parts a, d, b, c)           --reps 1 --parts a
#   func       --reps 3 --calls 2000 --no-pgbench    --reps 1 --calls 300 --no-pgbench
#   cache      --reps 3 --scans 500 --fill 100       --reps 1 --scans 100 --fill 20
#              --latency 0                           --latency 0
#   ratelimit  3 s per run, 1 round                  1 s per run, 1 round
#   quota      5 s per run, 3 rounds                 1 s per run, 1 round
# --benches takes the names above, or the scripts' names (quota_bench is
# quota); the default is the first four (quota runs only when named: its
# figures are the cost of leasing, measured against its own node-local
# mode in the same run).
# Every run's whole output is kept in the temporary directory until the
# end (--keep: after it too); the last lines of a failed run are printed.
# The exit status is non-zero when a build or a run failed, never for a
# WORSE (timing on a shared machine is no test; docs/testing.md).
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
source "$root/test/lib.sh"

small=0
keep=0
hold_lock=0
benches="fdw func cache ratelimit"
run_timeout=1200
lock_wait=3600
lock=/tmp/psvc_install.lock
while [ $# -gt 0 ]; do
	case $1 in
		--small) small=1; shift ;;
		--benches) benches=$(printf '%s\n' $2 | sed 's/\.sh$//; s/_bench$//' | tr '\n' ' '); shift 2 ;;
		--timeout) run_timeout=$2; shift 2 ;;
		--lock-wait) lock_wait=$2; shift 2 ;;
		--hold-lock) hold_lock=1; shift ;;
		--keep) keep=1; shift ;;
		-h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
		-*) echo "side_by_side.sh: unknown option \"$1\"" >&2; exit 2 ;;
		*) break ;;
	esac
done
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
	echo "usage: side_by_side.sh [--small] [--benches LIST] [--timeout S] [--lock-wait S] [--hold-lock] [--keep] OLD_REV [ROUNDS]" >&2
	exit 2
fi
old_rev=$1
rounds=${2:-3}
case "$rounds$run_timeout$lock_wait" in
	*[!0-9]*) echo "side_by_side.sh: ROUNDS, --timeout and --lock-wait take positive integers" >&2; exit 2 ;;
esac
[ "$rounds" -ge 1 ] && [ "$rounds" -le 20 ] || { echo "side_by_side.sh: ROUNDS must be 1..20" >&2; exit 2; }
for b in $benches; do
	case $b in fdw|func|cache|ratelimit|quota) ;;
		*) echo "side_by_side.sh: unknown benchmark \"$b\" (fdw func cache ratelimit quota)" >&2; exit 2 ;;
	esac
done
if [ "$(id -u)" -ne 0 ]; then
	echo "side_by_side.sh: run as root (the benchmarks run their cluster and sandbox as postgres)" >&2
	exit 2
fi
old_commit=$(git -C "$root" rev-parse --verify -q "$old_rev^{commit}") ||
	{ echo "side_by_side.sh: $old_rev is no commit of $root" >&2; exit 2; }

# the script and the arguments of each benchmark
declare -A script args
script[fdw]=fdw_bench.sh
script[func]=func_bench.sh
script[cache]=cache_bench.sh
script[ratelimit]=ratelimit_bench.sh
script[quota]=quota_bench.sh
if [ "$small" -eq 1 ]; then
	args[fdw]="--reps 1 --parts a"
	args[func]="--reps 1 --calls 300 --no-pgbench"
	args[cache]="--reps 1 --scans 100 --fill 20 --latency 0"
	args[ratelimit]="1 1"
	args[quota]="1 1"
else
	args[fdw]="--reps 3"
	args[func]="--reps 3 --calls 2000 --no-pgbench"
	args[cache]="--reps 3 --scans 500 --fill 100 --latency 0"
	args[ratelimit]="3 1"
	args[quota]="5 3"
fi

tmp=$(mktemp -d /tmp/psvc_sbs.XXXXXX)
chmod 755 "$tmp"
if [ "$keep" -eq 1 ]; then
	trap 'echo "== the trees and every run'"'"'s output: $tmp"' EXIT
else
	trap 'rm -rf "$tmp"' EXIT
fi
trap 'exit 130' INT TERM
mkdir -p "$tmp/old" "$tmp/new" "$tmp/out"

# --- the two trees ---
git -C "$root" archive --format=tar "$old_commit" | tar -C "$tmp/old" -xf - ||
	{ echo "side_by_side.sh: git archive of $old_rev failed" >&2; exit 1; }
tar -C "$root" --exclude=./.git --exclude=./tmp_check --exclude=./tmp_quick --exclude=./results \
	-cf - . | tar -C "$tmp/new" -xf - || { echo "side_by_side.sh: copy of the tree failed" >&2; exit 1; }
for p in test/lib.sh test/setup.sh test/bench; do
	rm -rf "${tmp:?}/old/$p"
	cp -a "$tmp/new/$p" "$tmp/old/$p"
done
new_desc="$(git -C "$root" rev-parse --short HEAD)$(git -C "$root" status --porcelain --untracked-files=no | grep -q . && echo ' + changes')"
echo "== old: $old_rev ($(git -C "$root" rev-parse --short "$old_commit")), new: the tree at $root ($new_desc)"
for t in old new; do
	echo "== building $t"
	make -C "$tmp/$t" -s -j2 PG_CONFIG="$PG_BIN/pg_config" >"$tmp/out/build.$t" 2>&1 &&
		make -C "$tmp/$t/test/bench" -s >>"$tmp/out/build.$t" 2>&1 ||
		{ tail -n 30 "$tmp/out/build.$t"; echo "side_by_side.sh: the build of $t failed" >&2; exit 1; }
done

# figures BENCH < output: the key figures of one run, one per line:
# NAME<TAB>KIND<TAB>VALUE, KIND L (lower is better), H (higher is better),
# B (a baseline outside partner_svc) or I (information)
figures()
{
	perl -e '
		my $b = shift;
		while (<STDIN>) {
			chomp;
			if ($b eq "fdw") {
				if (/^  (\S.*?)\s+([0-9.]+) ms  \(/) {
					my ($n, $v) = ($1, $2);
					$n =~ s/\s+/ /g;
					my $k = $n =~ /^fetch_floor|^sandbox CPU/ ? "B"
					  : $n =~ /^work per page|^ideal with/ ? "I" : "L";
					print "$n (ms)\t$k\t$v\n";
				} elsif (/^  (\(\w\) .*?)\s+([0-9.]+) ?(x|MB)\s+(<=|>=)/) {
					print "$1 ($3)\t", ($4 eq "<=" ? "L" : "H"), "\t$2\n";
				}
			} elsif ($b eq "func") {
				if (/^median\s+([0-9.]+)\s+([0-9.]+)\s+(\S+)\s+(\S+)\s+([0-9.]+)$/) {
					print "call_floor raw request (us)\tB\t$1\n";
					print "function call, plpgsql loop (us)\tL\t$2\n";
					print "pgbench statement (us)\tL\t$3\n" if $3 ne "-";
					print "function / raw request (x)\tL\t$5\n";
				}
			} elsif ($b eq "cache") {
				if (/^== medians, every column: uncached ([0-9.]+) us\/scan, cached ([0-9.]+) us\/scan/) {
					print "uncached scan, every column (us)\tL\t$1\n";
					print "cached scan, every column (us)\tL\t$2\n";
				} elsif (/^== ratio uncached \/ cached, every column: ([0-9.]+)x/) {
					print "uncached / cached, every column (x)\tH\t$1\n";
				} elsif (/^== medians, count\(\*\): uncached ([0-9.]+) us\/scan, cached ([0-9.]+) us\/scan, ratio ([0-9.]+)x/) {
					print "uncached scan, count(*) (us)\tL\t$1\n";
					print "cached scan, count(*) (us)\tL\t$2\n";
					print "uncached / cached, count(*) (x)\tH\t$3\n";
				} elsif (/^== reference, a partner (\d+) ms away: uncached ([0-9.]+) us\/scan .*cached ([0-9.]+) us\/scan/) {
					print "$1 ms away: uncached scan (us)\tL\t$2\n";
					print "$1 ms away: cached scan (us)\tL\t$3\n";
				}
			} elsif ($b eq "ratelimit") {
				if (/^(\d+)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)$/) {
					print "$1 sessions, limiter off (req/s)\tH\t$2\n";
					print "$1 sessions, limiter on (req/s)\tH\t$3\n";
					print "$1 sessions, time per request on/off (x)\tL\t$4\n";
				}
			} elsif ($b eq "quota") {
				if (/^([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)$/) {
					print "node-local limiter (req/s)\tH\t$1\n";
					print "leased from the coordinator (req/s)\tH\t$2\n";
					print "time per request leased/local (x)\tL\t$3\n";
				}
			}
		}' "$1"
}

# run TREE BENCH ROUND: one run, installed and measured under the lock
run()
{
	local t=$1 b=$2 r=$3 out="$tmp/out/$3.$1.$2"
	echo "   round $r, $b, $t"
	local take_lock=(flock -w "$lock_wait" "$lock")
	[ "$hold_lock" -eq 1 ] && take_lock=()
	# shellcheck disable=SC2086
	(cd "$tmp/$t" && "${take_lock[@]}" \
		timeout -s TERM "$run_timeout" bash "test/bench/${script[$b]}" ${args[$b]}) >"$out" 2>&1 9>&-
	local rc=$?
	figures "$b" <"$out" >"$out.fig"
	if [ "$rc" -ne 0 ] || [ ! -s "$out.fig" ]; then
		tail -n 40 "$out"
		echo "side_by_side.sh: $b on $t, round $r: exit status $rc, $(wc -l <"$out.fig") figures" >&2
		return 1
	fi
}

echo "== $rounds round(s) of: $benches$([ "$small" -eq 1 ] && echo ' (--small)')"
if [ "$hold_lock" -eq 1 ]; then
	# fd 9 stays open (and locked) until the script exits; the runs take no
	# lock of their own and do not inherit fd 9, so a server a run leaves
	# behind cannot hold the lock
	exec 9>>"$lock"
	flock -w "$lock_wait" 9 || { echo "side_by_side.sh: no lock $lock within $lock_wait s" >&2; exit 1; }
	echo "   holding $lock for every run"
fi
echo "   load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
fail=0
for r in $(seq 1 "$rounds"); do
	if [ $((r % 2)) -eq 1 ]; then order="old new"; else order="new old"; fi
	for b in $benches; do
		for t in $order; do
			run "$t" "$b" "$r" || fail=1
		done
	done
done
echo "   load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"

# --- the table: per benchmark and figure, medians over the rounds ---
echo
printf '%-52s %11s %11s %8s  %s\n' figure "old" "new" "new/old" verdict
for b in $benches; do
	echo "$b"
	perl -e '
		my ($dir, $b, $rounds) = @ARGV;
		my (%v, %kind, @order);
		for my $r (1 .. $rounds) {
			for my $t (qw(old new)) {
				open(my $f, "<", "$dir/$r.$t.$b.fig") or next;
				while (<$f>) {
					chomp;
					my ($n, $k, $x) = split /\t/;
					push @order, $n unless exists $kind{$n};
					$kind{$n} = $k;
					$v{$n}{$t}[$r] = $x;
				}
			}
		}
		sub median { my @s = sort { $a <=> $b } @_; return undef unless @s;
			return @s % 2 ? $s[$#s / 2] : ($s[@s / 2 - 1] + $s[@s / 2]) / 2; }
		for my $n (@order) {
			my @o = grep { defined } @{ $v{$n}{old} || [] };
			my @w = grep { defined } @{ $v{$n}{new} || [] };
			# each round'"'"'s own new/old: the two ran minutes apart at most
			my @q = map { $v{$n}{new}[$_] / $v{$n}{old}[$_] }
			  grep { defined $v{$n}{new}[$_] && defined $v{$n}{old}[$_] && $v{$n}{old}[$_] != 0 } 1 .. $rounds;
			my $q = median(@q);
			my $k = $kind{$n};
			my $verdict = !defined $q ? "no pair"
			  : $k eq "B" ? "base" : $k eq "I" ? "-"
			  : $k eq "L" ? ($q <= 1.05 ? "ok" : sprintf("WORSE (%+.0f%%)", ($q - 1) * 100))
			  : ($q >= 0.95 ? "ok" : sprintf("WORSE (%+.0f%%)", ($q - 1) * 100));
			printf "  %-50s %11s %11s %8s  %s\n", $n,
			  @o ? sprintf("%.2f", median(@o)) : "-", @w ? sprintf("%.2f", median(@w)) : "-",
			  defined $q ? sprintf("%.3f", $q) : "-", $verdict;
		}' "$tmp/out" "$b" "$rounds"
done
echo
echo "new/old: the median over the rounds of each round's own ratio; ok: within 5% of old"
exit "$fail"
