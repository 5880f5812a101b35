# 61_fleet_tenants.t: two tenants of one fleet quota cannot reach each
# other's budget; one partner key in two servers has one budget.
#
# One node, its own quota coordinator (as in 60_fleet_quota.t), and two
# databases, each with a server named "orders":
#  - tenant "victim": server orders against the sandbox, key sandbox-key;
#  - tenant "intruder": server orders against a loopback listener of its
#    own, another key, answering every request 429 with Retry-After: 86400.
#  A. The intruder's 429 blocks its own account for a day, at the
#     coordinator too, and the victim's list of orders still goes out: the
#     coordinator's keys are the accounts' digests, never a server name,
#     and show no API key.
#  B. Two servers of the victim with the same key (orders and orders_twin,
#     its base URL written otherwise) poll one order's status at once for
#     two windows of 3 s: one budget, the sandbox answers no 429.  With a
#     budget per server each would take the whole quota.
#
# Runs as the postgres user, with the installed extension and sandbox, the
# way test/scenario.sh runs every scenario test.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/../sandbox/lib";

use IO::Socket::INET;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Sandbox;
use Test::More;
use Time::HiRes qw(time sleep);

$ENV{SANDBOX_BIN} ||= (grep { -x } map { "$_/partner_svc_sandbox" } split /:/, $ENV{PATH})[0];

my $window_ms = 3000;		# sandbox: 60000 sandbox ms at time scale 0.05
my $offset = int(rand(60000));
my $sb = Sandbox->start(keys => ['sandbox-key=standard'],
	args => [ '--time-scale', '0.05', '--rl-offset-ms', $offset, '--seed', '7' ]);
note "sandbox windows of $window_ms ms real, offset $offset sandbox ms";

# the intruder's service: 429 with Retry-After: 86400 for everything
my $listener = IO::Socket::INET->new(
	LocalAddr => '127.0.0.1',
	LocalPort => 0,
	Listen => 16,
	ReuseAddr => 1) or die "listen: $!";
my $port = $listener->sockport;
my $pid = fork() // die "fork: $!";
if ($pid == 0)
{
	# bounded: at most 100 connections and 120 s
	alarm 120;
	for (1 .. 100)
	{
		my $c = $listener->accept or next;
		while (my $h = <$c>) { last if $h =~ /^\r?\n$/; }
		print $c "HTTP/1.1 429 Too Many Requests\r\nRetry-After: 86400\r\n"
		  . "Content-Length: 0\r\nConnection: close\r\n\r\n";
		close $c;
	}
	exit 0;
}
close $listener;

my $node = PostgreSQL::Test::Cluster->new('tenants');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'partner_svc'
partner_svc.rate_limit_window = $window_ms
partner_svc.connect_timeout = 2000
partner_svc.request_timeout = 5000
max_connections = 20
});
$node->start;
my $conn = 'host=' . $node->host . ' port=' . $node->port . ' dbname=postgres';
$node->append_conf('postgresql.conf', "partner_svc.quota_coordinator = '$conn'\n");
$node->reload;

my $url = $sb->url;
(my $twin_url = $url) =~ s{^http://}{HTTP://};
$node->safe_psql('postgres', 'CREATE EXTENSION partner_svc');
$node->safe_psql('postgres', 'CREATE DATABASE victim');
$node->safe_psql('postgres', 'CREATE DATABASE intruder');
$node->safe_psql('victim', qq{
CREATE EXTENSION partner_svc;
CREATE SERVER orders FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'orders', base_url '$url');
CREATE USER MAPPING FOR PUBLIC SERVER orders OPTIONS (api_key 'sandbox-key');
CREATE SERVER orders_twin FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'orders', base_url '$twin_url/');
CREATE USER MAPPING FOR PUBLIC SERVER orders_twin OPTIONS (api_key 'sandbox-key');
CREATE FOREIGN TABLE orders (id text) SERVER orders OPTIONS (resource 'orders');
});
$node->safe_psql('intruder', qq{
CREATE EXTENSION partner_svc;
CREATE SERVER orders FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'orders', base_url 'http://127.0.0.1:$port');
CREATE USER MAPPING FOR PUBLIC SERVER orders OPTIONS (api_key 'intruder-key');
CREATE FOREIGN TABLE orders (id text) SERVER orders OPTIONS (resource 'orders');
});

my $r = $sb->req('POST', '/public/orders', key => 'sandbox-key', json => {
	terms_and_privacy_accepted => JSON::PP::true,
	order_has_been_paid => JSON::PP::true,
	vehicles => [ { plate => 'LJ TN-1', country => 'SI' } ],
	vignettes => [ { custom_id => 'TN-1', name => 'Slovenia 1 year',
		period => '1_year', start_date => '2026-01-01' } ] });
die "create order: $r->{status} $r->{body}" unless $r->{status} == 201;

# ---------------------------------------------------------------------
# A. the intruder's block stays the intruder's
# ---------------------------------------------------------------------
my ($rc, $out, $err) = $node->psql('intruder', q{
SET partner_svc.max_retries = 0;
SELECT count(*) FROM orders;});
like($err, qr/429/, 'A: the intruder gets its 429 (Retry-After: 86400)');
ok($node->poll_query_until('postgres', q{
SELECT count(*) = 1 FROM partner_svc.quota_windows
WHERE key LIKE '%|GET /public/orders|' AND blocked_until > now() + interval '1 hour'}),
	'A: the block reaches the coordinator');
($rc, $out, $err) = $node->psql('victim', q{
SET partner_svc.rate_limit_max_wait = '5s';
SELECT count(*) > 0 FROM orders;});
is($out, 't', "A: the victim's orders of the same route and server name still go out")
  or diag($err);
is($node->safe_psql('postgres', q{
SELECT count(DISTINCT split_part(key, '|', 1)) FROM partner_svc.quota_windows
WHERE key LIKE '%|GET /public/orders|'}), '2', 'A: the coordinator keeps one key per account');
is($node->safe_psql('postgres', q{
SELECT count(*) FROM partner_svc.quota_windows
WHERE key LIKE 'orders|%' OR key LIKE '%-key%'}), '0',
	'A: its keys name no server and show no API key');
is($node->safe_psql('victim', q{
SELECT count(*) FROM partner_svc.rate_limits r WHERE r::text LIKE '%-key%'}), '0',
	'A: partner_svc.rate_limits shows no API key');

# ---------------------------------------------------------------------
# B. one key in two servers: one budget
# ---------------------------------------------------------------------
sub poller
{
	my ($server, $secs) = @_;
	my ($out, $err) = ('', '');
	my $sql = qq{DO \$\$
DECLARE
  deadline timestamptz := clock_timestamp() + interval '$secs s';
  left_ms int8;
BEGIN
  LOOP
    left_ms := floor(extract(epoch FROM deadline - clock_timestamp()) * 1000);
    EXIT WHEN left_ms <= 0;
    PERFORM set_config('partner_svc.rate_limit_max_wait', left_ms::text, true);
    BEGIN
      PERFORM partner_svc.order_status('TN-1', '$server');
    EXCEPTION WHEN too_many_connections THEN
      EXIT;	-- the budget frees only after the end of the run
    END;
  END LOOP;
END \$\$;};
	my $h = IPC::Run::start(
		[ $node->installed_command('psql'), '-X', '-q', '-A', '-t',
		  '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('victim'),
		  '-c', $sql ],
		'>', \$out, '2>', \$err);
	return { h => $h, out => \$out, err => \$err };
}

$sb->reset_stats;
my $run_s = 2 * $window_ms / 1000;
my @p = map { poller($_, $run_s) } qw(orders orders orders_twin orders_twin);
for (@p)
{
	$_->{h}->finish;
	$_->{rc} = $_->{h}->result(0);
}
is(scalar(grep { $_->{rc} != 0 } @p), 0, 'B: four sessions on two servers ran without error')
  or diag(join("\n", map { ${ $_->{err} } } @p));
my @reqs = grep { $_->{path} eq '/public/orders/TN-1/status' }
  @{ $sb->requests('GET /public/orders/{id}/status') };
my $n429 = grep { $_->{status} == 429 } @reqs;
my $served = grep { $_->{status} == 200 } @reqs;
cmp_ok($served, '>', 0, "B: the two servers were served ($served)");
is($n429, 0, 'B: one key in two servers, one budget: the sandbox answered no 429');
is($node->safe_psql('postgres', q{
SELECT count(*) FROM partner_svc.quota_windows
WHERE key LIKE '%|GET /public/orders/{id}/status|TN-1'}), '1',
	'B: the coordinator keeps one key for both servers');

$node->stop;
kill 'TERM', $pid;
waitpid($pid, 0);
$sb->stop;
done_testing();
