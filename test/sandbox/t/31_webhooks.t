# Outgoing webhooks of the partner order service: callback setup per
# environment, payload shapes and order per order, one webhook per order,
# checkout events, retries after 1, 5 and 15 sandbox minutes, giving up
# after 3 retries, transport errors, the optional secret header; no proxy
# of the environment is ever used.
#
# A tiny HTTP receiver runs in a forked child; it appends every request it
# gets to a file and answers by path:
#   /fail<N>/...   500 for the first N requests to that path, then 200
#   /always500/... 500        /created/... 201       /slow/... 200 after 0.6 s
#   anything else  200
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/../lib";
use Sandbox;
use Test::More;
use File::Temp qw(tempdir);
use IO::Socket::INET;
use JSON::PP ();
use Time::HiRes qw(sleep time);

my $JSON = JSON::PP->new->canonical;
my $dir = tempdir(CLEANUP => 1);
my $log = "$dir/hooks.jsonl";

my $srv = IO::Socket::INET->new(LocalAddr => '127.0.0.1', LocalPort => 0, Listen => 50,
								ReuseAddr => 1, Proto => 'tcp') or die "listen: $!";
my $rport = $srv->sockport;
my $receiver = fork() // die "fork: $!";
if ($receiver == 0)
{
	my %count;
	while (1)
	{
		my $c = $srv->accept or next;
		my $buf = '';
		while ($buf !~ /\r\n\r\n/)
		{
			my $n = sysread($c, $buf, 65536, length $buf);
			last unless $n;
		}
		my ($head, $body) = split /\r\n\r\n/, $buf, 2;
		$body //= '';
		my ($len) = $head =~ /^Content-Length:\s*(\d+)/mi;
		while (length($body) < ($len // 0))
		{
			my $n = sysread($c, $body, $len - length $body, length $body);
			last unless $n;
		}
		my ($method, $path) = $head =~ /^(\S+) (\S+)/;
		my ($ctype) = $head =~ /^Content-Type:\s*([^\r\n]*)/mi;
		my ($secret) = $head =~ /^X-Partner-Webhook-Secret:\s*([^\r\n]*)/mi;
		$count{$path}++;
		my $status = 200;
		if ($path =~ m{^/fail(\d+)/}) { $status = 500 if $count{$path} <= $1 }
		elsif ($path =~ m{^/always500/}) { $status = 500 }
		elsif ($path =~ m{^/created/}) { $status = 201 }
		elsif ($path =~ m{^/slow/}) { sleep 0.6 }
		open(my $fh, '>>', $log) or die;
		syswrite($fh, $JSON->encode({ method => $method, path => $path, ctype => $ctype,
			secret => $secret, body => $body, status => $status, t => time }) . "\n");
		close $fh;
		print $c "HTTP/1.1 $status X\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok";
		close $c;
	}
	exit 0;
}
close $srv;

# Every request the receiver got, optionally only those under a path prefix.
sub received
{
	my ($prefix) = @_;
	open(my $fh, '<', $log) or return [];
	my @r;
	while (my $l = <$fh>)
	{
		next unless $l =~ /\n$/;
		my $x = $JSON->decode($l);
		next if defined $prefix && index($x->{path}, $prefix) != 0;
		$x->{json} = eval { $JSON->decode($x->{body}) };
		push @r, $x;
	}
	return \@r;
}

# The sandbox runs with proxy variables in its environment that name a
# loopback port nobody listens on (bound, never listening): its webhooks
# must go straight to the callback URL, never through a proxy, so that a
# proxy set on the machine cannot carry them off loopback.
my $no_listener = IO::Socket::INET->new(LocalAddr => '127.0.0.1', LocalPort => 0,
										Proto => 'tcp') or die "bind: $!";
my $dead_proxy = 'http://127.0.0.1:' . $no_listener->sockport;
my $sb = Sandbox->start(keys => [map { "k$_" } 1 .. 5],
						args => ['--time-scale', '0.001', '--seed', '3'],
						env => { http_proxy => $dead_proxy, HTTPS_PROXY => $dead_proxy,
								 ALL_PROXY => $dead_proxy, no_proxy => '' });
my $base = "http://127.0.0.1:$rport";
my $T = JSON::PP::true;
my $F = JSON::PP::false;

sub order_body
{
	my ($paid, @cids) = @_;
	return { terms_and_privacy_accepted => $T, order_has_been_paid => $paid ? $T : $F,
		vehicles => [{ plate => 'KR 100', country => 'SI' }],
		vignettes => [map { { custom_id => $_, name => "vignette $_", period => '10_days',
			start_date => '2020-06-01' } } @cids] };
}

sub create
{
	my ($key, $paid, @cids) = @_;
	my $r = $sb->req('POST', '/public/orders', key => $key, json => order_body($paid, @cids));
	die "create: $r->{body}" unless $r->{status} == 201;
	return $r->{json}{data};
}

sub put_cb { my ($key, $cb) = @_; $sb->req('PUT', '/_sandbox/orders/callback', key => $key, json => $cb) }
sub attempts { $sb->req('GET', '/_sandbox/orders/webhooks' . ($_[1] // ''), key => $_[0])->{json} }

# --- callback setup ---
is($sb->req('GET', '/_sandbox/orders/callback')->{status}, 401, 'callback admin route needs the key');
my $r = $sb->req('GET', '/_sandbox/orders/callback', key => 'k1');
is_deeply($r->{json}{data}, { sandbox => undef, production => undef, environment => 'sandbox', active => undef },
	'no callback URLs at first');
$r = put_cb('k1', { sandbox => "$base/same", production => "$base/same" });
is($r->{status}, 400, 'equal URLs: 400');
is($r->{json}{error}{code}, 'callback_urls_equal', 'equal URLs: code');
is(put_cb('k1', { sandbox => 'ftp://x/y', production => "$base/p" })->{json}{error}{code},
	'callback_url_invalid', 'non-http URL: callback_url_invalid');
is(put_cb('k1', { sandbox => "$base/a", staging => "$base/b" })->{json}{error}{code},
	'unknown_field', 'unknown member');
is($sb->req('PUT', '/_sandbox/orders/callback', key => 'k1', body => '{}', ctype => 'text/plain')->{status},
	400, 'callback PUT needs JSON');

# the events of an order made before any callback is set are logged but not
# delivered (the URL is looked up when an event is made)
create('k1', 1, 'BEFORE');
ok(Sandbox::wait_until(sub { @{ $sb->req('GET', '/_sandbox/orders/events', key => 'k1')->{json} } == 4 }, 5),
	'four events of the first order logged');
$r = put_cb('k1', { sandbox => "$base/k1/sandbox", production => "$base/k1/prod" });
is($r->{status}, 200, 'callback set') or diag $r->{body};
is_deeply($r->{json}{data}, { sandbox => "$base/k1/sandbox", production => "$base/k1/prod",
	environment => 'sandbox', active => "$base/k1/sandbox" }, 'callback echoed, sandbox URL active');
is_deeply($sb->req('GET', '/_sandbox/orders/callback', key => 'k1')->{json}{data}, $r->{json}{data}, 'GET callback');

# --- a paid transaction of two orders ---
my $tx = create('k1', 1, 'A', 'B');
my ($ida, $idb) = map { $_->{id} } @{ $tx->{orders} };
ok(Sandbox::wait_until(sub { @{ received('/k1/sandbox') } >= 8 }, 10), 'eight webhooks arrive') or
	diag explain received();
sleep 0.1;
my $got = received('/k1/sandbox');
is(scalar @$got, 8, 'exactly eight (4 per order)');
is(scalar @{ received('/k1/prod') }, 0, 'nothing sent to the production URL');
ok(!(grep { $_->{json}{product}{custom_id} eq 'BEFORE' } @$got), 'no delivery for the order made before setup');
ok(!(grep { $_->{method} ne 'POST' || $_->{ctype} !~ m{^application/json} } @$got), 'POST with JSON');
ok(!(grep { defined $_->{secret} } @$got), 'no secret header by default');
for my $o (['A', $ida], ['B', $idb])
{
	my ($cid, $id) = @$o;
	my @mine = grep { $_->{json}{product}{unique_id} eq $id } @$got;
	is_deeply([map { "$_->{json}{event_type} $_->{json}{status}" } @mine],
			  ['ORDER_STATUS_CHANGED CREATED', 'ORDER_STATUS_CHANGED PENDING', 'ORDER_STATUS_CHANGED ACTIVE',
			   'ORDER_CONFIRMATION_RECEIVED ACTIVE'], "order $cid: documented sequence, in order");
	is_deeply($mine[0]{json}, { event_type => 'ORDER_STATUS_CHANGED', status => 'CREATED',
		product => { custom_id => $cid, unique_id => $id, name => "vignette $cid" } },
		"order $cid: ORDER_STATUS_CHANGED shape exactly");
	my $conf = $mine[3]{json};
	is_deeply([sort keys %$conf], [qw(event_type product status)], "order $cid: confirmation top level");
	is_deeply([sort keys %{ $conf->{product} }], [qw(custom_id name pdf_url unique_id)], "order $cid: confirmation product");
	like($conf->{product}{pdf_url}, qr{^http://127\.0\.0\.1:\d+/_sandbox/orders/pdf/$id$}, "order $cid: pdf_url");
	(my $p = $conf->{product}{pdf_url}) =~ s{^http://[^/]+}{};
	like($sb->req('GET', $p)->{body}, qr/^%PDF/, "order $cid: pdf_url serves the PDF");
}
my $rows = attempts('k1');
is(scalar @$rows, 8, 'eight attempts recorded');
my $row = $rows->[0];
is_deeply([sort keys %$row],
	[sort qw(delivery_id event_seq order_id transaction_id event_type status attempt url http_status error at
		at_ms sandbox_ms outcome next_retry_in_min body)], 'attempt row fields');
ok(!(grep { $_->{attempt} != 1 || $_->{http_status} != 200 || defined $_->{error} || $_->{outcome} ne 'delivered'
	|| $_->{url} ne "$base/k1/sandbox" } @$rows), 'all first attempts, HTTP 200, delivered');
is_deeply([map { $_->{body} } @$rows], [map { $_->{json} } @$got], 'recorded bodies are what was received, in order');
my %dids = map { $_->{delivery_id} => 1 } @$rows;
is(scalar keys %dids, 8, 'distinct delivery ids');
like($row->{at}, qr/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/, 'at is ISO 8601');
is(scalar @{ attempts('k1', "?order_id=$ida") }, 4, 'filter by order_id');
is(scalar @{ attempts('k2') }, 0, "another partner's key sees none of them");
is(scalar @{ $sb->req('GET', '/_sandbox/orders/webhooks')->{json} }, 8, 'without a key: all partners');
my $events = $sb->req('GET', '/_sandbox/orders/events', key => 'k1')->{json};
is(scalar @$events, 12, 'events log has the undelivered ones too');
ok(!defined $events->[0]{url}, 'undelivered event: url null');
is($events->[-1]{url}, "$base/k1/sandbox", 'delivered event: url');

# --- checkout events: unpaid transaction, pay ---
$tx = create('k1', 0, 'U1', 'U2');
ok(Sandbox::wait_until(sub { grep { $_->{json}{event_type} eq 'CHECKOUT_STATUS_CHANGED' } @{ received('/k1/') } }, 5),
	'checkout CREATED arrives');
my ($chk) = grep { $_->{json}{event_type} eq 'CHECKOUT_STATUS_CHANGED' } @{ received('/k1/') };
is_deeply($chk->{json}, { transaction_id => $tx->{transaction_id}, event_type => 'CHECKOUT_STATUS_CHANGED',
	status => 'CREATED', products => [map { { custom_id => $_->{custom_id}, unique_id => $_->{id},
	name => $_->{name} } } @{ $tx->{orders} }] }, 'CHECKOUT_STATUS_CHANGED shape: both orders in products');
is($sb->req('POST', "/_sandbox/orders/transactions/$tx->{transaction_id}/pay", key => 'k1')->{status}, 200, 'paid');
ok(Sandbox::wait_until(sub { (grep { ($_->{json}{product}{custom_id} // '') =~ /^U/ && $_->{json}{status} eq 'ACTIVE' }
	@{ received('/k1/') }) == 2 }, 10), 'both paid orders reach ACTIVE by webhook');
my @seq = map { $_->{json}{event_type} eq 'CHECKOUT_STATUS_CHANGED' ? "CHECKOUT $_->{json}{status}"
	: "$_->{json}{product}{custom_id} $_->{json}{status}" }
	grep { $_->{json}{transaction_id} || ($_->{json}{product}{custom_id} // '') =~ /^U/ } @{ received('/k1/') };
is_deeply([@seq[0 .. 3]], ['CHECKOUT CREATED', 'CHECKOUT SUCCESS', 'U1 CREATED', 'U2 CREATED'],
	'checkout SUCCESS, then one ORDER_STATUS_CHANGED CREATED per order');
$tx = create('k1', 0, 'F1');
$sb->req('POST', "/_sandbox/orders/transactions/$tx->{transaction_id}/fail", key => 'k1');
ok(Sandbox::wait_until(sub { grep { ($_->{json}{transaction_id} // '') eq $tx->{transaction_id}
	&& $_->{json}{status} eq 'FAILED' } @{ received('/k1/') } }, 5), 'checkout FAILED sent');
sleep 0.3;
ok(!(grep { ($_->{json}{product}{custom_id} // '') eq 'F1' } @{ received('/k1/') }), 'no order webhook after a failed payment');

# --- retries: 500 twice, then 200; and giving up ---
put_cb('k2', { sandbox => "$base/fail2/k2", production => "$base/k2/prod" });
put_cb('k3', { sandbox => "$base/always500/k3", production => "$base/k3/prod" });
create('k2', 0, 'R1');		# one CHECKOUT_STATUS_CHANGED event
create('k3', 0, 'G1');
ok(Sandbox::wait_until(sub { grep { $_->{outcome} eq 'delivered' } @{ attempts('k2') } }, 10),
	'k2: delivered after retries');
$rows = attempts('k2');
is_deeply([map { $_->{attempt} } @$rows], [1, 2, 3], 'k2: attempts 1, 2, 3');
is_deeply([map { $_->{http_status} } @$rows], [500, 500, 200], 'k2: HTTP 500, 500, 200');
is_deeply([map { $_->{outcome} } @$rows], ['retry_scheduled', 'retry_scheduled', 'delivered'], 'k2: outcomes');
is_deeply([map { $_->{next_retry_in_min} } @$rows], [1, 5, undef], 'k2: next retry in 1, then 5 minutes');
is(scalar(keys %{ { map { $_->{delivery_id} => 1 } @$rows } }), 1, 'k2: one delivery id');
is(scalar(keys %{ { map { $_->{event_seq} => 1 } @$rows } }), 1, 'k2: one event');
is($rows->[0]{error}, 'HTTP 500', 'k2: error names the status');
my @d = map { $rows->[$_]{sandbox_ms} - $rows->[$_ - 1]{sandbox_ms} } 1, 2;
cmp_ok($d[0], '>=', 60_000, "k2: first retry after >= 1 sandbox minute ($d[0] ms)");
cmp_ok($d[0], '<', 60_000 + 150_000, 'k2: ... and not much later');
cmp_ok($d[1], '>=', 300_000, "k2: second retry after >= 5 sandbox minutes ($d[1] ms)");
cmp_ok($d[1], '<', 300_000 + 150_000, 'k2: ... and not much later');
is(scalar @{ received('/fail2/k2') }, 3, 'receiver saw three identical tries');
is(scalar(keys %{ { map { $_->{body} => 1 } @{ received('/fail2/k2') } } }), 1, 'same body each time');

ok(Sandbox::wait_until(sub { grep { $_->{outcome} eq 'given_up' } @{ attempts('k3') } }, 10), 'k3: given up');
sleep 0.5;		# about 8 sandbox minutes: no further attempt
$rows = attempts('k3');
is_deeply([map { $_->{attempt} } @$rows], [1, 2, 3, 4], 'k3: 1 try + 3 retries, no more');
is_deeply([map { $_->{outcome} } @$rows], [('retry_scheduled') x 3, 'given_up'], 'k3: outcomes');
@d = map { $rows->[$_]{sandbox_ms} - $rows->[$_ - 1]{sandbox_ms} } 1 .. 3;
cmp_ok($d[$_], '>=', (60_000, 300_000, 900_000)[$_], "k3: gap $_ is at least its delay ($d[$_])") for 0 .. 2;
cmp_ok($d[2], '<', 900_000 + 150_000, 'k3: last gap about 15 minutes');
is(scalar @{ received('/always500/k3') }, 4, 'receiver saw four tries');

# --- transport error, non-200 success codes ---
my $closed = IO::Socket::INET->new(LocalAddr => '127.0.0.1', LocalPort => 0, Listen => 1, Proto => 'tcp');
my $cport = $closed->sockport;
close $closed;
put_cb('k4', { sandbox => "http://127.0.0.1:$cport/nothing", production => "$base/k4/prod" });
create('k4', 0, 'C1');
ok(Sandbox::wait_until(sub { @{ attempts('k4') } >= 1 }, 5), 'k4: attempt recorded');
$row = attempts('k4')->[0];
ok(!defined $row->{http_status} && defined $row->{error} && $row->{error} ne '', "k4: connection error recorded ($row->{error})");
is($row->{outcome}, 'retry_scheduled', 'k4: a connection error is retried');
put_cb('k5', { sandbox => "$base/created/k5", production => "$base/k5/prod" });
create('k5', 0, 'N1');
ok(Sandbox::wait_until(sub { @{ attempts('k5') } >= 1 }, 5), 'k5: attempt recorded');
$row = attempts('k5')->[0];
is($row->{http_status}, 201, 'k5: HTTP 201 recorded');
is($row->{outcome}, 'retry_scheduled', 'k5: only 200 confirms receipt');

# --- timeout ---
$sb->config({ 'orders.webhook_timeout_ms' => 200 });
put_cb('k5', { sandbox => "$base/slow/k5", production => "$base/k5/prod" });
create('k5', 0, 'S1');
ok(Sandbox::wait_until(sub { grep { $_->{url} =~ m{/slow/} } @{ attempts('k5') } }, 5), 'k5: slow attempt recorded');
($row) = grep { $_->{url} =~ m{/slow/} } @{ attempts('k5') };
ok(!defined $row->{http_status} && ($row->{error} // '') =~ /time/i, "k5: timeout is an error ($row->{error})");
$sb->config({ 'orders.webhook_timeout_ms' => 5000 });

# --- secret header, production environment ---
$sb->config({ 'orders.webhook_secret' => 's3cr3t' });
create('k1', 0, 'SEC');
ok(Sandbox::wait_until(sub { grep { ($_->{json}{products}[0]{custom_id} // '') eq 'SEC' } @{ received('/k1/sandbox') } }, 5),
	'webhook after setting the secret');
my ($sec) = grep { ($_->{json}{products}[0]{custom_id} // '') eq 'SEC' } @{ received('/k1/sandbox') };
is($sec->{secret}, 's3cr3t', 'X-Partner-Webhook-Secret sent');
$sb->config({ 'orders.webhook_secret' => undef, environment => 'production' });
create('k1', 0, 'PROD');
ok(Sandbox::wait_until(sub { grep { ($_->{json}{products}[0]{custom_id} // '') eq 'PROD' } @{ received('/k1/prod') } }, 5),
	'environment production: delivered to the production URL');
ok(!(grep { ($_->{json}{products}[0]{custom_id} // '') eq 'PROD' } @{ received('/k1/sandbox') }), '... and not to the sandbox URL');
is($sb->req('GET', '/_sandbox/orders/callback', key => 'k1')->{json}{data}{active}, "$base/k1/prod", 'active URL follows the environment');
$sb->config({ environment => 'sandbox' });

# default callback knobs apply to partners without their own
$sb->config({ 'orders.callback_sandbox' => "$base/knob/sandbox" });
is($sb->req('GET', '/_sandbox/orders/callback', key => 'k2')->{json}{data}{sandbox}, "$base/fail2/k2", 'own URL wins');
put_cb('k2', {});
is($sb->req('GET', '/_sandbox/orders/callback', key => 'k2')->{json}{data}{sandbox}, "$base/knob/sandbox",
	'cleared: the knob default applies');

# reset forgets attempts, events and callbacks
$sb->reset_all;
is_deeply($sb->req('GET', '/_sandbox/orders/webhooks')->{json}, [], 'reset: no attempts');
is($sb->req('GET', '/_sandbox/orders/callback', key => 'k1')->{json}{data}{sandbox}, "$base/knob/sandbox",
	'reset: partner URLs forgotten, knob stays');

$sb->stop;
kill 'TERM', $receiver;
waitpid($receiver, 0);
done_testing();
