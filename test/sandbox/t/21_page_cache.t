# The page cache of the pure lists (movie timeline, themes, characters,
# faqs): a page served from the cache, or written as text on a miss, is
# byte for byte the page the jansson DOM path sends with the cache off;
# the cache is bounded by page_cache_mb and emptied by reset and config.
# --time-scale 1e9 stops sandbox time, so cursors (which carry their issue
# time) are the same in every walk and whole bodies can be compared.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/../lib";
use Sandbox;
use Test::More;

my $sb = Sandbox->start(keys => ['k1'],
	args => ['--seed', '7', '--time-scale', '1e9', '--set', 'short_page_rate=0.3']);

my @lists = (
	[ '/v1/movies/inception/content/themes', 3 ],
	[ '/v1/movies/inception/content/characters', 4 ],
	[ '/v1/movies/inception/content/timeline', 5 ],
	[ '/v1/movies/inception/content/faqs', 6 ],
	[ '/v1/movies/inception/content/faqs?section=ending', 2 ],
	[ '/v1/movies/epic-saga/content/themes', 7 ],
	[ '/v1/movies/epic-saga/content/characters', 9 ],
	[ '/v1/movies/epic-saga/content/timeline', 100 ],
	[ '/v1/movies/bench-100k/content/themes', 100 ],
);
my $MAX_PAGES = 6;

# bodies of the first pages of a walk, following next_cursor
sub walk
{
	my ($path, $limit, $pages) = @_;
	my @bodies;
	my $cursor;
	for (1 .. ($pages // $MAX_PAGES))
	{
		my $sep = $path =~ /\?/ ? '&' : '?';
		my $url = "$path${sep}limit=$limit" . (defined $cursor ? "&cursor=$cursor" : '');
		my $r = $sb->req('GET', $url, key => 'k1');
		die "GET $url: $r->{status} $r->{body}" unless $r->{status} == 200;
		push @bodies, $r->{body};
		$cursor = $r->{json}{pagination}{next_cursor};
		last unless defined $cursor;
	}
	return \@bodies;
}

sub cfg { my ($k) = @_; $sb->req('POST', '/_sandbox/config', json => $k) }
sub cache { $sb->req('GET', '/_sandbox/config')->{json}{page_cache} }

# the reference: the cache off, every page built as a jansson DOM
is(cfg({ page_cache_mb => 0 })->{status}, 200, 'page_cache_mb = 0');
my %ref = map { ($_->[0] => walk(@$_)) } @lists;
is(cache()->{pages}, 0, 'cache off: nothing cached');
my $npages = 0;
$npages += @{ $ref{$_->[0]} } for @lists;
ok($npages > 30, "reference walks: $npages pages");
ok(scalar(grep { $_ =~ /"next_cursor":null/ } map { @{ $ref{$_->[0]} } } @lists) >= 3,
	'some walks reached their last page');
ok(scalar(grep { $_ =~ /^\{"data":\[\],/ } map { @{ $ref{$_->[0]} } } @lists) >= 1,
	'an empty short page is among them');

# pages with the same items (an empty short page served twice at one
# offset) are one entry: count distinct (list, items) pairs
my %seen;
for my $l (@lists)
{
	for my $b (@{ $ref{ $l->[0] } })
	{
		(my $items = $b) =~ s/,"pagination":.*\z//s;
		$seen{"$l->[0] $items"} = 1;
	}
}
my $distinct = keys %seen;

is(cfg({ page_cache_mb => 64 })->{status}, 200, 'page_cache_mb = 64');
for my $pass ('cold', 'warm')
{
	for my $l (@lists)
	{
		my $got = walk(@$l);
		is(scalar @$got, scalar @{ $ref{ $l->[0] } }, "$pass $l->[0]: as many pages");
		for my $i (0 .. $#$got)
		{
			is($got->[$i], $ref{ $l->[0] }[$i], "$pass $l->[0] page $i: same bytes")
			  or last;
		}
	}
	my $c = cache();
	if ($pass eq 'cold')
	{
		is($c->{misses}, $distinct, "cold: a miss per distinct page ($distinct)");
		is($c->{hits}, $npages - $distinct, 'cold: hits only for repeated pages');
		is($c->{pages}, $distinct, 'cold: every distinct page is cached');
	}
	else
	{
		is($c->{hits}, 2 * $npages - $distinct, 'warm: every page was a hit');
		is($c->{misses}, $distinct, 'warm: no further miss');
	}
}

# a different limit is another page
my $p5 = walk('/v1/movies/epic-saga/content/themes', 5, 1);
isnt($p5->[0], $ref{'/v1/movies/epic-saga/content/themes'}[0], 'limit 5 is not the limit 7 page');

# bounded: 1 MB holds about 50 pages of 100 themes; walk 80
is(cfg({ page_cache_mb => 1 })->{status}, 200, 'page_cache_mb = 1');
is(cache()->{pages}, 0, 'a config change empties the cache');
walk('/v1/movies/bench-100k/content/themes', 100, 80);
my $c = cache();
ok($c->{bytes} <= 1024 * 1024, "bounded: $c->{bytes} bytes");
ok($c->{pages} > 20 && $c->{pages} < 80, "bounded: $c->{pages} pages kept");
my $again = walk('/v1/movies/bench-100k/content/themes', 100);
is_deeply($again, $ref{'/v1/movies/bench-100k/content/themes'}, 'evicted pages come back the same');

is($sb->req('POST', '/_sandbox/reset')->{status}, 200, 'reset');
is(cache()->{pages}, 0, 'reset empties the cache');

is(cfg({ page_cache_mb => -1 })->{status}, 400, 'page_cache_mb -1: 400');
is(cfg({ page_cache_mb => 'x' })->{status}, 400, 'page_cache_mb "x": 400');

done_testing();
