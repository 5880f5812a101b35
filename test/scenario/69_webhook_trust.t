# Trust, round three (webhooks):
# - item 10: a request target with a NUL byte (/webhooks/sandbox\0/x),
#   sent by a raw client on loopback, is refused (400) and nothing is
#   stored; the same raw client with the exact path is answered 200.
# - item 9: statuses move as the orders document says: a checkout that
#   FAILED and then succeeded is SUCCESS; a later webhook never moves an
#   order or a checkout back (SUCCESS then FAILED, ACTIVE then PENDING,
#   REFUNDED then ACTIVE, PENDING then DEFERRED).
# - item 8: NOTIFY partner_svc_events carries the event id only: no order
#   id, no status reaches a LISTEN session of a role that cannot read
#   webhook_events.
# - item 14: one warning for one missing extension (not one from the
#   worker's check and another from the first delivery), and
#   webhook_status() on a standby shows the configured port.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use WebhookTest;
use IO::Socket::INET;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(sleep);

my ($node, $port) = webhook_node('trust');
sub events { $node->safe_psql('postgres', 'SELECT count(*) FROM partner_svc.webhook_events') }

# A raw HTTP request on loopback: (status, whole answer).
sub raw_post
{
	my ($target, $body) = @_;
	my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $port,
		Proto => 'tcp', Timeout => 10) or die "connect: $!";
	print $s "POST $target HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
	  . "Content-Type: application/json\r\nContent-Length: " . length($body) . "\r\n\r\n$body";
	my $answer = '';
	my $deadline = time + 20;
	while (time < $deadline)
	{
		my $got = sysread($s, my $buf, 4096);
		last if !$got;
		$answer .= $buf;
	}
	close $s;
	my ($status) = $answer =~ m{^HTTP/1\.[01] (\d{3})};
	return ($status // 0, $answer);
}

# --- item 10: a NUL byte in the request target ---
my $before = events();
my ($st, $ans) = raw_post("/webhooks/sandbox\0/x",
	order_event('ORDER_STATUS_CHANGED', 'CREATED', 'ord_nul'));
ok($st == 400 || $st == 404, "NUL in the request target: refused ($st)") or diag $ans;
is(events(), $before, 'NUL in the request target: nothing stored');
($st, $ans) = raw_post("/webhooks/sandbox\0", order_event('ORDER_STATUS_CHANGED', 'CREATED', 'ord_nul2'));
ok($st == 400 || $st == 404, "NUL at the end of the target: refused ($st)") or diag $ans;
($st, $ans) = raw_post("/webhooks/sand\x01box", order_event('ORDER_STATUS_CHANGED', 'CREATED', 'ord_ctl'));
ok($st == 400 || $st == 404, "control byte in the target: refused ($st)") or diag $ans;
is(events(), $before, 'no refused target stored anything');
($st, $ans) = raw_post('/webhooks/sandbox', order_event('ORDER_STATUS_CHANGED', 'CREATED', 'ord_raw'));
is($st, 200, 'the same raw client with the exact path: 200') or diag $ans;
is(events(), $before + 1, 'and it is stored');

# --- item 9: transitions of the orders document ---
sub post_ok
{
	my ($body, $what) = @_;
	my $r = post_webhook($port, 'sandbox', $body);
	is($r->{status}, 200, "$what: 200") or diag $r->{content};
}
sub txn_status { $node->safe_psql('postgres', "SELECT status FROM partner_svc.transactions WHERE transaction_id = '$_[0]'") }
sub order_status { $node->safe_psql('postgres', "SELECT status FROM partner_svc.order_states WHERE unique_id = '$_[0]'") }

post_ok(checkout_event('txn_retry', 'CREATED', 'o_t1'), 'checkout CREATED');
post_ok(checkout_event('txn_retry', 'FAILED', 'o_t1'), 'checkout FAILED');
is(txn_status('txn_retry'), 'FAILED', 'checkout: FAILED after CREATED');
post_ok(checkout_event('txn_retry', 'SUCCESS', 'o_t1'), 'checkout SUCCESS after FAILED');
is(txn_status('txn_retry'), 'SUCCESS', 'checkout: a payment that succeeds after failing is SUCCESS');
post_ok(checkout_event('txn_retry', 'FAILED', 'o_t1', 'o_t2'), 'a late FAILED');
is(txn_status('txn_retry'), 'SUCCESS', 'checkout: a later FAILED does not move SUCCESS back');
post_ok(checkout_event('txn_retry', 'CREATED', 'o_t1', 'o_t3'), 'a late CREATED');
is(txn_status('txn_retry'), 'SUCCESS', 'checkout: nor does a late CREATED');

post_ok(order_event('ORDER_STATUS_CHANGED', 'CREATED', 'o_back'), 'order CREATED');
post_ok(order_event('ORDER_STATUS_CHANGED', 'PENDING', 'o_back'), 'order PENDING');
post_ok(order_event('ORDER_STATUS_CHANGED', 'DEFERRED', 'o_back'), 'order DEFERRED after PENDING');
is(order_status('o_back'), 'PENDING', 'order: no move between PENDING and DEFERRED');
post_ok(order_event('ORDER_STATUS_CHANGED', 'ACTIVE', 'o_back'), 'order ACTIVE');
post_ok(order_event('ORDER_STATUS_CHANGED', 'PENDING', 'o_back', custom_id => 'C-late'), 'a late PENDING');
is(order_status('o_back'), 'ACTIVE', 'order: a later PENDING does not move ACTIVE back');
post_ok(order_event('ORDER_STATUS_CHANGED', 'REFUNDED', 'o_back'), 'order REFUNDED');
post_ok(order_event('ORDER_STATUS_CHANGED', 'ACTIVE', 'o_back', custom_id => 'C-late2'), 'a late ACTIVE');
is(order_status('o_back'), 'REFUNDED', 'order: a later ACTIVE does not move REFUNDED back');
post_ok(order_event('ORDER_STATUS_CHANGED', 'ACTIVE', 'o_skip'), 'ACTIVE of an order never seen before');
post_ok(order_event('ORDER_STATUS_CHANGED', 'CREATED', 'o_skip', custom_id => 'C-x'), 'its CREATED, late');
is(order_status('o_skip'), 'ACTIVE', 'order: a late CREATED does not move ACTIVE back');

# --- item 8: the NOTIFY payload is the event id only ---
$node->safe_psql('postgres', q{
CREATE ROLE eavesdropper LOGIN;
GRANT USAGE ON SCHEMA partner_svc TO eavesdropper;
});
is($node->safe_psql('postgres',
	"SELECT has_table_privilege('eavesdropper', 'partner_svc.webhook_events', 'SELECT')"),
	'f', 'the listening role may not read webhook_events');
my $listener = $node->background_psql('postgres', extra_params => [ '-U', 'eavesdropper' ]);
$listener->query_safe('LISTEN partner_svc_events');
post_ok(order_event('ORDER_STATUS_CHANGED', 'CREATED', 'ord_secret_42'), 'an event while listening');
post_ok(checkout_event('txn_secret_43', 'SUCCESS', 'ord_secret_44'), 'a checkout while listening');
my $out = '';
wait_for(sub { $out .= $listener->query('SELECT 1'); (() = $out =~ /Asynchronous notification/g) >= 2 }, 30);
my @notes = $out =~ /Asynchronous notification "partner_svc_events" with payload "(.*?)" received/g;
is(scalar @notes, 2, 'two notifications');
my $ids = $node->safe_psql('postgres',
	"SELECT string_agg(id::text, ',' ORDER BY id) FROM partner_svc.webhook_events WHERE unique_id = 'ord_secret_42' OR transaction_id = 'txn_secret_43'");
is(join(',', @notes), $ids, 'the payload is the id of the stored event, nothing else');
unlike($out, qr/secret_4|CREATED|SUCCESS|ORDER_STATUS|CHECKOUT/, 'no order id, transaction id, status or event type in the payload');
$listener->quit;

# --- item 14: one warning for one missing extension ---
$node->safe_psql('postgres', 'DROP EXTENSION partner_svc CASCADE');
$node->restart;
# the log since this start: from the postmaster's first line, since the
# postmaster starts background workers before it logs that it is ready, so
# a quick worker's WARNING can come before that line (seen in a CI run)
sub log_since_start
{
	my $log = slurp_file($node->logfile);
	return substr($log, rindex($log, 'LOG:  starting PostgreSQL'));
}
ok(wait_for(sub { log_since_start() =~ /extension "partner_svc" is not installed/ }, 60),
	'no extension: the worker says so') or diag log_since_start();
my $r = post_webhook($port, 'sandbox', order_event('ORDER_STATUS_CHANGED', 'CREATED', 'ord_noext'));
is($r->{status}, 503, 'no extension: 503');
$r = post_webhook($port, 'sandbox', order_event('ORDER_STATUS_CHANGED', 'CREATED', 'ord_noext2'));
is($r->{status}, 503, 'no extension: 503 again');
sleep(1);
my $warnings = () = log_since_start() =~ /WARNING: .*extension "partner_svc" is not installed/g;
is($warnings, 1, "no extension: one warning, not one per check and per delivery ($warnings)");

# --- item 14: webhook_status() on a standby shows the configured port ---
my $primary = PostgreSQL::Test::Cluster->new('trust_primary');
$primary->init(allows_streaming => 1);
$primary->append_conf('postgresql.conf', "shared_preload_libraries = 'partner_svc'\n");
$primary->start;
$primary->safe_psql('postgres', 'CREATE EXTENSION partner_svc');
$primary->backup('b');
my $standby = PostgreSQL::Test::Cluster->new('trust_standby');
$standby->init_from_backup($primary, 'b', has_streaming => 1);
my $sport = PostgreSQL::Test::Cluster::get_free_port();
$standby->append_conf('postgresql.conf', "partner_svc.webhook_port = $sport\n");
$standby->start;
$primary->wait_for_catchup($standby);
my $s = webhook_status($standby);
is($s->{port}, $sport, 'standby: webhook_status() shows the configured port');
is($s->{listen_address}, '127.0.0.1', 'standby: and the configured address');
is($s->{state}, 'stopped', 'standby: no worker runs (it starts when recovery ends)');

$standby->stop;
$primary->stop;
$node->stop;
done_testing();
