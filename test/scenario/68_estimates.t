# 68_estimates.t: the learned row estimates' shared table (src/shmem/estimates.c,
# docs/estimates.md) where pg_regress cannot reach:
#   1. Bounded: with partner_svc.max_keys = 16, 20 keys leave
#      16 entries, the 5 scanned least recently forgotten and the route's
#      average kept.
#   2. Under concurrency: 4 sessions scanning 30 movies at once (pgbench)
#      raise no error, the table stays within its bound, and every entry
#      holds exactly the count of its list (the sandbox's lists do not
#      change, so every complete scan saw the same number).
#   3. A movie without themes (404 content_not_available) is a complete,
#      empty list: learned as 0 rows.
#   4. A clean restart keeps the table (76_estimates_restart.t checks the
#      file); a crash (immediate stop) empties it.
#   5. Without shared_preload_libraries nothing is learned, plans use the
#      defaults, and the view says why it has nothing (55000).
# Runs as the postgres user with the installed extension and sandbox, the
# way test/scenario.sh runs every scenario test.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/../sandbox/lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Sandbox;
use Test::More;

$ENV{SANDBOX_BIN} ||= (grep { -x } map { "$_/partner_svc_sandbox" } split /:/, $ENV{PATH})[0];

my $sb = Sandbox->start(keys => ['sandbox-key=standard'], args => [ '--seed', '1' ]);
my $url = $sb->url;

my $setup = qq{
CREATE EXTENSION partner_svc;
CREATE SERVER movies FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'movies', base_url '$url');
CREATE USER MAPPING FOR PUBLIC SERVER movies OPTIONS (api_key 'sandbox-key');
IMPORT FOREIGN SCHEMA movies LIMIT TO (movie_themes) FROM SERVER movies INTO public;
};

my $node = PostgreSQL::Test::Cluster->new('estimates');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'partner_svc'
partner_svc.max_keys = 16
statement_timeout = '120s'
});
$node->start;
$node->safe_psql('postgres', $setup);

sub sql { return $node->safe_psql('postgres', $_[0]); }

# ---- 1. eviction ----

for my $m (1 .. 20)
{
	sql("SELECT count(*) FROM movie_themes WHERE movie = '$m'");
}
is(sql("SELECT count(*) FROM partner_svc.estimates"), '16', 'the table holds 16 entries after 21');
is(sql("SELECT string_agg(substring(key from 'movie=''(\\d+)''')::int::text, ',' ORDER BY substring(key from 'movie=''(\\d+)''')::int)
        FROM partner_svc.estimates WHERE kind = 'key'"),
	join(',', 6 .. 20), 'the 15 keys scanned last are kept, the 5 oldest forgotten');
is(sql("SELECT scans FROM partner_svc.estimates WHERE kind = 'average'"), '20',
	'the average, refreshed by every scan, is kept and counts all 20');
like(sql("EXPLAIN (VERBOSE, COSTS OFF) SELECT * FROM movie_themes WHERE movie = '1'"),
	qr/Partner Estimate: \d+ rows \(learned: average of 20 scans\)/,
	'a forgotten key is estimated by the average');

# ---- 3. an empty list (no themes) is learned as 0 rows ----

my $none = sql(q{
SELECT m FROM generate_series(1, 40) m
WHERE NOT EXISTS (SELECT 1 FROM movie_themes WHERE movie = m::text)
LIMIT 1});
ok($none ne '', "movie $none has no themes");
is(sql("SELECT rows || '/' || last_rows FROM partner_svc.estimates WHERE key = 'movie=''$none'''"), '0/0',
	'learned as 0 rows');
like(sql("EXPLAIN (VERBOSE) SELECT * FROM movie_themes WHERE movie = '$none'"),
	qr/rows=1 .*\n(.*\n)*.*Partner Estimate: 0 rows \(learned from 1 scan\)/,
	'the plan expects nothing (rows=1, the planner\'s least)');

# ---- 2. concurrency ----

sql("SELECT partner_svc.estimates_reset()");
my $script = PostgreSQL::Test::Utils::tempdir() . '/scan.sql';
open my $fh, '>', $script or die "$script: $!";
print $fh "\\set m random(1, 30)\nSELECT count(*) FROM movie_themes WHERE movie = (:m)::text;\n";
close $fh;
command_ok([ 'pgbench', '-n', '-c', '4', '-t', '40', '-f', $script, $node->connstr('postgres') ],
	'4 sessions scanning 30 movies at once: no error');
my $entries = sql("SELECT count(*) FROM partner_svc.estimates");
ok($entries > 1 && $entries <= 16, "the table stays within its bound ($entries entries)");
# every entry equals a fresh count of its list
my $wrong = sql(q{
SELECT count(*) FROM partner_svc.estimates e
WHERE e.kind = 'key'
  AND (e.rows <> e.last_rows OR e.last_rows <>
       (SELECT count(*) FROM movie_themes t
        WHERE t.movie = substring(e.key from 'movie=''(\d+)''')))});
is($wrong, '0', 'every key holds exactly the count of its list');

# ---- 4. a clean restart keeps the table, a crash empties it ----

my $before = sql("SELECT count(*) FROM partner_svc.estimates");
$node->restart;
is(sql("SELECT count(*) FROM partner_svc.estimates"), $before, 'a clean restart keeps what was learned');
$node->stop('immediate');
$node->start;
is(sql("SELECT count(*) FROM partner_svc.estimates"), '0', 'a crash (immediate stop) forgets what was learned');

# ---- 5. without preloading ----

my $plain = PostgreSQL::Test::Cluster->new('estimates_plain');
$plain->init;
$plain->start;
$plain->safe_psql('postgres', $setup);
$plain->safe_psql('postgres', "SELECT count(*) FROM movie_themes WHERE movie = '52'");
like($plain->safe_psql('postgres', "EXPLAIN (VERBOSE, COSTS OFF) SELECT * FROM movie_themes WHERE movie = '52'"),
	qr/Partner Estimate: 250 rows \(default\)/, 'not preloaded: the default after a complete scan');
my ($ret, $out, $err) = $plain->psql('postgres',
	"SELECT * FROM partner_svc.estimates", extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($err, qr/55000: partner_svc.estimates needs partner_svc in shared_preload_libraries/,
	'not preloaded: the view says why (55000)');
$plain->stop;

$node->stop;
$sb->stop;
done_testing();
