# The poll worker (docs/webhooks.md#reconciliation, docs/privileges.md#tenancy):
#
# 1. Webhook receipt never waits for a partner: every polled route hangs
#    (a loopback socket that never accepts), the polled server allows an
#    hour per request and ten retries, and each webhook is still answered
#    200 within a second; webhook_status() says polling lags; poll
#    failures are logged once per round, with a count.
# 2. Reconciliation is always on: with no listener (port 0) and polling
#    off (poll_share=0), created orders are recorded; once polling is on
#    they reach the partner's status.
# 3. Tenants are apart: a tenant's own server (test/hostile/hostile.pl)
#    answers creates with another tenant's order ids and REFUNDED to every
#    status read; 0 rows of the other tenant change.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use lib "$FindBin::Bin/../sandbox/lib";
use lib "$FindBin::Bin/../hostile";
use WebhookTest;
use Sandbox;
use Hostile;
use IO::Select;
use IO::Socket::INET;
use JSON::PP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time sleep);

$ENV{SANDBOX_BIN} ||= (grep { -x } map { "$_/partner_svc_sandbox" } split /:/, $ENV{PATH})[0];

my $scale = 0.005;
my $T = JSON::PP::true;

# ------------------------------------------------------------------
# 1. polled routes that hang
# ------------------------------------------------------------------

# accepts nothing: a connection is queued by the kernel, never answered
my $hang = IO::Socket::INET->new(LocalAddr => '127.0.0.1', LocalPort => 0, Listen => 1,
	Proto => 'tcp', ReuseAddr => 1) or die "listen: $!";
my $hport = $hang->sockport;

my ($node, $port) = webhook_node('poll_hang', conf => <<"CONF");
partner_svc.time_scale = $scale
partner_svc.poll_after = 1
partner_svc.poll_interval = 1
partner_svc.poll_timeout = 500
partner_svc.poll_retries = 0
partner_svc.poll_max_per_round = 3
CONF
sub sql { $node->safe_psql('postgres', $_[0]) }

# the only server of the service, so the default one; its own options
# would let a request wait an hour and be retried ten times
sql(qq{CREATE SERVER hang FOREIGN DATA WRAPPER partner_svc
	OPTIONS (service 'orders', base_url 'http://127.0.0.1:$hport', request_timeout '3600000', max_retries '10');
	CREATE USER MAPPING FOR CURRENT_USER SERVER hang OPTIONS (api_key 'k1')});
# ten orders whose webhooks stopped a day ago: all due
sql(q{INSERT INTO partner_svc.order_states (unique_id, status, updated_at)
	SELECT 'ord_hang_' || i, 'CREATED', now() - interval '1 day' FROM generate_series(1, 10) i});

my $log_start = -s $node->logfile;
# a poll is under way once a connection waits in the socket's queue (the
# listening socket turns readable; it is never accepted)
ok(IO::Select->new($hang)->can_read(60), 'a status poll is connected to the socket that never answers');

# every webhook is answered within a second while polls hang
my $slowest = 0;
my $ok = 0;
for my $i (1 .. 8)
{
	my $t0 = time;
	my $r = post_webhook($port, 'sandbox',
		order_event('ORDER_STATUS_CHANGED', 'PENDING', "ord_wh_$i", custom_id => "W-$i"));
	my $dt = time - $t0;
	$slowest = $dt if $dt > $slowest;
	$ok++ if $r->{status} == 200;
	sleep(0.3);
}
is($ok, 8, 'eight webhooks answered 200 while every polled route hangs');
ok($slowest < 1.0, sprintf('each within a second (slowest %.2f s)', $slowest));
is(sql(q{SELECT count(*) FROM partner_svc.order_states WHERE unique_id LIKE 'ord_wh_%'}), 8,
	'and stored');

ok(wait_for(sub { sql(q{SELECT polling FROM partner_svc.webhook_status()}) eq 'lagging' }, 60),
	'webhook_status() says polling lags');

# one LOG line per round, with the count; none per order
ok(wait_for(sub { slurp_file($node->logfile) =~ /\b(\d+) of \1 status polls of this round failed/ }, 60),
	'a round of failed polls (three, and the list of orders while it fails): one line with the count');
my $log = substr(slurp_file($node->logfile), $log_start);
my @per_order = grep { /LOG:.*could not poll the status/ } split /\n/, $log;
is(scalar @per_order, 0, 'no line per order') or diag join("\n", @per_order[0 .. 2]);
ok((() = $log =~ /status polls of this round failed/g) >= 1, 'round lines logged');
is(sql(q{SELECT count(*) FROM partner_svc.order_states WHERE status <> 'CREATED' AND unique_id LIKE 'ord_hang_%'}),
	0, 'nothing written from the hanging polls');
$node->stop;
close $hang;

# ------------------------------------------------------------------
# 2. no listener, polling off, then on
# ------------------------------------------------------------------

my $sb = Sandbox->start(keys => ['k1=standard'], args => ['--time-scale', $scale, '--seed', '29']);
my $nb = PostgreSQL::Test::Cluster->new('poll_nolistener');
$nb->init;
$nb->append_conf('postgresql.conf', <<"CONF");
shared_preload_libraries = 'partner_svc'
listen_addresses = '127.0.0.1'
partner_svc.webhook_port = 0
partner_svc.time_scale = $scale
partner_svc.poll_share = 0
partner_svc.poll_after = 1
partner_svc.poll_interval = 1
CONF
$nb->start;
sub sqlb { $nb->safe_psql('postgres', $_[0]) }
# the objects of 0.3 first, as between a restart on this library and
# ALTER EXTENSION ... UPDATE (docs/upgrades.md)
sqlb(q{CREATE EXTENSION partner_svc VERSION '0.3'});
ok(wait_for(sub { sqlb(q{SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'partner_svc poll worker'}) == 1 }, 30),
	'no listener: the poll worker runs');
is(sqlb(q{SELECT state FROM partner_svc.webhook_status()}), 'off', 'the webhook worker does not listen');
sqlb(sprintf(q{
	CREATE SERVER orders FOREIGN DATA WRAPPER partner_svc OPTIONS (service 'orders', base_url '%s');
	CREATE USER MAPPING FOR CURRENT_USER SERVER orders OPTIONS (api_key 'k1')}, $sb->url));
my $dead = PostgreSQL::Test::Cluster::get_free_port();
is($sb->req('PUT', '/_sandbox/orders/callback', key => 'k1',
	json => { sandbox => "http://127.0.0.1:$dead/webhooks/sandbox",
		production => "http://127.0.0.1:$dead/webhooks/production" })->{status}, 200,
	'callbacks point at a closed port');

sub payload
{
	my (@v) = @_;
	return JSON::PP->new->canonical->encode({ terms_and_privacy_accepted => $T, order_has_been_paid => $T,
		vehicles => [{ plate => 'LJ 23-AB', country => 'SI' }],
		vignettes => [map { { custom_id => $_, name => "vignette $_", period => '10_days',
			start_date => '2020-01-01' } } @v] });
}
sqlb("SELECT partner_svc.create_order('" . payload('P-1') . "')");
sleep(1);
is(sqlb(q{SELECT count(*) FROM partner_svc.order_states}), 0,
	'0.3\'s objects: the record of the create waits for the update');
sqlb(q{CREATE ROLE watcher; GRANT EXECUTE ON FUNCTION partner_svc.webhook_status() TO watcher});
sqlb('ALTER EXTENSION partner_svc UPDATE');
is(sqlb(q{SELECT has_function_privilege('watcher', 'partner_svc.webhook_status()', 'EXECUTE')
		|| ' ' || has_function_privilege('pg_monitor', 'partner_svc.webhook_status()', 'EXECUTE')
		|| ' ' || has_function_privilege('public', 'partner_svc.webhook_status()', 'EXECUTE')}),
	'true true false', 'the update keeps the grants of webhook_status(), a DBA\'s included');
sqlb("SELECT partner_svc.create_order('" . payload('P-2') . "')");
ok(wait_for(sub { sqlb(q{SELECT count(*) FROM partner_svc.order_states WHERE source = 'created'}) == 2 }, 30),
	'updated, polling off, no listener: both created orders are recorded, the one that waited included');
is(sqlb(q{SELECT polling FROM partner_svc.webhook_status()}), 'off', 'webhook_status() says polling is off');

sub sandbox_orders
{
	my $r = $sb->req('GET', '/public/orders?limit=100', key => 'k1');
	return { map { ($_->{id} => $_->{status}) } @{ $r->{json}{data} } };
}
ok(wait_for(sub { my $o = sandbox_orders(); 2 == grep { $_ eq 'ACTIVE' } values %$o }, 60),
	'at the partner both orders became ACTIVE');
# an order created at the partner while nothing recorded it (another
# client of the key, or a create while no poll worker ran), DEFERRED for
# as long as the test lasts
$sb->config({ 'orders.deferred_active_after_min' => 100000 });
my $r = $sb->req('POST', '/public/orders', key => 'k1', json => JSON::PP->new->decode(
	JSON::PP->new->canonical->encode({ terms_and_privacy_accepted => $T, order_has_been_paid => $T,
		vehicles => [{ plate => 'LJ 23-AB', country => 'SI' }],
		vignettes => [{ custom_id => 'X-1', name => 'vignette X-1', period => '10_days',
			start_date => '2099-01-01' }] })));
my $xid = $r->{json}{data}{orders}[0]{id};
ok($xid, "an order created at the partner only: $xid");
ok(wait_for(sub { (sandbox_orders()->{$xid} // '') eq 'DEFERRED' }, 60), 'it is DEFERRED at the partner');
is(sqlb("SELECT count(*) FROM partner_svc.order_states WHERE unique_id = '$xid'"), 0, 'and unknown here');
sleep(0.5);
is(sqlb(q{SELECT string_agg(DISTINCT status, ',') FROM partner_svc.order_states}), 'CREATED',
	'polling off: nothing polled');

sqlb(q{ALTER SYSTEM SET partner_svc.poll_share = 20});
sqlb('SELECT pg_reload_conf()');
my $healed = wait_for(sub {
	my $o = sandbox_orders();
	sqlb(q{SELECT string_agg(unique_id || '=' || status, ',' ORDER BY unique_id) FROM partner_svc.order_states})
	  eq join(',', map { "$_=$o->{$_}" } sort keys %$o) }, 60);
ok($healed, 'polling on: the orders created while it was off reach the partner\'s status, the one nothing recorded included');
is(sqlb("SELECT custom_id || ' ' || status || ' ' || source || ' ' || server FROM partner_svc.order_states WHERE unique_id = '$xid'"),
	'X-1 DEFERRED poll orders', 'found in the order list filtered by status, through the default server');
is(sqlb(q{SELECT string_agg(DISTINCT source, ',') FROM partner_svc.order_states}), 'poll', 'source poll');
is(sqlb(q{SELECT count(*) || ' ' || count(DISTINCT account) FROM partner_svc.order_states WHERE account ~ '^[0-9a-f]{32}$'}), '3 1',
	'the rows recorded and the one found carry the account of the key');

# ------------------------------------------------------------------
# 3. a tenant's server answers creates with another tenant's ids
# ------------------------------------------------------------------

my $h = Hostile->start;
# an order of the victim that only webhooks told
sqlb(q{INSERT INTO partner_svc.order_states (unique_id, custom_id, status, source)
	VALUES ('ord_0123456789ab', 'V-9', 'PENDING', 'webhook')});
sqlb(q{CREATE ROLE mallory LOGIN;
	GRANT USAGE ON FOREIGN DATA WRAPPER partner_svc TO mallory});
$nb->safe_psql('postgres', sprintf(q{
	CREATE SERVER evil FOREIGN DATA WRAPPER partner_svc OPTIONS (service 'orders', base_url '%s');
	CREATE USER MAPPING FOR mallory SERVER evil OPTIONS (api_key 'm1')}, $h->url),
	extra_params => ['-U', 'mallory']);

my $snap = q{SELECT string_agg((to_jsonb(s) - 'polled_at' - 'updated_at')::text, E'\n' ORDER BY unique_id)
	FROM partner_svc.order_states s};
my $before = sqlb($snap);
my @victim = split /\n/, sqlb(q{SELECT unique_id FROM partner_svc.order_states ORDER BY 1});
is(scalar @victim, 4, 'four rows of the victim');

$h->clear;
my $t_steal = sqlb('SELECT now()');
for my $id (@victim)
{
	my $p = payload("steal:$id");
	$nb->safe_psql('postgres', "SELECT partner_svc.create_order('$p', 'evil')",
		extra_params => ['-U', 'mallory']);
}
is(scalar(grep { /^POST \/public\/orders/ } @{ $h->requests }), scalar @victim,
	'mallory\'s server answered a create for each');
# the victim's ACTIVE orders are final; the one webhooks told is polled
# again since the creates (through whichever server the worker chose)
ok(wait_for(sub { sqlb(qq{SELECT count(*) FROM partner_svc.order_states
		WHERE unique_id = 'ord_0123456789ab' AND polled_at > '$t_steal'}) == 1 }, 60),
	'the order webhooks told was polled again after the creates');
ok(wait_for(sub { slurp_file($nb->logfile) =~ /created through server "evil" is not recorded/ }, 30),
	'the records are refused, with a LOG line');
sleep(0.5);
is(sqlb($snap), $before, '0 rows of the victim changed');
is(scalar(grep { m{/status} } @{ $h->requests }), 0, 'nothing was polled through mallory\'s server');
is(sqlb(q{SELECT count(*) FROM partner_svc.order_states WHERE server = 'evil' OR status = 'REFUNDED'}), 0,
	'no row names mallory\'s server or holds her REFUNDED');

$nb->stop;
done_testing();
