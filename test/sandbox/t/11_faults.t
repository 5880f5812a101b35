# Fault injection: every kind, its rate and count, per route, from the
# command line and at run time.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/../lib";
use Sandbox;
use Test::More;
use IO::Socket::INET;
use Errno qw(ECONNRESET);
use Time::HiRes qw(time);

my $sb = Sandbox->start(args => ['--seed', '3', '--fault', 'GET /todos:latency=150,count=1']);

# Raw GET: returns (header text, body bytes read, how it ended).
sub raw_get
{
	my ($path) = @_;
	my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $sb->port, Proto => 'tcp')
	  or die "connect: $!";
	print $s "GET $path HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
	my $data = '';
	my $end = 'eof';
	while (1)
	{
		my $n = sysread($s, my $buf, 65536);
		if (!defined $n) { $end = ($! == ECONNRESET) ? 'reset' : "error $!"; last }
		last if $n == 0;
		$data .= $buf;
	}
	close $s;
	my ($head, $body) = split /\r\n\r\n/, $data, 2;
	return ($head // '', $body // '', $end);
}

my $t0 = time;
is($sb->req('GET', '/todos')->{status}, 200, 'latency from --fault: still answers');
cmp_ok(time - $t0, '>=', 0.14, 'latency from --fault applied');
$t0 = time;
$sb->req('GET', '/todos');
cmp_ok(time - $t0, '<', 0.14, 'count=1: latency applied once');

# error with a count: fail twice then recover
$sb->fault({ route => 'GET /todos', kind => 'error', count => 2 });
my @st = map { $sb->req('GET', '/todos')->{status} } 1 .. 3;
is_deeply(\@st, [503, 503, 200], 'error count=2 then recovery');
$sb->fault({ route => 'GET /todos', kind => 'error', value => 500, count => 1 });
my $r = $sb->req('GET', '/todos');
is($r->{status}, 500, 'error with a status');
is($r->{json}{error}{code}, 'injected_fault', 'injected error body');

# route specificity
$sb->fault({ route => 'POST /todos', kind => 'error', count => 1 });
is($sb->req('GET', '/todos')->{status}, 200, 'fault on POST does not touch GET');
$sb->clear_faults;

# 429 with and without Retry-After
$sb->fault({ route => 'GET /todos', kind => '429', value => 3, count => 1 });
$r = $sb->req('GET', '/todos');
is($r->{status}, 429, 'injected 429');
is($r->{headers}{'retry-after'}, '3', 'injected 429 with Retry-After');
$sb->fault({ route => 'GET /todos', kind => '429', count => 1 });
$r = $sb->req('GET', '/todos');
is($r->{status}, 429, 'injected 429 without value');
ok(!exists $r->{headers}{'retry-after'}, 'no Retry-After without value');

# malformed JSON
$sb->fault({ route => 'GET /todos', kind => 'malformed', count => 1 });
$r = $sb->req('GET', '/todos');
is($r->{status}, 200, 'malformed: status 200');
ok(length $r->{body}, 'malformed: has a body');
ok(!defined eval { JSON::PP->new->decode($r->{body}) }, 'malformed: body is not JSON');

# truncated body: clean close before Content-Length
my ($head, $body, $end) = raw_get('/todos');
my ($full) = $head =~ /Content-Length: (\d+)/i;
$sb->fault({ route => 'GET /todos', kind => 'truncate', count => 1 });
($head, $body, $end) = raw_get('/todos');
my ($cl) = $head =~ /Content-Length: (\d+)/i;
is($cl, $full, 'truncate: Content-Length announces the whole body');
cmp_ok(length $body, '<', $cl, 'truncate: fewer bytes than announced');
is($end, 'eof', 'truncate: ends with a clean close');

# reset mid-response
$sb->fault({ route => 'GET /todos', kind => 'reset', count => 1 });
($head, $body, $end) = raw_get('/todos');
ok($end eq 'reset' || length($body) < $full, 'reset: the body does not arrive whole');
is($end, 'reset', 'reset: the connection is reset (RST)');

# slow drip
$sb->fault({ route => 'GET /todos', kind => 'drip', value => 20, count => 1 });
$t0 = time;
$r = $sb->req('GET', '/todos');
my $took = time - $t0;
is($r->{status}, 200, 'drip: completes');
my $pieces = int((length($r->{body}) + 15) / 16);
cmp_ok($took, '>=', $pieces * 0.02 * 0.9, "drip: $pieces pieces 20 ms apart");
ok(defined $r->{json}, 'drip: body intact');

# apply then drop: the todo is created, the answer never comes
my $before = scalar @{ $sb->req('GET', '/todos')->{json} };
$sb->fault({ route => 'POST /todos', kind => 'drop_after_apply', count => 1 });
$r = $sb->req('POST', '/todos', json => { title => 'dropped', userId => 1 });
is($r->{status}, 599, 'drop_after_apply: no HTTP answer');
my $after = $sb->req('GET', '/todos')->{json};
is(scalar @$after, $before + 1, 'drop_after_apply: the change was applied');
ok(grep({ $_->{title} eq 'dropped' } @$after), 'drop_after_apply: the dropped todo exists');
# a request the route refuses is not dropped (nothing applied)
$sb->fault({ route => 'POST /todos', kind => 'drop_after_apply', count => 1 });
$r = $sb->req('POST', '/todos', json => { nope => 1 });
is($r->{status}, 400, 'drop_after_apply: a refused request is answered');

# HTTP::Tiny resends an idempotent request whose connection closes; req()'s
# once => 1 sends it exactly once (the harness itself is under test here)
$sb->reset_stats;
$sb->fault({ route => 'PUT /todos/{id}', kind => 'drop_after_apply', count => 1 });
$r = $sb->req('PUT', '/todos/1', json => { title => 'resent' });
is($r->{status}, 200, 'PUT dropped once: the silent resend is answered');
is($sb->count('PUT /todos/{id}'), 2, 'PUT dropped once: it reached the sandbox twice');
$sb->reset_stats;
$sb->fault({ route => 'PUT /todos/{id}', kind => 'drop_after_apply', count => 1 });
$r = $sb->req('PUT', '/todos/1', json => { title => 'once' }, once => 1);
is($r->{status}, 599, 'once: the dropped PUT is not resent');
is($sb->count('PUT /todos/{id}'), 1, 'once: it reached the sandbox once');
$sb->reset_stats;
$sb->fault({ route => 'GET /todos', kind => 'truncate', count => 1 });
$r = $sb->req('GET', '/todos', once => 1);
is($r->{status}, 599, 'once: a truncated GET is reported');
is($sb->count('GET /todos'), 1, 'once: the truncated GET is not resent');
is($sb->req('GET', '/todos')->{status}, 200, 'once only affects its own request');

# rate
$sb->clear_faults;
$sb->fault({ route => 'GET /todos', kind => 'error', rate => 0.5 });
my $errors = grep { $sb->req('GET', '/todos')->{status} == 503 } 1 .. 200;
cmp_ok($errors, '>', 60, 'rate 0.5: some fail');
cmp_ok($errors, '<', 140, 'rate 0.5: some succeed');
my $f = $sb->req('GET', '/_sandbox/faults')->{json}{faults};
is($f->[0]{hits}, $errors, 'hits counted');
$sb->clear_faults;
is(scalar @{ $sb->req('GET', '/_sandbox/faults')->{json}{faults} }, 0, 'faults cleared');

$r = $sb->req('POST', '/_sandbox/faults', json => { kind => 'nope' });
is($r->{status}, 400, 'invalid fault: 400');
$r = $sb->req('POST', '/_sandbox/faults', json => { kind => 'error', rate => 2 });
is($r->{status}, 400, 'invalid rate: 400');

# skip: let the first N through
$sb->fault({ route => 'GET /todos', kind => 'error', skip => 2, count => 1 });
@st = map { $sb->req('GET', '/todos')->{status} } 1 .. 4;
is_deeply(\@st, [200, 200, 503, 200], 'skip=2 count=1 fails only the third');

# corrupt_cursor: the next page is refused as an invalid cursor
my $mk = Sandbox->start(args => ['--seed', '3']);
$mk->fault({ route => 'GET /v1/movies/{movie}/content/themes', kind => 'corrupt_cursor', count => 1 });
$r = $mk->req('GET', '/v1/movies/epic-saga/content/themes?limit=5', key => 'sandbox-key');
is($r->{status}, 200, 'corrupt_cursor: the page itself is fine');
is(scalar @{ $r->{json}{data} }, 5, 'corrupt_cursor: items intact');
my $cur = $r->{json}{pagination}{next_cursor};
like($cur, qr/SPOILED$/, 'corrupt_cursor: the cursor is spoiled');
$r = $mk->req('GET', '/v1/movies/epic-saga/content/themes?limit=5&cursor=' . $cur, key => 'sandbox-key');
is($r->{status}, 400, 'corrupt_cursor: next page refused');
is($r->{json}{error}{code}, 'invalid_cursor', 'corrupt_cursor: as an invalid cursor');
# a nested list's cursor (data.events.pagination) is spoiled too, and on
# the last page (no cursor) the answer is left as it is
$mk->fault({ route => 'GET /concerts/{concert}', kind => 'corrupt_cursor', count => 2 });
$r = $mk->req('GET', '/concerts/1?limit=20', key => 'sandbox-key');
is($r->{status}, 200, 'corrupt_cursor nested: the page itself is fine');
is(scalar @{ $r->{json}{data}{events}{data} }, 20, 'corrupt_cursor nested: items intact');
$cur = $r->{json}{data}{events}{pagination}{next_cursor};
like($cur, qr/SPOILED$/, 'corrupt_cursor nested: data.events.pagination.next_cursor is spoiled');
$r = $mk->req('GET', '/concerts/1?limit=20&cursor=' . $cur, key => 'sandbox-key');
is($r->{status}, 400, 'corrupt_cursor nested: next page refused');
is($r->{json}{error}{code}, 'invalid_cursor', 'corrupt_cursor nested: as an invalid cursor');
$r = $mk->req('GET', '/concerts/2', key => 'sandbox-key');
is($r->{status}, 200, 'corrupt_cursor nested: an empty list is served');
ok(!defined $r->{json}{data}{events}{pagination}{next_cursor}, 'corrupt_cursor nested: no cursor stays no cursor');
$mk->stop;

# faults never touch the control routes
$sb->fault({ kind => 'error' });
is($sb->req('GET', '/_sandbox/health')->{status}, 200, 'control routes are exempt');
is($sb->req('GET', '/todos')->{status}, 503, 'route "*" matches all');
$sb->clear_faults;

done_testing();
