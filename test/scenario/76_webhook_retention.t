# Retention of received webhooks (docs/backups.md): the worker deletes the
# rows of webhook_events and webhook_rejects older than keep_events and
# keep_rejects of partner_svc.worker_tasks, keeps at most max_rejects
# rejects (the newest), and 0 keeps everything / caps nothing.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use WebhookTest;
use PostgreSQL::Test::Utils;
use Test::More;

my ($node, $port) = webhook_node('retention',
	conf => "partner_svc.webhook_keep_events = 4\npartner_svc.webhook_keep_rejects = 4\npartner_svc.webhook_max_rejects = 5\n");
sub sql { $node->safe_psql('postgres', $_[0]) }
# the worker started before CREATE EXTENSION: wait until it has found it
ok(wait_for(sub { !defined webhook_status($node)->{last_error} }, 30), 'the worker found the extension');

# rows received an hour ago, and now
sub old_event
{
	my ($tag, $age) = @_;
	sql("INSERT INTO partner_svc.webhook_events (received_at, environment, event_type, status, payload, dedupe_key)
		VALUES (now() - interval '$age', 'sandbox', 'ORDER_STATUS_CHANGED', 'CREATED', '{\"tag\": \"$tag\"}',
		        sha256('$tag'))");
}
sub old_reject
{
	my ($tag, $age) = @_;
	sql("INSERT INTO partner_svc.webhook_rejects (received_at, environment, reason, body_bytes, body)
		VALUES (now() - interval '$age', 'sandbox', 'test', 3, '$tag')");
}
old_event("e-old-$_", '1 hour') for 1 .. 3;
old_event('e-new', '0 s');
old_reject("r-old-$_", '1 hour') for 1 .. 2;
old_reject('r-new', '0 s');

ok(wait_for(sub { sql("SELECT count(*) FROM partner_svc.webhook_events WHERE payload->>'tag' LIKE 'e-old-%'") == 0 }, 30),
	'events older than keep_events are deleted');
is(sql("SELECT count(*) FROM partner_svc.webhook_events WHERE payload->>'tag' = 'e-new'"), 1, 'a recent event is kept');
# rejects are pruned by their own statement, which may come a round after
# the events' (a CI run on a busy machine read them between the two)
ok(wait_for(sub { sql("SELECT string_agg(body, ',') FROM partner_svc.webhook_rejects") eq 'r-new' }, 30),
	'rejects older than keep_rejects are deleted');
ok(wait_for(sub { sql("SELECT count(*) FROM partner_svc.webhook_events") == 0 }, 30),
	'once keep_events has passed, the recent event goes too');

# a flood of junk: at most max_rejects rows, the newest
post_webhook($port, 'sandbox', "junk $_")->{status} == 400 or die "junk $_ not refused" for 1 .. 12;
ok(wait_for(sub { sql('SELECT count(*) FROM partner_svc.webhook_rejects') == 5 }, 30), 'rejects capped at max_rejects');
is(sql('SELECT string_agg(body, \',\' ORDER BY id) FROM partner_svc.webhook_rejects'), join(',', map { "junk $_" } 8 .. 12),
	'the newest rejects are kept');
is(webhook_status($node)->{rejected}, 12, 'all twelve were answered 400 and counted');

# 0 keeps everything: events kept, rejects pruned by age
sql("ALTER SYSTEM SET partner_svc.webhook_keep_events = 0; ALTER SYSTEM SET partner_svc.webhook_keep_rejects = 1; ALTER SYSTEM SET partner_svc.webhook_max_rejects = 0; SELECT pg_reload_conf()");
sleep 1;
old_event('e-zero', '1 hour');
old_reject('r-aged', '1 hour');
ok(wait_for(sub { sql("SELECT count(*) FROM partner_svc.webhook_rejects WHERE body = 'r-aged'") == 0 }, 30),
	'keep_rejects=1: an old reject goes');
is(sql("SELECT count(*) FROM partner_svc.webhook_events WHERE payload->>'tag' = 'e-zero'"), 1, 'keep_events=0 keeps an old event');

# and no cap: rejects pile up while keep_rejects is 0
sql("ALTER SYSTEM SET partner_svc.webhook_keep_events = 1; ALTER SYSTEM SET partner_svc.webhook_keep_rejects = 0; ALTER SYSTEM SET partner_svc.webhook_max_rejects = 0; SELECT pg_reload_conf()");
sleep 1;
sql('TRUNCATE partner_svc.webhook_rejects');
old_reject('r-zero', '1 hour');
post_webhook($port, 'sandbox', "more junk $_")->{status} == 400 or die for 1 .. 8;
ok(wait_for(sub { sql("SELECT count(*) FROM partner_svc.webhook_events") == 0 }, 30), 'keep_events=1: the old event goes');
is(sql('SELECT count(*) FROM partner_svc.webhook_rejects'), 9, 'keep_rejects=0 and max_rejects=0: every reject kept');

$node->stop;
done_testing();
