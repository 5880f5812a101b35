# Job families (docs/sandbox-jobs.md): the paging style of each family's
# lists.  For every style: the first page, the walk to the end (the same
# items as one page of 100, each once, in order), a page shorter than the
# limit that is not the last, completion told by the answer, a bad cursor
# (offset, page) refused with 400, a cursor of another filter refused, and
# pages that depend on the seed only.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/../lib";
use Sandbox;
use Test::More;

# (without rate limits: the walks here make far more than a minute's
# requests of a history route; 62_jobs_lifecycle.t tests its row)
my $sb = Sandbox->start(keys => ['jobs-key-one', 'jobs-key-two=premium'],
						args => ['--seed', '11', '--no-rate-limits']);
my $KEY = 'jobs-key-one';
# A cursor carries its time of issue: with the clock stopped, a walk made
# twice gives the same bytes, cursors included.
$sb->_admin('POST', '/_sandbox/clock', { freeze => JSON::PP::true });

# an access token of the translate family's client
sub token
{
	my ($s, $key) = @_;
	my $r = $s->req('POST', '/oauth/token',
					body => "grant_type=client_credentials&client_id=client-$key&client_secret=$key",
					ctype => 'application/x-www-form-urlencoded');
	die "token: $r->{status} $r->{body}" unless $r->{status} == 200;
	return $r->{json}{access_token};
}

my $TOKEN = token($sb, $KEY);

# GET path of a family with its auth; returns req()'s answer
sub get
{
	my ($s, $family, $path, %o) = @_;
	my $tok = $o{token} // $TOKEN;
	if ($family eq 'translate')
	{
		return $s->req('GET', $path, headers => { Authorization => "Bearer $tok" });
	}
	if ($family eq 'classify')
	{
		my $sep = $path =~ /\?/ ? '&' : '?';
		return $s->req('GET', "$path${sep}api_key=$KEY");
	}
	return $s->req('GET', $path, key => $KEY);
}

# the path of a next page, from the absolute URL the sandbox gave
sub rel { my ($u) = @_; $u =~ s{^http://127\.0\.0\.1:\d+}{} or die "not a sandbox URL: $u"; $u }

# One page in the family's style: {items, next (path or undef), r}
sub page
{
	my ($s, $family, $path) = @_;
	my $r = get($s, $family, $path);
	return { r => $r } unless $r->{status} == 200;
	my $j = $r->{json};
	my ($items, $next, $sep) = (undef, undef, $path =~ /\?/ ? '&' : '?');
	(my $base = $path) =~ s/[?&](cursor|page_token|after|offset|page)=[^&]*//;
	$sep = $base =~ /\?/ ? '&' : '?';
	if ($family eq 'ocr')
	{
		$items = $j->{data};
		$next = "$base${sep}cursor=$j->{pagination}{next_cursor}" if defined $j->{pagination}{next_cursor};
	}
	elsif ($family eq 'translate')
	{
		$items = $j->{results};
		$next = rel($j->{next}) if defined $j->{next};
	}
	elsif ($family eq 'summarize')
	{
		$items = $j;
		my $link = $r->{headers}{link};
		if (defined $link)
		{
			$link =~ /^<([^>]+)>; rel="next"$/ or die "Link: $link";
			$next = rel($1);
		}
	}
	elsif ($family eq 'classify')
	{
		$items = $j->{items};
		$next = "$base${sep}offset=" . ($j->{offset} + @$items) if $j->{has_more};
	}
	elsif ($family eq 'extract')
	{
		$items = $j->{data};
		$next = "$base${sep}page=" . ($j->{page} + 1) if $j->{has_more};
	}
	else
	{
		$items = $j->{jobs} // $j->{models};
	}
	return { items => $items, next => $next, r => $r };
}

# Walks from path to the end (bounded); returns the pages.
sub walk
{
	my ($s, $family, $path) = @_;
	my @pages;
	while (defined $path && @pages < 200)
	{
		my $p = page($s, $family, $path);
		die "$path: $p->{r}{status} $p->{r}{body}" unless $p->{r}{status} == 200;
		push @pages, $p;
		$path = $p->{next};
	}
	return @pages;
}

sub ids { [map { $_->{id} } @_] }

my %limit_param = (ocr => 'limit', translate => 'limit', summarize => 'limit',
				   classify => 'limit', extract => 'per_page');
my %cursor_param = (ocr => 'cursor', translate => 'page_token', summarize => 'after');

for my $f (qw(ocr translate summarize classify extract))
{
	my $lp = $limit_param{$f};
	my $hist = "/jobs/$f/history";

	# one page of 100 holds the whole seeded history
	my @all = walk($sb, $f, "$hist?$lp=100");
	is(scalar @all, 1, "$f: one page of 100");
	my $ref = ids(@{ $all[0]{items} });
	is(scalar @$ref, 45, "$f: 45 seeded jobs");
	my %u = map { $_ => 1 } @$ref;
	is(scalar keys %u, 45, "$f: ids are distinct");

	# first page, then the walk to the end
	my @pages = walk($sb, $f, "$hist?$lp=10");
	is(scalar @{ $pages[0]{items} }, 10, "$f: the first page holds the limit");
	ok(defined $pages[0]{next}, "$f: the first page leads on");
	is_deeply(ids(map { @{ $_->{items} } } @pages), $ref,
			  "$f: the walk gives every job once, in order");
	is(scalar @pages, 5, "$f: 10 + 5 + 10 + 10 + 10 = 45 in 5 pages, then ends");
	ok(!defined $pages[-1]{next}, "$f: the last page says it is the last");

	# a page shorter than the limit that is not the last
	is(scalar @{ $pages[1]{items} }, 5, "$f: page 2 holds 5 of 10");
	ok(defined $pages[1]{next}, "$f: and more follow it");

	# the same walk again (the clock stopped): the same bytes
	my @again = walk($sb, $f, "$hist?$lp=10");
	is_deeply([map { $_->{r}{body} } @again], [map { $_->{r}{body} } @pages],
			  "$f: a second walk answers the same bytes");

	# models: the same style
	my @models = walk($sb, $f, "/jobs/$f/models?$lp=2");
	ok(@models >= 2, "$f: models paged by 2 take several pages");
	is_deeply(ids(map { @{ $_->{items} } } @models),
			  ids(@{ (walk($sb, $f, "/jobs/$f/models"))[0]{items} }),
			  "$f: models walked by 2 equal one default page");

	# a bad limit
	my $bad = get($sb, $f, "$hist?$lp=0");
	is($bad->{status}, 400, "$f: $lp=0 is 400");
	is($bad->{json}{error}{code}, 'invalid_limit', "$f: invalid_limit");
	$bad = get($sb, $f, "$hist?$lp=10&foo=1");
	is($bad->{json}{error}{code}, 'unknown_parameter', "$f: an unknown parameter is 400");
}

# --- cursor styles: an edited cursor, a cursor of another filter ---
for my $f (qw(ocr translate summarize))
{
	my $cp = $cursor_param{$f};
	my @pages = walk($sb, $f, "/jobs/$f/history?limit=10");
	my ($cur) = $pages[0]{next} =~ /[?&]$cp=([^&]+)/;
	ok(defined $cur, "$f: the next page carries $cp");
	my $r = get($sb, $f, "/jobs/$f/history?limit=10&$cp=${cur}x");
	is($r->{status}, 400, "$f: an edited $cp is 400");
	is($r->{json}{error}{code}, 'invalid_cursor', "$f: invalid_cursor");
	$r = get($sb, $f, "/jobs/$f/history?limit=10&$cp=");
	is($r->{status}, 400, "$f: an empty $cp is 400");
	$r = get($sb, $f, "/jobs/$f/history?limit=10&status=failed&$cp=$cur");
	is($r->{status}, 400, "$f: a $cp of another filter is 400");
	is($r->{json}{error}{code}, 'cursor_mismatch', "$f: cursor_mismatch");
	$r = get($sb, $f, "/jobs/$f/models?limit=10&$cp=$cur");
	is($r->{json}{error}{code}, 'cursor_mismatch', "$f: a history $cp on the models list is 400");
}

# next URL and Link keep the request's other parameters
{
	my $p = page($sb, 'translate', '/jobs/translate/history?status=succeeded&limit=3');
	like($p->{next}, qr{^/jobs/translate/history\?status=succeeded&limit=3&page_token=[A-Za-z0-9_-]+$},
		 'translate: next is this URL with page_token');
	like($p->{r}{json}{next}, qr{^http://127\.0\.0\.1:\d+/}, 'translate: next is an absolute URL');
	$p = page($sb, 'summarize', '/jobs/summarize/history?status=succeeded&limit=3');
	like($p->{r}{headers}{link}, qr{^<http://127\.0\.0\.1:\d+/jobs/summarize/history\?status=succeeded&limit=3&after=[A-Za-z0-9_-]+>; rel="next"$},
		 'summarize: Link rel="next" (RFC 8288)');
	my @last = walk($sb, 'summarize', '/jobs/summarize/history?limit=100');
	ok(!exists $last[-1]{r}{headers}{link}, 'summarize: no Link on the last page');
}

# --- the corrupt_cursor fault spoils the cursor of every cursor style:
# a cursor error in the middle of a walk ---
for my $f (qw(ocr translate summarize))
{
	$sb->fault({ route => "GET /jobs/$f/history", kind => 'corrupt_cursor', count => 1 });
	my $p = page($sb, $f, "/jobs/$f/history?limit=10");
	is(scalar @{ $p->{items} }, 10, "$f: corrupt_cursor: the page itself is whole");
	my $r = get($sb, $f, $p->{next});
	is($r->{status}, 400, "$f: corrupt_cursor: the next page is 400");
	is($r->{json}{error}{code}, 'invalid_cursor', "$f: corrupt_cursor: invalid_cursor");
	$sb->clear_faults;
}

# --- offset: bad offsets, past the end ---
{
	for my $o ('-1', 'x', '1.5', '')
	{
		my $r = get($sb, 'classify', "/jobs/classify/history?offset=$o");
		is($r->{status}, 400, "classify: offset=$o is 400");
		is($r->{json}{error}{code}, 'invalid_offset', "classify: offset=$o invalid_offset");
	}
	my $r = get($sb, 'classify', '/jobs/classify/history?offset=45&limit=10');
	is($r->{status}, 200, 'classify: offset at the end is 200');
	is_deeply([$r->{json}{items}, $r->{json}{has_more}, $r->{json}{total}], [[], JSON::PP::false, 45],
			  'classify: no items, has_more false, total 45');
	$r = get($sb, 'classify', '/jobs/classify/history?offset=40&limit=10');
	is(scalar @{ $r->{json}{items} }, 5, 'classify: the last 5 from offset 40');
	ok(!$r->{json}{has_more}, 'classify: has_more false on the last page');
	my @pages = walk($sb, 'classify', '/jobs/classify/history?limit=10');
	is_deeply([map { scalar @{ $_->{items} } } @pages], [10, 5, 10, 10, 10],
			  'classify: pages of 10, 5 (offset 10), 10, 10, 10');
	is_deeply([map { $_->{r}{json}{offset} } @pages], [0, 10, 15, 25, 35],
			  'classify: offsets advanced by the rows received');
}

# --- a limit of 1: every style ends, every job once ---
for my $f (qw(ocr translate summarize classify extract))
{
	my @pages = walk($sb, $f, "/jobs/$f/history?$limit_param{$f}=1");
	is(scalar(map { @{ $_->{items} } } @pages), 45, "$f: a walk by 1 gives the 45 jobs");
	ok(@pages <= 46, "$f: in at most 46 pages");
}

# --- page numbers: bad pages, past the end, total_pages ---
{
	for my $p ('0', '-1', 'x', '')
	{
		my $r = get($sb, 'extract', "/jobs/extract/history?page=$p");
		is($r->{status}, 400, "extract: page=$p is 400");
		is($r->{json}{error}{code}, 'invalid_page', "extract: page=$p invalid_page");
	}
	my @pages = walk($sb, 'extract', '/jobs/extract/history?per_page=10');
	is_deeply([map { scalar @{ $_->{items} } } @pages], [10, 5, 10, 10, 10],
			  'extract: pages of 10, 5 (page 2), 10, 10, 10');
	is_deeply([map { $_->{r}{json}{total_pages} } @pages], [5, 5, 5, 5, 5],
			  'extract: total_pages 5 on every page');
	my $r = get($sb, 'extract', '/jobs/extract/history?per_page=10&page=6');
	is($r->{status}, 200, 'extract: a page past the last is 200');
	is_deeply([$r->{json}{data}, $r->{json}{has_more}], [[], JSON::PP::false],
			  'extract: empty, has_more false');
	# 25 items: page 2 is the last and holds the rest, unshortened
	$r = get($sb, 'extract', '/jobs/extract/history?per_page=25&page=2');
	is(scalar @{ $r->{json}{data} }, 20, 'extract: per_page 25, page 2 holds the last 20');
	is($r->{json}{total_pages}, 2, 'extract: total_pages 2');
}

# --- none: one answer, no paging parameters ---
{
	my $r = get($sb, 'redact', '/jobs/redact/history');
	is($r->{status}, 200, 'redact: history');
	is(scalar @{ $r->{json}{jobs} }, 45, 'redact: every seeded job in one answer');
	is(get($sb, 'redact', '/jobs/redact/history?limit=10')->{json}{error}{code},
	   'unknown_parameter', 'redact: limit is an unknown parameter');
	is(scalar @{ get($sb, 'redact', '/jobs/redact/models')->{json}{models} }, 3,
	   'redact: the three models');
}

# --- the status filter ---
for my $f (qw(ocr extract))
{
	my $lp = $limit_param{$f};
	my @all = @{ (walk($sb, $f, "/jobs/$f/history?$lp=100"))[0]{items} };
	my @failed = grep { $_->{status} eq 'failed' } @all;
	ok(@failed > 0 && @failed < @all, "$f: some seeded jobs failed");
	my @pages = walk($sb, $f, "/jobs/$f/history?status=failed&$lp=2");
	is_deeply(ids(map { @{ $_->{items} } } @pages), ids(@failed), "$f: status=failed walks the failed jobs");
	is(get($sb, $f, "/jobs/$f/history?status=done")->{json}{error}{code}, 'invalid_parameter',
	   "$f: an unknown status is 400");
}

# --- the seed decides the pages, nothing else ---
{
	my $same = Sandbox->start(keys => ['jobs-key-one'], args => ['--seed', '11']);
	my $other = Sandbox->start(keys => ['jobs-key-one'], args => ['--seed', '12']);
	my $mine = $sb->req('GET', '/jobs/ocr/history?limit=100', key => $KEY)->{body};
	is($same->req('GET', '/jobs/ocr/history?limit=100', key => $KEY)->{body}, $mine,
	   'ocr: another sandbox of the same seed answers the same bytes');
	isnt($other->req('GET', '/jobs/ocr/history?limit=100', key => $KEY)->{body}, $mine,
		 'ocr: another seed, other jobs');
	$same->stop;
	$other->stop;
}

# --- the existing cursor lists are unchanged: the second page of the movie
# search is not short (only the job lists and nested lists shorten it) ---
{
	my $r = $sb->req('GET', '/movies?limit=10', key => $KEY);
	my $c = $r->{json}{pagination}{next_cursor};
	my $r2 = $sb->req('GET', "/movies?limit=10&cursor=$c", key => $KEY);
	is(scalar @{ $r2->{json}{data} }, 10, 'movie search: page 2 is a full page as before');
}

done_testing();
