# Shutdown while a batch waits on a lock (issue 10, shutdown).  A session
# holds LOCK TABLE partner_svc.webhook_events IN ACCESS EXCLUSIVE MODE
# while a delivery arrives, so the worker's batch waits on the lock
# (partner_svc.webhook_lock_timeout is far longer than the test).
# - pg_terminate_backend of the worker ends it in under 1 s, and the held
#   delivery is answered 503 with Retry-After; the worker comes back.
# - The same with the lock held by a prepared transaction (it outlives
#   every session, so nothing but the worker's own SIGTERM handling can
#   end the wait): pg_ctl stop -m fast completes in under 5 s.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use WebhookTest;
use WebhookFork;
use File::Temp qw(tempdir);
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time sleep);

my $tmp = tempdir(CLEANUP => 1);
my ($node, $port) = webhook_node('shutdown', conf => <<'CONF');
partner_svc.webhook_lock_timeout = '10min'
max_prepared_transactions = 2
CONF
sub sql { $node->safe_psql('postgres', $_[0]) }

my $watch = $node->background_psql('postgres');
sub worker_waits_on_lock
{
	return wait_for(sub { sql("SELECT count(*) FROM pg_stat_activity
		WHERE backend_type = 'partner_svc webhook worker' AND wait_event_type = 'Lock'") == 1 }, 30);
}

# --- pg_terminate_backend during a batch blocked on a lock ---
my $worker = worker_pid($node);
my $locker = $node->background_psql('postgres');
$locker->query_safe('BEGIN');
$locker->query_safe('LOCK TABLE partner_svc.webhook_events IN ACCESS EXCLUSIVE MODE');
my $child = post_in_child($port, 'sandbox', order_event('ORDER_STATUS_CHANGED', 'CREATED', 'term-1'),
	"$tmp/term");
ok(worker_waits_on_lock(), 'terminate: the batch waits on the lock');
my $t0 = time;
$watch->query_safe("SELECT pg_terminate_backend($worker)");
my $gone = wait_for(sub { $watch->query_safe("SELECT count(*) FROM pg_stat_activity WHERE pid = $worker") == 0 }, 10);
my $dt = time - $t0;
ok($gone, 'terminate: the worker ended');
cmp_ok($dt, '<', 1, sprintf('terminate: in under 1 s (%.2f s)', $dt));
waitpid($child, 0);
my ($st, $ra) = child_result("$tmp/term");
is($st, 503, 'terminate: the held delivery is answered 503');
is($ra, 5, 'terminate: with Retry-After');
$locker->query_safe('COMMIT');
$locker->quit;
ok($node->poll_query_until('postgres', "SELECT state = 'listening' FROM partner_svc.webhook_status()"),
	'terminate: the worker comes back');
isnt(worker_pid($node), $worker, 'terminate: as a new process');
is(post_webhook($port, 'sandbox', order_event('ORDER_STATUS_CHANGED', 'CREATED', 'term-1'))->{status},
	200, 'terminate: the retried delivery is stored');
unlike(slurp_file($node->logfile), qr/terminated by signal/, 'terminate: no process ended by a signal');

# --- pg_ctl stop -m fast with a batch blocked on a prepared transaction's lock ---
sql("BEGIN; LOCK TABLE partner_svc.webhook_events IN ACCESS EXCLUSIVE MODE; PREPARE TRANSACTION 'hold'");
$child = post_in_child($port, 'sandbox', order_event('ORDER_STATUS_CHANGED', 'CREATED', 'fast-1'),
	"$tmp/fast");
ok(worker_waits_on_lock(), 'fast: the batch waits on the lock');
$watch->quit;
$t0 = time;
my $rc = system('pg_ctl', '-D', $node->data_dir, '-m', 'fast', '-w', '-t', '20', 'stop');
$dt = time - $t0;
is($rc, 0, 'fast: pg_ctl stop -m fast succeeds');
cmp_ok($dt, '<', 5, sprintf('fast: in under 5 s (%.2f s)', $dt));
if ($rc != 0)
{
	system('pg_ctl', '-D', $node->data_dir, '-m', 'immediate', '-w', 'stop');
}
$node->_update_pid(0);
waitpid($child, 0);
($st, $ra) = child_result("$tmp/fast");
is($st, 503, 'fast: the held delivery is answered 503');
unlike(slurp_file($node->logfile), qr/terminated by signal/, 'fast: no process ended by a signal');

$node->start;
sql("ROLLBACK PREPARED 'hold'");
ok($node->poll_query_until('postgres', "SELECT state = 'listening' FROM partner_svc.webhook_status()"),
	'fast: listening after the restart');
is(post_webhook($port, 'sandbox', order_event('ORDER_STATUS_CHANGED', 'CREATED', 'fast-1'))->{status},
	200, 'fast: the retried delivery is stored');
is(sql("SELECT string_agg(unique_id, ',' ORDER BY id) FROM partner_svc.webhook_events"), 'term-1,fast-1',
	'each delivery stored once');

$node->stop;
done_testing();
