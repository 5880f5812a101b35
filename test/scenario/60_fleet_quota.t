# 60_fleet_quota.t: one partner quota for two PostgreSQL nodes.
#
# Node "coord" is the quota coordinator and also a node: its own
# partner_svc.quota_coordinator names itself, so both nodes lease from the
# same table in the same way.  Node "second" names "coord".
#
# Window lengths (the whole file takes about three minutes):
#  - parts A and A2 use REAL one-minute windows: the first sandbox runs at
#    time scale 1 and so does partner_svc.time_scale on both nodes,
#    as issue 14 asks.  Part A polls for two windows, so it alone takes
#    a little over two minutes.
#  - part B uses 15-second windows: a second sandbox at time scale 0.25 (a
#    sandbox minute lasts 15 s of real time) and time_scale = 0.25
#    on both nodes, set by a reload before B starts.  B needs a window before
#    the stop, the fallback's quarantine (one window plus the margin, 1 s and
#    the two timeouts) and a window of fallback after it: with real windows
#    that is more than three minutes on its own, which would take the file
#    past its budget of four.  The fallback's rules scale with the window,
#    so the shorter window checks the same bounds.
#
#  A. Eight sessions, four per node, poll the status of one order (GET
#     /public/orders/{id}/status, 15 per window on the standard tier) for
#     two windows: the sandbox answers no 429, both nodes are served, and
#     the fleet uses at least 90% of the quota.
#  A2. A 429 with Retry-After seen by the second node blocks the key at the
#     coordinator, and the first node honours the block without sending.
#  B. The same as A with a second order, and the coordinator stopped halfway:
#     the second node logs the fallback once, shows mode "fallback" and its
#     share (floor(15 * 0.5) = 7) in partner_svc.rate_limits, sends nothing
#     until its quarantine ends, then at most its share per window, and the
#     sandbox still answers no 429.
#
# Runs as the postgres user, with the installed extension and sandbox, the
# way test/scenario.sh runs every scenario test.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/../sandbox/lib";

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Sandbox;
use Test::More;
use Time::HiRes qw(time sleep);

$ENV{SANDBOX_BIN} ||= (grep { -x } map { "$_/partner_svc_sandbox" } split /:/, $ENV{PATH})[0];

my $window_a = 60000;		# parts A and A2: real minutes (time scale 1)
my $window_b = 15000;		# part B: 60000 sandbox ms at time scale 0.25
my $limit = 15;			# GET /orders/{id}/status, standard tier
my $share = 7;			# floor(15 * 0.5)
my $offset = int(rand(60000));
my $sb = Sandbox->start(keys => ['sandbox-key=standard'],
	args => [ '--time-scale', '1', '--rl-offset-ms', $offset, '--seed', '6' ]);
my $offset_b = int(rand(60000));
my $sb_b = Sandbox->start(keys => ['sandbox-key=standard'],
	args => [ '--time-scale', '0.25', '--rl-offset-ms', $offset_b, '--seed', '6' ]);
note "A: sandbox windows of $window_a ms real, offset $offset sandbox ms";
note "B: sandbox windows of $window_b ms real, offset $offset_b sandbox ms";

my $coord = PostgreSQL::Test::Cluster->new('coord');
my $second = PostgreSQL::Test::Cluster->new('second');
for my $node ($coord, $second)
{
	$node->init;
	$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'partner_svc'
partner_svc.time_scale = 1
partner_svc.connect_timeout = 2000
partner_svc.request_timeout = 5000
partner_svc.quota_fallback_share = 0.5
max_connections = 20
});
}
$coord->start;
my $coord_conn = 'host=' . $coord->host . ' port=' . $coord->port . ' dbname=postgres';
for my $node ($coord, $second)
{
	$node->append_conf('postgresql.conf', "partner_svc.quota_coordinator = '$coord_conn'\n");
}
$coord->reload;
$second->start;

# server "orders" for parts A and A2, "orders_b" (the scaled sandbox) for B
my ($url, $url_b) = ($sb->url, $sb_b->url);
for my $node ($coord, $second)
{
	$node->safe_psql('postgres', qq{
CREATE EXTENSION partner_svc;
CREATE SERVER orders FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'orders', base_url '$url');
CREATE USER MAPPING FOR PUBLIC SERVER orders OPTIONS (api_key 'sandbox-key');
CREATE SERVER orders_b FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'orders', base_url '$url_b');
CREATE USER MAPPING FOR PUBLIC SERVER orders_b OPTIONS (api_key 'sandbox-key');
});
}

for my $o ([ $sb, 'FQ-A' ], [ $sb_b, 'FQ-B' ])
{
	my ($box, $id) = @$o;
	my $r = $box->req('POST', '/public/orders', key => 'sandbox-key', json => {
		terms_and_privacy_accepted => JSON::PP::true,
		order_has_been_paid => JSON::PP::true,
		vehicles => [ { plate => "LJ $id", country => 'SI' } ],
		vignettes => [ { custom_id => $id, name => 'Slovenia 1 year',
			period => '1_year', start_date => '2026-01-01' } ] });
	die "create order $id: $r->{status} $r->{body}" unless $r->{status} == 201;
}

# A session polling the order's status on $server for $secs seconds, in the
# background.  Each call may wait for budget only until the end of the run
# (rate_limit_max_wait is set to the time left), so that a session does not
# wait up to a window past it; the 53300 "exhausted" that ends such a call
# ends the loop.  Any other error fails the session; 429s at the sandbox
# are counted there.
sub poller
{
	my ($node, $server, $id, $secs) = @_;
	my ($out, $err) = ('', '');
	my $sql = qq{SET application_name = 'poller';
DO \$\$
DECLARE
  deadline timestamptz := clock_timestamp() + interval '$secs s';
  left_ms int8;
BEGIN
  LOOP
    left_ms := floor(extract(epoch FROM deadline - clock_timestamp()) * 1000);
    EXIT WHEN left_ms <= 0;
    PERFORM set_config('partner_svc.rate_limit_max_wait', left_ms::text, true);
    BEGIN
      PERFORM partner_svc.order_status('$id', '$server');
    EXCEPTION WHEN too_many_connections THEN
      EXIT;	-- the budget frees only after the end of the run
    END;
  END LOOP;
END \$\$;};
	my $h = IPC::Run::start(
		[ $node->installed_command('psql'), '-X', '-q', '-A', '-t',
		  '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('postgres'),
		  '-c', $sql ],
		'>', \$out, '2>', \$err);
	return { h => $h, out => \$out, err => \$err };
}

sub finish
{
	my ($p) = @_;
	$p->{h}->finish;
	$p->{rc} = $p->{h}->result(0);
	return $p;
}

# accepted arrival times (ms, sorted) and the 429s of one order's status at
# sandbox $box
sub arrivals
{
	my ($box, $id) = @_;
	my @r = grep { $_->{path} eq "/public/orders/$id/status" }
	  @{ $box->requests('GET /public/orders/{id}/status') };
	my @ok = sort { $a <=> $b } map { $_->{at_ms} }
	  grep { $_->{status} != 429 && $_->{status} != 0 } @r;
	return (\@ok, scalar(grep { $_->{status} == 429 } @r));
}

# the most arrivals of @t inside any interval of one window of $window_ms
# (5 ms allowed for the sandbox's logging)
sub worst_window
{
	my ($window_ms, @t) = @_;
	my $worst = 0;
	for my $i (0 .. $#t)
	{
		my $n = grep { $_ >= $t[$i] && $_ < $t[$i] + $window_ms - 5 } @t;
		$worst = $n if $n > $worst;
	}
	return $worst;
}

# ---------------------------------------------------------------------
# A. both nodes lease from the coordinator
# ---------------------------------------------------------------------
my $run_s = 2 * $window_a / 1000 + 3;
my @p = ((map { poller($coord, 'orders', 'FQ-A', $run_s) } 1 .. 4),
	(map { poller($second, 'orders', 'FQ-A', $run_s) } 1 .. 4));
finish($_) for @p;
is(scalar(grep { $_->{rc} != 0 } @p), 0, 'A: eight polling sessions on two nodes ran without error')
  or diag(join("\n", map { ${ $_->{err} } } @p));

my ($ok, $n429) = arrivals($sb, 'FQ-A');
is($n429, 0, 'A: the sandbox answered no 429');
cmp_ok(worst_window($window_a, @$ok), '<=', $limit, "A: no interval of one window holds more than $limit");
for my $node ($coord, $second)
{
	my $served = $node->safe_psql('postgres',
		q{SELECT ok FROM partner_svc.stats WHERE route = '/public/orders/{id}/status'});
	cmp_ok($served || 0, '>', 0, 'A: node ' . $node->name . " was served ($served)");
	is($node->safe_psql('postgres', q{SELECT mode FROM partner_svc.quota_status()}),
		'leased', 'A: node ' . $node->name . ' leases from the coordinator');
}
# Under saturation the n-th accepted request comes one limiter period after
# the (n - limit)-th: the share of the quota the fleet used is one window
# against the time the second quota took.
if (ok(@$ok > $limit, 'A: enough requests to measure (' . scalar(@$ok) . ')'))
{
	my $used = $window_a / ($ok->[$limit] - $ok->[0]);
	note sprintf('A: %d accepted in %d s; one quota of %d in %d ms: %.1f%% of the quota',
		scalar(@$ok), $run_s, $limit, $ok->[$limit] - $ok->[0], 100 * $used);
	cmp_ok($used, '>=', 0.90, 'A: the fleet used at least 90% of the quota');
}
my $rows = $coord->safe_psql('postgres',
	q{SELECT count(*) FROM partner_svc.quota_windows WHERE key LIKE '%|GET /public/orders/{id}/status|FQ-A'});
is($rows, 1, 'A: the coordinator keeps one row for the key');

# ---------------------------------------------------------------------
# A2. a 429 seen by one node blocks the key on every node
# ---------------------------------------------------------------------
$sb->fault({ route => 'GET /public/orders/{id}/status', kind => '429', value => 30, count => 1 });
my ($rc, $out, $err) = $second->psql('postgres', q{
SET partner_svc.max_retries = 0;
SELECT partner_svc.order_status('FQ-C', 'orders');});
like($err, qr/429/, 'A2: the second node gets a 429 (Retry-After: 30), not retried');
ok($coord->poll_query_until('postgres', q{
SELECT blocked_until > now() + interval '20 s' FROM partner_svc.quota_windows
WHERE key LIKE '%|GET /public/orders/{id}/status|FQ-C'}),
	'A2: the block reaches the coordinator');
($rc, $out, $err) = $coord->psql('postgres', q{
SET partner_svc.rate_limit_max_wait = 0;
SELECT partner_svc.order_status('FQ-C', 'orders');});
like($err, qr/exhausted.*\n.*answered 429 Too Many Requests/,
	'A2: the coordinator node honours it without sending');
is($coord->safe_psql('postgres', q{
SELECT blocked_until > now() + interval '20 s' FROM partner_svc.rate_limits
WHERE resource = 'FQ-C'}), 't', 'A2: ... and shows it in partner_svc.rate_limits');
is(scalar(grep { $_->{path} eq '/public/orders/FQ-C/status' }
	@{ $sb->requests('GET /public/orders/{id}/status') }), 1,
	'A2: only the one request reached the sandbox');

# ---------------------------------------------------------------------
# B. the coordinator stops halfway (15-second windows, see the header)
# ---------------------------------------------------------------------
for my $node ($coord, $second)
{
	$node->append_conf('postgresql.conf', "partner_svc.time_scale = 0.25\n");
	$node->reload;
}
for my $node ($coord, $second)
{
	ok($node->poll_query_until('postgres',
		q{SELECT current_setting('partner_svc.time_scale') = '0.25'}),
		'B: node ' . $node->name . " uses windows of $window_b ms");
}
# the quota workers reread the file on the same signal
sleep 1;
my $log_from = -s $second->logfile;
my $long_s = 55;
my $t0 = time;
@p = ((map { poller($coord, 'orders_b', 'FQ-B', $long_s) } 1 .. 4),
	(map { poller($second, 'orders_b', 'FQ-B', $long_s) } 1 .. 4));
sleep($window_b / 1000 - (time - $t0));
my $stop_s = time;
$coord->stop('immediate');
finish($_) for @p[0 .. 3];

# while the second node waits out its quarantine, it shows the fallback
my $st;
for (1 .. 50)
{
	$st = $second->safe_psql('postgres',
		q{SELECT mode, fallback_from IS NOT NULL, last_error IS NOT NULL FROM partner_svc.quota_status()});
	last if $st =~ /^fallback/;
	sleep 0.2;
}
is($st, 'fallback|t|t', 'B: the second node falls back when the coordinator is gone');
finish($_) for @p[4 .. 7];
is(scalar(grep { $_->{rc} != 0 } @p[4 .. 7]), 0, 'B: the second node\'s sessions ran without error')
  or diag(join("\n", map { ${ $_->{err} } } @p[4 .. 7]));

is($second->safe_psql('postgres',
	q{SELECT mode || ' ' || "limit" FROM partner_svc.rate_limits WHERE route = '/public/orders/{id}/status' AND resource = 'FQ-B'}),
	"fallback $share", "B: partner_svc.rate_limits shows mode fallback and the share of $share");

($ok, $n429) = arrivals($sb_b, 'FQ-B');
is($n429, 0, 'B: the sandbox answered no 429');
cmp_ok(worst_window($window_b, @$ok), '<=', $limit, "B: no interval of one window holds more than $limit");

# the arrivals of the fallback (the sandbox logs the wall clock in ms):
# none after the coordinator stopped until the quarantine ended, then at
# most the share in any window
my $from_ms = $second->safe_psql('postgres',
	q{SELECT (extract(epoch FROM fallback_from) * 1000)::int8 FROM partner_svc.quota_status()});
my @quarantine = grep { $_ > $stop_s * 1000 + 7000 && $_ < $from_ms } @$ok;
is(scalar(@quarantine), 0, 'B: nothing was sent during the quarantine');
my @fb = grep { $_ >= $from_ms } @$ok;
cmp_ok(scalar(@fb), '>', 0, 'B: the second node sent again after its quarantine (' . scalar(@fb) . ')');
cmp_ok(worst_window($window_b, @fb), '<=', $share, "B: in fallback the second node sends at most its share of $share per window");

my $log = slurp_file($second->logfile, $log_from);
my @lines = ($log =~ /coordinator unreachable, falling back/g);
is(scalar(@lines), 1, 'B: the fallback is logged once');

$second->stop;
done_testing();
