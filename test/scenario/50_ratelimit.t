# 50_ratelimit.t: the shared rate limiter under load, against the sandbox.
#
#  1. Eight sessions at once hammer one {id} route (GET /public/orders/{id},
#     25 per window) and one plain route (GET /public/orders, 100 per window)
#     for six windows of a sandbox whose windows are 1.2 s long and start at
#     a random offset.  The sandbox answers no 429, and in steady state the
#     accepted requests reach at least 95% of the quota.  Meanwhile a ninth
#     session reads a second order with partner_svc.rate_limit_max_wait = 0:
#     it is never held back by the first order's spent budget.
#  2. Injected 429s, with and without Retry-After: the request succeeds
#     after backoff and partner_svc.stats counts the 429s and the retries; a
#     429 that is not retried blocks the key for its Retry-After.
#  3. A session waiting for budget shows in pg_stat_activity and is
#     cancelled by statement_timeout on time.
#  4. The key table is full (max_keys = 16): new ids share an
#     overflow key, a plain route without room fails with 53400 (one role
#     holds every key, so no other owner's key may be evicted for it:
#     53_limiter_room.t shows two roles), idle keys
#     are evicted once their window has passed.
#  5. Without shared_preload_libraries: a limited route fails clearly unless
#     partner_svc.rate_limit is off; unlimited routes work.
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

my $time_scale = 0.02;
my $window_ms = 1200;		# sandbox: 60000 sandbox ms at time scale 0.02
my $offset = int(rand(60000));
my $sb = Sandbox->start(keys => ['sandbox-key=standard', map { "key-o$_=standard" } 1 .. 4],
	args => [ '--time-scale', '0.02', '--rl-offset-ms', $offset, '--seed', '5' ]);
note "sandbox windows of $window_ms ms real, offset $offset sandbox ms";

my $node = PostgreSQL::Test::Cluster->new('ratelimit');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'partner_svc'
partner_svc.time_scale = $time_scale
partner_svc.max_keys = 16
max_connections = 30
});
$node->start;

my $url = $sb->url;
$node->safe_psql('postgres', qq{
CREATE EXTENSION partner_svc;
CREATE SERVER orders FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'orders', base_url '$url');
CREATE USER MAPPING FOR PUBLIC SERVER orders OPTIONS (api_key 'sandbox-key');
IMPORT FOREIGN SCHEMA orders FROM SERVER orders INTO public;
CREATE SERVER movies FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'movies', base_url '$url');
CREATE USER MAPPING FOR PUBLIC SERVER movies OPTIONS (api_key 'sandbox-key');
CREATE SCHEMA m;
IMPORT FOREIGN SCHEMA movies FROM SERVER movies INTO m;
-- the checker of the second id: every read of RL-B must pass at once;
-- reads of RL-A with no waiting show that RL-A's budget is spent
CREATE FUNCTION check_second_id(OUT b_ok int, OUT a_refused int)
LANGUAGE plpgsql AS \$\$
BEGIN
  b_ok := 0; a_refused := 0;
  PERFORM pg_sleep(1.5);
  SET partner_svc.rate_limit_max_wait = 0;
  FOR i IN 1..20 LOOP
    PERFORM * FROM orders WHERE custom_id = 'RL-B';
    b_ok := b_ok + 1;
    BEGIN
      PERFORM * FROM orders WHERE custom_id = 'RL-A';
    EXCEPTION WHEN too_many_connections THEN
      a_refused := a_refused + 1;
    END;
    PERFORM pg_sleep(0.05);
  END LOOP;
END \$\$;
});

for my $id (qw(RL-A RL-B RL-C))
{
	my $r = $sb->req('POST', '/public/orders', key => 'sandbox-key', json => {
		terms_and_privacy_accepted => JSON::PP::true,
		order_has_been_paid => JSON::PP::true,
		vehicles => [ { plate => "LJ $id", country => 'SI' } ],
		vignettes => [ { custom_id => $id, name => 'Slovenia 1 year',
			period => '1_year', start_date => '2026-01-01' } ] });
	die "create order $id: $r->{status} $r->{body}" unless $r->{status} == 201;
}

# psql in the background; returns the IPC::Run handle and output refs
sub bg_psql
{
	my ($sql) = @_;
	my ($out, $err) = ('', '');
	my $h = IPC::Run::start(
		[ $node->installed_command('psql'), '-X', '-q', '-A', '-t',
		  '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('postgres'),
		  '-c', $sql ],
		'>', \$out, '2>', \$err);
	return { h => $h, out => \$out, err => \$err, started => time };
}

sub bg_finish
{
	my ($p) = @_;
	$p->{h}->finish;
	$p->{rc} = $p->{h}->result(0);
	$p->{elapsed} = time - $p->{started};
	return $p;
}

# ---------------------------------------------------------------------
# 1. eight sessions, one {id} route and one plain route
# ---------------------------------------------------------------------
my $run_s = 6 * $window_ms / 1000;
my $loop = sub {
	my ($stmt) = @_;
	return qq{SET application_name = 'hammer';
DO \$\$
DECLARE deadline timestamptz := clock_timestamp() + interval '$run_s s';
BEGIN
  WHILE clock_timestamp() < deadline LOOP
    $stmt;
  END LOOP;
END \$\$;};
};

$sb->reset_stats;
my @procs;
push @procs, bg_psql($loop->(q{PERFORM * FROM orders WHERE custom_id = 'RL-A'})) for 1 .. 4;
push @procs, bg_psql($loop->(q{PERFORM count(*) FROM orders})) for 1 .. 4;
my $checker = bg_psql('SELECT b_ok, a_refused FROM check_second_id()');
bg_finish($_) for @procs, $checker;
is(scalar(grep { $_->{rc} != 0 } @procs), 0, 'eight hammering sessions ran without error')
  or diag(join("\n", map { ${ $_->{err} } } @procs));

is($checker->{rc}, 0, 'second order id read 20 times without waiting while the first one is saturated')
  or diag(${ $checker->{err} });
my ($b_ok, $a_refused) = split /\|/, (${ $checker->{out} } =~ s/\s+$//r);
is($b_ok, 20, 'every read of the second id passed');
cmp_ok($a_refused, '>', 0, "the first id's budget was spent meanwhile ($a_refused of 20 refused)");

my %stat;
for my $r (@{ $sb->stats->{routes} })
{
	$stat{"$r->{method} $r->{route}"} = $r;
}
for my $route ('GET /public/orders/{id}', 'GET /public/orders')
{
	is($stat{$route}{429} // -1, 0, "sandbox answered no 429 on $route");
}

# Steady state: under saturation the n-th accepted request of a key comes
# one limiter period after the (n - limit)-th, so the time the limiter takes
# to let four whole quotas through, t[4 * limit] - t[0], against the four
# windows the quota allows for them, is the share of the quota it yields.
# Also: no interval of one window holds more than the limit (arrival times
# in ms, 5 ms allowed for the sandbox's logging).
sub accepted_times
{
	my ($route, $path) = @_;
	return sort { $a <=> $b } map { $_->{at_ms} }
	  grep { $_->{status} != 429 && $_->{status} != 0 && (!defined $path || $_->{path} eq $path) }
	  @{ $sb->requests($route) };
}

for my $case ([ 'GET /public/orders/{id}', '/public/orders/RL-A', 25 ],
	[ 'GET /public/orders', undef, 100 ])
{
	my ($route, $path, $limit) = @$case;
	my @t = accepted_times($route, $path);
	my $k = 4;
	my $worst = 0;
	for my $i (0 .. $#t - $limit)
	{
		my $n = grep { $_ < $t[$i] + $window_ms - 5 } @t[ $i .. $i + $limit ];
		$worst = $n if $n > $worst;
	}
	ok(@t > $k * $limit, "$route: enough requests to measure (" . scalar(@t) . ')')
	  or next;
	my $share = $k * $window_ms / ($t[ $k * $limit ] - $t[0]);
	note sprintf('%s: %d accepted; %d quotas of %d in %d ms: %.1f%% of the quota',
		$route, scalar(@t), $k, $limit, $t[ $k * $limit ] - $t[0], 100 * $share);
	cmp_ok($share, '>=', 0.95, "$route: at least 95% of the quota in steady state");
	cmp_ok($worst, '<=', $limit, "$route: no interval of one window holds more than $limit");
}

my $waits = $node->safe_psql('postgres',
	q{SELECT limiter_waits > 0 AND rate_limited = 0 FROM partner_svc.stats
	  WHERE server = 'orders' AND route = '/public/orders/{id}'});
is($waits, 't', 'partner_svc.stats: sessions waited for budget, no 429');

# ---------------------------------------------------------------------
# 2. 429 injected: with Retry-After, without, and not retried
# ---------------------------------------------------------------------
sleep(2 * $window_ms / 1000);	# RL-C's key is fresh anyway; let RL-A cool
$sb->fault({ route => 'GET /public/orders/{id}', kind => '429', value => 1, count => 1 });
my $t0 = time;
my $got = $node->safe_psql('postgres', q{
SELECT partner_svc.stats_reset();
SELECT count(*) FROM orders WHERE custom_id = 'RL-C';
SELECT requests, retries, rate_limited, ok FROM partner_svc.stats
WHERE server = 'orders' AND route = '/public/orders/{id}';});
my $took = time - $t0;
is($got, "\n1\n2|1|1|1", '429 with Retry-After: read succeeds, stats count the 429 and the retry');
cmp_ok($took, '>=', 0.9, sprintf('Retry-After: 1 was waited out (%.2f s)', $took));

$sb->fault({ route => 'GET /public/orders/{id}', kind => '429', count => 2 });
$got = $node->safe_psql('postgres', q{
SELECT partner_svc.stats_reset();
SELECT count(*) FROM orders WHERE custom_id = 'RL-C';
SELECT requests, retries, rate_limited, ok FROM partner_svc.stats
WHERE server = 'orders' AND route = '/public/orders/{id}';});
is($got, "\n1\n3|2|2|1", '429 without Retry-After: backoff, success, two retries counted');

# not retried: the 429 blocks the key for its Retry-After (30 s)
$sb->fault({ route => 'GET /public/orders/{id}', kind => '429', value => 30, count => 1 });
my ($rc, $out, $err) = $node->psql('postgres', q{
SET partner_svc.max_retries = 0;
SELECT count(*) FROM orders WHERE custom_id = 'RL-C';});
like($err, qr/HTTP status 429/, 'a 429 that is not retried fails the request');
$got = $node->safe_psql('postgres', q{
SELECT blocked_until > now() + interval '20 s' FROM partner_svc.rate_limits
WHERE server = 'orders' AND resource = 'RL-C';});
is($got, 't', 'the 429 blocks the key for its Retry-After');

# ---------------------------------------------------------------------
# 3. a waiting session: pg_stat_activity, then statement_timeout
# ---------------------------------------------------------------------
my $waiter = bg_psql(q{SET application_name = 'waiter';
SET statement_timeout = '3s';
SELECT count(*) FROM orders WHERE custom_id = 'RL-C';});
ok($node->poll_query_until('postgres', q{
SELECT count(*) = 1 FROM pg_stat_activity
WHERE application_name = 'waiter' AND wait_event_type = 'Extension'
  AND query LIKE 'partner_svc: waiting for rate limit of GET /public/orders/{id} on server "orders": %'}),
	'the waiting session shows in pg_stat_activity');
bg_finish($waiter);
like(${ $waiter->{err} }, qr/canceling statement due to statement timeout/,
	'statement_timeout cancels the wait');
cmp_ok($waiter->{elapsed}, '<', 8, sprintf('... promptly (%.2f s for a 3 s timeout)', $waiter->{elapsed}));

# ---------------------------------------------------------------------
# 4. the key table is full: 16 keys, of which 12 for ids
# ---------------------------------------------------------------------
$node->append_conf('postgresql.conf', "partner_svc.time_scale = 1");
$node->restart;
$node->safe_psql('postgres', q{
DO $$ BEGIN
  FOR i IN 1..20 LOOP
    PERFORM * FROM orders WHERE custom_id = 'X' || i;
  END LOOP;
END $$;});
$got = $node->safe_psql('postgres', q{
SELECT count(*) FILTER (WHERE resource <> '*'), max(used) FILTER (WHERE resource = '*')
FROM partner_svc.rate_limits WHERE route = '/public/orders/{id}'});
is($got, '12|8', '20 new ids: 12 keys of their own, 8 share the overflow key');
$got = $node->safe_psql('postgres', q{
SELECT count(*) FROM orders WHERE custom_id = 'X21';
SELECT count(*) FROM orders WHERE custom_id = 'X1';
SELECT resource, used FROM partner_svc.rate_limits
WHERE resource IN ('X1', '*') ORDER BY resource;});
is($got, "0\n0\n*|9\nX1|2", 'a new id joins the overflow key, a known id keeps its own');

my $plain = '';
for my $i (1 .. 4)
{
	$plain .= qq{CREATE SERVER o$i FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'orders', base_url '$url');
CREATE USER MAPPING FOR PUBLIC SERVER o$i OPTIONS (api_key 'key-o$i');
CREATE FOREIGN TABLE o$i (id text) SERVER o$i OPTIONS (resource 'orders');
};
}
$node->safe_psql('postgres', $plain);
$got = $node->safe_psql('postgres', q{
SELECT count(*) FROM o1; SELECT count(*) FROM o2; SELECT count(*) FROM o3;});
is($got, "0\n0\n0", 'plain routes of three more accounts use the room ids may not take');
($rc, $out, $err) = $node->psql('postgres', q{SELECT count(*) FROM o4});
like($err, qr/ERROR:  rate limiter of partner_svc has no room for GET \/public\/orders on server "o4"/,
	'no room at all, and the requester holds every key: a clear error');
$got = $node->safe_psql('postgres', q{SELECT count(*) FROM partner_svc.rate_limits});
is($got, '16', 'the table holds 16 keys');

# idle keys are evicted: back to the short window, wait until all are idle
$node->append_conf('postgresql.conf', "partner_svc.time_scale = $time_scale");
$node->reload;
sleep(2.5 * $window_ms / 1000);
$got = $node->safe_psql('postgres', q{
SELECT count(*) FROM orders WHERE custom_id = 'X30';
SELECT count(*) FROM o4;
SELECT string_agg(coalesce(server, '?') || ':' || coalesce(resource, ''), ',' ORDER BY server, resource)
FROM partner_svc.rate_limits;});
is($got, "0\n0\no4:,orders:X30", 'idle keys were evicted to make room');

# ---------------------------------------------------------------------
# 5. without shared_preload_libraries
# ---------------------------------------------------------------------
$node->append_conf('postgresql.conf', "shared_preload_libraries = ''");
$node->restart;
($rc, $out, $err) = $node->psql('postgres', q{SELECT count(*) FROM orders WHERE custom_id = 'RL-A'});
like($err, qr/ERROR:  partner_svc cannot rate-limit GET \/public\/orders\/\{id\} on server "orders"/,
	'not preloaded: a limited route fails clearly');
like($err, qr/shared_preload_libraries/, '... and says why');
$got = $node->safe_psql('postgres', q{SELECT count(*) > 0 FROM (SELECT * FROM m.movies LIMIT 5) s});
is($got, 't', 'not preloaded: routes without a limit work');
$got = $node->safe_psql('postgres', q{
LOAD 'partner_svc';
SET partner_svc.rate_limit = off;
SELECT count(*) FROM orders WHERE custom_id = 'RL-A';});
is($got, '1', 'not preloaded: with partner_svc.rate_limit off the request is sent');
($rc, $out, $err) = $node->psql('postgres', q{SELECT * FROM partner_svc.stats});
like($err, qr/partner_svc.stats needs partner_svc in shared_preload_libraries/,
	'not preloaded: the views say why they are empty');

$node->stop;
$sb->stop;
done_testing();
