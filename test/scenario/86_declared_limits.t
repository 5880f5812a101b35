# 86_declared_limits.t: the shared rate limiter and the fleet quota hold
# for a route declared in SQL (docs/declared-endpoints.md), as they do for
# a row of the catalogue.
#
# One node that is its own quota coordinator (partner_svc.quota_coordinator
# names itself, so every lease goes through partner_svc.quota_windows), a
# server of service custom whose rate_limits names the declared route with
# the sandbox's own limit (GET /jobs/ocr/history: 60 per window and partner
# on the standard tier, docs/sandbox-jobs.md), and a table over it.  Eight
# sessions read its first row (one request each) as fast as they can for
# four windows of a sandbox whose windows are 1.2 s long and start at a
# random offset: the sandbox answers no 429, the limiter held the sessions
# back (partner_svc.stats counts its waits), the quota's row of the route
# holds the limit, and no interval of one window holds more than the limit.
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

my $time_scale = 0.02;
my $window_ms = 1200;		# 60000 sandbox ms at time scale 0.02
my $limit = 60;			# GET /jobs/ocr/history, standard tier
my $offset = int(rand(60000));
my $sb = Sandbox->start(keys => ['sandbox-key=standard'],
	args => [ '--time-scale', $time_scale, '--rl-offset-ms', $offset, '--seed', '7' ]);
note "sandbox windows of $window_ms ms real, offset $offset sandbox ms";

my $node = PostgreSQL::Test::Cluster->new('declared_limits');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'partner_svc'
partner_svc.time_scale = $time_scale
max_connections = 30
});
$node->start;
my $self_conn = 'host=' . $node->host . ' port=' . $node->port . ' dbname=postgres';
$node->append_conf('postgresql.conf', "partner_svc.quota_coordinator = '$self_conn'\n");
$node->reload;

my $url = $sb->url;
$node->safe_psql('postgres', qq{
CREATE EXTENSION partner_svc;
CREATE SERVER jobs FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'custom', base_url '$url',
           rate_limits 'GET /jobs/{family}/history=$limit');
CREATE USER MAPPING FOR PUBLIC SERVER jobs OPTIONS (api_key 'sandbox-key');
CREATE FOREIGN TABLE ocr_history (
  family text OPTIONS (param 'path'), id text, status text
) SERVER jobs OPTIONS (endpoint 'GET /jobs/{family}/history', items 'data',
                       paging 'cursor');
});
like($node->safe_psql('postgres', q{SELECT id FROM ocr_history WHERE family = 'ocr' LIMIT 1}),
	qr/^ocr_[0-9a-f]{12}$/, 'the declared table answers');

my $run_s = 4 * $window_ms / 1000;
my $sql = qq{SET application_name = 'hammer';
DO \$\$
DECLARE deadline timestamptz := clock_timestamp() + interval '$run_s s';
BEGIN
  WHILE clock_timestamp() < deadline LOOP
    PERFORM id FROM ocr_history WHERE family = 'ocr' LIMIT 1;
  END LOOP;
END \$\$;};

$sb->reset_stats;
my @procs;
for (1 .. 8)
{
	my ($out, $err) = ('', '');
	my $h = IPC::Run::start(
		[ $node->installed_command('psql'), '-X', '-q', '-A', '-t',
		  '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('postgres'), '-c', $sql ],
		'>', \$out, '2>', \$err);
	push @procs, { h => $h, err => \$err };
}
for my $p (@procs)
{
	$p->{h}->finish;
	$p->{rc} = $p->{h}->result(0);
}
is(scalar(grep { $_->{rc} != 0 } @procs), 0, 'eight sessions read the declared route without error')
  or diag(join("\n", map { ${ $_->{err} } } @procs));

my @r = grep { $_->{path} eq '/jobs/ocr/history' } @{ $sb->requests('GET /jobs/ocr/history') };
my @ok = sort { $a <=> $b } map { $_->{at_ms} } grep { $_->{status} == 200 } @r;
my $n429 = grep { $_->{status} == 429 } @r;
is($n429, 0, 'the sandbox answered no 429 to the declared route');
cmp_ok(scalar(@ok), '>', $limit,
	'the sessions used more than one window of budget (' . scalar(@ok) . ' accepted)');
my $worst = 0;
for my $i (0 .. $#ok)
{
	my $n = grep { $_ >= $ok[$i] && $_ < $ok[$i] + $window_ms - 5 } @ok;
	$worst = $n if $n > $worst;
}
cmp_ok($worst, '<=', $limit, "no interval of one window holds more than $limit ($worst)");

is($node->safe_psql('postgres',
	q{SELECT limiter_waits > 0 AND rate_limited = 0 FROM partner_svc.stats
	  WHERE server = 'jobs' AND route = '/jobs/{family}/history'}),
	't', 'partner_svc.stats: the limiter held the sessions back, no 429 counted');
is($node->safe_psql('postgres',
	qq{SELECT count(*) FROM partner_svc.quota_windows WHERE "limit" = $limit AND granted > 0}),
	'1', "the fleet quota leased the declared route's budget (one row of limit $limit)");

$node->stop;
$sb->stop;
done_testing();
