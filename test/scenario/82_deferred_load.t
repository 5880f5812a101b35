# 82_deferred_load.t: deferred calls under load, on the standard tier
# (docs/deferred-calls.md).
#
#  1. 1,000 deferred create_order calls from 16 sessions: the sandbox
#     answers no 429 (a deferred call waits for budget in the shared
#     limiter, as a direct call does), every call is done, and the sandbox
#     holds exactly 1,000 orders, one per custom id.
#  2. 100 create-then-cancel pairs, the cancel queued in its own
#     transaction right after the create's COMMIT, from 4 sessions: no
#     cancel overtakes its create (an overtaking cancel_pending would find
#     no order, 404): every cancel finds its order.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use DeferredTest;
use IPC::Run;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(sleep time);

my ($node, $sb) = deferred_setup('deferred_load', tier => 'standard');
sub sql { $node->safe_psql('postgres', $_[0]) }
my $dir = PostgreSQL::Test::Utils::tempdir();

sub defer_line
{
	my ($cid) = @_;
	my $p = order_payload($cid);
	$p =~ s/'/''/g;
	return "SELECT partner_svc.defer('create_order', jsonb_build_object('payload', '$p'::jsonb));\n";
}

# run_sessions(name, [lines per session]): runs the files at once
sub run_sessions
{
	my ($name, @files) = @_;
	my @h;
	for my $i (0 .. $#files)
	{
		my $f = "$dir/$name-$i.sql";
		open(my $fh, '>', $f) or die;
		print $fh @{ $files[$i] };
		close $fh;
		my ($o, $e) = ('', '');
		push @h, [ IPC::Run::start([ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d',
			$node->connstr('postgres'), '-f', $f ], '>', \$o, '2>', \$e), \$e ];
	}
	my $ok = 1;
	for my $x (@h)
	{
		$x->[0]->finish;
		if ($x->[0]->result(0) != 0) { $ok = 0; diag ${ $x->[1] }; }
	}
	return $ok;
}

sub sandbox_429 { my $n = 0; $n += $_->{429} for @{ $sb->stats->{routes} }; $n }

# --- 1. 1,000 creates from 16 sessions ---
$sb->reset_stats;
my @files = map { [] } 1 .. 16;
push @{ $files[$_ % 16] }, defer_line(sprintf('LOAD-%04d', $_)) for 1 .. 1000;
my $t0 = time;
ok(run_sessions('load', @files), '16 sessions queued 1,000 calls');
ok(wait_done($node, "operation = 'create_order'", 300), 'every call finished');
note sprintf('1,000 deferred creates in %.1f s', time - $t0);
is(sql("SELECT count(*) FROM partner_svc.deferred_calls WHERE state = 'done'"), 1000, 'all 1,000 done');
is(sandbox_429(), 0, 'the sandbox answered no 429');
my $orders = sandbox_orders($sb, 'LOAD-');
is(scalar(keys %$orders), 1000, '1,000 custom ids at the sandbox');
is(scalar(grep { $_ != 1 } values %$orders), 0, 'exactly one order each');

# --- 2. create then cancel, 100 pairs ---
$sb->config({ 'orders.pending_after_min' => 0.001 });
$sb->reset_stats;
@files = map { [] } 1 .. 4;
for my $i (1 .. 100)
{
	my $cid = sprintf('PAIR-%03d', $i);
	push @{ $files[$i % 4] }, defer_line($cid),
	  "SELECT partner_svc.defer('cancel_pending', '{\"id\": \"$cid\"}');\n";
}
ok(run_sessions('pairs', @files), '4 sessions queued 100 pairs');
ok(wait_done($node, "true", 300), 'every pair finished');
# a cancel that came after its create finds the order: done, or refused
# with 55000 if the sandbox had not moved it to PENDING yet; one that
# overtook its create would find nothing (P0002)
is(sql("SELECT count(*) FROM partner_svc.deferred_calls WHERE operation = 'cancel_pending'
	AND (state = 'done' OR sqlstate = '55000')"), 100, 'every cancel found its order');
note 'cancels done: ' . sql("SELECT count(*) FROM partner_svc.deferred_calls WHERE operation = 'cancel_pending' AND state = 'done'");
my @cancels = @{ $sb->requests('POST /public/orders/{id}/cancel-pending') };
is(scalar(grep { $_->{status} == 404 } @cancels), 0, 'no cancel reached the sandbox before its order');
is(sandbox_429(), 0, 'no 429');

$node->stop;
done_testing();
