# Backups (issue 10): pg_dump of a cluster whose worker stored events,
# states, transactions and rejects, restored with pg_restore into a fresh
# cluster, keeps every row of the four tables, and the identity sequences
# go on after the restored ids.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use WebhookTest;
use File::Temp qw(tempdir);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $tmp = tempdir(CLEANUP => 1);
my ($node, $port) = webhook_node('dumped');

my @posts = (
	order_event('ORDER_STATUS_CHANGED', 'CREATED', 'bk-1'),
	order_event('ORDER_STATUS_CHANGED', 'ACTIVE', 'bk-1'),
	order_event('ORDER_CONFIRMATION_RECEIVED', 'ACTIVE', 'bk-1', pdf_url => 'https://example.invalid/bk-1.pdf'),
	order_event('ORDER_STATUS_CHANGED', 'PENDING', 'bk-2'),
	checkout_event('tx-1', 'SUCCESS', 'bk-1', 'bk-2'),
);
is(post_webhook($port, 'sandbox', $_)->{status}, 200, 'stored') for @posts;
is(post_webhook($port, 'production', '{"event_type": 1}')->{status}, 400, 'a reject');

my %query = (
	webhook_events => 'SELECT id, environment, event_type, status, unique_id, custom_id,
		transaction_id, pdf_url, payload, dedupe_key, received_at FROM partner_svc.webhook_events ORDER BY id',
	order_states => 'SELECT * FROM partner_svc.order_states ORDER BY unique_id',
	transactions => 'SELECT * FROM partner_svc.transactions ORDER BY transaction_id',
	webhook_rejects => 'SELECT * FROM partner_svc.webhook_rejects ORDER BY id',
);
my %before = map { $_ => $node->safe_psql('postgres', $query{$_}) } keys %query;
is(scalar(split /\n/, $before{webhook_events}), 5, 'five events before the dump');
ok($before{$_} ne '', "$_ has rows before the dump") for sort keys %query;

my $dump = "$tmp/partner_svc.dump";
command_ok(['pg_dump', '-Fc', '-f', $dump, '-d', $node->connstr('postgres')], 'pg_dump');

my $fresh = PostgreSQL::Test::Cluster->new('restored');
$fresh->init;
$fresh->append_conf('postgresql.conf', "listen_addresses = '127.0.0.1'\n");
$fresh->start;
command_ok(['pg_restore', '--exit-on-error', '-d', $fresh->connstr('postgres'), $dump], 'pg_restore into a fresh cluster');
for my $t (sort keys %query)
{
	is($fresh->safe_psql('postgres', $query{$t}), $before{$t}, "$t: every row restored");
}
ok($fresh->safe_psql('postgres', "INSERT INTO partner_svc.webhook_rejects (environment, reason, body_bytes, body)
	VALUES ('sandbox', 'after restore', 0, '') RETURNING id")
	> $node->safe_psql('postgres', 'SELECT max(id) FROM partner_svc.webhook_rejects'),
	'the rejects sequence goes on after the restored ids');
ok($fresh->safe_psql('postgres', "INSERT INTO partner_svc.webhook_events (environment, event_type, status, payload, dedupe_key)
	VALUES ('sandbox', 'X', 'CREATED', '{}', '\\x00') RETURNING id")
	> $node->safe_psql('postgres', 'SELECT max(id) FROM partner_svc.webhook_events'),
	'the events sequence goes on after the restored ids');

$fresh->stop;
$node->stop;
done_testing();
