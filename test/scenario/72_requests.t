# 72_requests.t: partner_svc.requests, the requests in flight of every
# backend (src/shmem/inflight.c), read by a second session while a first
# one has a request held (docs/ratelimit.md, "Requests in flight").
#
#  1. A read held 4 s by the sandbox's latency fault shows as
#     'receiving', with its server, route template, start and pid; its
#     path only to superusers and pg_read_all_stats, never the key.
#  2. A read that waits for rate-limit budget shows as 'waiting for
#     budget'; cancelled, its error's CONTEXT says what it waited for.
#  3. A read answered 429 with Retry-After: 4 shows as 'backing off'
#     until its retry, then completes.
#  4. Nothing stays in the view once the statements are over.
# pg_stat_activity names the waits of 1 and 2 (PartnerSvcTransfer,
# PartnerSvcRateLimit) from PostgreSQL 17 on, "Extension" before.
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
use Time::HiRes qw(time);

$ENV{SANDBOX_BIN} ||= (grep { -x } map { "$_/partner_svc_sandbox" } split /:/, $ENV{PATH})[0];

my $sb = Sandbox->start(keys => ['sandbox-key=standard'], args => ['--seed', '5']);

my $node = PostgreSQL::Test::Cluster->new('requests');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'partner_svc'
partner_svc.cache = off
statement_timeout = '60s'
});
$node->start;

my $url = $sb->url;
$node->safe_psql('postgres', qq{
CREATE EXTENSION partner_svc;
CREATE SERVER orders FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'orders', base_url '$url');
CREATE USER MAPPING FOR PUBLIC SERVER orders OPTIONS (api_key 'sandbox-key');
CREATE FOREIGN TABLE orders (id text, custom_id text) SERVER orders
  OPTIONS (resource 'orders');
CREATE SERVER orders_rl FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'orders', base_url '$url', rate_limits 'GET /orders/{id}=1');
CREATE USER MAPPING FOR PUBLIC SERVER orders_rl OPTIONS (api_key 'sandbox-key');
CREATE FOREIGN TABLE orders_rl (id text, custom_id text) SERVER orders_rl
  OPTIONS (resource 'orders');
CREATE ROLE watcher;
CREATE ROLE stats_reader IN ROLE pg_read_all_stats;
});

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

# the view's rows of the session named app, as role (SET ROLE)
sub rows_of
{
	my ($app, $role) = @_;
	my $set = $role ? "SET ROLE $role;" : '';
	return $node->safe_psql('postgres', qq{$set
SELECT r.server, r.route, r.state, r.started <= now(), r.bytes >= 0,
       r.database, coalesce(r.request, '<hidden>')
FROM partner_svc.requests r JOIN pg_stat_activity a USING (pid)
WHERE a.application_name = '$app';});
}

# ---------------------------------------------------------------------
# 1. a request held by the sandbox: receiving
# ---------------------------------------------------------------------
$sb->fault({ route => 'GET /public/orders/{id}', kind => 'latency', value => 4000, count => 1 });
my $holder = bg_psql(q{SET application_name = 'holder';
SELECT count(*) FROM orders WHERE custom_id = 'HOLD-1';});
ok($node->poll_query_until('postgres', q{
SELECT count(*) = 1 FROM partner_svc.requests r JOIN pg_stat_activity a USING (pid)
WHERE a.application_name = 'holder' AND r.state = 'receiving'}),
	'a request held by the sandbox shows as receiving');
is(rows_of('holder'),
	'orders|GET /public/orders/{id}|receiving|t|t|postgres|GET /public/orders/HOLD-1',
	'superuser: server, route template, state, start, bytes, database and the path');
is(rows_of('holder', 'stats_reader'),
	'orders|GET /public/orders/{id}|receiving|t|t|postgres|GET /public/orders/HOLD-1',
	'pg_read_all_stats: the path too');
is(rows_of('holder', 'watcher'),
	'orders|GET /public/orders/{id}|receiving|t|t|postgres|<hidden>',
	'another role: no path (no resource id)');
is($node->safe_psql('postgres', q{
SELECT count(*) FROM partner_svc.requests r
WHERE r::text LIKE '%sandbox-key%'}), '0', 'the key is nowhere in the view');
# from 17 a wait has a name of its own (src/base/pg_compat.h); before,
# every wait of an extension is "Extension"
my $named = $node->pg_version >= 17;
my $transfer = $named ? 'PartnerSvcTransfer' : 'Extension';
ok($node->poll_query_until('postgres', qq{
SELECT wait_event_type || ' ' || wait_event FROM pg_stat_activity WHERE application_name = 'holder'},
	"Extension $transfer"),
	"pg_stat_activity: the wait event of an HTTP transfer is $transfer");
bg_finish($holder);
is($holder->{rc}, 0, 'the held read completes') or diag ${ $holder->{err} };

# ---------------------------------------------------------------------
# 2. waiting for budget, then cancelled
# ---------------------------------------------------------------------
$node->safe_psql('postgres', q{SELECT count(*) FROM orders_rl WHERE custom_id = 'RL-1';});
my $waiter = bg_psql(q{SET application_name = 'waiter';
SET partner_svc.rate_limit_max_wait = '10min';
SELECT count(*) FROM orders_rl WHERE custom_id = 'RL-1';});
ok($node->poll_query_until('postgres', q{
SELECT count(*) = 1 FROM partner_svc.requests r JOIN pg_stat_activity a USING (pid)
WHERE a.application_name = 'waiter' AND r.state = 'waiting for budget'
  AND r.route = 'GET /public/orders/{id}' AND r.server = 'orders_rl'}),
	'a request waiting for budget shows as waiting for budget');
my $budget = $named ? 'PartnerSvcRateLimit' : 'Extension';
ok($node->poll_query_until('postgres', qq{
SELECT wait_event_type || ' ' || wait_event FROM pg_stat_activity WHERE application_name = 'waiter'},
	"Extension $budget"),
	"pg_stat_activity: the wait event of a wait for budget is $budget");
$node->safe_psql('postgres', q{
SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name = 'waiter'});
bg_finish($waiter);
like(${ $waiter->{err} },
	qr/canceling statement due to user request\nCONTEXT:  waiting for rate-limit budget for GET \/public\/orders\/\{id\} on server "orders_rl"/,
	'the cancelled wait says what it waited for');

# ---------------------------------------------------------------------
# 3. backing off before a retry (429 with Retry-After: 4)
# ---------------------------------------------------------------------
$sb->fault({ route => 'GET /public/orders/{id}', kind => '429', value => 4, count => 1 });
my $backoff = bg_psql(q{SET application_name = 'backoff';
SELECT count(*) FROM orders WHERE custom_id = 'BACK-1';});
ok($node->poll_query_until('postgres', q{
SELECT count(*) = 1 FROM partner_svc.requests r JOIN pg_stat_activity a USING (pid)
WHERE a.application_name = 'backoff' AND r.state = 'backing off'}),
	'a request waiting for its retry shows as backing off');
bg_finish($backoff);
is($backoff->{rc}, 0, 'the retried read completes') or diag ${ $backoff->{err} };

# ---------------------------------------------------------------------
# 4. nothing left over
# ---------------------------------------------------------------------
is($node->safe_psql('postgres', q{SELECT count(*) FROM partner_svc.requests}),
	'0', 'no request in flight once the statements are over');

$node->stop;
$sb->clear_faults;
done_testing();
