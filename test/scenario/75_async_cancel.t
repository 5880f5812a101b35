# 75_async_cancel.t: Ctrl-C of a statement whose foreign scans an Append
# runs asynchronously (option async_capable, src/fdw/fdw_scan.c).
#
# A UNION ALL of the four content lists of one movie, on a server with
# async_capable 'true', while the sandbox holds every request of those
# routes 30 s (a latency fault, once per route):
#   1. the backend has the four requests in flight at once
#      (partner_svc.requests), and it waits where an Append waits for its
#      asynchronous subplans (wait event AppendReady), not in a scan;
#   2. pg_cancel_backend ends the statement with PostgreSQL's own 57014
#      long before the sandbox would answer, and the session goes on: the
#      next statement of the same session runs, with no request of the
#      cancelled one left in flight.
# The same with a statement_timeout is in test/sql/fdw_async.sql.
#
# Runs as the postgres user, with the installed extension and sandbox, the
# way test/scenario.sh runs every scenario test.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/../sandbox/lib";

use IPC::Run;
use JSON::PP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Sandbox;
use Test::More;

$ENV{SANDBOX_BIN} ||= (grep { -x } map { "$_/partner_svc_sandbox" } split /:/, $ENV{PATH})[0];

my $sb = Sandbox->start(keys => ['sandbox-key=standard'], args => ['--seed', '3']);
$sb->config({ rate_limits => JSON::PP::false });

my $node = PostgreSQL::Test::Cluster->new('async_cancel');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'partner_svc'
partner_svc.rate_limit = off
partner_svc.cache = off
partner_svc.max_retries = 0
statement_timeout = '120s'
});
$node->start;

my $url = $sb->url;
$node->safe_psql('postgres', qq{
CREATE EXTENSION partner_svc;
CREATE SERVER m FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'movies', base_url '$url', async_capable 'true');
CREATE USER MAPPING FOR PUBLIC SERVER m OPTIONS (api_key 'sandbox-key');
IMPORT FOREIGN SCHEMA movies
  LIMIT TO (movie_themes, movie_characters, movie_faqs, movie_timeline)
  FROM SERVER m INTO public;
CREATE VIEW content AS
  SELECT 'theme' AS kind, "position", title FROM movie_themes WHERE movie = 'inception'
  UNION ALL SELECT 'character', "position", name FROM movie_characters WHERE movie = 'inception'
  UNION ALL SELECT 'faq', "position", question FROM movie_faqs WHERE movie = 'inception'
  UNION ALL SELECT 'event', "position", title FROM movie_timeline WHERE movie = 'inception';
});

like($node->safe_psql('postgres', 'EXPLAIN (COSTS OFF) SELECT * FROM content'),
	qr/(Async Foreign Scan.*){4}/s, 'the four scans are asynchronous');
my $rows = $node->safe_psql('postgres',
	'WITH c AS MATERIALIZED (SELECT * FROM content) SELECT count(*) FROM c');
cmp_ok($rows, '>', 0, "without a fault: $rows rows");

for my $kind (qw(themes characters faqs timeline))
{
	$sb->fault({ route => "GET /v1/movies/{movie}/content/$kind", kind => 'latency',
		value => 30000, count => 1 });
}

# one session: the statement that is cancelled, then one more
my ($in, $out, $err) = ('', '', '');
my $h = IPC::Run::start(
	[ $node->installed_command('psql'), '-X', '-A', '-t', '-d', $node->connstr('postgres') ],
	'<', \$in, '>', \$out, '2>', \$err);
$in .= "SET application_name = 'async_cancel';\nSELECT pg_backend_pid();\n"
  . "WITH c AS MATERIALIZED (SELECT * FROM content) SELECT count(*) FROM c;\n";
my $started = time;

# the four requests in flight, the backend in the Append's wait
my $seen = '';
for (1 .. 200)
{
	$h->pump_nb;
	$seen = $node->safe_psql('postgres', q{
SELECT (SELECT count(*) FROM partner_svc.requests r WHERE r.pid = a.pid AND r.state = 'receiving')
       || ' ' || coalesce(a.wait_event, '')
FROM pg_stat_activity a WHERE a.application_name = 'async_cancel'});
	last if $seen eq '4 AppendReady';
	select(undef, undef, undef, 0.05);
}
is($seen, '4 AppendReady',
	'four requests in flight at once, the backend waits in the Append (wait event AppendReady)');

my $cancelled = $node->safe_psql('postgres',
	q{SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name = 'async_cancel'});
is($cancelled, 't', 'pg_cancel_backend');

# the same session goes on: the faults were once per route
$in .= "SELECT 'after ' || count(*) FROM (SELECT 1 FROM partner_svc.requests WHERE pid = pg_backend_pid()) r;\n"
  . "WITH c AS MATERIALIZED (SELECT * FROM content) SELECT 'again ' || count(*) FROM c;\n";
$in .= "\\q\n";
$h->finish;
my $elapsed = time - $started;

like($err, qr/canceling statement due to user request/, 'the statement ends with 57014');
cmp_ok($elapsed, '<', 30, "and does not wait for the sandbox's answers (${elapsed}s)");
like($out, qr/^after 0$/m, 'no request of the cancelled statement is left in flight');
like($out, qr/^again $rows$/m, 'the next statement of the session runs');

$node->stop;
$sb->stop;
done_testing();
