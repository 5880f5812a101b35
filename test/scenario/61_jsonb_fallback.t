# 61_jsonb_fallback.t: the raw column of items that the decoder's jsonb
# builder leaves to jsonb_in (src/json/json_decode_jsonb.c: a number with an
# exponent or of more than 1,000 characters, a string or key whose escape
# does not de-escape (\u0000, a lone surrogate), any \u escape outside a
# UTF-8 database, an item of more than 16 MB of text), against the jsonb-*
# and size-N pages of the hostile service (test/hostile/hostile.pl,
# loopback only).
#
# The expectation is computed from the same text: each page's body is
# fetched from the service, and the items of what jsonb_in makes of it
# (the body cast to jsonb) are compared with the rows' raw, as values and
# as text; a few members are also compared with literal values.  Where
# jsonb_in raises for an item, the scan of raw raises exactly what the
# cast of the body raises (SQLSTATE and message), never XX000, and only
# when the row of that item is made; the other columns of the same rows
# still decode.  In a UTF-8 and in a LATIN1 database (where every \u
# escape is left to jsonb_in).
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

my $node = PostgreSQL::Test::Cluster->new('jsonb_fallback');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'partner_svc'
partner_svc.max_retries = 0
partner_svc.cache = off
statement_timeout = '120s'
});
$node->start;

my $setup = qq{
CREATE EXTENSION partner_svc;
CREATE FUNCTION error_of(q text) RETURNS text LANGUAGE plpgsql AS \$\$
BEGIN
  EXECUTE q;
  RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE || ': ' || SQLERRM;
END \$\$;
CREATE SERVER movies FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'movies', base_url '$url');
CREATE USER MAPPING FOR PUBLIC SERVER movies OPTIONS (api_key 'hostile-key');
CREATE SCHEMA m;
IMPORT FOREIGN SCHEMA movies LIMIT TO (movie_themes) FROM SERVER movies INTO m;
};
$node->safe_psql('postgres', $setup);
$node->safe_psql('postgres',
	"CREATE DATABASE latin1 ENCODING 'LATIN1' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0");
$node->safe_psql('latin1', $setup);

sub q1
{
	my ($db, $sql) = @_;
	return scalar $node->safe_psql($db, $sql);
}

# the page's body as the service sends it, as an SQL literal
sub body_literal
{
	my ($movie) = @_;
	my $body = $h->get("/v1/movies/$movie/content/themes?limit=100");
	die "no body for $movie" unless $body =~ /^\{"data":\[/;
	die "unexpected quote in $movie" if $body =~ /\$b\$/;
	return "\$b\$$body\$b\$";
}

# "n/m": of the m rows of the page, n whose raw is what jsonb_in makes of
# their item: the item of the same position among the items of the
# body's jsonb (the body cast to jsonb), compared with raw as a value and
# as text (numbers keep their scale there: 1.50 is not 1.5).  Sizes are
# not compared: pg_column_size depends on the datum's header (1 or 4
# bytes) and an element taken out of a larger jsonb keeps the padding it
# had there.  Rows that differ are listed after "differ:".
sub raw_matches
{
	my ($db, $movie) = @_;
	my $lit = body_literal($movie);
	return q1($db, qq{
WITH expected AS (
  SELECT (e->>'position')::int AS pos, e
  FROM jsonb_array_elements(($lit)::jsonb -> 'data') AS e),
got AS (
  SELECT position, raw FROM m.movie_themes WHERE movie = '$movie'),
cmp AS (
  SELECT g.position, g.raw, x.e,
         coalesce(g.raw = x.e AND g.raw::text = x.e::text, false) AS same
  FROM got g LEFT JOIN expected x ON x.pos = g.position)
SELECT count(*) FILTER (WHERE same) || '/' || count(*)
       || coalesce(' differ: ' || string_agg(position || ' ' || raw::text || ' vs '
                                             || coalesce(e::text, 'none'),
                                             '; ') FILTER (WHERE NOT same), '')
FROM cmp});
}

for my $db (qw(postgres latin1))
{
	# numbers: exponents, a number too long for the builder, and plain ones
	is(raw_matches($db, 'jsonb-numbers'), '4/4', "$db: jsonb-numbers: raw is jsonb_in's, item by item");
	is(q1($db, q{
SELECT string_agg(position || '=' || title, ',' ORDER BY position)
FROM m.movie_themes WHERE movie = 'jsonb-numbers'}),
		'1=exponents,2=long number,3=nested,4=plain', "$db: jsonb-numbers: titles");
	is(q1($db, q{
SELECT raw->'n' = '100000'::jsonb AND raw->>'k' = '0.0000001' AND raw->>'p' = '2500'
       AND raw->>'neg' = '-0.01' AND raw->>'z' = '0'
FROM m.movie_themes WHERE movie = 'jsonb-numbers' AND position = 1}),
		't', "$db: jsonb-numbers: exponents read as numeric_in reads them");
	is(q1($db, q{
SELECT raw->>'n' = repeat('9', 1001) AND jsonb_typeof(raw->'n') = 'number'
FROM m.movie_themes WHERE movie = 'jsonb-numbers' AND position = 2}),
		't', "$db: jsonb-numbers: the number of 1,001 digits");
	is(q1($db, q{
SELECT raw->'a' = '[100, {"b": 2, "c": [5.0]}]'::jsonb AND (raw->'a')::text = '[1e2, {"b": 2E0, "c": [0.5e1]}]'::jsonb::text
FROM m.movie_themes WHERE movie = 'jsonb-numbers' AND position = 3}),
		't', "$db: jsonb-numbers: exponents in nested values");
	is(q1($db, q{
SELECT raw::text FROM m.movie_themes WHERE movie = 'jsonb-numbers' AND position = 4}),
		'{"f": 1.50, "m": 0.0, "big": 12345678901234567890123, "title": "plain", "position": 4}',
		"$db: jsonb-numbers: plain numbers");

	# a number beyond numeric, \u0000, a lone surrogate, each in the second
	# item of its page: the scan of raw raises jsonb_in's own error (as the
	# cast of the body does), when the second row is made and not before
	# (the first row alone is fine: the page's decoding raised nothing);
	# the other columns of both rows decode
	for my $case (
		[ 'jsonb-overflow', 'overflow', qr/^22003: / ],
		[ 'jsonb-nul', 'nul', qr/^22P05: / ],
		[ 'jsonb-lone', 'lone', qr/^22P02: / ])
	{
		my ($movie, $title, $state) = @$case;
		my $lit = body_literal($movie);
		my $want = q1($db, "SELECT error_of(\$q\$SELECT ($lit)::jsonb\$q\$)");
		like($want, $state, "$db: the cast of the $movie body raises $state");
		is(q1($db, "SELECT error_of(\$q\$SELECT raw FROM m.movie_themes WHERE movie = '$movie'\$q\$)"),
			$want, "$db: $movie: raw raises what jsonb_in raises");
		is(q1($db, "SELECT error_of(\$q\$SELECT position, raw->>'title' FROM m.movie_themes WHERE movie = '$movie'\$q\$)"),
			$want, "$db: $movie: so does an expression on raw");
		is(q1($db, "SELECT error_of(\$q\$SELECT raw FROM m.movie_themes WHERE movie = '$movie' LIMIT 1\$q\$)"),
			'ok', "$db: $movie: the first row alone raises nothing");
		is(q1($db, "SELECT raw->>'title' FROM m.movie_themes WHERE movie = '$movie' LIMIT 1"),
			'first', "$db: $movie: the first row's raw");
		is(q1($db, "SELECT string_agg(position || '=' || title, ',' ORDER BY position) FROM m.movie_themes WHERE movie = '$movie'"),
			"1=first,2=$title", "$db: $movie: the other columns without raw");
	}
}

# escapes in a UTF-8 database: a surrogate pair (in the title too), \u00e9
# in a key, a value and a title, the short escapes
is(raw_matches('postgres', 'jsonb-escapes'), '2/2', 'jsonb-escapes: raw is jsonb_in\'s, item by item');
is(raw_matches('postgres', 'jsonb-emoji'), '1/1', 'jsonb-emoji: raw is jsonb_in\'s');
is(raw_matches('postgres', 'jsonb-emoji-title'), '1/1', 'jsonb-emoji-title: raw is jsonb_in\'s');
is(q1('postgres', q{
SELECT string_agg(encode(convert_to(title, 'UTF8'), 'hex'), ',' ORDER BY position)
FROM m.movie_themes WHERE movie = 'jsonb-escapes'}),
	encode_hex("caf\xc3\xa9") . ',' . encode_hex("q\" b\\ t\t"),
	'jsonb-escapes: titles de-escaped');
is(q1('postgres', q{
SELECT encode(convert_to(title, 'UTF8'), 'hex') || ' ' || encode(convert_to(raw->>'s', 'UTF8'), 'hex')
FROM m.movie_themes WHERE movie = 'jsonb-emoji-title'}),
	encode_hex("smile \xf0\x9f\x98\x80") . ' f09f9880', 'jsonb-emoji-title: the pair is U+1F600 in the title and in raw');
is(q1('postgres', q{
SELECT raw ? U&'k\00e9y' AND raw->>U&'k\00e9y' = U&'v\00e9' AND raw->>'title' = U&'caf\00e9'
FROM m.movie_themes WHERE movie = 'jsonb-escapes' AND position = 1}),
	't', 'jsonb-escapes: the escaped key and value');
is(q1('postgres', q{
SELECT raw->>'s' = E'a/b\nc' AND raw->>'title' = E'q" b\\\\ t\t'
FROM m.movie_themes WHERE movie = 'jsonb-escapes' AND position = 2}),
	't', 'jsonb-escapes: the short escapes');

# an item of more text than the builder takes (16 MB, BUILD_MAX_TEXT):
# size-N is one theme whose title, name and question are N "y" each
{
	my $n = 5_600_000;
	is(q1('postgres', qq{
SELECT raw = jsonb_build_object('position', 1, 'title', repeat('y', $n), 'emoji', 'x',
                                'explanation', 'e', 'name', repeat('y', $n),
                                'question', repeat('y', $n), 'section', 'plot')
       AND length(raw::text) > 16777216 AND length(title) = $n
FROM m.movie_themes WHERE movie = 'size-$n'}),
		't', 'an item of over 16 MB of text: raw is jsonb_in\'s, title too');
}

# in LATIN1 every \u escape is left to jsonb_in: what LATIN1 holds is
# converted, what it lacks raises as the cast does
is(raw_matches('latin1', 'jsonb-escapes'), '2/2', 'latin1: jsonb-escapes: raw is jsonb_in\'s, item by item');
is(q1('latin1', q{
SELECT raw->>'title' = 'caf' || chr(233) AND raw->>('k' || chr(233) || 'y') = 'v' || chr(233)
       AND title = 'caf' || chr(233)
FROM m.movie_themes WHERE movie = 'jsonb-escapes' AND position = 1}),
	't', 'latin1: \u00e9 in a key, a value and the title');
{
	my $lit = body_literal('jsonb-emoji');
	my $want = q1('latin1', "SELECT error_of(\$q\$SELECT ($lit)::jsonb\$q\$)");
	like($want, qr/^22P05: /, 'latin1: the cast of the jsonb-emoji body raises 22P05');
	is(q1('latin1', q{SELECT error_of($q$SELECT raw FROM m.movie_themes WHERE movie = 'jsonb-emoji'$q$)}),
		$want, 'latin1: jsonb-emoji: raw raises what jsonb_in raises');
	is(q1('latin1', q{SELECT title FROM m.movie_themes WHERE movie = 'jsonb-emoji'}),
		'emoji', 'latin1: jsonb-emoji: the title without raw');
}

sub encode_hex { return unpack('H*', $_[0]); }

$node->stop;
$h->stop;
done_testing();
