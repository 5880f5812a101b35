# The nested lists of the movie content service (document 001, paging rule
# 4): /concerts/{concert} (data.events), /awards/{award}
# (data.nominations), /books/{book} (data.adaptations) and
# /collections/{type}/{collection} (data.movies).  Walks over several
# pages with short pages, cursors bound to their detail, 404s, odd path
# values, the rate-limit rows, determinism.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/../lib";
use Sandbox;
use Test::More;

my $sb = Sandbox->start(keys => ['k1', 'k2=premium', 'k3=enterprise'], args => ['--seed', '7']);
# rate-limit windows run on sandbox time: frozen, no walk crosses a window
$sb->_admin('POST', '/_sandbox/clock', { freeze => JSON::PP::true });

sub enc { my ($s) = @_; $s =~ s/([^A-Za-z0-9_.~-])/sprintf('%%%02X', ord $1)/ge; $s }

sub get
{
	my ($path, %o) = @_;
	return $sb->req('GET', $path, key => $o{key} // 'k1');
}

sub err_is
{
	my ($r, $status, $code, $name) = @_;
	is($r->{status}, $status, "$name: $status");
	is($r->{json} && ref $r->{json}{error} && $r->{json}{error}{code}, $code, "$name: code $code");
	ok(!exists $r->{json}{data}, "$name: plain error body, no data");
}

my %list_of = (concerts => 'events', awards => 'nominations', books => 'adaptations',
	collections => 'movies');
sub list_name { my ($path) = @_; $path =~ m{^/(\w+)/}; return $list_of{$1} }

# Walks the nested list of a detail to its end.  Returns (items, short
# pages while has_more, pages, detail objects without their list).  Dies
# on a non-200 or a broken pagination object.
sub walk
{
	my ($path, $limit, %o) = @_;
	my $list = list_name($path);
	my (@items, @details, $cursor);
	my ($short, $pages) = (0, 0);
	do
	{
		my @q;
		push @q, "limit=$limit" if defined $limit;
		push @q, 'cursor=' . enc($cursor) if defined $cursor;
		my $q = $path . (@q ? '?' . join('&', @q) : '');
		my $r = get($q, %o);
		die "walk $q: $r->{status} $r->{body}" unless $r->{status} == 200;
		my %d = %{ $r->{json}{data} };
		my $n = delete $d{$list} // die "walk $q: no data.$list";
		push @details, \%d;
		my $p = $n->{pagination};
		die "walk $q: pagination keys" unless join(',', sort keys %$p) eq 'has_more,limit,next_cursor';
		die "walk $q: has_more and next_cursor disagree"
		  if ($p->{has_more} ? 1 : 0) != (defined $p->{next_cursor} ? 1 : 0);
		die "walk $q: limit echoed as $p->{limit}" unless $p->{limit} == ($limit // 20);
		die "walk $q: more than limit items" if @{ $n->{data} } > ($limit // 20);
		push @items, @{ $n->{data} };
		$short++ if $p->{has_more} && @{ $n->{data} } < ($limit // 20);
		$cursor = $p->{next_cursor};
		die "walk $q: too many pages" if ++$pages > 1000;
	} while (defined $cursor);
	return (\@items, $short, $pages, \@details);
}

# --- the sandbox-only view of the sizes --------------------------------------
my $view = $sb->req('GET', '/_sandbox/nested');
is($view->{status}, 200, 'GET /_sandbox/nested');
my %count = map { $_->{path} => $_->{count} } @{ $view->{json}{data} };
is(scalar(keys %count), 4 * 40 + 2 * 40, 'ids 1..40 of each kind, three collection types');
is($count{'/concerts/1'}, 65, 'concert 1: 65 events');
is($count{'/awards/1'}, 61, 'award 1: 61 nominations');
is($count{'/books/1'}, 70, 'book 1: 70 adaptations');
is($count{"/collections/$_/1"}, 64, "collection $_/1: 64 movies") for qw(franchise director curated);
is($count{$_}, 0, "$_: empty") for qw(/concerts/2 /awards/2 /books/2 /collections/curated/2);
ok((grep { $count{$_} == 0 } keys %count) > 8, 'other ids are empty too');
ok((grep { $count{$_} > 40 } grep { !m{/1$} } keys %count) > 8, 'other ids have long lists too');

# --- walks over several pages, short pages, every kind --------------------------
my %fields = (
	events => [qw(day id performer position stage start_time title)],
	nominations => [qw(category id movie nominee position won)],
	adaptations => [qw(id medium movie_id position title year)],
	movies => [qw(movie_id position slug title year)],
);
my %detail_fields = (
	concerts => [qw(city date id name venue)],
	awards => [qw(id name year)],
	books => [qw(author id published_year title)],
	collections => [qw(id name type)],
);
for my $path ('/concerts/1', '/awards/1', '/books/1', '/collections/franchise/1', '/collections/director/1')
{
	my $list = list_name($path);
	my ($items, $short, $pages, $details) = walk($path, undef);
	is(scalar(@$items), $count{$path}, "$path: the walk at the default limit brings every item");
	cmp_ok($pages, '>=', 4, "$path: $pages pages (at least three)");
	cmp_ok($short, '>=', 1, "$path: $short short page(s) while more followed");
	is_deeply([map { $_->{position} } @$items], [1 .. $count{$path}], "$path: positions 1..n in order, no duplicate");
	my %ids = map { ($_->{id} // "m$_->{movie_id}") => 1 } @$items;
	is(scalar(keys %ids), scalar(@$items), "$path: ids are unique");
	is(join(',', sort keys %{ $items->[0] }), join(',', @{ $fields{$list} }), "$path: fields of an item");
	$path =~ m{^/(\w+)/};
	is(join(',', sort keys %{ $details->[0] }), join(',', @{ $detail_fields{$1} }), "$path: fields of the detail");
	ok(!(grep { !eq_deeply_str($_, $details->[0]) } @$details),
		"$path: the detail is the same on every page");
	my ($again) = walk($path, 7);
	is_deeply($again, $items, "$path: another limit gives the same items in the same order");
}

sub eq_deeply_str { return $Sandbox::JSON->encode($_[0]) eq $Sandbox::JSON->encode($_[1]) }

# shapes of the items
my ($ev) = walk('/concerts/1', 100);
like($ev->[0]{id}, qr/^evt-1-1$/, 'event id: evt-<concert>-<position>');
like($ev->[0]{start_time}, qr/^\d\d:\d\d$/, 'event start_time HH:MM');
my ($nom) = walk('/awards/1', 100);
ok(JSON::PP::is_bool($nom->[0]{won}), 'nomination: won is a boolean');
is(join(',', sort keys %{ $nom->[0]{movie} }), 'movie_id,slug,title,year', 'nomination: a movie reference');
my ($adp) = walk('/books/1', 100);
ok(!(grep { ($_->{medium} eq 'film') != defined($_->{movie_id}) } @$adp),
	'adaptation: movie_id is set exactly for films');
my ($mov) = walk('/collections/curated/1', 100);
my %seen;
ok(!(grep { $seen{$_->{movie_id}}++ } @$mov), 'collection: every movie at most once');
my $m0 = get("/v1/movies/$mov->[0]{movie_id}")->{json}{data};
is_deeply([@$m0{qw(slug title year)}], [@{ $mov->[0] }{qw(slug title year)}],
	'collection items are movies of the catalogue (GET /v1/movies/{movie} agrees)');

# the second page is short; the end is exact (no empty last page)
my $p1 = get('/concerts/1?limit=10')->{json}{data}{events};
my $p2 = get('/concerts/1?limit=10&cursor=' . enc($p1->{pagination}{next_cursor}))->{json}{data}{events};
is(scalar(@{ $p2->{data} }), 5, 'the second page holds half the limit');
ok($p2->{pagination}{has_more}, '... while more follow');
is($p2->{data}[0]{position}, 11, '... and continues where the first ended');
my $last = get('/concerts/1?limit=100')->{json}{data}{events};
is(scalar(@{ $last->{data} }), 65, 'limit 100: one page of every event');
is_deeply($last->{pagination}, { limit => 100, has_more => JSON::PP::false, next_cursor => undef },
	'a single page: has_more false, next_cursor null');

# empty lists: 200 with an empty page
for my $path ('/concerts/2', '/awards/2', '/books/2', '/collections/franchise/2')
{
	my $r = get($path);
	is($r->{status}, 200, "$path: 200");
	my $n = $r->{json}{data}{ list_name($path) };
	is_deeply($n, { data => [], pagination => { limit => 20, has_more => JSON::PP::false, next_cursor => undef } },
		"$path: an empty nested list");
	ok($r->{json}{data}{id} == 2, "$path: the detail is still there");
}

# --- cursors --------------------------------------------------------------------
my $c1 = get('/concerts/1?limit=5')->{json}{data}{events}{pagination}{next_cursor};
ok(defined $c1, 'a cursor from concert 1');
err_is(get('/concerts/3?limit=5&cursor=' . enc($c1)), 400, 'cursor_mismatch', 'a cursor of concert 1 on concert 3');
err_is(get('/awards/1?limit=5&cursor=' . enc($c1)), 400, 'cursor_mismatch', 'a concert cursor on an award');
my $cf = get('/collections/franchise/1?limit=5')->{json}{data}{movies}{pagination}{next_cursor};
err_is(get('/collections/director/1?limit=5&cursor=' . enc($cf)), 400, 'cursor_mismatch',
	'a cursor of franchise/1 on director/1');
my $cm = get('/v1/movies/1001/content/themes?limit=5')->{json}{pagination}{next_cursor};
err_is(get('/concerts/1?cursor=' . enc($cm)), 400, 'cursor_mismatch', 'a movie content cursor on a concert');
err_is(get('/v1/movies/1001/content/themes?cursor=' . enc($c1)), 400, 'cursor_mismatch',
	'a concert cursor on a movie content list');
(my $edited = $c1) =~ s/^(.)/$1 eq 'A' ? 'B' : 'A'/e;
err_is(get('/concerts/1?cursor=' . enc($edited)), 400, 'invalid_cursor', 'an edited cursor');
err_is(get('/concerts/1?cursor=' . ('x' x 4097)), 400, 'invalid_cursor', 'a cursor over 4096 characters');
is(get('/concerts/1?limit=5&cursor=' . enc($c1))->{status}, 200, 'the cursor works on its own concert');
is(get('/concerts/1?limit=9&cursor=' . enc($c1))->{status}, 200, '... with another limit too');
err_is(get('/concerts/1?limit=0'), 400, 'invalid_limit', 'limit 0');
err_is(get('/concerts/1?limit=101'), 400, 'invalid_limit', 'limit 101');
err_is(get('/concerts/1?limit=x'), 400, 'invalid_limit', 'limit x');
err_is(get('/concerts/1?sort=id'), 400, 'unknown_parameter', 'an unknown parameter');
err_is(get('/concerts/1?limit=2&limit=3'), 400, 'repeated_parameter', 'a repeated parameter');
$sb->_admin('POST', '/_sandbox/clock', { advance_ms => 24 * 3600 * 1000 + 1000 });
err_is(get('/concerts/1?limit=5&cursor=' . enc($c1)), 400, 'cursor_expired', 'a cursor older than 24 sandbox hours');
$sb->_admin('POST', '/_sandbox/rate-limits/reset');

# --- unknown ids and odd path values: always 4xx ---------------------------------
err_is(get('/concerts/41'), 404, 'concert_not_found', 'concert 41');
err_is(get('/awards/999999'), 404, 'award_not_found', 'award 999999');
err_is(get('/books/0'), 404, 'book_not_found', 'book 0');
err_is(get('/collections/franchise/41'), 404, 'collection_not_found', 'collection franchise/41');
err_is(get('/collections/genre/1'), 404, 'collection_not_found', 'an unknown collection type');
for my $odd ('01', '-1', '+1', '1.0', '1e2', 'abc', '%20', '99999999999999999999999', '%C3%A9',
	'1%0Ax', '%0A', '1%2F2', 'x' x 255)
{
	err_is(get("/concerts/$odd"), 404, 'concert_not_found', "GET /concerts/$odd" =~ s/x{255}/x*255/r);
}
err_is(get('/concerts/' . ('7' x 256)), 400, 'invalid_parameter', 'a concert over 255 characters');
err_is(get('/collections/' . ('f' x 256) . '/1'), 400, 'invalid_parameter', 'a type over 255 characters');
for my $p ('/books/%00', '/concerts/1%00x', '/concerts/1%00', '/collections/franchise%00/1')
{
	err_is(get($p), 400, 'invalid_path', "$p (a NUL byte)");
}
for my $p ('/concerts/%FF', '/awards/%C0%AF', '/books/ab%C3', '/collections/%FF/1', '/collections/franchise/%ED%A0%80')
{
	err_is(get($p), 400, 'invalid_path', "$p (not UTF-8)");
}
is($sb->req('GET', '/concerts/1')->{status}, 401, 'no key: 401');
is($sb->req('POST', '/concerts/1', key => 'k1')->{status}, 405, 'POST: 405');
is(get('/concerts')->{status}, 404, '/concerts without an id: 404');
is(get('/collections/franchise')->{status}, 404, '/collections/{type} alone: 404');

# --- determinism ---------------------------------------------------------------
my $a1 = get('/books/5?limit=100')->{body};
my $other = Sandbox->start(keys => ['k1'], args => ['--seed', '7']);
is($other->req('GET', '/books/5?limit=100', key => 'k1')->{body}, $a1, 'same seed: same bytes');
my $seed8 = Sandbox->start(keys => ['k1'], args => ['--seed', '8']);
isnt($seed8->req('GET', '/books/5?limit=100', key => 'k1')->{body}, $a1, 'another seed: other content');
$other->stop;
$seed8->stop;

# --- rate-limit rows (our choice: 100 / 300 / 1000 per minute, per route) -----------
my $cfg = $sb->_admin('GET', '/_sandbox/config')->{rate_limits};
for my $row ('GET /concerts/{concert}', 'GET /awards/{award}', 'GET /books/{book}',
	'GET /collections/{type}/{collection}')
{
	is_deeply([@{ $cfg->{$row} }{qw(standard premium enterprise)}], [100, 300, 1000], "row $row");
}
$sb->_admin('POST', '/_sandbox/rate-limits/reset');
my %limit = (k1 => 100, k2 => 300, k3 => 1000);
for my $key (qw(k1 k2 k3))
{
	my @s = map { get('/books/' . (2 + $_ % 2), key => $key)->{status} } 1 .. $limit{$key} + 1;
	is(scalar(grep { $_ == 200 } @s[0 .. $#s - 1]), $limit{$key}, "$key: $limit{$key} reads of books pass (two ids, one counter)");
	is($s[-1], 429, "$key: the next is 429");
	is(get('/concerts/2', key => $key)->{status}, 200, "$key: another nested route has its own counter");
}
my $rl = get('/books/2');
is($rl->{json}{error}{code}, 'rate_limited', '429 in the plain style');
$sb->config({ 'rate_limit.GET /collections/{type}/{collection}' => 2 });
is_deeply([map { get('/collections/franchise/1')->{status} } 1 .. 3], [200, 200, 429],
	'the row of collections can be overridden like the others');

my $st = $sb->req('GET', '/_sandbox/stats');
unlike($st->{body} // '', qr/"internal"/, 'no "internal" error was ever answered');
ok(!(grep { $_->{'5xx'} } @{ $st->{json}{routes} }), 'no 5xx on any route');

done_testing();
