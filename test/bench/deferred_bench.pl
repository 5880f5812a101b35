# deferred_bench.pl: the benchmark of deferred calls (docs/deferred-calls.md),
# run by test/bench/deferred_bench.sh (which builds and installs first) or
# directly by prove as a user PostgreSQL accepts, with the installed
# extension and sandbox.  Side by side in one run, on loopback, with rate
# limits out of the way (the sandbox's and the client's):
#
#  1. latency: REPS times, interleaved in one session (a procedure that
#     commits), a direct create_order() timed around the call, and a
#     deferred one: defer(), COMMIT, then the time until its row is done
#     (done_at, the sender's clock when it recorded the answer) and until
#     the session sees it done (polling every 0.2 ms).  Prints the medians
#     and the median overhead, deferred minus direct (target: at most 5 ms).
#  2. throughput: CALLS create_order calls from 16 sessions, first direct,
#     then deferred (one transaction per call), each from the first
#     statement to the last call done.  Prints calls per second of both
#     (target: at least 1,000 deferred calls per second).
#
# The figures are notes of the TAP output (the log of prove); the one
# test only says the benchmark ran.  A MISS is printed, not failed: timing
# on a shared machine is no test.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/../sandbox/lib";
use lib "$FindBin::Bin/../scenario/lib";
use DeferredTest;
use IPC::Run;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);

my $reps = $ENV{DEFERRED_BENCH_REPS} || 200;
my $calls = $ENV{DEFERRED_BENCH_CALLS} || 4000;
my $sessions = 16;

my ($node, $sb) = deferred_setup('deferred_bench', tier => 'enterprise',
	sandbox => [ '--time-scale', '0.01', '--set', 'rate_limits=false' ],
	conf => "partner_svc.rate_limit = off\n");
sub sql { $node->safe_psql('postgres', $_[0]) }
my $p = order_payload('TEMPLATE');
$p =~ s/'/''/g;

sql(qq{
CREATE TABLE bench_lat (rep int, kind text, ms float8);
CREATE FUNCTION bench_payload(cid text) RETURNS jsonb LANGUAGE sql AS
\$\$ SELECT replace('$p', 'TEMPLATE', cid)::jsonb \$\$;
CREATE PROCEDURE bench_latency(reps int) LANGUAGE plpgsql AS \$\$
DECLARE
  t0 timestamptz; t1 timestamptz; qid bigint; st text; done timestamptz;
BEGIN
  FOR i IN 1 .. reps LOOP
    t0 := clock_timestamp();
    PERFORM partner_svc.create_order(bench_payload('LAT-D-' || i));
    t1 := clock_timestamp();
    INSERT INTO bench_lat VALUES (i, 'direct', 1000 * extract(epoch FROM t1 - t0));
    COMMIT;
    qid := partner_svc.defer('create_order', jsonb_build_object('payload', bench_payload('LAT-Q-' || i)));
    COMMIT;
    t0 := clock_timestamp();
    LOOP
      SELECT state, done_at INTO st, done FROM partner_svc.deferred_calls WHERE deferred_calls.id = qid;
      EXIT WHEN st IN ('done', 'failed');
      PERFORM pg_sleep(0.0002);
    END LOOP;
    t1 := clock_timestamp();
    IF st <> 'done' THEN RAISE EXCEPTION 'deferred call % failed', qid; END IF;
    INSERT INTO bench_lat VALUES (i, 'deferred_done_at', 1000 * extract(epoch FROM done - t0)),
                                 (i, 'deferred_seen', 1000 * extract(epoch FROM t1 - t0));
    COMMIT;
  END LOOP;
END \$\$;
});

# --- 1. latency ---
sql("CALL bench_latency($reps)");
my %med = map { my ($k, $m) = split /\|/; ($k => $m) } split /\n/, sql(q{
SELECT kind, round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)::numeric, 3)
FROM bench_lat GROUP BY kind ORDER BY kind});
my $over = sql(q{
SELECT round(percentile_cont(0.5) WITHIN GROUP (ORDER BY q.ms - d.ms)::numeric, 3)
FROM bench_lat d JOIN bench_lat q ON q.rep = d.rep AND q.kind = 'deferred_seen' WHERE d.kind = 'direct'});
my $over_done = sql(q{
SELECT round(percentile_cont(0.5) WITHIN GROUP (ORDER BY q.ms - d.ms)::numeric, 3)
FROM bench_lat d JOIN bench_lat q ON q.rep = d.rep AND q.kind = 'deferred_done_at' WHERE d.kind = 'direct'});
note "latency, $reps reps, medians in ms:";
note "  direct create_order()                 $med{direct}";
note "  deferred, COMMIT -> done_at (sender)  $med{deferred_done_at}   overhead $over_done";
note "  deferred, COMMIT -> seen done         $med{deferred_seen}   overhead $over";
note '  target: overhead at most 5 ms: ' . ($over <= 5 ? 'PASS' : 'MISS');

# --- 2. throughput ---
my $dir = PostgreSQL::Test::Utils::tempdir();
sub run_sessions
{
	my ($name, $line) = @_;
	my @h;
	for my $s (0 .. $sessions - 1)
	{
		my $f = "$dir/$name-$s.sql";
		open(my $fh, '>', $f) or die;
		for (my $i = $s; $i < $calls; $i += $sessions)
		{
			print $fh $line->(sprintf('%s-%05d', $name, $i));
		}
		close $fh;
		push @h, IPC::Run::start([ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d',
			$node->connstr('postgres'), '-f', $f ], '>', \my $o, '2>', \my $e);
	}
	$_->finish for @h;
	for (@h) { die "$name: a session failed" if $_->result(0) != 0 }
}

my $t0 = time;
run_sessions('TPD', sub { "SELECT partner_svc.create_order(bench_payload('$_[0]')) IS NOT NULL;\n" });
my $direct_rate = $calls / (time - $t0);

$t0 = time;
run_sessions('TPQ', sub { "SELECT partner_svc.defer('create_order', jsonb_build_object('payload', bench_payload('$_[0]')));\n" });
my $queued = time - $t0;
wait_done($node, 'true', 600) or die 'deferred calls did not finish';
my $deferred_rate = $calls / (time - $t0);
my $failed = sql("SELECT count(*) FROM partner_svc.deferred_calls WHERE state <> 'done'");
note sprintf('throughput, %d create_order calls from %d sessions:', $calls, $sessions);
note sprintf('  direct                                 %.0f calls/s', $direct_rate);
note sprintf('  deferred (queued in %.2f s, all done)   %.0f calls/s   ratio deferred/direct %.2f',
	$queued, $deferred_rate, $deferred_rate / $direct_rate);
note '  target: at least 1,000 deferred calls/s: ' . ($deferred_rate >= 1000 ? 'PASS' : 'MISS');

is($failed, 0, 'the benchmark ran: every deferred call done');
diag "deferred_bench: latency overhead median $over ms (done_at: $over_done ms); "
  . sprintf('%.0f deferred calls/s vs %.0f direct', $deferred_rate, $direct_rate);
$node->stop;
done_testing();
