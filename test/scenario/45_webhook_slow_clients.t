# Hostile clients against the webhook listener: 1,000 slow connections
# from 127.0.0.2 while a sender on 127.0.0.1 gets its 200 within 2 s;
# then each limit alone (connections per address, header deadline,
# request deadline, minimum body rate, body bytes in flight) and the exact
# matching of the path.  Every server and client is on 127.0.0.0/8.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use WebhookTest;
use IO::Select;
use IO::Socket::INET;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(sleep time);

$SIG{PIPE} = 'IGNORE';	# writes to connections the server cut off

my $slow_pl = "$FindBin::Bin/../bench/slow_clients.pl";
-f $slow_pl or BAIL_OUT("test/bench/slow_clients.pl not found");

# 127.0.0.2 must be usable as a source address (Linux: all of 127/8 is)
my $probe = IO::Socket::INET->new(LocalAddr => '127.0.0.2', Proto => 'tcp');
plan skip_all => '127.0.0.2 is not usable as a source address' unless $probe;
close $probe;

my ($node, $port) = webhook_node('slow_clients');
my $pid = worker_pid($node);
my $n_ok = 0;

# one delivery from 127.0.0.1: (status, seconds)
sub timed_post
{
	my ($id) = @_;
	my $t0 = time;
	my $r = post_webhook($port, 'sandbox', order_event('ORDER_STATUS_CHANGED', 'CREATED', $id));
	$n_ok++ if $r->{status} == 200;
	return ($r->{status}, time - $t0);
}

# a raw connection from FROM, having sent TEXT
sub raw_conn
{
	my ($from, $text) = @_;
	my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $port,
		LocalAddr => $from, Proto => 'tcp', Timeout => 5) or die "connect: $!";
	syswrite($s, $text) if defined $text && length $text;
	return $s;
}

# true when the server has closed s (end of stream within WAIT seconds);
# whatever it answered first is returned in $$answer
sub closed_within
{
	my ($s, $wait, $answer) = @_;
	my $sel = IO::Select->new($s);
	my $end = time + $wait;
	my $got = '';
	for (my $left = $wait; $left >= 0; $left = $end - time)
	{
		next unless $sel->can_read($left);
		my $buf;
			my $r = sysread($s, $buf, 65536);
		if (!defined $r || $r == 0)
		{
			$$answer = $got if $answer;
			return 1;
		}
		$got .= $buf;
		last if $left <= 0;
	}
	$$answer = $got if $answer;
	return 0;
}

# a raw request, the status of its answer
sub raw_status
{
	my ($text) = @_;
	my $s = raw_conn('127.0.0.1', $text);
	my $answer = '';
	closed_within($s, 10, \$answer);
	close $s;
	return $answer =~ m{^HTTP/1\.\d (\d+)} ? $1 : 0;
}

# --- 1,000 slow connections from 127.0.0.2 (default limits) ---------------
my $slow_out = "$PostgreSQL::Test::Utils::tmp_check/slow_clients.out";
my $slow_pid = fork // die "fork: $!";
if ($slow_pid == 0)
{
	open(STDOUT, '>', $slow_out) or die;
	exec($^X, $slow_pl, '--port', $port, '--from', '127.0.0.2', '--count', 1000,
		'--mode', 'mixed', '--interval', 2, '--seconds', 40, '--procs', 4) or die "exec: $!";
}
sleep 5;	# let them connect
my @times;
for my $i (1 .. 10)
{
	my ($status, $secs) = timed_post("ord_slow_$i");
	is($status, 200, "delivery $i during the attack: 200");
	push @times, $secs;
	sleep 2;
}
my @late = grep { $_ >= 2 } @times;
is(scalar @late, 0, 'every delivery during the attack answered within 2 s')
  or diag("answer times: @times");
waitpid($slow_pid, 0);
my $slow = do { local (@ARGV, $/) = ($slow_out); <> } // '';
note("slow clients: $slow");
my ($opened, $closed, $max_life) = $slow =~ /opened=(\d+) closed_by_server=(\d+).*lifetime_max=([\d.]+)/;
ok(defined $opened && $opened >= 1000, 'the slow clients opened their 1,000 connections and more');
ok(defined $closed && $closed >= 936, 'the server closed at least the connections over the cap');
ok(webhook_status($node)->{timed_out} >= 64, 'the slow connections let in were cut off by the deadlines and the minimum rate');
is($node->safe_psql('postgres', "SELECT count(*) FROM partner_svc.webhook_events WHERE unique_id LIKE 'ord_slow_%'"),
	$n_ok, 'every delivery answered 200 is stored');

# --- the limits one by one, with small values ------------------------------
my $since = webhook_status($node)->{listening_since};
$node->safe_psql('postgres', qq{
	ALTER SYSTEM SET partner_svc.webhook_max_connections_per_address = 20;
	ALTER SYSTEM SET partner_svc.webhook_header_timeout = 2;
	ALTER SYSTEM SET partner_svc.webhook_request_timeout = 6;
	ALTER SYSTEM SET partner_svc.webhook_min_rate = 100;
	SELECT pg_reload_conf()});
ok(wait_for(sub { my $s = webhook_status($node); $s->{state} eq 'listening' && $s->{listening_since} ne $since }, 30),
	'a new cap per address reopens the listener');

# connections per source address
{
	my @s = map { raw_conn('127.0.0.2') } 1 .. 30;
	# refusals come at once; before the header deadline (2 s) cuts the rest
	my %gone;
	my $t0 = time;
	while (time - $t0 < 1.2)
	{
		$gone{$_} ||= closed_within($s[$_], 0) for 0 .. $#s;
		sleep 0.05;
	}
	my $refused = grep { $_ } values %gone;
	is($refused, 10, 'connections per address: 20 of 30 from 127.0.0.2 kept, 10 closed at once');
	my ($status) = timed_post('ord_other_address');
	is($status, 200, 'meanwhile a sender from 127.0.0.1 gets its 200');
	close $_ for @s;
	# the listener must see the closes before the next connections count
	ok(wait_for(sub { my $c = eval { raw_conn('127.0.0.2') } or return 0;
		my $open = !closed_within($c, 0.2); close $c; $open }, 30),
		'after they close, 127.0.0.2 may connect again');
	sleep 0.5;
}

# header deadline: a header line every 0.5 s (the idle timeout, also
# 2 s, never fires), cut at 2 s
{
	my $s = raw_conn('127.0.0.2', "POST /webhooks/sandbox HTTP/1.1\r\nHost: x\r\n");
	my $t0 = time;
	my $cut = 0;
	for my $i (1 .. 20)
	{
		if (closed_within($s, 0.5)) { $cut = 1; last; }
		syswrite($s, "X-Slow-$i: x\r\n");
	}
	my $after = time - $t0;
	ok($cut && $after >= 1.5 && $after < 6, 'header deadline: a trickle of headers is cut off after 2 s')
	  or diag("cut=$cut after ${after}s");
	close $s;
}

# minimum rate: headers complete, then one byte of body every 0.5 s
{
	my $s = raw_conn('127.0.0.2', "POST /webhooks/sandbox HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n");
	my $t0 = time;
	my $cut = 0;
	for my $i (1 .. 20)
	{
		if (closed_within($s, 0.5)) { $cut = 1; last; }
		syswrite($s, 'a');
	}
	my $after = time - $t0;
	ok($cut && $after < 5.5, 'minimum rate: a body at 2 bytes/s is cut off before the request deadline')
	  or diag("cut=$cut after ${after}s");
	close $s;
}

# request deadline: a body at 200 bytes/s (above the minimum rate) that
# would take 25 s is cut off at 6 s, unanswered
{
	my $s = raw_conn('127.0.0.2', "POST /webhooks/sandbox HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n");
	my $t0 = time;
	my ($cut, $answer) = (0, '');
	for my $i (1 .. 60)
	{
		if (closed_within($s, 0.25, \$answer)) { $cut = 1; last; }
		syswrite($s, 'a' x 50);
	}
	my $after = time - $t0;
	ok($cut && $after >= 5 && $after < 10, 'request deadline: a steady but endless body is cut off at 6 s')
	  or diag("cut=$cut after ${after}s");
	is($answer, '', 'and it got no answer');
	close $s;
}
ok(webhook_status($node)->{timed_out} >= 3, 'webhook_status counts the connections cut off');

# body bytes in flight: 64 kB over all requests
$since = webhook_status($node)->{listening_since};
$node->safe_psql('postgres', qq{
	ALTER SYSTEM SET partner_svc.webhook_max_body_in_flight = '64kB';
	ALTER SYSTEM SET partner_svc.webhook_min_rate = 0;
	ALTER SYSTEM SET partner_svc.webhook_header_timeout = 60;
	ALTER SYSTEM SET partner_svc.webhook_request_timeout = 60;
	SELECT pg_reload_conf()});
ok(wait_for(sub { my $s = webhook_status($node); $s->{state} eq 'listening' && $s->{listening_since} ne $since }, 30),
	'in-flight budget set (a new idle timeout reopens the listener)');
sleep 1;
{
	my $head = "POST /webhooks/sandbox HTTP/1.1\r\nHost: x\r\nContent-Length: 30000\r\n\r\n";
	my @held = map { raw_conn('127.0.0.2', $head) } 1 .. 2;
	sleep 0.5;
	my $answer = '';
	# the budget counts the memory a body holds, the Content-Length and the
	# NUL reserved with it: 65536 - 2 x 30001 = 5534 bytes are left
	my $edge = raw_conn('127.0.0.1', "POST /webhooks/sandbox HTTP/1.1\r\nHost: x\r\nContent-Length: 5534\r\n\r\n");
	closed_within($edge, 5, \$answer);
	like($answer, qr{^HTTP/1\.1 503 }, 'a body that fits only without its NUL: 503');
	close $edge;
	is(post_webhook($port, 'sandbox', '{"x":"' . ('e' x 5525) . '"}')->{status}, 400,
		'a body of 5533 bytes and its NUL fill the budget exactly: read (400: not an event)');
	$answer = '';
	my $third = raw_conn('127.0.0.2', $head);
	closed_within($third, 5, \$answer);
	like($answer, qr{^HTTP/1\.1 503 }, 'over the budget: 503');
	like($answer, qr{\r\nRetry-After: \d+\r\n}i, '503 with Retry-After');
	close $third;
	my ($status) = timed_post('ord_small_fits');
	is($status, 200, 'a small delivery still fits in the budget: 200');
	$answer = '';
	my $chunked = raw_conn('127.0.0.1', "POST /webhooks/sandbox HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
		  . join('', map { sprintf("%x\r\n%s\r\n", 2000, 'c' x 2000) } 1 .. 5) . "0\r\n\r\n");
	closed_within($chunked, 5, \$answer);
	like($answer, qr{^HTTP/1\.1 503 }, 'a chunked body that grows over the budget: 503');
	close $chunked;
	close $_ for @held;
	sleep 0.5;
	my $big = '{"x":"' . ('b' x 30000) . '"}';
	is(post_webhook($port, 'sandbox', $big)->{status}, 400,
		'once the held bodies are gone, the budget is free again (read, and 400: not an event)');
}
$node->safe_psql('postgres', qq{
	ALTER SYSTEM RESET partner_svc.webhook_max_body_in_flight;
	SELECT pg_reload_conf()});

# --- the path is matched byte for byte -------------------------------------
my $good = order_event('ORDER_STATUS_CHANGED', 'PENDING', 'ord_path');
my $len = length $good;
for my $path ('/webhooks/sandbox%00x', '/webhooks/sandbox%00', '/webhooks/sandboxx',
	'/webhooks/sandbox/', '/webhooks/sandbox?x=1', '/webhooks/%73andbox', '/webhooks/sandbox%20',
	'/webhooks/production%00', '//webhooks/sandbox', 'http://127.0.0.1/webhooks/sandbox')
{
	is(raw_status("POST $path HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: $len\r\n\r\n$good"),
		404, "POST $path: 404");
}
is(raw_status("POST /webhooks/sandbox HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: $len\r\n\r\n$good"),
	200, 'POST /webhooks/sandbox as a raw request: 200');
is($node->safe_psql('postgres', "SELECT count(*) FROM partner_svc.webhook_events WHERE unique_id = 'ord_path'"),
	1, 'only the exact path stored the event');

# --- nothing crashed --------------------------------------------------------
is(webhook_status($node)->{state}, 'listening', 'still listening');
is(worker_pid($node), $pid, 'the worker never restarted');
ok(!$node->log_contains('terminated by signal'), 'no process crashed');

$node->stop;
done_testing();
