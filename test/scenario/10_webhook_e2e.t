# End to end: the sandbox's order service sends its webhooks to the worker.
# Orders created with partner_svc.create_order (a paid transaction of three orders, a deferred order, an unpaid
# transaction of two orders paid by checkout, one order in the production
# environment) run to ACTIVE with their confirmation; then order_states,
# transactions and webhook_events must match what the sandbox sent, each
# event stored once, one webhook per order, and a LISTEN session must have
# had one notification per event.
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

my ($node, $port) = webhook_node('e2e');
my $sb = Sandbox->start(keys => ['k1=standard'], args => ['--time-scale', '0.001', '--seed', '5']);
my $T = JSON::PP::true;
my $wh = "http://127.0.0.1:$port/webhooks";

# the worker shows itself
is($node->safe_psql('postgres',
	"SELECT state || ' ' || query FROM pg_stat_activity WHERE backend_type = 'partner_svc webhook worker'"),
	"idle listening for webhooks on 127.0.0.1 port $port", 'pg_stat_activity: backend type, state, activity');

my $listener = $node->background_psql('postgres');
$listener->query_safe('LISTEN partner_svc_events');

my $r = $sb->req('PUT', '/_sandbox/orders/callback', key => 'k1',
	json => { sandbox => "$wh/sandbox", production => "$wh/production" });
is($r->{status}, 200, 'callback URLs point at the worker') or diag $r->{body};

# orders are created from SQL, with partner_svc.create_order
my $sburl = $sb->url;
$node->safe_psql('postgres', qq{
	CREATE SERVER orders FOREIGN DATA WRAPPER partner_svc OPTIONS (service 'orders', base_url '$sburl');
	CREATE USER MAPPING FOR CURRENT_USER SERVER orders OPTIONS (api_key 'k1')});

sub create
{
	my ($paid, $start, @cids) = @_;
	my $payload = JSON::PP->new->canonical->encode({
		terms_and_privacy_accepted => $T, order_has_been_paid => $paid ? $T : JSON::PP::false,
		vehicles => [{ plate => 'LJ 12-AB', country => 'SI' }],
		vignettes => [map { { custom_id => $_, name => "vignette $_", period => '10_days',
			start_date => $start } } @cids] });
	my $out = $node->safe_psql('postgres', "SELECT partner_svc.create_order('$payload'::jsonb)");
	return JSON::PP->new->decode($out);
}

my $tx3 = create(1, '2020-06-01', 'A', 'B', 'C');
my $txd = create(1, '2099-06-01', 'D');
my $txu = create(0, '2020-06-01', 'U1', 'U2');
ok(wait_for(sub { $node->safe_psql('postgres',
	"SELECT count(*) FROM partner_svc.webhook_events WHERE event_type = 'CHECKOUT_STATUS_CHANGED'") == 1 }),
	'checkout CREATED stored');
is($sb->req('POST', "/_sandbox/orders/transactions/$txu->{transaction_id}/pay", key => 'k1')->{status}, 200, 'paid by checkout');

my %order = map { $_->{custom_id} => $_->{id} } map { @{ $_->{orders} } } $tx3, $txd, $txu;
my $norders = keys %order;
is($norders, 6, 'six orders');

# every order ends ACTIVE with its confirmation: 4 webhooks each, plus 2 checkouts
my $expected = 4 * 6 + 2;
ok(wait_for(sub { $node->safe_psql('postgres', 'SELECT count(*) FROM partner_svc.webhook_events') >= $expected }, 60),
	"$expected webhooks stored") or diag $node->safe_psql('postgres', 'SELECT event_type, status, unique_id FROM partner_svc.webhook_events');
ok(wait_for(sub { @{ $sb->req('GET', '/_sandbox/orders/webhooks', key => 'k1')->{json} } >= $expected }, 30),
	'the sandbox has finished its attempts');

my $attempts = $sb->req('GET', '/_sandbox/orders/webhooks', key => 'k1')->{json};
is(scalar @$attempts, $expected, 'one attempt per event: nothing was retried');
ok(!(grep { $_->{http_status} != 200 || $_->{outcome} ne 'delivered' } @$attempts), 'every attempt answered 200');

# webhook_events holds exactly what was sent, each once
my $events = $sb->req('GET', '/_sandbox/orders/events', key => 'k1')->{json};
my $json = JSON::PP->new->canonical;
my @sent = sort map { $json->encode($_->{body}) } @$events;
my @stored = sort map { $json->encode($json->decode($_)) } split /\n/,
  $node->safe_psql('postgres', 'SELECT payload::text FROM partner_svc.webhook_events');
is_deeply(\@stored, \@sent, 'webhook_events: every event the sandbox made, once, payload as sent');
is($node->safe_psql('postgres',
	"SELECT count(*) FROM partner_svc.webhook_events WHERE environment <> 'sandbox'"), 0, 'environment recorded: sandbox');

# one webhook per order per transition, also in a transaction of three orders
for my $cid (sort keys %order)
{
	is($node->safe_psql('postgres', "SELECT string_agg(event_type || ' ' || status, ', ' ORDER BY id)
		FROM partner_svc.webhook_events WHERE unique_id = '$order{$cid}'"),
		'ORDER_STATUS_CHANGED CREATED, ORDER_STATUS_CHANGED ' . ($cid eq 'D' ? 'DEFERRED' : 'PENDING')
		. ', ORDER_STATUS_CHANGED ACTIVE, ORDER_CONFIRMATION_RECEIVED ACTIVE', "order $cid: its own four webhooks, in order");
}

# order_states: ACTIVE with the pdf_url of the confirmation
my $base = $sb->url;
for my $cid (sort keys %order)
{
	is($node->safe_psql('postgres', "SELECT custom_id || ' ' || status || ' ' || pdf_url
		FROM partner_svc.order_states WHERE unique_id = '$order{$cid}'"),
		"$cid ACTIVE $base/_sandbox/orders/pdf/$order{$cid}", "order_states of $cid");
}
is($node->safe_psql('postgres', 'SELECT count(*) FROM partner_svc.order_states'), $norders, 'one row per order');

# transactions: only the checkout one, SUCCESS, with its two orders
is($node->safe_psql('postgres', "SELECT transaction_id || ' ' || status || ' ' || order_ids::text FROM partner_svc.transactions"),
	"$txu->{transaction_id} SUCCESS {$order{U1},$order{U2}}", 'transactions: the checkout, SUCCESS, its orders');

# the LISTEN session got one notification per stored event
my $out = $listener->query('SELECT 1');
my @notes = $out =~ /Asynchronous notification "partner_svc_events" with payload "(.*?)" received/g;
@notes = map { s/\\"/"/gr } @notes;
is(scalar @notes, $expected, 'one notification per event');
# the payload is the event's id alone (docs/webhooks.md, NOTIFY)
is(scalar(grep { !/^\d+$/ } @notes), 0, 'notification payloads are event ids, nothing else');
my @ids = sort { $a <=> $b } @notes;
is(join(',', @ids), $node->safe_psql('postgres', "SELECT string_agg(id::text, ',' ORDER BY id) FROM partner_svc.webhook_events"),
	'notifications name the stored events');
$listener->quit;

# the production environment goes to its own path and is recorded
$sb->config({ environment => 'production' });
my $txp = create(1, '2020-06-01', 'P');
my $pid = $txp->{orders}[0]{id};
ok(wait_for(sub { $node->safe_psql('postgres',
	"SELECT pdf_url IS NOT NULL FROM partner_svc.order_states WHERE unique_id = '$pid'") eq 't' }, 30),
	'production order confirmed');
is($node->safe_psql('postgres', "SELECT string_agg(DISTINCT environment, ',') FROM partner_svc.webhook_events WHERE unique_id = '$pid'"),
	'production', 'environment recorded: production');

my $st = webhook_status($node);
is($st->{accepted}, $expected + 4, 'webhook_status: accepted');
is($st->{duplicates} + $st->{rejected} + $st->{failed}, 0, 'no duplicates, rejects or failures');
ok($st->{batches} >= 1 && $st->{batches} <= $st->{accepted}, 'webhook_status: batches');

$node->stop;
done_testing();
