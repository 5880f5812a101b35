# The movie content service (document 001): movie detail, the nine content
# endpoints, the movie search, pagination and cursor rules, errors, and
# determinism of the seeded catalogue.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/../lib";
use Sandbox;
use Test::More;
use Time::HiRes qw(sleep);

my $sb = Sandbox->start(keys => ['k1'],
	args => ['--seed', '7', '--set', 'short_page_rate=0.5']);

sub enc { my ($s) = @_; $s =~ s/([^A-Za-z0-9_.~-])/sprintf('%%%02X', ord $1)/ge; $s }

sub get
{
	my ($path, %o) = @_;
	my $s = $o{sb} // $sb;
	return $s->req('GET', $path, exists $o{key} ? (key => $o{key}) : (key => 'k1'));
}

sub err_is
{
	my ($r, $status, $code, $name) = @_;
	is($r->{status}, $status, "$name: $status");
	is($r->{json} && $r->{json}{error} && $r->{json}{error}{code}, $code, "$name: code $code")
	  if defined $code;
	ok(ref $r->{json}{error}{message} eq '' && length $r->{json}{error}{message},
		"$name: error message") if $r->{json} && $r->{json}{error};
}

# Walks a list to its end; returns (items, number of short pages with
# has_more, pages).  Dies on a non-200 so a broken walk fails loudly.
sub walk
{
	my ($path, $limit, %o) = @_;
	my (@items, $short, $pages, $cursor);
	$short = $pages = 0;
	do
	{
		my $q = $path . ($path =~ /\?/ ? '&' : '?') . "limit=$limit";
		$q .= '&cursor=' . enc($cursor) if defined $cursor;
		my $r = get($q, %o);
		die "walk $q: $r->{status} $r->{body}" unless $r->{status} == 200;
		my $p = $r->{json}{pagination};
		die "walk $q: has_more and next_cursor disagree"
		  if ($p->{has_more} ? 1 : 0) != (defined $p->{next_cursor} ? 1 : 0);
		die "walk $q: limit echoed as $p->{limit}" unless $p->{limit} == $limit;
		die "walk $q: more than limit items" if @{ $r->{json}{data} } > $limit;
		push @items, @{ $r->{json}{data} };
		$short++ if $p->{has_more} && @{ $r->{json}{data} } < $limit;
		$cursor = $p->{next_cursor};
		die "walk $q: too many pages" if ++$pages > 20000;
	} while (defined $cursor);
	return (\@items, $short, $pages);
}

my @content = qw(summary spoiler-free-summary ending timeline setting themes
  characters faqs profile);
my %paged = map { $_ => 1 } qw(timeline themes characters faqs);

# --- the catalogue (sandbox-only view) -------------------------------------
my $cat = $sb->req('GET', '/_sandbox/movies');
is($cat->{status}, 200, 'GET /_sandbox/movies');
my @movies = @{ $cat->{json}{data} };
is(scalar(@movies), 205, '200 ordinary movies and 5 named ones');
is_deeply([map { $_->{id} } @movies[0 .. 199]], [1 .. 200], 'ordinary ids 1..200');
my %by_slug = map { $_->{slug} => $_ } @movies;
is(scalar(keys %by_slug), 205, 'slugs are unique');
ok(!(grep { $_->{slug} =~ /^\d+$/ } @movies), 'no slug is all digits');
for my $s (qw(inception epic-saga bench-100k bench-1m summary-only))
{
	ok($by_slug{$s}, "named movie $s exists");
}
is($by_slug{'epic-saga'}{counts}{themes}, 10000, 'epic-saga: 10,000 themes');
is($by_slug{'bench-100k'}{counts}{themes}, 100000, 'bench-100k: 100,000 themes');
is($by_slug{'bench-1m'}{counts}{themes}, 1000000, 'bench-1m: 1,000,000 themes');
is($by_slug{'bench-1m'}{counts}{timeline}, 1000000, 'bench-1m: 1,000,000 events');
is_deeply($by_slug{'summary-only'}{available_content}, ['summary'], 'summary-only');
ok(!(grep { !grep { $_ eq 'summary' } @{ $_->{available_content} } } @movies),
	'available_content always includes summary');
my @ordinary = @movies[0 .. 199];
ok((grep { @{ $_->{available_content} } < 9 } @ordinary) >= 20,
	'many ordinary movies lack some content');
ok(!(grep { $_->{counts}{themes} > 60 || $_->{counts}{timeline} > 60 } @ordinary),
	'ordinary lists have at most 60 items');
my %genres;
$genres{$_}++ for map { @{ $_->{genres} } } @ordinary;
ok(keys(%genres) >= 8, 'ordinary movies have varied genres');

my ($big) = grep { $_->{counts}{themes} >= 41 } @ordinary;
ok($big, 'an ordinary movie has at least 41 themes (3 pages of 20)');
my ($faq_gap) = grep {
	my $f = $_->{counts}{faqs};
	(grep { $f->{$_} == 0 } qw(summary ending info)) && (grep { $f->{$_} > 5 } qw(summary ending info))
} @ordinary;
ok($faq_gap, 'an ordinary movie has an empty faq section and a full one');
my ($no_themes) = grep { $_->{counts}{themes} == 0 } @ordinary;
ok($no_themes, 'an ordinary movie has no themes');

# --- auth ------------------------------------------------------------------
for my $c (@content)
{
	my $r = get("/v1/movies/inception/content/$c", key => undef);
	err_is($r, 401, 'missing_api_key', "$c without key");
	$r = get("/v1/movies/1000/content/$c", key => 'wrong');
	err_is($r, 401, 'invalid_api_key', "$c with an unknown key");
}
is(get('/v1/movies/inception', key => undef)->{status}, 401, 'detail without key: 401');
is(get('/movies', key => undef)->{status}, 401, 'search without key: 401');
ok(get('/movies', key => undef)->{json}{error}{code}, 'search 401: plain error body');

# --- inception: every endpoint, id and slug --------------------------------
$sb->config({ short_page_rate => 0 });
my $d = get('/v1/movies/inception');
is($d->{status}, 200, 'detail by slug');
is_deeply(get('/v1/movies/1000')->{json}, $d->{json}, 'detail by id = by slug');
is($d->{json}{data}{id}, 1000, 'detail: id');
is($d->{json}{data}{slug}, 'inception', 'detail: slug');
is($d->{json}{data}{title}, 'Inception', 'detail: title');
is_deeply($d->{json}{data}{available_content}, \@content, 'inception: all content');
ok(ref $d->{json}{data}{genres} eq 'ARRAY', 'detail: genres');

my %inc;
for my $c (@content)
{
	my $r = get("/v1/movies/inception/content/$c");
	is($r->{status}, 200, "inception $c by slug: 200");
	is_deeply(get("/v1/movies/1000/content/$c")->{json}, $r->{json},
		"inception $c by id = by slug");
	$inc{$c} = $r->{json};
	ok(exists $r->{json}{data}, "$c: data envelope");
	if ($paged{$c})
	{
		is(ref $r->{json}{data}, 'ARRAY', "$c: list");
		is_deeply([sort keys %{ $r->{json}{pagination} }],
			[qw(has_more limit next_cursor)], "$c: pagination members");
		ok(!$r->{json}{pagination}{has_more}, "$c: inception fits one page");
		is($r->{json}{pagination}{next_cursor}, undef, "$c: last page has null cursor");
	}
}
for my $c (qw(summary spoiler-free-summary ending))
{
	is($inc{$c}{data}{movie_id}, 1000, "$c: movie_id");
	like($inc{$c}{data}{markdown}, qr/\S/, "$c: markdown");
}
like($inc{summary}{data}{markdown}, qr/\*\*Inception\*\*/, 'summary is Markdown');
like($inc{ending}{data}{markdown}, qr/^## /m, 'ending has Markdown headings');
my $set = $inc{setting}{data};
ok($set->{place}{name} && $set->{place}{description}, 'setting: place object');
ok($set->{time}{period} && $set->{time}{description}, 'setting: time object');
my $prof = $inc{profile}{data};
for my $f (qw(tone pacing intensity complexity emotional_weight ending_feel))
{
	ok(defined $prof->{$f} && !ref $prof->{$f}, "profile: $f");
}
for my $f (qw(mood_tags topic_tags content_warnings))
{
	is(ref $prof->{$f}, 'ARRAY', "profile: $f array");
}
my @tl = @{ $inc{timeline}{data} };
is(scalar(@tl), 8, 'inception: 8 timeline events');
is_deeply([map { $_->{position} } @tl], [1 .. 8], 'timeline in order');
is_deeply([sort keys %{ $tl[0] }],
	[qw(explanation location position time_reference title)], 'timeline item fields');
my @th = @{ $inc{themes}{data} };
is(scalar(@th), 5, 'inception: 5 themes');
is_deeply([sort keys %{ $th[0] }], [qw(emoji explanation position title)], 'theme fields');
my @ch = @{ $inc{characters}{data} };
is(scalar(@ch), 7, 'inception: 7 characters');
is_deeply([sort keys %{ $ch[0] }], [qw(description name person_id position tags)],
	'character fields');
ok((grep { !defined $_->{person_id} } @ch), 'a character has person_id null');
ok((grep { defined $_->{person_id} && $_->{person_id} =~ /^\d+$/ } @ch),
	'a character has a numeric person_id');
my @fq = @{ $inc{faqs}{data} };
is(scalar(@fq), 8, 'inception: 8 faqs');
is_deeply([map { $_->{section} } @fq],
	[qw(summary summary summary ending ending ending info info)], 'faqs by section');
is_deeply([sort keys %{ $fq[0] }],
	[qw(answer foreshadowing_note position question section)], 'faq fields');
ok((grep { defined $_->{foreshadowing_note} } @fq), 'a faq has a foreshadowing note');
for my $s (qw(summary ending info))
{
	my $r = get("/v1/movies/inception/content/faqs?section=$s");
	is($r->{status}, 200, "faqs section=$s");
	ok(!(grep { $_->{section} ne $s } @{ $r->{json}{data} }), "faqs section=$s filters");
}

# --- availability across the catalogue ------------------------------------
my $avail_ok = 1;
for my $m (@ordinary[0 .. 24], map { $by_slug{$_} } qw(summary-only epic-saga))
{
	my %has = map { $_ => 1 } @{ $m->{available_content} };
	is_deeply(get("/v1/movies/$m->{id}")->{json}{data}{available_content},
		$m->{available_content}, "movie $m->{id}: detail available_content");
	for my $c (@content)
	{
		my $r = get("/v1/movies/$m->{slug}/content/$c");
		my $want = $has{$c} ? 200 : 404;
		if ($r->{status} != $want ||
			(!$has{$c} && $r->{json}{error}{code} ne 'content_not_available'))
		{
			$avail_ok = 0;
			diag("movie $m->{id} $c: $r->{status} $r->{body}");
		}
	}
}
ok($avail_ok, 'every content endpoint is 200 iff listed in available_content, else 404 content_not_available');
err_is(get("/v1/movies/$no_themes->{id}/content/themes"), 404, 'content_not_available',
	'themes of a movie without themes');
err_is(get('/v1/movies/summary-only/content/profile'), 404, 'content_not_available',
	'profile of summary-only');
my ($empty_sec) = grep { $faq_gap->{counts}{faqs}{$_} == 0 } qw(summary ending info);
my ($full_sec) = grep { $faq_gap->{counts}{faqs}{$_} > 5 } qw(summary ending info);
err_is(get("/v1/movies/$faq_gap->{id}/content/faqs?section=$empty_sec"), 404,
	'content_not_available', 'faqs of an empty section');

# --- unknown movie, long movie reference ----------------------------------
err_is(get('/v1/movies/no-such-movie'), 404, 'movie_not_found', 'unknown slug');
err_is(get('/v1/movies/999999/content/summary'), 404, 'movie_not_found', 'unknown id');
err_is(get('/v1/movies/no-such-movie/content/themes'), 404, 'movie_not_found',
	'unknown movie on a list');
err_is(get('/v1/movies/' . ('a' x 256) . '/content/summary'), 400, 'invalid_parameter',
	'movie of 256 characters');
err_is(get('/v1/movies/' . ('a' x 255) . '/content/summary'), 404, 'movie_not_found',
	'movie of 255 characters is only unknown');
err_is(get('/v1/movies/01000'), 404, 'movie_not_found', 'non-canonical id');

# --- query parameter rules ------------------------------------------------
err_is(get('/v1/movies/inception/content/themes?foo=1'), 400, 'unknown_parameter',
	'unknown parameter on a list');
err_is(get('/v1/movies/inception/content/themes?limit=5&limit=5'), 400,
	'repeated_parameter', 'repeated limit');
err_is(get('/v1/movies/inception/content/faqs?section=ending&section=ending'), 400,
	'repeated_parameter', 'repeated section');
for my $c (grep { !$paged{$_} } @content)
{
	err_is(get("/v1/movies/inception/content/$c?limit=5"), 400, 'unknown_parameter',
		"$c takes no query parameters");
}
err_is(get('/v1/movies/inception?x=1'), 400, 'unknown_parameter', 'detail takes none');
err_is(get('/v1/movies/inception/content/themes?section=ending'), 400,
	'unknown_parameter', 'section only on faqs');
err_is(get('/v1/movies/inception/content/faqs?section=plot'), 400, 'invalid_parameter',
	'section=plot is not a query value');
err_is(get('/v1/movies/inception/content/faqs?section=background'), 400,
	'invalid_parameter', 'section=background is not a query value');
err_is(get('/movies?sort=rating'), 400, 'invalid_parameter', 'unknown sort');
err_is(get('/movies?q=x'), 400, 'unknown_parameter', 'unknown search parameter');

# --- limit -----------------------------------------------------------------
my $themes = "/v1/movies/$big->{id}/content/themes";
err_is(get("$themes?limit=0"), 400, 'invalid_limit', 'limit=0');
err_is(get("$themes?limit=101"), 400, 'invalid_limit', 'limit=101');
err_is(get("$themes?limit=abc"), 400, 'invalid_limit', 'limit=abc');
err_is(get("$themes?limit=-1"), 400, 'invalid_limit', 'limit=-1');
my $r = get($themes);
is($r->{json}{pagination}{limit}, 20, 'default limit 20');
is(scalar(@{ $r->{json}{data} }), 20, 'default page: 20 items');
ok($r->{json}{pagination}{has_more}, 'first of several pages');
$r = get("$themes?limit=1");
is(scalar(@{ $r->{json}{data} }), 1, 'limit=1: one item');
$r = get("$themes?limit=100");
is(scalar(@{ $r->{json}{data} }), $big->{counts}{themes}, 'limit=100: whole list');
ok(!$r->{json}{pagination}{has_more}, 'limit=100: no more');
my @reference = @{ $r->{json}{data} };

# --- big lists --------------------------------------------------------------
$r = get('/v1/movies/epic-saga/content/themes?limit=100');
is($r->{status}, 200, 'epic-saga limit=100');
is(scalar(@{ $r->{json}{data} }), 100, 'epic-saga: full first page');
ok($r->{json}{pagination}{has_more}, 'epic-saga: has_more');
like($r->{json}{pagination}{next_cursor}, qr/^\S{1,4096}$/, 'epic-saga: next_cursor');
is_deeply([map { $_->{position} } @{ $r->{json}{data} }], [1 .. 100], 'epic-saga positions');
for my $p ('/v1/movies/bench-1m/content/themes?limit=100',
	'/v1/movies/bench-1m/content/timeline?limit=100',
	'/v1/movies/bench-100k/content/themes?limit=100')
{
	$r = get($p);
	ok($r->{status} == 200 && @{ $r->{json}{data} } == 100 && $r->{json}{pagination}{has_more},
		"$p: full page with has_more");
}

# --- full walks with short pages --------------------------------------------
$sb->config({ short_page_rate => 0.5 });
my ($items, $short) = walk($themes, 7);
is(scalar(@$items), $big->{counts}{themes}, 'short-page walk: every theme');
is_deeply([map { $_->{position} } @$items], [1 .. $big->{counts}{themes}],
	'short-page walk: each exactly once, in order');
is_deeply($items, \@reference, 'short-page walk: same items as one page');
ok($short >= 1, "short-page walk: $short short page(s) while has_more");

($items, $short) = walk('/v1/movies/epic-saga/content/themes', 100);
my %seen;
my $dups = grep { $seen{ $_->{position} }++ } @$items;
is($dups, 0, 'epic-saga walk: no duplicates');
is(scalar(@$items), 10000, 'epic-saga walk: 10,000 themes');
ok(!(grep { !$seen{$_} } 1 .. 10000), 'epic-saga walk: every position');
ok($short >= 1, 'epic-saga walk: short pages happened');

my $f = $faq_gap->{counts}{faqs};
($items, $short) = walk("/v1/movies/$faq_gap->{slug}/content/faqs", 3);
is(scalar(@$items), $f->{summary} + $f->{ending} + $f->{info}, 'faqs walk: every faq');
%seen = ();
$dups = grep { $seen{"$_->{section}/$_->{position}"}++ } @$items;
is($dups, 0, 'faqs walk: no duplicates');
($items) = walk("/v1/movies/$faq_gap->{id}/content/faqs?section=$full_sec", 2);
is(scalar(@$items), $f->{$full_sec}, "faqs walk section=$full_sec: count");
is_deeply([map { $_->{position} } @$items], [1 .. $f->{$full_sec}],
	"faqs walk section=$full_sec: each once");

($items) = walk('/movies?sort=title', 9);
is(scalar(@$items), 205, 'search walk: every movie');
my @titles = map { $_->{title} } @$items;
is_deeply(\@titles, [sort { $a cmp $b } @titles], 'sort=title orders by title');
($items) = walk('/movies', 50);
is_deeply([map { $_->{id} } @$items], [map { $_->{id} } @movies], 'default sort is id');

# --- /movies genre filter ---------------------------------------------------
my ($genre) = sort { $genres{$b} <=> $genres{$a} } keys %genres;
($items) = walk("/movies?genre=$genre", 10);
my @want = grep { my $m = $_; grep { $_ eq $genre } @{ $m->{genres} } } @movies;
is_deeply([map { $_->{id} } @$items], [map { $_->{id} } @want],
	"genre=$genre: exactly the movies of that genre");
ok(@$items > 10, "genre=$genre spans several pages");
($items) = walk('/movies?genre=' . uc($genre), 100);
is(scalar(@$items), scalar(@want), 'genre is case-insensitive');
$r = get('/movies?genre=no-such-genre');
is($r->{status}, 200, 'unknown genre: 200');
is_deeply($r->{json}{data}, [], 'unknown genre: empty list');
ok(!$r->{json}{pagination}{has_more}, 'unknown genre: no more');
is(get('/movies?genre=science-fiction')->{json}{data}[0]{id} ? 1 : 0, 1,
	'genre with a dash');

# --- cursor rules -------------------------------------------------------------
$sb->config({ short_page_rate => 0 });
sub cursor_of { my ($p) = @_; my $r = get($p); $r->{json}{pagination}{next_cursor} }

my $epic = '/v1/movies/epic-saga/content';
my $c_themes = cursor_of("$epic/themes?limit=5");
ok($c_themes, 'themes cursor');
$r = get("/v1/movies/1001/content/themes?limit=5&cursor=" . enc($c_themes));
is($r->{status}, 200, 'cursor from the slug works with the id');
is($r->{json}{data}[0]{position}, 6, 'and continues where it stopped');
err_is(get("$epic/characters?limit=5&cursor=" . enc($c_themes)), 400, 'cursor_mismatch',
	'themes cursor sent to characters');
err_is(get("/v1/movies/bench-100k/content/themes?limit=5&cursor=" . enc($c_themes)), 400,
	'cursor_mismatch', 'cursor of another movie');
my $c_faq = cursor_of("$epic/faqs?section=ending&limit=5");
ok($c_faq, 'faqs cursor');
is(get("$epic/faqs?section=ending&limit=5&cursor=" . enc($c_faq))->{status}, 200,
	'faqs cursor with the same section');
err_is(get("$epic/faqs?section=info&limit=5&cursor=" . enc($c_faq)), 400, 'cursor_mismatch',
	'faqs cursor with a different section');
err_is(get("$epic/faqs?limit=5&cursor=" . enc($c_faq)), 400, 'cursor_mismatch',
	'faqs cursor without the section');
my $c_search = cursor_of("/movies?genre=$genre&limit=3");
err_is(get("/movies?genre=$genre&sort=title&limit=3&cursor=" . enc($c_search)), 400,
	'cursor_mismatch', 'search cursor with another sort');
err_is(get("/movies?limit=3&cursor=" . enc($c_search)), 400, 'cursor_mismatch',
	'search cursor without the genre');
is(get("/movies?genre=$genre&sort=id&limit=3&cursor=" . enc($c_search))->{status}, 200,
	'search cursor: sort=id is the default');

my $tampered = $c_themes;
substr($tampered, 5, 1) = substr($tampered, 5, 1) eq 'A' ? 'B' : 'A';
err_is(get("$epic/themes?limit=5&cursor=" . enc($tampered)), 400, 'invalid_cursor',
	'tampered cursor');
err_is(get("$epic/themes?limit=5&cursor=not-a-cursor"), 400, 'invalid_cursor',
	'garbage cursor');
err_is(get("$epic/themes?limit=5&cursor=" . ('A' x 4097)), 400, 'invalid_cursor',
	'cursor over 4096 characters');

# --- expiry: 24 sandbox hours = 864 ms at time-scale 0.00001 ------------------
my $fast = Sandbox->start(keys => ['k1'], args => ['--seed', '7', '--time-scale', '0.00001']);
my $c_fast = get("$epic/themes?limit=5", sb => $fast)->{json}{pagination}{next_cursor};
is(get("$epic/themes?limit=5&cursor=" . enc($c_fast), sb => $fast)->{status}, 200,
	'fresh cursor is valid');
sleep 1.2;
err_is(get("$epic/themes?limit=5&cursor=" . enc($c_fast), sb => $fast), 400,
	'cursor_expired', 'cursor older than 24 sandbox hours');
$fast->stop;

# --- determinism -------------------------------------------------------------
my $twin = Sandbox->start(keys => ['k1'], args => ['--seed', '7']);
my $other = Sandbox->start(keys => ['k1'], args => ['--seed', '8']);
my $same = 1;
for my $p ('/v1/movies/1', '/v1/movies/77', "$themes?limit=100",
	"/v1/movies/$big->{id}/content/timeline?limit=100",
	'/v1/movies/epic-saga/content/characters?limit=100',
	'/v1/movies/epic-saga/content/faqs?limit=100',
	'/v1/movies/epic-saga/content/summary', '/v1/movies/epic-saga/content/setting',
	'/v1/movies/epic-saga/content/profile', '/movies?limit=100')
{
	my $a = get($p);
	my $b = get($p, sb => $twin);
	delete $_->{json}{pagination}{next_cursor} for $a, $b;
	unless ($a->{status} == 200 && Sandbox::_json_eq($a->{json}, $b->{json}))
	{
		$same = 0;
		diag("differs between twins: $p");
	}
}
ok($same, 'two sandboxes with the same seed serve the same content');
my ($w1) = walk('/v1/movies/epic-saga/content/timeline', 100);
my ($w2) = walk('/v1/movies/epic-saga/content/timeline', 100, sb => $twin);
ok(Sandbox::_json_eq($w1, $w2), 'same seed: same 2,500 timeline events');
isnt(get('/movies?limit=100', sb => $other)->{body}, get('/movies?limit=100')->{body},
	'another seed: another catalogue');
is_deeply(get('/v1/movies/inception/content/themes', sb => $other)->{json},
	get('/v1/movies/inception/content/themes')->{json}, 'inception is seed-independent');

$twin->stop;
$other->stop;
$sb->stop;
done_testing();

package Sandbox;

sub _json_eq { $Sandbox::JSON->encode($_[0]) eq $Sandbox::JSON->encode($_[1]) }
