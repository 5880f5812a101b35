# Lost webhooks: order state that heals itself (docs/webhooks.md#reconciliation).
#
# The sandbox's callbacks point at a loopback port nobody listens on, so
# every webhook fails and, after its three retries (1, 5 and 15 sandbox
# minutes), is given up.  The worker's reconciler then polls the status
# of the orders and the checkout created through partner_svc, and every
# order_states and transactions row reaches the sandbox's status within
# poll_after plus one polling round (the defaults: 30 and 1 sandbox
# minutes), with 0 x 429 at the sandbox and no row in webhook_events.
# Then: a later webhook never moves a polled order back; polling stays
# within its share of the status route's budget per window while
# foreground calls keep the rest.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use lib "$FindBin::Bin/../sandbox/lib";
use WebhookTest;
use Sandbox;
use JSON::PP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time sleep);

$ENV{SANDBOX_BIN} ||= (grep { -x } map { "$_/partner_svc_sandbox" } split /:/, $ENV{PATH})[0];

# a sandbox minute lasts 300 ms: the retries end 6.3 s after the first
# attempt, poll_after (30 sandbox minutes) is 9 s, a round 0.3 s
my $scale = 0.005;
my $minute = 60 * $scale;
my ($node, $port) = webhook_node('reconcile', conf => "partner_svc.time_scale = $scale\n");
my $sb = Sandbox->start(keys => ['k1=standard'], args => ['--time-scale', $scale, '--seed', '23']);
my $T = JSON::PP::true;
my $F = JSON::PP::false;
sub sql { $node->safe_psql('postgres', $_[0]) }

sql(sprintf(q{
	CREATE SERVER orders FOREIGN DATA WRAPPER partner_svc OPTIONS (service 'orders', base_url '%s');
	CREATE USER MAPPING FOR CURRENT_USER SERVER orders OPTIONS (api_key 'k1')}, $sb->url));

# callbacks at a port nobody listens on: connection refused, every time
my $dead = PostgreSQL::Test::Cluster::get_free_port();
is($sb->req('PUT', '/_sandbox/orders/callback', key => 'k1',
	json => { sandbox => "http://127.0.0.1:$dead/webhooks/sandbox",
		production => "http://127.0.0.1:$dead/webhooks/production" })->{status}, 200,
	'callbacks point at a closed port');

sub payload
{
	my ($paid, @v) = @_;
	my %p = (terms_and_privacy_accepted => $T,
		vehicles => [{ plate => 'LJ 23-AB', country => 'SI' }],
		vignettes => [map { { custom_id => $_->[0], name => "vignette $_->[0]", period => '10_days',
			start_date => $_->[1] } } @v]);
	$p{order_has_been_paid} = $paid ? $T : $F;
	return JSON::PP->new->canonical->encode(\%p);
}

# two paid orders that start in the past (CREATED, PENDING, ACTIVE), one
# in the future (CREATED, DEFERRED, ACTIVE), and a checkout of two orders
my $t0 = time;
sql("SELECT partner_svc.create_order('" . payload(1, ['L-1', '2020-01-01'], ['L-2', '2020-01-02']) . "')");
sql("SELECT partner_svc.create_order('" . payload(1, ['L-3', '2099-01-01']) . "')");
my $tx = sql("SELECT partner_svc.create_transaction('" . payload(0, ['L-4', '2020-01-01'], ['L-5', '2020-01-01'])
	. "') ->> 'transaction_id'");
ok($tx =~ /^txn_/, "a checkout: $tx");
# a direct create whose transaction rolls back: the order exists anyway
my ($rc, $out, $err) = $node->psql('postgres', "BEGIN; SELECT partner_svc.create_order('"
	. payload(1, ['L-6', '2020-01-01']) . "'); ROLLBACK;");
like($err, qr/rolled back/, 'a create rolled back: the warning says it was not undone');

ok(wait_for(sub { sql("SELECT count(*) FROM partner_svc.order_states") == 6
		&& sql("SELECT count(*) FROM partner_svc.transactions") == 1 }, 30),
	'the worker recorded the six created orders and the checkout');
is(sql("SELECT string_agg(DISTINCT source || ' ' || server || ' ' || (created_by = (SELECT oid FROM pg_roles WHERE rolname = current_user)), ',')
	FROM partner_svc.order_states"), 'created orders true', 'source created, server and role recorded');
is(sql("SELECT count(*) FROM partner_svc.order_states WHERE custom_id = 'L-6'"), 1,
	'the order of the rolled-back transaction is recorded');
is(sql("SELECT status || ' ' || source FROM partner_svc.transactions"), 'CREATED created', 'the checkout, CREATED');

# the checkout is paid at the sandbox: its orders start the paid path
is($sb->req('POST', "/_sandbox/orders/transactions/$tx/pay", key => 'k1')->{status}, 200, 'checkout paid');

# the sandbox's view: statuses, and when each last changed (real time)
sub sandbox_orders
{
	my $r = $sb->req('GET', '/public/orders?limit=100', key => 'k1');
	return { map { ($_->{id} => $_->{status}) } @{ $r->{json}{data} } };
}
sub events { $sb->req('GET', '/_sandbox/orders/events', key => 'k1')->{json} }
sub attempts { $sb->req('GET', '/_sandbox/orders/webhooks', key => 'k1')->{json} }

ok(wait_for(sub { my $o = sandbox_orders(); 6 == grep { $_ eq 'ACTIVE' } values %$o }, 60),
	'at the sandbox every order became ACTIVE');
ok(wait_for(sub { my @a = @{ attempts() };
		my %ev = map { ($_->{event_seq} => 1) } @{ events() };
		my %gone = map { ($_->{event_seq} => 1) } grep { $_->{outcome} eq 'given_up' } @a;
		keys %ev == keys %gone }, 60), 'every webhook was given up');
my @a = @{ attempts() };
my ($first) = grep { $_->{attempt} == 1 } @a;
my @one = map { $_->{sandbox_ms} } grep { $_->{event_seq} == $first->{event_seq} } @a;
is(scalar @one, 4, 'one event: four attempts');
is(join(',', map { int(($one[$_] - $one[$_ - 1]) / 60000 + 0.5) } 1 .. 3), '1,5,15',
	'retries after 1, 5 and 15 sandbox minutes') or diag explain \@one;
ok(!(grep { defined $_->{http_status} } @a), 'no attempt reached a listener');

# the last change at the sandbox, in real time
my $clock = $sb->req('GET', '/_sandbox/clock')->{json}{now_ms};
my $now = time;
my $last_ms = 0;
for (@{ events() }) { $last_ms = $_->{sandbox_ms} if $_->{sandbox_ms} > $last_ms }
my $changed = $now - ($clock - $last_ms) * $scale / 1000;
my $deadline = $changed + 30 * $minute + $minute;

my $healed = wait_for(sub {
	my $o = sandbox_orders();
	my $db = sql("SELECT string_agg(unique_id || '=' || status, ',' ORDER BY unique_id) FROM partner_svc.order_states");
	my $want = join(',', map { "$_=$o->{$_}" } sort keys %$o);
	$db eq $want && sql("SELECT status FROM partner_svc.transactions") eq 'SUCCESS' }, 60);
my $at = time;
ok($healed, 'order_states and transactions reached the sandbox\'s statuses');
ok($at <= $deadline + 1.5, sprintf('within poll_after plus one round of the last change (%.1f s after it, bound %.1f s + 1.5 s of slack)',
	$at - $changed, $deadline - $changed));
is(sql("SELECT string_agg(DISTINCT source, ',') FROM partner_svc.order_states"), 'poll', 'source poll');
is(sql("SELECT source FROM partner_svc.transactions"), 'poll', 'the checkout: source poll');
is(sql("SELECT count(*) FROM partner_svc.order_states WHERE polled_at IS NULL"), 0, 'every order polled');
is(sql("SELECT count(*) FROM partner_svc.webhook_events"), 0, 'polling invents no webhook_events');

my @req = @{ $sb->requests() };
is(scalar(grep { $_->{status} == 429 } @req), 0, '0 x 429 at the sandbox');
my @polls = grep { $_->{route} =~ m{/status$} } @req;
ok(@polls >= 7, scalar(@polls) . ' status requests');
# nothing polled before poll_after had passed since the order was created
my ($create) = grep { $_->{method} eq 'POST' && $_->{route} eq '/public/orders' } @req;
my $early = grep { $_->{at_ms} - $create->{at_ms} < 30 * $minute * 1000 - 50 } @polls;
is($early, 0, 'no status request before poll_after');

# a final order is polled no more
my $n = scalar @polls;
sleep(3 * $minute);
is(scalar(grep { $_->{route} =~ m{/status$} } @{ $sb->requests() }), $n, 'final orders are not polled again');

# --- a later webhook never moves a polled order back ---
my $id = sql("SELECT unique_id FROM partner_svc.order_states WHERE custom_id = 'L-1'");
is(post_webhook($port, 'sandbox', order_event('ORDER_STATUS_CHANGED', 'PENDING', $id, custom_id => 'L-1'))->{status},
	200, 'a late PENDING for the polled ACTIVE order: 200');
is(sql("SELECT status || ' ' || source FROM partner_svc.order_states WHERE unique_id = '$id'"), 'ACTIVE poll',
	'still ACTIVE, as polling found it');
is(post_webhook($port, 'sandbox', order_event('ORDER_STATUS_CHANGED', 'ACTIVE', $id, custom_id => 'L-1'))->{status},
	200, 'the ACTIVE webhook');
is(sql("SELECT status || ' ' || source FROM partner_svc.order_states WHERE unique_id = '$id'"), 'ACTIVE webhook',
	'a webhook telling the same status marks it webhook');
is(post_webhook($port, 'sandbox', checkout_event($tx, 'CREATED', $id))->{status}, 200, 'a late checkout CREATED');
is(sql("SELECT status FROM partner_svc.transactions"), 'SUCCESS', 'the checkout stays SUCCESS');

# --- the share: polling takes at most 20 % of the route's budget per window ---
# 10 status reads per sandbox minute and id (a server override): polling may
# take 2 of them; orders that stay CREATED are due at every round
$sb->config({ 'orders.pending_after_min' => 100000 });
sql(q{ALTER SERVER orders OPTIONS (ADD rate_limits 'GET /orders/{id}/status=10')});
sql("ALTER SYSTEM SET partner_svc.poll_after = 1; ALTER SYSTEM SET partner_svc.poll_interval = 1; ALTER SYSTEM SET partner_svc.poll_share = 20; SELECT pg_reload_conf()");
$sb->reset_stats;
sql("SELECT partner_svc.create_order('" . payload(1, ['S-1', '2020-01-01'], ['S-2', '2020-01-01']) . "')");
my $s1 = sql("SELECT unique_id FROM partner_svc.order_states WHERE custom_id = 'S-1'");
ok(wait_for(sub { 6 <= grep { $_->{path} =~ /\Q$s1\E/ } @{ $sb->requests('GET /public/orders/{id}/status') } }, 30),
	'polling goes on for an order that stays CREATED');
# the foreground keeps the rest of the budget: 8 reads of one id at once
my $t1 = time;
is(sql("SELECT count(partner_svc.order_status('$s1')) FROM generate_series(1, 7)"), 7,
	'seven foreground reads of the polled order succeed');
sleep(4 * $minute);
sql("ALTER SYSTEM SET partner_svc.poll_share = 0; SELECT pg_reload_conf()");
sleep(2 * $minute);
my @st = @{ $sb->requests('GET /public/orders/{id}/status') };
is(scalar(grep { $_->{status} == 429 } @st), 0, '0 x 429 with polling at every round');
# polls (every request but the foreground ones) per window of one sandbox
# minute, per id, sliding: never more than 20 % of 10
my $fg = 7;
my %by_id;
push @{ $by_id{$_->{path}} }, $_->{at_ms} for @st;
my $worst = 0;
for my $path (keys %by_id)
{
	my @t = @{ $by_id{$path} };
	for my $i (0 .. $#t)
	{
		my $c = grep { $_ >= $t[$i] && $_ < $t[$i] + $minute * 1000 } @t;
		$worst = $c if $c > $worst && $path !~ /\Q$s1\E/;
	}
}
ok($worst >= 1 && $worst <= 2, "polling used at most 2 of 10 per window and id (at most $worst)");
# the foreground id: its seven reads plus at most two polls per window
my @t = @{ $by_id{(grep { /\Q$s1\E/ } keys %by_id)[0]} };
my $peak = 0;
for my $i (0 .. $#t) { my $c = grep { $_ >= $t[$i] && $_ < $t[$i] + $minute * 1000 } @t; $peak = $c if $c > $peak }
ok($peak <= 10, "the polled id never got more than its limit in a window ($peak)");

$node->stop;
done_testing();
