# 85_deferred_database.t: the senders serve one database, the key database
# of partner_svc.worker (docs/deferred-calls.md); defer() elsewhere is
# refused at once instead of queueing a call that would never be sent.
#
#  1. In a second database with the extension, defer() of a valid call is
#     55000, its message names that database, its detail and hint the
#     database the senders serve; nothing is queued, in a transaction
#     that goes on either.
#  2. deferred_result() of a call that sits in such a queue anyway (a
#     row written by hand, as an older version queued it) does not say
#     "Wait longer": it names the database the senders serve.
#  3. In the served database, defer() is accepted: bigint as a number or
#     a string, bytea in its text form, the partner objects of each call
#     (lanes, scoped by the role and the server) and its transaction; a committed call is sent and done.
#  4. The start logged no "background worker ... exited with exit code"
#     of a partner_svc worker (sender 0 hands over to a connected sender
#     and exits with code 0); a terminated sender 0 is started again and
#     sends.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use DeferredTest;
use PostgreSQL::Test::Utils;
use Test::More;

my ($node, $sb) = deferred_setup('deferred_database');
my $url = $sb->url;
$node->safe_psql('postgres', 'CREATE DATABASE other');
$node->safe_psql('other', qq{
CREATE EXTENSION partner_svc;
CREATE SERVER orders FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'orders', base_url '$url', tier 'premium');
CREATE USER MAPPING FOR PUBLIC SERVER orders OPTIONS (api_key 'sandbox-key');
});

# --- 1. refused at once in a database the senders do not serve ---
my ($rc, $out, $err) = $node->psql('other',
	"\\set VERBOSITY verbose\nSELECT partner_svc.defer('cancel_pending', '{\"id\": \"A-1\"}')");
isnt($rc, 0, 'other database: defer() fails');
like($err, qr/ERROR:  55000: deferred calls cannot be queued in database "other"/, 'other database: 55000 naming it');
like($err, qr/DETAIL:  The deferred senders serve database "postgres" only/, 'other database: the detail names the served database');
like($err, qr/HINT:  Call partner_svc\.defer\(\) in database "postgres"/, 'other database: the hint says where to call it');
($rc, $out, $err) = $node->psql('other', q{
BEGIN;
SELECT 1 FROM partner_svc.defer('create_order', '{"payload": {}}');
ROLLBACK;
SELECT count(*) FROM partner_svc.deferred_queue;}, on_error_stop => 0);
is($out, '0', 'other database: nothing queued');

# --- 2. deferred_result() of a call in a queue no sender reads ---
my $id = $node->safe_psql('other', q{
INSERT INTO partner_svc.deferred_queue (operation, args, role, lanes)
VALUES ('cancel_pending', '{"id": "A-2"}', current_user::regrole, '{order:A-2}') RETURNING id});
($rc, $out, $err) = $node->psql('other', "SELECT partner_svc.deferred_result($id, '10 ms')");
like($err, qr/timed out waiting for deferred call $id/, 'unserved queue: deferred_result times out');
like($err, qr/serve database "postgres" only/, 'unserved queue: it names the served database');
unlike($err, qr/Wait longer/, 'unserved queue: no "Wait longer"');

# --- 3. accepted in the served database ---
is($node->safe_psql('postgres', q{
BEGIN;
SELECT partner_svc.defer('run_job', '{"job_id": 7}') > 0;
SELECT partner_svc.defer('stop_job', '{"job_id": "7"}') > 0;
SELECT partner_svc.defer('append_upload', '{"file_id": "f-1", "chunk": "\\\\x0102"}') > 0;
SELECT partner_svc.defer('create_order', '{"payload": {"vignettes": [{"custom_id": "D-1"}, {"custom_id": "D-2"}]}}') > 0;
SELECT partner_svc.defer('cancel_pending', '{"id": "D-1"}', 'orders') > 0;
SELECT operation || ' ' || args::text || ' ' || coalesce(server::text, '-') || ' ' || state || ' '
       || (SELECT array_agg(substr(l, length(q.role::oid::text) + 2) ORDER BY l) FROM unnest(q.lanes) l
           WHERE l NOT LIKE q.role::oid || '/xact:%' AND l LIKE q.role::oid || '/%')::text || ' '
       || (SELECT count(DISTINCT l) FROM partner_svc.deferred_queue q2, unnest(q2.lanes) l
           WHERE l LIKE q2.role::oid || '/xact:%')
FROM partner_svc.deferred_queue q ORDER BY id;
ROLLBACK;}),
	join("\n", ('t') x 5,
		'run_job {"job_id": 7} - queued {/job:7} 1',
		'stop_job {"job_id": "7"} - queued {/job:7} 1',
		'append_upload {"chunk": "\\\\x0102", "file_id": "f-1"} - queued {/upload:f-1} 1',
		'create_order {"payload": {"vignettes": [{"custom_id": "D-1"}, {"custom_id": "D-2"}]}} - queued {/order:D-1,/order:D-2} 1',
		'cancel_pending {"id": "D-1"} orders queued {orders/order:D-1} 1'),
	'served database: the calls of one transaction, their arguments and lanes');
my $p = order_payload('DB-1');
$p =~ s/'/''/g;
$id = $node->safe_psql('postgres', "SELECT partner_svc.defer('create_order', jsonb_build_object('payload', '$p'::jsonb))");
ok(wait_done($node, "id = $id", 60), 'served database: the committed call finished');
is($node->safe_psql('postgres', "SELECT state FROM partner_svc.deferred_calls WHERE id = $id"), 'done',
	'served database: it is done');

# --- 4. a normal start logs no exit of a partner_svc worker ---
# (the sender is connected: the call above was sent)
is($node->safe_psql('postgres', "SELECT count(*) >= 1 FROM pg_stat_activity WHERE backend_type = 'partner_svc deferred sender' AND datname = 'postgres'"),
	't', 'start: a sender is connected to the served database');
unlike(slurp_file($node->logfile), qr/background worker "partner_svc[^"]*" \(PID \d+\) exited with exit code/,
	'start: no partner_svc worker exited');
# terminated (exit code 1): the postmaster starts sender 0 again, connected
$node->safe_psql('postgres', "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE backend_type = 'partner_svc deferred sender'");
ok($node->poll_query_until('postgres',
	"SELECT count(*) > 0 FROM pg_stat_activity WHERE backend_type = 'partner_svc deferred sender' AND datname = 'postgres'"),
	'a terminated sender 0 is started again, connected');
$id = $node->safe_psql('postgres', "SELECT partner_svc.defer('create_order', jsonb_build_object('payload', '" . order_payload('DB-2') =~ s/'/''/gr . "'::jsonb))");
ok(wait_done($node, "id = $id", 60), 'after the restart: a call is sent');

$node->stop;
done_testing();
