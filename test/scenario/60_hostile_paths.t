# 60_hostile_paths.t: what partner_svc sends, and what it accepts back,
# against the hostile service of test/hostile/hostile.pl (loopback only).
#
#  1. Paths: every path value is encoded so that no value changes the
#     route (dot segments, "/", "?", "#", "%", controls); each request line
#     the service received is compared exactly.  Invalid values are 22023
#     and nothing is sent, even for one bad value among many of an
#     = ANY(...).  EXPLAIN shows the encoded path.
#  2. Encoding, in a UTF-8 and in a LATIN1 database: responses are checked
#     as UTF-8 and converted (the five functions that returned invalid
#     UTF-8 as jsonb now raise 22021); path values, query values and
#     request bodies are sent as UTF-8.
#  3. Bounds: partner_svc.max_response_size and the server option, a
#     1 GB Content-Length claim, an endless chunked body, a 9 MB cursor, a
#     cursor of 4,097 characters, a repeated cursor, a cycle of cursors,
#     empty pages forever; = ANY(...) of 150,000 values; rescans do not
#     grow the scan's memory.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/../hostile";

use Hostile;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $h = Hostile->start;
my $url = $h->url;

my $node = PostgreSQL::Test::Cluster->new('hostile');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'partner_svc'
partner_svc.max_retries = 0
statement_timeout = '120s'
});
$node->start;

my $setup = qq{
CREATE EXTENSION partner_svc;
CREATE FUNCTION sqlstate_of(q text) RETURNS text LANGUAGE plpgsql AS \$\$
BEGIN
  EXECUTE q;
  RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE;
END \$\$;
CREATE FUNCTION error_of(q text) RETURNS text LANGUAGE plpgsql AS \$\$
BEGIN
  EXECUTE q;
  RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE || ': ' || SQLERRM;
END \$\$;
};
for my $svc (qw(orders movies files scheduler catalog todos))
{
	$setup .= qq{
CREATE SERVER $svc FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service '$svc', base_url '$url');
CREATE USER MAPPING FOR PUBLIC SERVER $svc OPTIONS (api_key 'hostile-key');
};
}
$setup .= qq{
CREATE SCHEMA m;
IMPORT FOREIGN SCHEMA movies FROM SERVER movies INTO m;
CREATE SCHEMA o;
IMPORT FOREIGN SCHEMA orders FROM SERVER orders INTO o;
IMPORT FOREIGN SCHEMA todos FROM SERVER todos INTO o;
};
$node->safe_psql('postgres', $setup);

# Runs sql in db; returns the request lines the service received meanwhile.
sub sent
{
	my ($db, $sql) = @_;
	$h->clear;
	my ($rc, $out, $err) = $node->psql($db, $sql);
	my $r = $h->requests;
	diag("nothing reached the service; psql said: $err") if !@$r;
	return $r;
}

sub q1
{
	my ($db, $sql) = @_;
	return scalar $node->safe_psql($db, $sql);
}

# ---------------------------------------------------------------------
# 1. Paths
# ---------------------------------------------------------------------

is_deeply(sent('postgres', "SELECT partner_svc.order_status('..')"),
	['GET /public/orders/%2E%2E/status'], "order_status('..') stays on its route");
is_deeply(sent('postgres', "SELECT partner_svc.order_status('.')"),
	['GET /public/orders/%2E/status'], "order_status('.') stays on its route");
is_deeply(sent('postgres', "SELECT partner_svc.cancel_pending('..')"),
	['POST /public/orders/%2E%2E/cancel-pending'], "cancel_pending('..') stays on its route");
is_deeply(sent('postgres', "SELECT * FROM o.orders WHERE id = '..'"),
	['GET /public/orders/%2E%2E'], "orders WHERE id = '..' reads the detail of '..'");
is_deeply(sent('postgres', "SELECT partner_svc.file_info('..')"),
	['GET /files/%2E%2E'], "file_info('..') stays on its route");

my %movie_paths = (
	'..' => '%2E%2E',
	'.' => '%2E',
	'...' => '%2E%2E%2E',
	'a/b' => 'a%2Fb',
	'../../public/orders' => '..%2F..%2Fpublic%2Forders',
	'a?b=c' => 'a%3Fb%3Dc',
	'a#b' => 'a%23b',
	'50%' => '50%25',
	'%2E%2E' => '%252E%252E',
	'a b' => 'a%20b',
);
for my $v (sort keys %movie_paths)
{
	(my $lit = $v) =~ s/'/''/g;
	is_deeply(sent('postgres', "SELECT title FROM m.movie_themes WHERE movie = '$lit'"),
		["GET /v1/movies/$movie_paths{$v}/content/themes?limit=100"],
		"WHERE movie = '$v' is sent encoded");
}
is_deeply(sent('postgres', "SELECT title FROM m.movie_themes WHERE movie = E'a\\nb\\x01'"),
	['GET /v1/movies/a%0Ab%01/content/themes?limit=100'], 'control characters are encoded');
is(q1('postgres', "SELECT title FROM m.movie_themes WHERE movie = 'a/b?c#d%'"),
	'a/b?c#d%', 'the service decodes the value the query gave');

# invalid values: 22023 naming the parameter, nothing sent
for my $case (
	[ "SELECT * FROM m.movie_themes WHERE movie = ''", 'empty movie' ],
	[ "SELECT * FROM m.movie_faqs WHERE movie = repeat('m', 256)", '256-character movie' ],
	[ "SELECT * FROM m.movie_themes WHERE movie = ANY(ARRAY['ok', 'ok2', ''])", 'one empty movie of three' ],
	[ "SELECT * FROM o.orders WHERE id = ''", 'empty order id' ],
	[ "SELECT partner_svc.order_status('')", 'order_status of an empty id' ],
	[ "SELECT partner_svc.cancel_pending('')", 'cancel_pending of an empty id' ],
	[ "SELECT partner_svc.file_info('')", 'file_info of an empty id' ],
	[ "SELECT partner_svc.movie_summary('')", 'movie_summary of an empty movie' ],
	[ "SELECT partner_svc.business_question('BQ-GF-../x')", 'a question id with a slash' ])
{
	my ($sql, $what) = @$case;
	$h->clear;
	(my $q = $sql) =~ s/'/''/g;
	is(q1('postgres', "SELECT sqlstate_of('$q')"), '22023', "$what: 22023");
	is_deeply($h->requests, [], "$what: nothing sent");
}
like(q1('postgres', "SELECT error_of(\$\$SELECT * FROM m.movie_themes WHERE movie = ''\$\$)"),
	qr/^22023: invalid value for path parameter "movie"$/, 'the error names the parameter');

# a URL libcurl would refuse (a 9 MB filter value): 54000, nothing sent
$h->clear;
like(q1('postgres', "SELECT error_of(\$\$SELECT * FROM m.movies WHERE genre = repeat('x', 9000000)\$\$)"),
	qr{^54000: request URL of GET /movies is too long$}, 'a 9 MB query value is 54000, not XX000');
is_deeply($h->requests, [], 'and nothing is sent');

# EXPLAIN shows the encoded path
like(q1('postgres', "EXPLAIN (COSTS OFF) SELECT * FROM m.movie_themes WHERE movie = '..'"),
	qr{Partner Request: GET /v1/movies/%2E%2E/content/themes\?limit=100}, 'EXPLAIN: a dot segment encoded');
like(q1('postgres', "EXPLAIN (COSTS OFF) SELECT * FROM m.movie_themes WHERE movie = 'a/b'"),
	qr{Partner Request: GET /v1/movies/a%2Fb/content/themes\?limit=100}, 'EXPLAIN: a slash encoded');

# the rate limiter and the stats count the route template
like(q1('postgres', "SELECT string_agg(method || ' ' || route, ',') FROM partner_svc.stats WHERE route LIKE '%cancel-pending%'"),
	qr{^POST /public/orders/\{id\}/cancel-pending$}, 'stats count the route, not the encoded path');

# = ANY(...): de-duplicated, in the order of first occurrence
is(q1('postgres', "SELECT string_agg(title, ',') FROM m.movie_themes WHERE movie = ANY(ARRAY['b', 'a', 'b', NULL, 'a', 'c'])"),
	'b,a,c', '= ANY(...) keeps the first occurrence of each value, in order');

# ---------------------------------------------------------------------
# 2. Encoding
# ---------------------------------------------------------------------

$node->safe_psql('postgres',
	"CREATE DATABASE latin1 ENCODING 'LATIN1' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0");
$node->safe_psql('latin1', $setup);

for my $db (qw(postgres latin1))
{
	is(q1($db, "SELECT string_agg(encode(convert_to(title, 'UTF8'), 'hex'), ',' ORDER BY position) FROM m.movie_themes WHERE movie = 'utf8'"),
		'636166c3a9,c3bc626572', "$db: UTF-8 text arrives as the same characters");
	is(q1($db, "SELECT sqlstate_of(\$\$SELECT * FROM m.movie_themes WHERE movie = 'badutf8'\$\$)"),
		'22021', "$db: a list with invalid UTF-8 is 22021");
	like(q1($db, "SELECT error_of(\$\$SELECT * FROM m.movie_themes WHERE movie = 'badutf8'\$\$)"),
		qr/^22021: invalid byte sequence for encoding "UTF8": 0xff/, "$db: PostgreSQL's own message");

	# the five functions that returned invalid UTF-8 as jsonb
	for my $call (
		"partner_svc.file_info('bad')",
		"partner_svc.create_upload('bad')",
		"partner_svc.run_job(1)",
		"partner_svc.save_job('{\"name\": \"bad\"}')",
		"partner_svc.job_execution_summary(1)")
	{
		is(q1($db, "SELECT sqlstate_of(\$\$SELECT $call\$\$)"), '22021',
			"$db: $call with invalid UTF-8 is 22021");
	}
	for my $call (
		[ "partner_svc.file_info('good')->>'filename'", '66c3a9' ],
		[ "partner_svc.create_upload('good')->>'filename'", '66c3a9' ],
		[ "partner_svc.run_job(2)->>'status'", '52554e4e494e47c3a9' ],
		[ "partner_svc.save_job('{\"name\": \"good\"}')->>'name'", '6a6f62c3a9' ],
		[ "partner_svc.job_execution_summary(2)->'executions'->0->>'status'", '4f4bc3a9' ])
	{
		is(q1($db, "SELECT encode(convert_to($call->[0], 'UTF8'), 'hex')"), $call->[1],
			"$db: $call->[0] converts valid UTF-8");
	}

	# values and bodies go out as UTF-8 whatever the database encoding
	my $e = "chr(233)";		# é in LATIN1 and in UTF-8 databases
	is_deeply(sent($db, "SELECT title FROM m.movie_themes WHERE movie = 'caf' || $e"),
		['GET /v1/movies/caf%C3%A9/content/themes?limit=100'], "$db: a path value is sent as UTF-8");
	is_deeply(sent($db, "SELECT title FROM m.movies WHERE genre = 'caf' || $e"),
		['GET /movies?genre=caf%C3%A9&limit=100'], "$db: a query value is sent as UTF-8");
	$h->clear;
	$node->psql($db, "SELECT partner_svc.save_job(jsonb_build_object('name', 'caf' || $e))");
	like($h->log, qr/^  body: \{"name": "caf\\xc3\\xa9"\}$/m, "$db: a jsonb body is sent as UTF-8");
	$h->clear;
	$node->psql($db, "SELECT partner_svc.create_upload('caf' || $e)");
	like($h->log, qr/^  body: .*"caf\\xc3\\xa9"/m, "$db: an escape_json body is sent as UTF-8");
	$h->clear;
	is(q1($db, "INSERT INTO o.todos (title, user_id) VALUES ('caf' || $e, 1) RETURNING title = 'caf' || $e"),
		't', "$db: INSERT reads back the title it sent");
	like($h->log, qr/^  body: .*"caf\\xc3\\xa9"/m, "$db: an INSERT's body is sent as UTF-8");
	is(q1($db, "SELECT title FROM m.movie_themes WHERE movie = 'caf' || $e"), q1($db, "SELECT 'caf' || $e"),
		"$db: the value comes back as it was sent");
}
is(q1('latin1', "SELECT sqlstate_of(\$\$SELECT * FROM m.movie_themes WHERE movie = 'euro'\$\$)"),
	'22P05', 'latin1: a character LATIN1 lacks is 22P05');
is(q1('postgres', "SELECT encode(convert_to(title, 'UTF8'), 'hex') FROM m.movie_themes WHERE movie = 'euro'"),
	'e282ac', 'utf8: the same character is read');

# ---------------------------------------------------------------------
# 3. Bounds
# ---------------------------------------------------------------------

is(q1('postgres', "SHOW partner_svc.max_response_size"), '64MB', 'the default cap is 64MB');
is(q1('postgres', "SELECT length(title) FROM m.movie_themes WHERE movie = 'size-500000'"),
	'500000', 'a response under the cap is read');
like(q1('postgres', "SET partner_svc.max_response_size = '256kB'; SELECT error_of(\$\$SELECT * FROM m.movie_themes WHERE movie = 'size-500000'\$\$)"),
	qr{^54000: response to GET /v1/movies/\{movie\}/content/themes is larger than partner_svc.max_response_size \(262144 bytes\)$},
	'over the GUC: 54000 naming the route and the setting');
$node->safe_psql('postgres', qq{
CREATE SERVER movies_small FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'movies', base_url '$url', max_response_size '100kB');
CREATE USER MAPPING FOR PUBLIC SERVER movies_small OPTIONS (api_key 'hostile-key');
CREATE FOREIGN TABLE small_themes (movie text, title text)
  SERVER movies_small OPTIONS (resource 'movie_themes');
});
like(q1('postgres', "SELECT error_of(\$\$SELECT * FROM small_themes WHERE movie = 'size-200000'\$\$)"),
	qr{^54000: response to GET /v1/movies/\{movie\}/content/themes is larger than max_response_size of server "movies_small" \(102400 bytes\)$},
	'over the server option: 54000 naming the option');
is(q1('postgres', "SELECT sqlstate_of(\$\$CREATE SERVER bad_size FOREIGN DATA WRAPPER partner_svc OPTIONS (service 'movies', base_url 'http://127.0.0.1:1', max_response_size 'lots')\$\$)"),
	'HV024', 'an invalid max_response_size is refused with HV024, as every option');

# a claim under the bound reserves nothing: the backend's address space
# does not grow by the 60 MB claimed (VmPeak counts even untouched memory)
my $peak = q1('postgres', q{
CREATE FUNCTION vm_peak_kb() RETURNS bigint LANGUAGE sql AS $$
  SELECT substring(pg_read_file('/proc/self/status') FROM 'VmPeak:\s+(\d+) kB')::bigint $$;
SELECT vm_peak_kb() AS before \gset
SELECT sqlstate_of($$SELECT * FROM m.movie_themes WHERE movie = 'claim60m'$$);
SELECT vm_peak_kb() - :before});
my ($claim_state, $grew) = split /\n/, $peak;
is($claim_state, '08006', 'a body shorter than its claim is a lost connection');
cmp_ok($grew, '<', 30 * 1024, "a 60 MB claim reserved nothing (VmPeak grew by $grew kB)");

like(q1('postgres', "SELECT error_of(\$\$SELECT * FROM m.movie_themes WHERE movie = 'claim1g'\$\$)"),
	qr{^54000: response to GET /v1/movies/\{movie\}/content/themes is larger than partner_svc.max_response_size},
	'a 1 GB Content-Length claim is refused');
like(q1('postgres', "SET partner_svc.max_response_size = '4MB'; SELECT error_of(\$\$SELECT * FROM m.movie_themes WHERE movie = 'endless'\$\$)"),
	qr{^54000: response to GET /v1/movies/\{movie\}/content/themes is larger than partner_svc.max_response_size \(4194304 bytes\)$},
	'an endless chunked body ends at the cap');

like(q1('postgres', "SELECT error_of(\$\$SELECT * FROM m.movie_themes WHERE movie = 'bigcursor'\$\$)"),
	qr{^HV090: GET /v1/movies/\{movie\}/content/themes answered a next_cursor of 9437184 characters$},
	'a 9 MB cursor ends the scan clearly');
is(q1('postgres', "SELECT count(*) FROM m.movie_themes WHERE movie = 'cursor-4096'"), '2',
	'a cursor of 4096 characters is followed');
is(q1('postgres', "SELECT sqlstate_of(\$\$SELECT * FROM m.movie_themes WHERE movie = 'cursor-4097'\$\$)"),
	'HV090', 'a cursor of 4097 characters is refused');

$h->clear;
like(q1('postgres', "SELECT error_of(\$\$SELECT * FROM m.movie_themes WHERE movie = 'repeat'\$\$)"),
	qr{^HV000: GET /v1/movies/\{movie\}/content/themes answered a next_cursor it had given before$},
	'a repeated cursor ends the scan');
cmp_ok(scalar @{ $h->requests }, '<=', 3, 'after at most three requests');
like(q1('postgres', "SELECT error_of(\$\$SELECT * FROM m.movie_themes WHERE movie = 'cycle'\$\$)"),
	qr{^HV000: .* answered a next_cursor it had given before$}, 'a cycle of cursors ends the scan');
$h->clear;
like(q1('postgres', "SELECT error_of(\$\$SELECT * FROM m.movie_themes WHERE movie = 'emptyforever'\$\$)"),
	qr{^HV000: GET /v1/movies/\{movie\}/content/themes answered 101 pages in a row without items$},
	'empty pages forever end the scan');
cmp_ok(scalar @{ $h->requests }, '<=', 103, 'after about 101 requests');
is(q1('postgres', "SELECT count(*) FROM m.movie_themes WHERE movie = 'empty-5'"), '1',
	'a few empty pages are followed');

# = ANY(...) of 150,000 distinct values: de-duplicated in O(n log n); the
# quadratic way took minutes, far beyond this statement_timeout
$h->clear;
is(q1('postgres', "SET statement_timeout = '60s'; SELECT title FROM m.movie_themes WHERE movie = ANY(ARRAY(SELECT 'v' || g FROM generate_series(1, 150000) g) || ARRAY(SELECT 'v' || g FROM generate_series(1, 150000) g)) LIMIT 1"),
	'v1', '= ANY(...) of 300,000 values, half of them repeated');

# rescans do not grow the scan's memory: its contexts hold as much after
# 400 rescans as after 50 (a PL/pgSQL function, so that the view is read
# again at each row instead of once per query)
$node->safe_psql('postgres', q{
CREATE FUNCTION scan_memory(g int) RETURNS bigint LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  RETURN (SELECT sum(total_bytes) FROM pg_backend_memory_contexts
          WHERE name IN ('partner_svc scan', 'partner_svc run'));
END $$;
});
my $mem = q1('postgres', q{
SELECT string_agg(bytes::text, ',' ORDER BY g) FROM (
  SELECT g, scan_memory(g) AS bytes
  FROM generate_series(1, 400) g,
       LATERAL (SELECT movie, title FROM m.movie_themes
                WHERE movie = CASE WHEN g > 0 THEN 'ok' END LIMIT 1) t
  OFFSET 0
) x WHERE g IN (50, 400)});
my ($m50, $m400) = split /,/, $mem;
ok(defined $m400 && $m50 > 0 && $m400 == $m50, "rescans keep the scan's memory ($mem)");

$node->stop;
$h->stop;
done_testing();
