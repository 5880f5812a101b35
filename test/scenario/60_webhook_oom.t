# Out of memory while a batch is accepted (issue 10, containment).  The
# server runs under test/scenario/shim/failalloc.c (LD_PRELOAD), armed by
# a trigger file only while a 12 MB webhook and a few small ones arrive
# together.  Three ways to run out: malloc alone failing (the old worker
# got its body, then failed to copy it while holding the batch: ERROR,
# exit with connections suspended, libmicrohttpd's abort, a cluster
# crash), all allocations from 8 MB failing (the body cannot be held at
# all), and allocations from 13 MB failing (the body is held, parsing it
# in the worker fails).  Each time: every delivery is answered, 200 or
# 503 with Retry-After, never a dropped connection; the 12 MB one is 503;
# the postmaster sees no crash, another session keeps its backend, the
# worker keeps its pid, and the listener answers afterwards.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use WebhookTest;
use File::Temp qw(tempdir);
use WebhookFork;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(sleep);

my $tmp = tempdir(CLEANUP => 1);
my $shim = "$tmp/failalloc.so";
system('cc', '-shared', '-fPIC', '-O2', '-o', $shim, "$FindBin::Bin/shim/failalloc.c") == 0
  or BAIL_OUT('cannot build test/scenario/shim/failalloc.c');
my $trigger = "$tmp/failalloc.trigger";

my ($node, $port);
{
	# the postmaster and so every backend and the worker load the shim
	local $ENV{LD_PRELOAD} = $shim;
	local $ENV{PSVC_FAILALLOC_FILE} = $trigger;
	($node, $port) = webhook_node('oom', conf => "partner_svc.webhook_max_body = '16MB'\n");
}
sub sql { $node->safe_psql('postgres', $_[0]) }

my $session = $node->background_psql('postgres');
my $session_pid = $session->query_safe('SELECT pg_backend_pid()');
my $worker = worker_pid($node);
ok($worker, "worker running ($worker)");

my $padding = 'p' x (12 * 1024 * 1024);
my $round = 0;

# run(name, trigger content, chunked): one armed round
sub run_round
{
	my ($name, $arm, $chunked) = @_;
	$round++;
	my $log_offset = -s $node->logfile;
	open(my $t, '>', $trigger) or die;
	print $t "$arm\n";
	close $t;

	my @pids;
	my $big = order_event('ORDER_STATUS_CHANGED', 'CREATED', "oom-$round-big",
		custom_id => "C-big-$round");
	$big =~ s/\}$/,"padding":"$padding"}/;
	push @pids, post_in_child($port, 'sandbox', $big, "$tmp/$round.big", $chunked);
	for my $i (1 .. 4)
	{
		push @pids, post_in_child($port, 'sandbox',
			order_event('ORDER_STATUS_CHANGED', 'CREATED', "oom-$round-$i"), "$tmp/$round.$i");
	}
	waitpid($_, 0) for @pids;
	unlink $trigger;

	my ($st, $ra) = child_result("$tmp/$round.big");
	is($st, 503, "$name: the 12 MB delivery is answered 503");
	is($ra, 5, "$name: with Retry-After");
	for my $i (1 .. 4)
	{
		my ($s, $r) = child_result("$tmp/$round.$i");
		ok($s == 200 || ($s == 503 && $r ne '-'),
			"$name: small delivery $i answered 200 or 503 with Retry-After (got $s)");
	}
	my $log = slurp_file($node->logfile, $log_offset);
	like($log, qr/failalloc: \w+\(\d+\) fails/, "$name: the shim did make an allocation fail");
	unlike($log, qr/terminated by signal/, "$name: no process ended by a signal");
	is($session->query_safe('SELECT pg_backend_pid()'), $session_pid,
		"$name: another session keeps its backend (no crash restart)");
	is(worker_pid($node), $worker, "$name: the worker kept running (no restart)");
	my $after = post_webhook($port, 'sandbox', order_event('ORDER_STATUS_CHANGED', 'CREATED', "oom-$round-after"));
	is($after->{status}, 200, "$name: the listener answers 200 afterwards");
}

run_round('malloc fails from 8 MB', '8388608 malloc', 0);
run_round('all allocations fail from 8 MB', '8388608', 0);
run_round('all allocations fail from 8 MB, chunked body', '8388608', 1);
run_round('allocations fail from 13 MB (the worker parses the body)', '13631488', 0);

is(sql("SELECT count(*) FROM partner_svc.webhook_events WHERE unique_id LIKE 'oom-%-big'"), 0,
	'no 12 MB delivery stored (all were answered 503)');
is(sql("SELECT count(*) FROM partner_svc.webhook_events WHERE unique_id LIKE 'oom-%-after'"), 4,
	'the deliveries after each round are stored');
my $st = webhook_status($node);
ok($st->{failed} >= 4, "webhook_status counts the 503s ($st->{failed})");

$session->quit;
$node->stop;
done_testing();
