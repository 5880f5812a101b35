# 65_cache.t: the shared response cache under an eviction workload, with
# several sessions at once (src/shmem/cache.c, docs/cache.md).
#
#  1. A small cache (partner_svc.cache_size = 256kB): 100 scans of movies
#     with LIMIT 1..100 make 100 different pages of 0.3 to 33 kB, together
#     about 1.7 MB, far more than the cache holds.  Their digests, read
#     with the cache off, are the reference.
#  2. Four sessions at once run the same 100 scans three times each, in
#     different orders, and a fifth reads the smallest page 300 times,
#     with the cache on: every scan returns the
#     reference rows (entries evicted, refilled and filled by two
#     sessions at once never mix), the sandbox receives fewer requests
#     than the scans (hits), and the cache evicted entries and refused the
#     pages larger than an eighth of it.
#  3. The cache's memory stays within partner_svc.cache_size: the segment
#     (tables included), the blocks its entries hold, the entry count.
#  4. A second scan of a page makes no request; a write (a DELETE on
#     todos) makes its own server's entries miss and leaves another
#     server's alone.
#  5. Without shared_preload_libraries there is no cache: scans work and
#     send every request, cache_reset() and cache_usage say why they fail.
#  6. TTLs follow the sandbox's clock: with partner_svc.time_scale set
#     to the sandbox's --time-scale, products' hour lasts 3.6 s.
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

my $node = PostgreSQL::Test::Cluster->new('cache');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'partner_svc'
partner_svc.cache_size = '256kB'
partner_svc.rate_limit = off
max_connections = 20
});
$node->start;

my $url = $sb->url;
$node->safe_psql('postgres', qq{
CREATE EXTENSION partner_svc;
CREATE SERVER movies FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'movies', base_url '$url');
CREATE USER MAPPING FOR PUBLIC SERVER movies OPTIONS (api_key 'sandbox-key');
CREATE SERVER todos FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'todos', base_url '$url');
CREATE USER MAPPING FOR PUBLIC SERVER todos;
IMPORT FOREIGN SCHEMA movies LIMIT TO (movies) FROM SERVER movies INTO public;
IMPORT FOREIGN SCHEMA todos FROM SERVER todos INTO public;
ALTER FOREIGN TABLE todos OPTIONS (ADD cache_ttl '1h');
-- the digest of the first n movies as a scan returns them; the LIMIT is
-- a constant, so the scan asks for one page of n movies (limit=n)
CREATE FUNCTION page_digest(n int) RETURNS text LANGUAGE plpgsql AS \$\$
DECLARE d text;
BEGIN
  EXECUTE format('SELECT md5(string_agg(m.raw::text, %L ORDER BY m.id))
                  FROM (SELECT * FROM movies LIMIT %s) m', '|', n) INTO d;
  RETURN d;
END \$\$;
CREATE TABLE ref (n int PRIMARY KEY, digest text NOT NULL);
CREATE TABLE seen (session int, n int, ok bool);
});

# --- 1. the reference, uncached ---
$sb->reset_stats;
$node->safe_psql('postgres', q{
SET partner_svc.cache = off;
INSERT INTO ref SELECT n, page_digest(n) FROM generate_series(1, 100) n;
});
is($sb->count('GET /movies'), 100, 'reference: 100 scans with the cache off send 100 requests');
is($node->safe_psql('postgres', 'SELECT count(DISTINCT digest) FROM ref'), '100',
	'the 100 pages are all different');
is($node->safe_psql('postgres', 'SELECT entries FROM partner_svc.cache_usage'), '0',
	'nothing was cached with the cache off');

# --- 2. four sessions at once, cache on ---
$sb->reset_stats;
my @procs;
for my $s (1 .. 5)
{
	# sessions 1 to 4 walk the pages in orders of their own; session 5
	# reads the smallest page over and over, so hits are certain however
	# the walks interleave
	my $sql = $s == 5 ? q{
DO $$
BEGIN
  FOR i IN 1..300 LOOP
    INSERT INTO seen VALUES (5, 1, page_digest(1) = (SELECT r.digest FROM ref r WHERE r.n = 1));
  END LOOP;
END $$;} : qq{
DO \$\$
DECLARE k int; pn int; d text;
BEGIN
  FOR round IN 1..3 LOOP
    FOR k IN 0..99 LOOP
      pn := ((k * (2 * $s + 1) + round * 7) % 100) + 1;
      d := page_digest(pn);
      INSERT INTO seen VALUES ($s, pn, d = (SELECT r.digest FROM ref r WHERE r.n = pn));
    END LOOP;
  END LOOP;
END \$\$;};
	my ($out, $err) = ('', '');
	my $h = IPC::Run::start(
		[ $node->installed_command('psql'), '-X', '-q', '-A', '-t',
		  '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('postgres'), '-c', $sql ],
		'>', \$out, '2>', \$err, IPC::Run::timeout(300));
	push @procs, { h => $h, err => \$err, s => $s };
}
for my $p (@procs)
{
	$p->{h}->finish;
	is($p->{h}->result(0), 0, "session $p->{s} finished") or diag ${ $p->{err} };
}
is($node->safe_psql('postgres', 'SELECT count(*) FROM seen'), '1500', '1500 scans were made');
is($node->safe_psql('postgres', 'SELECT count(*) FROM seen WHERE NOT ok'), '0',
	'every scan returned the rows of the service');
my $sent = $sb->count('GET /movies');
cmp_ok($sent, '<', 1500, "the sandbox received $sent requests for 1500 scans");
my ($hits, $misses, $evictions, $not_stored) = split /\|/, $node->safe_psql('postgres', q{
SELECT hits, misses, evictions, not_stored FROM partner_svc.cache_usage});
cmp_ok($hits, '>', 0, "the cache answered $hits scans");
is($hits + $misses, 1500, 'every scan was a hit or a miss');
is($misses, $sent, 'every miss, and only a miss, sent a request');
cmp_ok($evictions, '>', 0, "entries were evicted ($evictions)");
cmp_ok($not_stored, '>', 0, "pages over an eighth of the cache were not kept ($not_stored)");
is($node->safe_psql('postgres', q{
SELECT sum(cache_hits) = (SELECT hits FROM partner_svc.cache_usage)
   AND sum(cache_misses) = (SELECT misses FROM partner_svc.cache_usage)
FROM partner_svc.stats WHERE server = 'movies'}), 't',
	'partner_svc.stats counts the same hits and misses');

# --- 3. memory within the GUC ---
is($node->safe_psql('postgres', q{
SELECT size_limit = 256 * 1024 AND shared_bytes <= size_limit
   AND bytes_used <= shared_bytes AND bytes_cached <= bytes_used
   AND entries <= max_entries AND max_entry_bytes <= size_limit / 8
FROM partner_svc.cache_usage}), 't',
	'segment, held blocks and entries stay within partner_svc.cache_size')
	or diag $node->safe_psql('postgres', 'SELECT * FROM partner_svc.cache_usage');

# --- 4. a hit sends nothing; a write invalidates its own server only ---
# (emptied first: whether page 3 survived the workload above is chance)
$node->safe_psql('postgres', 'SELECT partner_svc.cache_reset()');
$sb->reset_stats;
$node->safe_psql('postgres', q{
SELECT page_digest(3); SELECT page_digest(3);
SELECT count(*) FROM todos; SELECT count(*) FROM todos;});
is($sb->count('GET /movies'), 1, 'a second scan of a page sends nothing');
is($sb->count('GET /todos'), 1, 'a second scan of todos sends nothing');
$node->safe_psql('postgres', q{DELETE FROM todos WHERE id = (SELECT min(id) FROM todos)});
$sb->reset_stats;
$node->safe_psql('postgres', q{
SELECT page_digest(3); SELECT count(*) FROM todos;});
is($sb->count('GET /movies'), 0, 'a write to todos leaves the movies entries alone');
is($sb->count('GET /todos'), 1, 'a write to todos makes its list miss');

# --- 6. TTLs on the sandbox's clock ---
# A sandbox whose clock runs 1000 times faster: an hour of its time, the
# products' default TTL, lasts 3.6 real seconds.  With
# partner_svc.time_scale set to its --time-scale, the entry expires
# when the sandbox's hour is over and is revalidated (If-None-Match, 304);
# at scale 1 the same entry, seconds old, is still fresh.
my $fast = Sandbox->start(keys => ['sandbox-key=standard'],
	args => ['--seed', '3', '--time-scale', '0.001']);
$fast->config({ rate_limits => JSON::PP::false });
my $fast_url = $fast->url;
$node->safe_psql('postgres', qq{
CREATE SERVER fast_orders FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'orders', base_url '$fast_url');
CREATE USER MAPPING FOR PUBLIC SERVER fast_orders OPTIONS (api_key 'sandbox-key');
CREATE SCHEMA fast;
IMPORT FOREIGN SCHEMA orders LIMIT TO (products) FROM SERVER fast_orders INTO fast;});
# partner_svc.time_scale is read from the configuration (a reload)
sub time_scale
{
	my ($scale) = @_;
	$node->safe_psql('postgres',
		"ALTER SYSTEM SET partner_svc.time_scale = $scale; SELECT pg_reload_conf()");
	$node->poll_query_until('postgres',
		"SELECT current_setting('partner_svc.time_scale')::float8 = $scale")
	  or die "partner_svc.time_scale is not $scale after a reload";
}
time_scale(0.001);
$node->safe_psql('postgres', q{
SELECT count(*) FROM fast.products; SELECT count(*) FROM fast.products;});
is($fast->count('GET /public/products'), 1,
	'within the sandbox hour a second scan of products sends nothing');
time_scale(1);
sleep(4);
$node->safe_psql('postgres', 'SELECT count(*) FROM fast.products');
is($fast->count('GET /public/products'), 1,
	'at time_scale 1 the entry is still fresh after 4 real seconds');
time_scale(0.001);
$node->safe_psql('postgres', q{
SELECT count(*) FROM fast.products;});
my @asked = @{ $fast->requests('GET /public/products') };
is(scalar @asked, 2, 'past the sandbox hour the entry is asked for again');
is($asked[-1]{status}, 304, 'and revalidated: the sandbox answers 304 Not Modified');
time_scale(1);
my ($rc6, $out6, $err6) = $node->psql('postgres', q{
CREATE ROLE psvc_scale_user; SET ROLE psvc_scale_user;
SET partner_svc.time_scale = 0.5;});
like($err6, qr/parameter "partner_svc.time_scale" cannot be changed now/,
	'partner_svc.time_scale is set in the configuration only, not by a session');
$fast->stop;

# --- 5. without preloading ---
$node->append_conf('postgresql.conf', "shared_preload_libraries = ''\n");
$node->restart;
$sb->reset_stats;
$node->safe_psql('postgres', q{SELECT page_digest(3); SELECT page_digest(3);});
is($sb->count('GET /movies'), 2, 'without preloading every scan is sent');
my ($rc, $out, $err) = $node->psql('postgres', 'SELECT partner_svc.cache_reset()');
like($err, qr/needs partner_svc in shared_preload_libraries/,
	'cache_reset() says it needs preloading');
($rc, $out, $err) = $node->psql('postgres', 'SELECT * FROM partner_svc.cache_usage');
like($err, qr/needs partner_svc in shared_preload_libraries/,
	'cache_usage says it needs preloading');

$node->stop;
$sb->stop;
done_testing();
