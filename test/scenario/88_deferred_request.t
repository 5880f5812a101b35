# 88_deferred_request.t: partner_svc.request() deferred with defer()
# (issue 28, item 2; docs/deferred-calls.md).
#
#  1. A deferred GET and a deferred POST are sent after COMMIT; their
#     answers are the bodies.
#  2. A POST whose sender is killed while the request is on its way: after
#     the restart the call fails with 08006 (its outcome is unknown), it is
#     not sent again.
#  3. The same POST to a server with idempotency_header: after the
#     restart it is sent again, with the same key, and done.
#  4. The same POST deferred without a server, the default server being
#     the one with idempotency_header: the sender finds the default server
#     as request() does, so it is sent again too, with the same key, and
#     done (it used to be sent once, failing with 08006).
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use DeferredTest;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(sleep time);

my ($node, $sb) = deferred_setup('deferred_request');
sub sql { $node->safe_psql('postgres', $_[0]) }
my $url = $sb->url;
sql(qq{CREATE SERVER todos FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'todos', base_url '$url');
CREATE SERVER todos_keyed FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'todos', base_url '$url', idempotency_header 'Idempotency-Key');});

# --- 1. deferred GET and POST ---
my $get = sql(q{SELECT partner_svc.defer('request', '{"method": "GET", "path": "/todos"}', 'todos')});
my $post = sql(q{SELECT partner_svc.defer('request',
  '{"method": "POST", "path": "/todos", "body": {"title": "deferred", "userId": 1}}', 'todos')});
ok(wait_done($node, "id IN ($get, $post)", 60), 'the deferred requests finished');
is(sql("SELECT state || ' ' || jsonb_typeof(answer) FROM partner_svc.deferred_calls WHERE id = $get"),
	'done array', 'GET: done, the answer is the body')
  or diag sql("SELECT row_to_json(c) FROM partner_svc.deferred_calls c WHERE id = $get");
is(sql("SELECT state || ' ' || (answer ->> 'title') FROM partner_svc.deferred_calls WHERE id = $post"),
	'done deferred', 'POST: done, the answer is the body');

# a sender with POST /todos in flight
sub kill_sender_in_flight
{
	my $deadline = time + 30;
	my $pid;
	while (time < $deadline && !$pid)
	{
		$pid = sql("SELECT pid FROM partner_svc.requests WHERE route = 'POST /todos' LIMIT 1");
		sleep 0.01 unless $pid;
	}
	ok($pid, 'a sender has the POST in flight');
	kill 'KILL', $pid if $pid;
	ok($node->poll_query_until('postgres',
		"SELECT count(*) > 0 FROM pg_stat_activity WHERE backend_type = 'partner_svc deferred sender'"),
		'the senders run again after the crash');
}

# --- 2. without an idempotency header: 08006 ---
$sb->reset_stats;
$sb->fault({ route => 'POST /todos', kind => 'latency', value => 3000, count => 1 });
my $once = sql(q{SELECT partner_svc.defer('request',
  '{"method": "POST", "path": "/todos", "body": {"title": "once", "userId": 1}}', 'todos')});
kill_sender_in_flight();
ok(wait_done($node, "id = $once", 60), 'once: finished after the restart');
is(sql("SELECT state || ' ' || sqlstate FROM partner_svc.deferred_calls WHERE id = $once"),
	'failed 08006', 'once: failed with 08006, the outcome unknown');
sleep 3.5;	# the first request's latency is over: it is in the log if it ran
my $posts = grep { $_->{method} eq 'POST' } @{ $sb->requests('/todos') };
ok($posts <= 1, "once: not sent again ($posts POST)");

# --- 3. with idempotency_header: sent again, done ---
$sb->clear_faults;
$sb->reset_stats;
$sb->fault({ route => 'POST /todos', kind => 'latency', value => 3000, count => 1 });
my $keyed = sql(q{SELECT partner_svc.defer('request',
  '{"method": "POST", "path": "/todos", "body": {"title": "keyed", "userId": 1}}', 'todos_keyed')});
kill_sender_in_flight();
ok(wait_done($node, "id = $keyed", 60), 'keyed: finished after the restart');
is(sql("SELECT state || ' ' || (answer ->> 'title') FROM partner_svc.deferred_calls WHERE id = $keyed"),
	'done keyed', 'keyed: sent again and done');

# --- 4. the default server has idempotency_header: sent again, done ---
sql(q{ALTER SERVER todos_keyed OPTIONS (ADD default 'true')});
$sb->clear_faults;
$sb->reset_stats;
$sb->fault({ route => 'POST /todos', kind => 'latency', value => 3000, count => 1 });
my $dflt = sql(q{SELECT partner_svc.defer('request',
  '{"method": "POST", "path": "/todos", "body": {"title": "default", "userId": 1}}')});
kill_sender_in_flight();
ok(wait_done($node, "id = $dflt", 60), 'default server: finished after the restart');
is(sql("SELECT state || ' ' || coalesce(answer ->> 'title', sqlstate) FROM partner_svc.deferred_calls WHERE id = $dflt"),
	'done default', 'default server: sent again and done, not failed with 08006')
  or diag sql("SELECT row_to_json(c) FROM partner_svc.deferred_calls c WHERE id = $dflt");

$node->stop;
done_testing();
