#!/usr/bin/perl
#
# test/hostile/hostile.pl: a hostile partner service on loopback, for the
# tests of what partner_svc does with answers it must not trust.
#
# Usage: perl test/hostile/hostile.pl --port-file FILE --log FILE
#             [--lifetime SECONDS]
#
# Listens on 127.0.0.1, on a free port written to the port file once it
# accepts connections.  Every request is appended to the log file as one
# line "METHOD TARGET" (the request target exactly as received, nothing
# decoded), followed, when the request has a body, by one line
# "  body: ..." with the body's bytes, every byte outside printable ASCII
# written as \xHH.  Tests read the log to assert exactly what was sent (a
# dot segment must arrive encoded, never as another route).  One process
# per connection; every answer says "Connection: close".  The service exits
# after --lifetime seconds (default 1800) or on SIGTERM.
#
# Routes (any method; the path is matched before its query string):
#
# Tenancy (test/scenario/86_poll_worker.t):
#   POST /public/orders whose first vignette's custom_id is "steal:ID"
#                             201, one order of id ID (status CREATED): a
#                             create answered with another tenant's id
#   /public/orders/{id}/status  status REFUNDED, whatever {id} is
#
# Filter-ignoring lists (for the recheck of pushed conditions):
#   /public/orders            three orders of statuses ACTIVE, DEFERRED and
#                             PENDING whatever the query says; one page.
#   /public/orders/{id}       an order whose id is "ord_hostile_1" and whose
#                             custom_id is the {id} asked for, status
#                             DEFERRED, whatever {id} is.
#   /v1/business-questions    three questions of personas GF, EK and HR
#                             (envelope "result") whatever the query says.
#   /v1/movies/filters/content/faqs
#                             faqs of sections plot, ending and background
#                             whatever "section" says; one page.
#
# Movie lists, /v1/movies/{movie}/content/{themes,timeline,characters,faqs},
# by the value of {movie}:
#   ok            one page of two themes
#   utf8          one page whose titles hold "é" and "ü" (valid UTF-8)
#   euro          one page whose title holds "€" (valid UTF-8, not LATIN1)
#   badutf8       one page whose title holds the byte 0xff
#   claim1g       headers claim Content-Length 1 GB, then a few bytes and
#                 the connection is held open (bounded)
#   claim60m      headers claim Content-Length 60 MB, then a few bytes and
#                 the connection is closed
#   endless       a chunked body that never ends (bounded: 3 GB or the
#                 lifetime, or until the client goes away)
#   size-N        one valid page of at least N bytes (one long title)
#   repeat        every page: one item and next_cursor "same"
#   cycle         cursors a, b, a, b, ...: one item each
#   bigcursor     next_cursor of 9 MB
#   cursor-N      first page: next_cursor of N characters "c..."; the page
#                 asked for with it is the last
#   emptyforever  every page: no items and a new next_cursor
#   empty-N       N empty pages with cursors, then one page of one item
# Pages whose items the decoder's jsonb builder leaves to jsonb_in
# (src/json/json_decode_jsonb.c), for the raw column; each item's title is
# plain text or a valid escape, so the other columns always decode:
#   jsonb-numbers numbers with exponents (1e5, 1E-7, 2.5E+3, -1e-2, in
#                 nested values too), a number of 1,001 digits, and an
#                 item of plain numbers (-0.0, 12345678901234567890123)
#   jsonb-escapes a key, a value and a title with \u00e9; the short escapes
#   jsonb-emoji   one item with a \ud83d\ude00 surrogate pair outside the
#                 title
#   jsonb-emoji-title  the same pair in the title and another member
#   jsonb-nul     a plain item, then one with "a\u0000b" outside the title
#   jsonb-lone    a plain item, then one with a lone surrogate \ud83d
#                 outside the title
#   jsonb-overflow a plain item, then one with the number 1e999999
#                 (beyond numeric)
# Any other movie: one page of one theme whose title is the movie as the
# service decoded it (percent-decoding of the path segment; its bytes are
# sent back as they are, controls escaped).
#
# Todos: POST /todos answers the todo created, with the body's title.
#
# Functions' routes whose answers hold invalid UTF-8 (0xff in a string):
#   GET  /files/{file_id}                       FileInfo
#   POST /uploads                               FileInfo
#   GET  /api/user-jobs/run/{jobId}             Execution
#   PUT  /api/user-jobs                         UserJob
#   GET  /api/user-jobs/user-job-executions/{jobId}   summary
# ... unless the {file_id} is "good", the {jobId} is 2, or the body holds
# the string "good": then the same answer with valid UTF-8 ("é").
#
# A strict order service under /strict (a server whose base_url ends in
# /strict), that does only what the orders document promises and nothing
# of the sandbox's habits; its orders are files of a directory beside the
# log, so every connection's process sees them:
#   POST /strict/public/orders    creates one order per custom_id of the
#                                 body (vignettes) and answers, after the
#                                 delay, the transaction with its orders;
#                                 a custom_id that exists already refuses
#                                 the whole request with HTTP 400 and an
#                                 error code no document shows
#                                 ({"type":"invalid_request",
#                                 "code":"E_HOSTILE_4711"})
#   GET  /strict/public/orders/{id}  the order of custom_id {id}, or 404
#                                 order_not_found
#   any other /strict/ route      404 not_found
# and its controls (logged like any request):
#   /strict/_control/outage/on    from now on every /strict/ route but the
#                                 controls answers 503 and does nothing
#   /strict/_control/outage/NNN   ... answers HTTP status NNN (502, 504...)
#                                 and does nothing
#   /strict/_control/outage/off   ... until this
#   /strict/_control/delay/MS     creates answer MS milliseconds after the
#                                 order exists (default 0)
#   /strict/_control/drop/PREFIX  the first create of each custom_id that
#                                 starts with PREFIX is carried out, and its
#                                 connection closed without an answer
#   /strict/_control/stale/PREFIX the first lookup of each such custom_id
#                                 answers 404 order_not_found even when the
#                                 order exists (a replica behind: the lost
#                                 request is as good as still on its way)
#   /strict/_control/orders       {"custom_id": 1, ...}: the orders held
#
# Everything else: 404 {"error":{"code":"not_found"}}.
use strict;
use warnings;
use Fcntl qw(O_WRONLY O_CREAT O_EXCL);
use Getopt::Long;
use IO::Socket::INET;
use POSIX qw(:sys_wait_h);
use Time::HiRes qw(time sleep);

my ($port_file, $log_file);
my $lifetime = 1800;
GetOptions('port-file=s' => \$port_file, 'log=s' => \$log_file,
	'lifetime=i' => \$lifetime) or die "usage\n";
die "--port-file and --log are required\n" unless $port_file && $log_file;

my $server = IO::Socket::INET->new(LocalAddr => '127.0.0.1', LocalPort => 0,
	Listen => 64, ReuseAddr => 1, Proto => 'tcp') or die "listen: $!\n";
my $started = time;
my $stop = 0;
$SIG{TERM} = $SIG{INT} = sub { $stop = 1 };
# children still running, by pid: only these are stopped at exit (a pid
# reaped long ago may belong to another process by then)
my %kids;
$SIG{CHLD} = sub {
	while ((my $pid = waitpid(-1, WNOHANG)) > 0) { delete $kids{$pid}; }
};
$SIG{PIPE} = 'IGNORE';
{
	open(my $fh, '>', "$port_file.tmp") or die "$port_file: $!\n";
	print $fh $server->sockport, "\n";
	close $fh;
	rename("$port_file.tmp", $port_file) or die "rename: $!\n";
}

while (!$stop && time - $started < $lifetime)
{
	my $rin = '';
	vec($rin, fileno($server), 1) = 1;
	next unless select(my $rout = $rin, undef, undef, 0.5) > 0;
	my $c = $server->accept or next;
	my $pid = fork();
	if (!defined $pid) { close $c; next; }
	if ($pid == 0)
	{
		$SIG{TERM} = 'DEFAULT';
		close $server;
		alarm(120);				# no child outlives two minutes
		serve($c);
		exit 0;
	}
	$kids{$pid} = 1;
	close $c;
}
$SIG{CHLD} = 'DEFAULT';
for my $pid (keys %kids)
{
	# still ours only if not reaped yet: waitpid says so without blocking
	kill('TERM', $pid) if waitpid($pid, WNOHANG) == 0;
}
exit 0;

sub log_line
{
	my ($text) = @_;
	open(my $fh, '>>', $log_file) or return;
	# one write per record: records of concurrent children never interleave
	syswrite($fh, $text);
	close $fh;
}

sub visible
{
	my ($s) = @_;
	$s =~ s/([^\x20-\x7e])/sprintf('\\x%02x', ord($1))/ge;
	return $s;
}

sub serve
{
	my ($c) = @_;
	binmode $c;
	local $/ = "\r\n";
	my $line = <$c>;
	return unless defined $line;
	$line =~ s/\r\n$//;
	my ($method, $target) = split / /, $line;
	return unless defined $target;
	my %h;
	while (my $hl = <$c>)
	{
		$hl =~ s/\r\n$//;
		last if $hl eq '';
		my ($k, $v) = split /:\s*/, $hl, 2;
		$h{lc $k} = $v // '';
	}
	my $body = '';
	my $clen = $h{'content-length'} // 0;
	while ($clen > 0 && length($body) < $clen && length($body) < 64 * 1024 * 1024)
	{
		my $n = read($c, my $chunk, $clen - length($body));
		last unless $n;
		$body .= $chunk;
	}
	my $rec = "$method $target\n";
	$rec .= "  body: " . visible($body) . "\n" if length $body;
	log_line($rec);

	my ($path, $query) = split /\?/, $target, 2;
	route($c, $method, $path, $query // '', $body);
	close $c;
}

sub reply
{
	my ($c, $status, $body, %o) = @_;
	my $reason = $status == 200 ? 'OK' : $status == 201 ? 'Created' :
	  $status == 404 ? 'Not Found' : 'Error';
	print $c "HTTP/1.1 $status $reason\r\n",
	  "Content-Type: application/json\r\n",
	  "Content-Length: " . length($body) . "\r\n",
	  "Connection: close\r\n\r\n", $body;
}

sub page
{
	my ($items, $cursor) = @_;
	my $next = defined $cursor ? "\"$cursor\"" : 'null';
	my $more = defined $cursor ? 'true' : 'false';
	return "{\"data\":[" . join(',', @$items) .
	  "],\"pagination\":{\"limit\":100,\"has_more\":$more,\"next_cursor\":$next}}";
}

sub theme
{
	my ($pos, $title) = @_;
	return "{\"position\":$pos,\"title\":\"$title\",\"emoji\":\"x\"," .
	  "\"explanation\":\"e\",\"name\":\"$title\",\"question\":\"$title\"," .
	  "\"section\":\"plot\"}";
}

sub qparam
{
	my ($query, $name) = @_;
	for my $kv (split /&/, $query)
	{
		my ($k, $v) = split /=/, $kv, 2;
		return $v // '' if $k eq $name;
	}
	return undef;
}

sub pct_decode
{
	my ($s) = @_;
	$s =~ s/%([0-9A-Fa-f]{2})/chr(hex($1))/ge;
	return $s;
}

sub route
{
	my ($c, $method, $path, $query, $body) = @_;

	return strict_orders($c, $method, $1, $body) if $path =~ m{^/strict(/.*)$};

	# a create answered with the order id the caller chose: another
	# tenant's (the first vignette's custom_id "steal:ID" names it)
	if ($method eq 'POST' && $path eq '/public/orders'
		&& $body =~ /"custom_id"\s*:\s*"steal:([A-Za-z0-9_]+)"/)
	{
		return reply($c, 201, "{\"error\":null,\"data\":{\"transaction_id\":\"txn_hostile\"," .
			  "\"order_has_been_paid\":true,\"checkout_status\":null,\"orders\":[{\"id\":\"$1\"," .
			  "\"custom_id\":\"stolen\",\"name\":\"stolen\",\"status\":\"CREATED\"}]}}");
	}
	# every status read: REFUNDED, the final status
	if ($path =~ m{^/public/orders/[^/]+/status$})
	{
		return reply($c, 200, "{\"error\":null,\"data\":{\"status\":\"REFUNDED\"}}");
	}

	# filter-ignoring lists
	if ($path eq '/public/orders')
	{
		my @o = map {
			my ($i, $s) = @$_;
			"{\"id\":\"ord_hostile_$i\",\"custom_id\":\"H-$i\",\"email\":\"h$i\@example.com\"," .
			  "\"created_date\":170000000$i,\"status\":\"$s\"}"
		} ([1, 'ACTIVE'], [2, 'DEFERRED'], [3, 'PENDING']);
		return reply($c, 200, page(\@o, undef));
	}
	if ($path =~ m{^/public/orders/([^/]+)$})
	{
		my $id = pct_decode($1);
		$id =~ s/(["\\])/\\$1/g;
		return reply($c, 200, "{\"data\":{\"id\":\"ord_hostile_1\",\"custom_id\":\"$id\"," .
			  "\"email\":\"h1\@example.com\",\"created_date\":1700000001,\"status\":\"DEFERRED\"}}");
	}
	if ($path eq '/v1/business-questions')
	{
		my @q = map {
			"{\"id\":\"BQ-$_-001\",\"persona\":\"$_\",\"question\":\"q $_\"," .
			  "\"answerability\":\"answerable\"}"
		} qw(GF EK HR);
		return reply($c, 200, "{\"result\":[" . join(',', @q) . "],\"count\":3}");
	}
	if ($path eq '/v1/movies/filters/content/faqs')
	{
		my $i = 0;
		my @f = map {
			$i++;
			"{\"position\":$i,\"section\":\"$_\",\"question\":\"q$i\",\"answer\":\"a$i\"}"
		} qw(plot ending background);
		return reply($c, 200, page(\@f, undef));
	}

	# movie lists
	if ($path =~ m{^/v1/movies/([^/]*)/content/(themes|timeline|characters|faqs)$})
	{
		return movie_list($c, $1, qparam($query, 'cursor'));
	}

	# todos: a created todo echoes the title of the body
	if ($path eq '/todos' && $method eq 'POST')
	{
		my ($title) = $body =~ /"title"\s*:\s*"((?:[^"\\]|\\.)*)"/;
		$title //= '';
		return reply($c, 201, "{\"id\":1,\"title\":\"$title\",\"completed\":false,\"userId\":1}");
	}

	# functions' answers with invalid UTF-8
	my $bad = "\xff";
	my $good = "\xc3\xa9";
	if ($path =~ m{^/files/([^/]+)$})
	{
		my $s = $1 eq 'good' ? $good : $bad;
		return reply($c, 200, "{\"file_id\":\"$1\",\"filename\":\"f$s\",\"size\":0}");
	}
	if ($path eq '/uploads' && $method eq 'POST')
	{
		my $s = $body =~ /"good"/ ? $good : $bad;
		return reply($c, 200, "{\"file_id\":\"up1\",\"filename\":\"f$s\",\"size\":0}");
	}
	if ($path =~ m{^/api/user-jobs/run/([^/]+)$})
	{
		my $s = $1 eq '2' ? $good : $bad;
		return reply($c, 200, "{\"id\":1,\"status\":\"RUNNING$s\"}");
	}
	if ($path eq '/api/user-jobs' && $method eq 'PUT')
	{
		my $s = $body =~ /"good"/ ? $good : $bad;
		return reply($c, 200, "{\"id\":1,\"name\":\"job$s\"}");
	}
	if ($path =~ m{^/api/user-jobs/user-job-executions/([^/]+)$})
	{
		my $s = $1 eq '2' ? $good : $bad;
		return reply($c, 200, "{\"jobId\":1,\"executions\":[{\"id\":1,\"status\":\"OK$s\"}]}");
	}
	return reply($c, 404, '{"error":{"code":"not_found"}}');
}

# The jsonb-* pages (see the header): item texts, as sent.  (A sub: the
# main loop above runs before any file-level assignment down here would.)
sub jsonb_pages
{
	my $first = '{"position":1,"title":"first","n":1}';

	return {
		'jsonb-numbers' => [
			'{"position":1,"title":"exponents","n":1e5,"k":1E-7,"p":2.5E+3,"neg":-1e-2,"z":0e0}',
			'{"position":2,"title":"long number","n":' . ('9' x 1001) . '}',
			'{"position":3,"title":"nested","a":[1e2,{"b":2E0,"c":[0.5e1]}]}',
			'{"position":4,"title":"plain","m":-0.0,"big":12345678901234567890123,"f":1.50}',
		],
		'jsonb-escapes' => [
			'{"position":1,"title":"caf\u00e9","k\u00e9y":"v\u00e9"}',
			'{"position":2,"title":"q\" b\\\\ t\t","s":"a\/b\nc"}',
		],
		'jsonb-emoji' => [ '{"position":1,"title":"emoji","s":"\ud83d\ude00"}' ],
		'jsonb-emoji-title' => [ '{"position":1,"title":"smile \ud83d\ude00","s":"\ud83d\ude00"}' ],
		'jsonb-nul' => [ $first, '{"position":2,"title":"nul","s":"a\u0000b"}' ],
		'jsonb-lone' => [ $first, '{"position":2,"title":"lone","s":"x\ud83dy"}' ],
		'jsonb-overflow' => [ $first, '{"position":2,"title":"overflow","n":1e999999}' ],
	};
}

sub movie_list
{
	my ($c, $movie, $cursor) = @_;
	my $one = [ theme(1, 't1') ];

	my $jp = jsonb_pages();
	if (exists $jp->{$movie})
	{
		return reply($c, 200, page($jp->{$movie}, undef));
	}

	if ($movie eq 'ok')
	{
		return reply($c, 200, page([ theme(1, 't1'), theme(2, 't2') ], undef));
	}
	if ($movie eq 'utf8')
	{
		return reply($c, 200, page([ theme(1, "caf\xc3\xa9"), theme(2, "\xc3\xbcber") ], undef));
	}
	if ($movie eq 'euro')
	{
		return reply($c, 200, page([ theme(1, "\xe2\x82\xac") ], undef));
	}
	if ($movie eq 'badutf8')
	{
		return reply($c, 200, page([ theme(1, "bad\xff") ], undef));
	}
	if ($movie eq 'claim1g')
	{
		print $c "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n",
		  "Content-Length: 1073741824\r\nConnection: close\r\n\r\n{\"data\":[";
		sleep 30;
		return;
	}
	if ($movie eq 'claim60m')
	{
		print $c "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n",
		  "Content-Length: 62914560\r\nConnection: close\r\n\r\n{\"data\":[";
		return;
	}
	if ($movie eq 'endless')
	{
		print $c "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n",
		  "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n";
		my $chunk = '{"position":1,"title":"' . ('x' x 65000) . '"},';
		my $head = "{\"data\":[";
		printf $c "%x\r\n%s\r\n", length($head), $head or return;
		for (1 .. 50000)		# about 3 GB
		{
			printf $c "%x\r\n%s\r\n", length($chunk), $chunk or return;
		}
		return;
	}
	if ($movie =~ /^size-(\d+)$/)
	{
		return reply($c, 200, page([ theme(1, 'y' x $1) ], undef));
	}
	if ($movie eq 'repeat')
	{
		return reply($c, 200, page($one, 'same'));
	}
	if ($movie eq 'cycle')
	{
		my $next = (defined $cursor && $cursor eq 'a') ? 'b' : 'a';
		return reply($c, 200, page($one, $next));
	}
	if ($movie eq 'bigcursor')
	{
		return reply($c, 200, page($one, 'c' x (9 * 1024 * 1024)));
	}
	if ($movie =~ /^cursor-(\d+)$/)
	{
		return reply($c, 200, page($one, undef)) if defined $cursor;
		return reply($c, 200, page($one, 'c' x $1));
	}
	if ($movie eq 'emptyforever')
	{
		my $n = defined $cursor ? $cursor + 1 : 1;
		return reply($c, 200, page([], $n));
	}
	if ($movie =~ /^empty-(\d+)$/)
	{
		my $n = defined $cursor ? $cursor + 1 : 1;
		return reply($c, 200, page([], $n)) if $n <= $1;
		return reply($c, 200, page($one, undef));
	}
	my $title = pct_decode($movie);
	$title =~ s/(["\\])/\\$1/g;
	$title =~ s/([\x00-\x1f])/sprintf('\\u%04x', ord($1))/ge;
	return reply($c, 200, page([ theme(1, $title) ], undef));
}

# The strict order service (see the header).  Its state is a directory
# beside the log: the file "outage", the file "delay", and one file per
# order, created with O_EXCL so that two requests never both create one.
sub strict_orders
{
	my ($c, $method, $path, $body) = @_;
	my $dir = "$log_file.strict";
	mkdir $dir;
	mkdir "$dir/orders";
	my $fname = sub { my $n = shift; $n =~ s/[^A-Za-z0-9_.-]/_/g; "$dir/orders/$n" };
	my $order = sub {
		my $cid = shift;
		return "{\"id\":\"ord_$cid\",\"custom_id\":\"$cid\",\"name\":\"vignette\"," .
		  "\"status\":\"CREATED\",\"transaction_id\":\"tx_$cid\"}";
	};

	if ($path =~ m{^/_control/outage/(on|off|\d{3})$})
	{
		if ($1 eq 'off') { unlink "$dir/outage"; }
		else
		{
			open(my $fh, '>', "$dir/outage.tmp") or die;
			print $fh ($1 eq 'on' ? 503 : $1);
			close $fh;
			rename("$dir/outage.tmp", "$dir/outage");
		}
		return reply($c, 200, '{"ok":true}');
	}
	if ($path =~ m{^/_control/(drop|stale)/([A-Za-z0-9_-]+)$})
	{
		open(my $fh, '>', "$dir/$1") or die;
		print $fh $2;
		close $fh;
		return reply($c, 200, '{"ok":true}');
	}
	# once(what, cid): true the first time only, when cid starts with the
	# prefix of control file what
	my $once = sub {
		my ($what, $cid) = @_;
		open(my $fh, '<', "$dir/$what") or return 0;
		my $prefix = <$fh>;
		close $fh;
		return 0 unless defined $prefix && index($cid, $prefix) == 0;
		(my $n = $cid) =~ s/[^A-Za-z0-9_.-]/_/g;
		return 0 unless sysopen(my $m, "$dir/$what.$n", O_WRONLY | O_CREAT | O_EXCL);
		close $m;
		return 1;
	};
	if ($path =~ m{^/_control/delay/(\d+)$})
	{
		open(my $fh, '>', "$dir/delay") or die;
		print $fh $1;
		close $fh;
		return reply($c, 200, '{"ok":true}');
	}
	if ($path eq '/_control/orders')
	{
		opendir(my $dh, "$dir/orders") or return reply($c, 200, '{}');
		my @ids;
		for my $f (sort grep { !/^\./ } readdir $dh)
		{
			open(my $fh, '<', "$dir/orders/$f") or next;
			my $cid = <$fh>;
			close $fh;
			push @ids, "\"$cid\":1" if defined $cid;
		}
		closedir $dh;
		return reply($c, 200, '{' . join(',', @ids) . '}');
	}
	if (open(my $fh, '<', "$dir/outage"))
	{
		my $status = <$fh>;
		close $fh;
		return reply($c, $status || 503, '{"error":"unavailable","data":null}');
	}

	if ($path eq '/public/orders' && $method eq 'POST')
	{
		my @cids = $body =~ /"custom_id"\s*:\s*"([^"\\]*)"/g;
		my $refused = '{"error":{"type":"invalid_request","code":"E_HOSTILE_4711"},"data":null}';
		return reply($c, 400, $refused) unless @cids;
		for my $cid (@cids)
		{
			return reply($c, 400, $refused) if -e $fname->($cid);
		}
		for my $cid (@cids)
		{
			sysopen(my $fh, $fname->($cid), O_WRONLY | O_CREAT | O_EXCL)
			  or return reply($c, 400, $refused);
			syswrite($fh, $cid);
			close $fh;
		}
		if (open(my $fh, '<', "$dir/delay"))
		{
			my $ms = <$fh>;
			close $fh;
			sleep($ms / 1000) if $ms;
		}
		return if $once->('drop', $cids[0]);	# closed with no answer
		return reply($c, 200, "{\"error\":null,\"data\":{\"transaction_id\":\"tx_$cids[0]\"," .
			  "\"order_has_been_paid\":true,\"orders\":[" . join(',', map { $order->($_) } @cids) . "]}}");
	}
	if ($path =~ m{^/public/orders/([^/]+)$} && $method eq 'GET')
	{
		my $cid = pct_decode($1);
		return reply($c, 200, "{\"error\":null,\"data\":" . $order->($cid) . "}")
		  if -e $fname->($cid) && !$once->('stale', $cid);
		return reply($c, 404, '{"error":"order_not_found","data":null}');
	}
	return reply($c, 404, '{"error":{"code":"not_found"}}');
}
