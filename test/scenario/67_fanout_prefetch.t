# 67_fanout_prefetch.t: the server options fanout and prefetch change what
# a scan has in flight at once (src/fdw/fdw_scan.c: start_streams, and the
# prefetch in advance), as the sandbox sees it: max_in_flight of
# /_sandbox/stats, the most requests of a route it was handling at once.
#
# Every request of the themes route is held 300 ms by a latency fault, so
# requests a scan has open together overlap at the sandbox; the counts are
# bounds and orderings, never times.  The GUCs are set to the opposite of
# each server's option, so the option is what takes effect.
#
#  1. fanout: a scan of WHERE movie = ANY(8 movies), one page each, on a
#     server with fanout '1' never has two requests in flight; with
#     fanout '4', at most 4 and more than 1.
#  2. prefetch: a scan of one movie's themes in three pages (page_size
#     '2') whose first row's projection runs a scalar subquery, itself a
#     scan of the same route (one request).  With prefetch 'on' the scan
#     asks for page 2 as soon as page 1 arrives, before returning page 1's
#     rows, so page 2's request is at the sandbox while the subquery's is:
#     max_in_flight 2.  With prefetch 'off' page 2 is asked for only once
#     page 1's rows are consumed: never more than 1.  The requests' order
#     in the sandbox's log shows the same: with prefetch, page 2 is asked
#     before the subquery's request; without, after.
#
# Runs as the postgres user, with the installed extension and sandbox, the
# way test/scenario.sh runs every scenario test.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/../sandbox/lib";

use JSON::PP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Sandbox;
use Test::More;

$ENV{SANDBOX_BIN} ||= (grep { -x } map { "$_/partner_svc_sandbox" } split /:/, $ENV{PATH})[0];

my $route = '/v1/movies/{movie}/content/themes';
my $sb = Sandbox->start(keys => ['sandbox-key=standard'], args => ['--seed', '3']);
$sb->config({ rate_limits => JSON::PP::false });

my $node = PostgreSQL::Test::Cluster->new('fanout_prefetch');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'partner_svc'
partner_svc.rate_limit = off
partner_svc.cache = off
partner_svc.max_retries = 0
statement_timeout = '120s'
});
# From 16 the planner may sort below an ordered aggregate
# (enable_presorted_aggregate), which reads the whole scan before the
# subquery of part 2 runs: the order of requests that part checks needs
# the aggregate to sort its own input, as 15 always does.
$node->append_conf('postgresql.conf', "enable_presorted_aggregate = off\n")
  if $node->pg_version >= 16;
$node->start;

my $url = $sb->url;
my $setup = "CREATE EXTENSION partner_svc;\n";
for my $s (
	[ 'fan1', "fanout '1', prefetch 'off', page_size '100'" ],
	[ 'fan4', "fanout '4', prefetch 'off', page_size '100'" ],
	[ 'pf_on', "fanout '1', prefetch 'on', page_size '2'" ],
	[ 'pf_off', "fanout '1', prefetch 'off', page_size '2'" ],
	[ 'one', "prefetch 'off', page_size '100'" ])
{
	my ($name, $opts) = @$s;
	$setup .= qq{
CREATE SERVER $name FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'movies', base_url '$url', $opts);
CREATE USER MAPPING FOR PUBLIC SERVER $name OPTIONS (api_key 'sandbox-key');
CREATE SCHEMA $name;
IMPORT FOREIGN SCHEMA movies LIMIT TO (movie_themes) FROM SERVER $name INTO $name;
};
}
$node->safe_psql('postgres', $setup);

# the sandbox's max_in_flight of the themes route since the last reset
sub max_in_flight
{
	for my $r (@{ $sb->stats->{routes} })
	{
		return $r->{max_in_flight} if $r->{method} eq 'GET' && $r->{route} eq $route;
	}
	return 0;
}

# runs sql (GUCs set first) after a reset of the sandbox's stats; returns
# its output and the route's max_in_flight
sub scan
{
	my ($gucs, $sql) = @_;
	$sb->reset_stats;
	my $out = $node->safe_psql('postgres', "$gucs\n$sql");
	return ($out, max_in_flight());
}

# ---------------------------------------------------------------------
# 1. fanout
# ---------------------------------------------------------------------
# eight movies of seed 3, each with themes on one page of 100
my $movies = "ARRAY['1', '2', '3', '4', '6', '7', '8', '9']";
my $count_sql = "SELECT count(*), count(DISTINCT movie) FROM %s.movie_themes "
  . "WHERE movie = ANY($movies)";

my ($ref) = scan('', sprintf($count_sql, 'fan4'));
like($ref, qr/^\d+\|8$/, 'without latency: rows of all eight movies');
my $n = $sb->count("GET $route");
is($n, 8, 'one request per movie');

$sb->fault({ route => "GET $route", kind => 'latency', value => 300 });

my ($out, $max) = scan('SET partner_svc.fanout = 8;', sprintf($count_sql, 'fan1'));
is($out, $ref, "fanout '1': the same rows");
is($max, 1, "fanout '1' (GUC 8): never more than one request in flight");

($out, $max) = scan('SET partner_svc.fanout = 1;', sprintf($count_sql, 'fan4'));
is($out, $ref, "fanout '4': the same rows");
cmp_ok($max, '<=', 4, "fanout '4' (GUC 1): at most four requests in flight");
cmp_ok($max, '>', 1, "fanout '4' (GUC 1): more than one request in flight");

# ---------------------------------------------------------------------
# 2. prefetch
# ---------------------------------------------------------------------
# inception has five themes: pages of 2, 2 and 1.  The subquery is an
# InitPlan, run once while the first row is projected.
my $pf_sql = q{
SELECT string_agg(position::text || ':' || inner_count, ',' ORDER BY position)
FROM (SELECT t.position,
             (SELECT count(*) FROM one.movie_themes WHERE movie = 'summary-only') AS inner_count
      FROM %s.movie_themes t WHERE t.movie = 'inception') s;
};

# the order in which the sandbox was asked: the scan's pages by cursor
# (p1 without one), the subquery's request as "sub"
sub order_of_requests
{
	my @seen;
	for my $r (@{ $sb->requests("GET $route") })
	{
		if ($r->{path} =~ m{/summary-only/}) { push @seen, 'sub'; next; }
		push @seen, $r->{query} =~ /cursor=/ ? 'next' : 'p1';
	}
	return join(' ', @seen);
}

($out, $max) = scan('SET partner_svc.prefetch = on;', sprintf($pf_sql, 'pf_off'));
is($out, '1:0,2:0,3:0,4:0,5:0', "prefetch 'off': the five themes");
is($max, 1, "prefetch 'off' (GUC on): never more than one request in flight");
is(order_of_requests(), 'p1 sub next next',
	"prefetch 'off': page 2 is asked for after page 1's first row is made");

($out, $max) = scan('SET partner_svc.prefetch = off;', sprintf($pf_sql, 'pf_on'));
is($out, '1:0,2:0,3:0,4:0,5:0', "prefetch 'on': the same five themes");
is($max, 2, "prefetch 'on' (GUC off): page 2 is in flight while page 1's first row is made");
like(order_of_requests(), qr/^p1 (next sub|sub next) next$/,
	"prefetch 'on': three pages and the subquery's request");

$sb->clear_faults;
$node->stop;
done_testing();
