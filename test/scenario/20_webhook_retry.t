# Retries: the sandbox retries a delivery that did not get a 200 (after 1,
# 5 and 15 sandbox minutes).  Three ways the worker fails a delivery: the
# database rejects the insert (answer 500), the answer comes too late for
# the sender although the row was committed (the retry is a duplicate), and
# the listener is off (connection refused).  After recovery every event is
# stored exactly once.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use lib "$FindBin::Bin/../sandbox/lib";
use WebhookTest;
use Sandbox;
use JSON::PP;
use PostgreSQL::Test::Utils;
use Test::More;

$ENV{SANDBOX_BIN} ||= (grep { -x } map { "$_/partner_svc_sandbox" } split /:/, $ENV{PATH})[0];

my ($node, $port) = webhook_node('retry');
# a sandbox minute lasts 60 ms: retries after 0.06, 0.3 and 0.9 s would be
# too quick to act between, so 600 ms (retries after 0.6, 3 and 9 s)
my $sb = Sandbox->start(keys => ['k1=standard'], args => ['--time-scale', '0.01', '--seed', '9']);
my $T = JSON::PP::true;
my $wh = "http://127.0.0.1:$port/webhooks";
is($sb->req('PUT', '/_sandbox/orders/callback', key => 'k1',
	json => { sandbox => "$wh/sandbox", production => "$wh/production" })->{status}, 200, 'callback set');

sub create
{
	my ($cid) = @_;
	my $r = $sb->req('POST', '/public/orders', key => 'k1', json => {
		terms_and_privacy_accepted => $T, order_has_been_paid => $T,
		vehicles => [{ plate => 'LJ 12-AB', country => 'SI' }],
		vignettes => [{ custom_id => $cid, name => "vignette $cid", period => '10_days',
			start_date => '2020-06-01' }] });
	die "create: $r->{body}" unless $r->{status} == 201;
	return $r->{json}{data}{orders}[0]{id};
}
sub attempts { $sb->req('GET', "/_sandbox/orders/webhooks?order_id=$_[0]", key => 'k1')->{json} }
sub sql { $node->safe_psql('postgres', $_[0]) }

# All four events of the order delivered, each stored once, state right.
sub check_order
{
	my ($id, $name) = @_;
	ok(wait_for(sub { (grep { $_->{outcome} eq 'delivered' } @{ attempts($id) }) == 4 }, 60),
		"$name: all four webhooks finally delivered") or diag explain attempts($id);
	# a retry may arrive after newer events: compare without the order
	is(sql("SELECT string_agg(event_type || ' ' || status, ', '
		ORDER BY partner_svc.webhook_status_rank(status), event_type DESC) FROM partner_svc.webhook_events
		WHERE unique_id = '$id'"),
		'ORDER_STATUS_CHANGED CREATED, ORDER_STATUS_CHANGED PENDING, ORDER_STATUS_CHANGED ACTIVE, ORDER_CONFIRMATION_RECEIVED ACTIVE',
		"$name: each event stored once");
	is(sql("SELECT status || ' ' || (pdf_url IS NOT NULL) FROM partner_svc.order_states WHERE unique_id = '$id'"),
		'ACTIVE true', "$name: order_states ACTIVE with pdf_url");
	ok(!(grep { $_->{outcome} eq 'given_up' } @{ attempts($id) }), "$name: nothing given up");
}

# --- the database rejects the insert: 500, retried ---
sql(q{CREATE FUNCTION reject_all() RETURNS trigger LANGUAGE plpgsql AS
  $$BEGIN RAISE EXCEPTION 'test: inserts are refused'; END$$;
  CREATE TRIGGER refuse BEFORE INSERT ON partner_svc.webhook_events
  FOR EACH ROW EXECUTE FUNCTION reject_all()});
my $id1 = create('REFUSED');
ok(wait_for(sub { grep { ($_->{http_status} // 0) == 500 } @{ attempts($id1) } }, 30), 'refused: the worker answers 500');
is(sql('SELECT count(*) FROM partner_svc.webhook_events'), 0, 'refused: nothing stored');
my $st = webhook_status($node);
my $reset0 = $st->{stats_reset};
ok(defined $reset0, 'webhook_status says when its counters started');
is(sql("SELECT stats_reset = (SELECT backend_start FROM pg_stat_activity WHERE pid = s.pid)
	OR stats_reset BETWEEN (SELECT backend_start FROM pg_stat_activity WHERE pid = s.pid) AND listening_since
	FROM partner_svc.webhook_status() s"), 't', 'stats_reset: when the worker started, before it listened');
ok($st->{failed} >= 1, 'webhook_status counts the failure');
like($st->{last_error}, qr/test: inserts are refused/, 'webhook_status shows the last error');
ok($node->log_contains('could not store 1 deliveries'), 'the failure is logged');
sql('DROP TRIGGER refuse ON partner_svc.webhook_events');
check_order($id1, 'refused');
ok((grep { $_->{attempt} > 1 && $_->{outcome} eq 'delivered' } @{ attempts($id1) }), 'refused: a retry delivered it');
$st = webhook_status($node);
is($st->{last_error}, undef, 'refused: last_error cleared once a batch is stored again');
is($st->{stats_reset}, $reset0, 'stats_reset stays while the worker runs');

# --- committed, but the answer came too late: the retry is a duplicate ---
$sb->config({ 'orders.webhook_timeout_ms' => 300 });
sql(q{CREATE FUNCTION slow() RETURNS trigger LANGUAGE plpgsql AS
  $$BEGIN IF NEW.custom_id = 'SLOW' AND NEW.status = 'CREATED' THEN PERFORM pg_sleep(1); END IF; RETURN NEW; END$$;
  CREATE TRIGGER slow AFTER INSERT ON partner_svc.webhook_events
  FOR EACH ROW EXECUTE FUNCTION slow()});
my $dups = webhook_status($node)->{duplicates};
my $id2 = create('SLOW');
check_order($id2, 'slow answer');
my @created = grep { $_->{status} eq 'CREATED' } @{ attempts($id2) };
like($created[0]{error} // '', qr/Timeout/, 'slow answer: the first attempt timed out at the sender');
is($created[-1]{outcome}, 'delivered', 'slow answer: a retry was answered 200');
ok(webhook_status($node)->{duplicates} > $dups, 'slow answer: the retry was recognised as a duplicate');
sql('DROP TRIGGER slow ON partner_svc.webhook_events');
$sb->config({ 'orders.webhook_timeout_ms' => 5000 });

# --- the listener is off: connection refused, retried ---
sql("ALTER SYSTEM SET partner_svc.webhook_port = 0; SELECT pg_reload_conf()");
ok(wait_for(sub { webhook_status($node)->{state} eq 'off' }, 30), 'listener off after a reload');
my $id3 = create('OFF');
ok(wait_for(sub { grep { !defined $_->{http_status} } @{ attempts($id3) } }, 30), 'off: the sender cannot connect');
sql("ALTER SYSTEM RESET partner_svc.webhook_port; SELECT pg_reload_conf()");
ok(wait_for(sub { webhook_status($node)->{state} eq 'listening' }, 30), 'listening again after a reload');
check_order($id3, 'listener off');

# a late retry of an older event never moves order_states backwards
my $late = order_event('ORDER_STATUS_CHANGED', 'PENDING', $id3, custom_id => 'OFF');
my $r = post_webhook($port, 'sandbox', $late);
is($r->{status}, 200, 'a late PENDING for an ACTIVE order: 200');
is(sql("SELECT status || ' ' || (pdf_url IS NOT NULL) FROM partner_svc.order_states WHERE unique_id = '$id3'"),
	'ACTIVE true', 'order_states still ACTIVE with its pdf_url');
is(post_webhook($port, 'sandbox', order_event('ORDER_STATUS_CHANGED', 'REFUNDED', $id3, custom_id => 'OFF'))->{status},
	200, 'REFUNDED');
is(post_webhook($port, 'sandbox', order_event('ORDER_STATUS_CHANGED', 'ACTIVE', 'x-' . $id3))->{status}, 200, 'another order');
is(sql("SELECT status || ' ' || (pdf_url IS NOT NULL) FROM partner_svc.order_states WHERE unique_id = '$id3'"),
	'REFUNDED true', 'REFUNDED is higher: applied, pdf_url kept');
is(sql("SELECT count(*) FROM partner_svc.webhook_events"), 15, 'fifteen events in all: twelve from the sandbox, three by hand');
is(sql("SELECT count(*) FROM (SELECT payload FROM partner_svc.webhook_events GROUP BY payload HAVING count(*) > 1) d"),
	0, 'no payload twice');

# a new worker starts its counters again, and says when
sql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE backend_type = 'partner_svc webhook worker'");
ok(wait_for(sub { my $s = webhook_status($node); $s->{state} eq 'listening' && ($s->{stats_reset} // '') ne $reset0 }, 60),
	'a restarted worker: a new stats_reset');
is(sql("SELECT (stats_reset > '$reset0') || ' ' || requests FROM partner_svc.webhook_status()"), 'true 0',
	'a restarted worker: later, its counters from zero');

$node->stop;
done_testing();
