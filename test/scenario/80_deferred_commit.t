# 80_deferred_commit.t: deferred calls are sent only after COMMIT, and
# exactly once (docs/deferred-calls.md).  Judged by the sandbox's request
# log and its own records.
#
#  1. ROLLBACK sends nothing: a top-level ROLLBACK, ROLLBACK TO SAVEPOINT,
#     an exception block and a backend terminated before COMMIT each
#     queue a create_order that never reaches the sandbox, while a call
#     committed after them does.
#  2. COMMIT sends exactly once while the sandbox drops the answer after
#     applying, answers 503, answers 429 with Retry-After: one order per
#     custom id, state done, an answer shaped like the direct call's;
#     deferred_result() returns it and NOTIFY partner_svc_deferred carries
#     the id.
#  3. An error is stored as the direct call raises it (SQLSTATE and
#     message), and deferred_result() raises it.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use DeferredTest;
use IPC::Run;
use JSON::PP;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(sleep time);

my ($node, $sb) = deferred_setup('deferred_commit');
sub sql { $node->safe_psql('postgres', $_[0]) }
sub q_ { my ($s) = @_; $s =~ s/'/''/g; "'$s'" }
sub defer_sql { my ($cid) = @_; "SELECT partner_svc.defer('create_order', jsonb_build_object('payload', " . q_(order_payload($cid)) . "::jsonb))" }
sub posts { scalar grep { $_->{method} eq 'POST' } @{ $sb->requests('/public/orders') } }

# --- 1. ROLLBACK sends nothing ---
$sb->reset_stats;
sql("BEGIN; " . defer_sql('RB-1') . "; ROLLBACK;");
sql("BEGIN; SAVEPOINT s; " . defer_sql('RB-2') . "; ROLLBACK TO SAVEPOINT s; COMMIT;");
my $p = order_payload('RB-3');
$p =~ s/'/''/g;
sql(qq{DO \$\$
BEGIN
  BEGIN
    PERFORM partner_svc.defer('create_order', jsonb_build_object('payload', '$p'::jsonb));
    RAISE EXCEPTION 'undo';
  EXCEPTION WHEN raise_exception THEN NULL;
  END;
END \$\$;});
# a session that queued a call and is terminated before its COMMIT
my ($out, $err) = ('', '');
my $h = IPC::Run::start([ 'psql', '-X', '-q', '-d', $node->connstr('postgres'),
	'-c', 'BEGIN', '-c', defer_sql('RB-4'), '-c', 'SELECT pg_sleep(60)', '-c', 'COMMIT' ],
	'>', \$out, '2>', \$err);
ok($node->poll_query_until('postgres',
	"SELECT count(*) = 1 FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(60)'"), 'the session waits before COMMIT');
sql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(60)'");
$h->finish;
is(sql("SELECT count(*) FROM partner_svc.deferred_calls"), 0, 'no call of the rolled-back transactions is left');
# a committed call after them is sent
my $id = sql(defer_sql('RB-OK'));
ok(wait_done($node, "id = $id", 30), 'the committed call finished');
is(sql("SELECT state FROM partner_svc.deferred_calls WHERE id = $id"), 'done', 'it is done');
is(posts(), 1, 'the sandbox received one create: the committed one');
is_deeply(sandbox_orders($sb, 'RB-'), { 'RB-OK' => 1 }, 'the sandbox holds only the committed order');

# --- 2. COMMIT sends exactly once, whatever the sandbox does ---
my $direct = decode_json(sql("SELECT partner_svc.create_order(" . q_(order_payload('EX-DIRECT')) . ")"));
my @direct_keys = sort keys %$direct;

my %case = (
	'EX-DROP' => { kind => 'drop_after_apply', count => 1 },
	'EX-503' => { kind => 'error', value => 503, count => 2 },
	'EX-429' => { kind => '429', value => 1, count => 2 },
);
for my $cid (sort keys %case)
{
	$sb->clear_faults;
	$sb->reset_stats;
	$sb->fault({ route => 'POST /public/orders', %{ $case{$cid} } });
	my $t0 = time;
	my $cid_id = sql(defer_sql($cid));
	ok(wait_done($node, "id = $cid_id", 60), "$cid: finished");
	is(sql("SELECT state FROM partner_svc.deferred_calls WHERE id = $cid_id"), 'done', "$cid: done");
	is_deeply(sandbox_orders($sb, $cid), { $cid => 1 }, "$cid: exactly one order at the sandbox");
	my $answer = decode_json(sql("SELECT answer FROM partner_svc.deferred_calls WHERE id = $cid_id"));
	is($answer->{orders}[0]{custom_id}, $cid, "$cid: the answer names the order");
	if ($cid eq 'EX-DROP')
	{
		ok($answer->{recovered}, "$cid: recovered by the lookup, as a direct call is");
	}
	else
	{
		is_deeply([ sort keys %$answer ], \@direct_keys, "$cid: the answer has the direct call's members");
	}
	is(sql("SELECT partner_svc.deferred_result($cid_id)"), sql("SELECT answer FROM partner_svc.deferred_calls WHERE id = $cid_id"),
		"$cid: deferred_result() returns the answer");
	if ($cid eq 'EX-429')
	{
		my @log = grep { $_->{method} eq 'POST' } @{ $sb->requests('/public/orders') };
		is(scalar(grep { $_->{status} == 429 } @log), 2, "$cid: the two injected 429s were answered");
		cmp_ok(time - $t0, '>=', 2, "$cid: Retry-After (1 s) was honoured twice");
	}
}
$sb->clear_faults;

# NOTIFY partner_svc_deferred carries the id only
($out, $err) = ('', '');
IPC::Run::run([ 'psql', '-X', '-d', $node->connstr('postgres'), '-c', 'LISTEN partner_svc_deferred',
	'-c', defer_sql('EX-NOTIFY'), '-c', 'SELECT pg_sleep(3)' ], '>', \$out, '2>', \$err);
my ($nid) = $out =~ /^\s*(\d+)\s*$/m;
like($out, qr/notification "partner_svc_deferred" with payload "$nid" received/, 'NOTIFY partner_svc_deferred with the id as payload');

# --- 3. errors as the direct call raises them ---
$sb->reset_stats;
my ($rc, $dout, $derr) = $node->psql('postgres', "SELECT partner_svc.cancel_pending('NO-SUCH-ORDER')");
my ($direct_msg) = $derr =~ /ERROR:\s+(.*)/;
$id = sql("SELECT partner_svc.defer('cancel_pending', '{\"id\": \"NO-SUCH-ORDER\"}')");
ok(wait_done($node, "id = $id", 30), 'the failing call finished');
is(sql("SELECT state || ' ' || sqlstate FROM partner_svc.deferred_calls WHERE id = $id"), 'failed P0002',
	'failed with the SQLSTATE of the direct call');
is(sql("SELECT message FROM partner_svc.deferred_calls WHERE id = $id"), $direct_msg, 'and its message');
($rc, $dout, $derr) = $node->psql('postgres', "SELECT partner_svc.deferred_result($id)");
like($derr, qr/ERROR:\s+\Q$direct_msg\E/, 'deferred_result() raises the stored error');

$node->stop;
done_testing();
