# 87_stat_background.t: partner_svc.stat_background counts the background
# work (issue 27, item 9; docs/reference.md#partner_svcstat_background,
# docs/reference.md#background-worker-slots).
#
# A cluster whose senders and webhook worker work in database postgres,
# max_worker_processes = 16 while the defaults want 17 (8 senders, the
# webhook worker, 8 parallel workers).  Shown:
#  - the start says so once, with the number;
#  - from a reset: two deferred creates done, a cancel of an unknown order
#    failed (logged once, with its SQLSTATE, no key), a call to a closed
#    port retried; a created order polled and its status changed by the
#    poll, an order of a server at a closed port failing its polls; three
#    webhooks received, two stored, one rejected;
#  - the counters survive a restart of the webhook worker and of the
#    senders (shared memory), and stat_background_reset() zeroes them;
#  - a restart of the server starts them from zero, and with
#    max_worker_processes = 17 the start says nothing about slots.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use lib "$FindBin::Bin/../sandbox/lib";

use DeferredTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(sleep time);
use WebhookTest;

my $port = PostgreSQL::Test::Cluster::get_free_port();
my $dead = PostgreSQL::Test::Cluster::get_free_port();
my ($node, $sb) = deferred_setup('stat_background', conf => <<"CONF");
partner_svc.webhook_port = $port
partner_svc.poll_after = 1
partner_svc.poll_interval = 1
partner_svc.poll_share = 20
CONF
sub sql { $node->safe_psql('postgres', $_[0]) }
sub bgs { sql("SELECT $_[0] FROM partner_svc.stat_background") }

# callbacks at a closed port: the only webhooks are the test's own
$sb->req('PUT', '/_sandbox/orders/callback', key => 'sandbox-key',
	json => { sandbox => "http://127.0.0.1:$dead/webhooks/sandbox",
		production => "http://127.0.0.1:$dead/webhooks/production" });
$sb->config({ 'orders.pending_after_min' => 1 });
$node->poll_query_until('postgres', "SELECT state = 'listening' FROM partner_svc.webhook_status()")
  or die 'the webhook worker does not listen';

# --- the slots ---
my @slots = slurp_file($node->logfile) =~ /max_worker_processes is 16; partner_svc and parallel queries need 17/g;
is(scalar(@slots), 1, 'a start without enough worker slots says so once, with the number');

sql(qq{
CREATE SERVER deadorders FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'orders', base_url 'http://127.0.0.1:$dead');
CREATE USER MAPPING FOR PUBLIC SERVER deadorders OPTIONS (api_key 'sandbox-key');
SELECT partner_svc.stat_background_reset();
});
is(bgs('calls_queued + calls_done + calls_failed + calls_retried + webhooks_received'), '0', 'from a reset');

# --- deferred calls ---
my @ok = map { sql("SELECT partner_svc.defer('create_order', jsonb_build_object('payload', '"
	. order_payload("BGS-$_") . "'::jsonb), 'orders')") } 1 .. 2;
my $bad = sql(q{SELECT partner_svc.defer('cancel_pending', '{"id": "NO-SUCH-ORDER"}', 'orders')});
ok(wait_done($node, "id IN ($ok[0], $ok[1], $bad)", 60), 'the calls ended');
is(sql("SELECT string_agg(state, ' ' ORDER BY id) FROM partner_svc.deferred_calls WHERE id IN ($ok[0], $ok[1], $bad)"),
	'done done failed', 'two done, one failed');
my $retry = sql(q{SELECT partner_svc.defer('cancel_pending', '{"id": "X-1"}', 'deadorders')});
ok($node->poll_query_until('postgres', 'SELECT calls_retried >= 1 FROM partner_svc.stat_background'),
	'a call to a closed port is retried');
# gone from the queue (a sender that holds it may still count one retry)
sql("DELETE FROM partner_svc.deferred_queue WHERE id = $retry");
is(bgs('calls_queued'), '4', 'calls_queued counts the four defer() calls');
is(bgs('calls_done'), '2', 'calls_done: 2');
is(bgs('calls_failed'), '1', 'calls_failed: 1');
my @failed = slurp_file($node->logfile) =~ /(LOG:  partner_svc deferred call $bad \(cancel_pending\) failed for good: [^\n]*\n[^\n]*DETAIL:  SQLSTATE P0002[^\n]*)/g;
is(scalar(@failed), 1, 'the call that failed for good is logged once, with its SQLSTATE');
unlike($failed[0] // '', qr/sandbox-key/, 'the log line holds no key');

# --- webhooks ---
is(post_webhook($port, 'sandbox', order_event('ORDER_STATUS_CHANGED', 'PENDING', 'BGS-W1'))->{status}, 200, 'a webhook stored');
is(post_webhook($port, 'sandbox', order_event('ORDER_STATUS_CHANGED', 'ACTIVE', 'BGS-W1'))->{status}, 200, 'another');
is(post_webhook($port, 'sandbox', '{"event_type": "NOPE"}')->{status}, 400, 'a webhook rejected');
is(bgs(q{webhooks_received || ' ' || webhooks_stored || ' ' || webhooks_rejected}), '3 2 1',
	'webhooks: 3 received, 2 stored, 1 rejected');

# --- polls ---
sql("SELECT partner_svc.create_order('" . order_payload('BGS-P1') . "', 'orders')");
sql(q{INSERT INTO partner_svc.order_states (unique_id, status, source, server, updated_at)
	VALUES ('BGS-DEAD-1', 'CREATED', 'created', 'deadorders', now() - interval '1 day')});
ok($node->poll_query_until('postgres', 'SELECT poll_failures >= 1 FROM partner_svc.stat_background'),
	'a poll through a closed port counts as a failure');
ok($node->poll_query_until('postgres',
	q{SELECT poll_changes >= 1 AND EXISTS (SELECT FROM partner_svc.order_states WHERE source = 'poll')
	  FROM partner_svc.stat_background}), 'a poll that moved a status counts as a change');
is(bgs('polls >= poll_changes + poll_failures AND polls >= 2'), 't', 'polls count every poll, changed, failed or not')
  or diag(bgs(q{polls || ' ' || poll_changes || ' ' || poll_failures}));

# --- a restart of the workers keeps the counters ---
my $before = bgs(q{calls_done || ' ' || calls_failed || ' ' || webhooks_received || ' ' || webhooks_stored || ' ' || stats_reset});
my $polls = bgs('polls');
my $wpid = worker_pid($node);
sql(q{SELECT pg_terminate_backend(pid) FROM pg_stat_activity
	WHERE backend_type IN ('partner_svc webhook worker', 'partner_svc deferred sender')});
ok(WebhookTest::wait_for(sub { my $p = worker_pid($node); $p ne '' && $p ne $wpid }, 60), 'the webhook worker restarted');
$node->poll_query_until('postgres', "SELECT state = 'listening' FROM partner_svc.webhook_status()");
is(bgs(q{calls_done || ' ' || calls_failed || ' ' || webhooks_received || ' ' || webhooks_stored || ' ' || stats_reset}),
	$before, 'the counters and stats_reset are kept across the workers\' restart');
ok(bgs('polls') >= $polls, 'polls too');
like(webhook_status($node)->{stats_reset}, qr/\d/, 'webhook_status() has its own stats_reset');

# --- reset ---
my $t = sql('SELECT now()');
sql('SELECT partner_svc.stat_background_reset()');
is(bgs(q{calls_queued + calls_done + calls_failed + webhooks_received + webhooks_stored + webhooks_rejected}),
	'0', 'stat_background_reset() zeroes the counters');
is(bgs("stats_reset >= '$t'"), 't', 'and sets stats_reset');

# --- a server restart starts from zero; enough slots: nothing said ---
sql(q{SELECT partner_svc.defer('cancel_pending', '{"id": "NO-SUCH-ORDER-2"}', 'orders')});
ok(wait_done($node, 'true', 60), 'one more call ended');
$node->append_conf('postgresql.conf', "max_worker_processes = 17\n");
my $logpos = -s $node->logfile;
$node->restart;
is(bgs('calls_queued + calls_failed'), '0', 'a server restart starts the counters from zero');
unlike(substr(slurp_file($node->logfile), $logpos), qr/max_worker_processes is/,
	'with max_worker_processes = 17 the start says nothing about slots');

$node->stop;
done_testing();
