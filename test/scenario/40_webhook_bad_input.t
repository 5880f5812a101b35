# Bad input to the webhook worker: every case is answered (404, 405, 400
# kept in webhook_rejects, 413, 401 with a secret), stalled clients are
# disconnected without holding up others, and the worker never restarts.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use WebhookTest;
use IO::Socket::INET;
use JSON::PP;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(sleep time);

my ($node, $port) = webhook_node('bad_input', conf => "partner_svc.webhook_header_timeout = 1\n");
my $pid = worker_pid($node);
ok($pid > 0, 'worker runs');

sub req
{
	my ($method, $path, $body, %h) = @_;
	return HTTP::Tiny->new(timeout => 30)->request($method, "http://127.0.0.1:$port$path",
		{ defined $body ? (content => $body) : (), headers => \%h });
}
sub rejects { $node->safe_psql('postgres', 'SELECT count(*) FROM partner_svc.webhook_rejects') }
sub events { $node->safe_psql('postgres', 'SELECT count(*) FROM partner_svc.webhook_events') }

my $good = order_event('ORDER_STATUS_CHANGED', 'CREATED', 'ord_good');

# --- wrong path or method ---
my $r = req('POST', '/webhooks/staging', $good);
is($r->{status}, 404, 'unknown path: 404');
like($r->{content}, qr/"error"/, '404 has a JSON error');
is(req('POST', '/', $good)->{status}, 404, 'root: 404');
is(req('POST', '/webhooks/sandbox/extra', $good)->{status}, 404, 'longer path: 404');
$r = req('GET', '/webhooks/sandbox');
is($r->{status}, 405, 'GET: 405');
is($r->{headers}{allow}, 'POST', '405 says Allow: POST');
is(req('PUT', '/webhooks/production', $good)->{status}, 405, 'PUT: 405');
is(req('DELETE', '/webhooks/production')->{status}, 405, 'DELETE: 405');

# --- 400: not JSON, or not one of the three events; kept in webhook_rejects ---
my @bad = (
	['not JSON', 'hello', qr/^not JSON: invalid input syntax for type json/],
	['truncated JSON', '{"event_type":"ORDER_STATUS_CHANGED"', qr/^not JSON/],
	['empty body', '', qr/^the body is empty$/],
	['invalid UTF-8', "{\"a\":\"\xff\xfe\"}", qr/^the body is not valid UTF-8 text$/],
	['NUL byte', "{\"a\":\"x\x00\"}", qr/^the body is not valid UTF-8 text$/],
	['number out of range', '{"event_type":1e1000000}', qr/^not JSON: value overflows numeric format/],
	['deep nesting', ('[' x 30000) . (']' x 30000), qr/^not JSON: stack depth limit exceeded/],
	['array', '[1,2]', qr/^the body is not a JSON object$/],
	['scalar', '"ORDER_STATUS_CHANGED"', qr/^the body is not a JSON object$/],
	['no event_type', '{"status":"CREATED"}', qr/^member "event_type" is missing$/],
	['unknown event_type', '{"event_type":"ORDER_DELETED","status":"CREATED"}', qr/^unknown event_type "ORDER_DELETED"$/],
	['event_type not a string', '{"event_type":7,"status":"CREATED"}', qr/^member "event_type" is not a string$/],
	['unknown order status', order_event('ORDER_STATUS_CHANGED', 'EXPIRED', 'o1'), qr/^unknown order status "EXPIRED"$/],
	['no product', '{"event_type":"ORDER_STATUS_CHANGED","status":"CREATED"}', qr/^member "product" is missing or not an object$/],
	['product without unique_id', '{"event_type":"ORDER_STATUS_CHANGED","status":"CREATED","product":{"custom_id":"x"}}',
		qr/^product: member "unique_id" is missing$/],
	['confirmation without pdf_url', order_event('ORDER_CONFIRMATION_RECEIVED', 'ACTIVE', 'o2'),
		qr/^product: member "pdf_url" is missing$/],
	['unknown checkout status', checkout_event('txn_1', 'PAID', 'o3'), qr/^unknown checkout status "PAID"$/],
	['checkout without products', '{"transaction_id":"t","event_type":"CHECKOUT_STATUS_CHANGED","status":"SUCCESS"}',
		qr/^member "products" is missing or not an array$/],
	['checkout product not an object', '{"transaction_id":"t","event_type":"CHECKOUT_STATUS_CHANGED","status":"SUCCESS","products":[1]}',
		qr/^products\[0\] is not an object$/],
	['id too long', order_event('ORDER_STATUS_CHANGED', 'CREATED', 'x' x 300), qr/^product: member "unique_id" is longer than 256 bytes$/],
);
my $n = 0;
for my $b (@bad)
{
	my ($name, $body, $reason) = @$b;
	$r = req('POST', '/webhooks/sandbox', $body, 'Content-Type' => 'application/json');
	is($r->{status}, 400, "$name: 400");
	my $err = eval { JSON::PP->new->decode($r->{content})->{error} } // '';
	like($err, $reason, "$name: the answer gives the reason");
	$n++;
	my $row = $node->safe_psql('postgres',
		"SELECT reason FROM partner_svc.webhook_rejects ORDER BY id DESC LIMIT 1");
	like($row, $reason, "$name: kept in webhook_rejects with the reason");
}
is(rejects(), $n, 'one reject row per 400');
is(events(), 0, 'nothing of it in webhook_events');

# a long body is kept truncated, its size recorded; invalid text as hex
my $long = '{"x":"' . ('a' x 20000) . '"';
is(req('POST', '/webhooks/production', $long)->{status}, 400, 'long non-JSON: 400');
is($node->safe_psql('postgres',
	"SELECT environment || ' ' || body_bytes || ' ' || length(body) FROM partner_svc.webhook_rejects ORDER BY id DESC LIMIT 1"),
	'production 20007 8192', 'kept: environment, full size, body cut to 8 kB');
is($node->safe_psql('postgres',
	"SELECT body FROM partner_svc.webhook_rejects WHERE reason LIKE '%UTF-8%' ORDER BY id LIMIT 1"),
	'\x7b2261223a22fffe227d', 'a body that is not text is kept as hex');

# --- 413 ---
my $big = '{"x":"' . ('b' x 70000) . '"}';
$r = req('POST', '/webhooks/sandbox', $big);
is($r->{status}, 413, 'over max_body (64 kB): 413');
$r = HTTP::Tiny->new(timeout => 30)->request('POST', "http://127.0.0.1:$port/webhooks/sandbox",
	{ content => do { my @c = ($big); sub { shift @c } }, headers => { 'Content-Type' => 'application/json' } });
is($r->{status}, 413, 'chunked body over the limit: 413');
$node->safe_psql('postgres', "ALTER SYSTEM SET partner_svc.webhook_max_body = '128kB'; SELECT pg_reload_conf()");
ok(wait_for(sub { req('POST', '/webhooks/sandbox', $big)->{status} == 400 }, 30),
	'after raising the limit and a reload the same body is read (and is not an event: 400)');
$node->safe_psql('postgres', "ALTER SYSTEM RESET partner_svc.webhook_max_body; SELECT pg_reload_conf()");

# --- an in-flight budget that cannot hold one body of max_body ---
# 100 kB of budget, 128 kB of max_body: a body needs its length plus one
# byte of the budget, so nothing over 102399 bytes could ever be read.
# Such a body is answered 413 (final), not 503 (retry later, for ever); a
# WARNING names both settings once; a chunked body's buffer stops growing
# at the cap, so a chunked body under it is read.
my $log_at = -s $node->logfile;
my $rejects_before = rejects();
$node->safe_psql('postgres', qq{
	ALTER SYSTEM SET partner_svc.webhook_max_body = '128kB'; ALTER SYSTEM SET partner_svc.webhook_max_body_in_flight = '100kB';
	SELECT pg_reload_conf()});
my $warning = qr/WARNING:  partner_svc\.webhook_max_body_in_flight \(102400 bytes\) cannot hold one body of partner_svc\.webhook_max_body \(131072 bytes\)/;
ok(wait_for(sub { slurp_file($node->logfile, $log_at) =~ $warning }, 30),
	'reload: a WARNING names both settings');
{
	my $log = slurp_file($node->logfile, $log_at);
	like($log, qr/DETAIL:  Webhook bodies larger than 102399 bytes are answered 413, since a body also holds one byte more than its length\./,
		'its detail gives the effective limit');
	like($log, qr/HINT:  Set partner_svc\.webhook_max_body_in_flight to at least 131073 bytes, or lower partner_svc\.webhook_max_body, and reload\./,
		'its hint says what to set');
}
# a JSON text of exactly n bytes (read, and not an event: 400)
sub sized { my $n = shift; return '{"x":"' . ('s' x ($n - 8)) . '"}' }
sub chunked_req
{
	my $body = shift;
	return HTTP::Tiny->new(timeout => 30)->request('POST', "http://127.0.0.1:$port/webhooks/sandbox",
		{ content => do { my @c = ($body); sub { shift @c } }, headers => { 'Content-Type' => 'application/json' } });
}
is(req('POST', '/webhooks/sandbox', sized(102399))->{status}, 400,
	'a body of 102399 bytes and its byte fill the budget: read (400: not an event)');
$r = req('POST', '/webhooks/sandbox', sized(102400));
is($r->{status}, 413, 'one byte more can never fit: 413, not 503');
unlike($r->{headers}{'retry-after'} // '', qr/\d/, 'and no Retry-After');
is(req('POST', '/webhooks/sandbox', sized(110000))->{status}, 413, 'under max_body but over the budget: 413');
is(chunked_req(sized(110000))->{status}, 413, 'the same body chunked: 413');
is(chunked_req(sized(100000))->{status}, 400,
	'a chunked body of 100000 bytes is read (its buffer stops at the cap, not at 128 kB)');
$node->safe_psql('postgres', qq{
	ALTER SYSTEM SET partner_svc.webhook_max_body = '128kB'; ALTER SYSTEM SET partner_svc.webhook_max_body_in_flight = '100kB'; ALTER SYSTEM SET partner_svc.webhook_min_rate = 2048;
	SELECT pg_reload_conf()});
ok(wait_for(sub { $node->safe_psql('postgres',
	"SELECT count(*) FROM pg_settings WHERE name = 'partner_svc.webhook_min_rate' AND setting = '2048'") == 1 }, 30),
	'another reload');
sleep 1;
{
	my @warned = slurp_file($node->logfile, $log_at) =~ /$warning/g;
	is(scalar @warned, 1, 'the WARNING is given once for the same pair of values');
}
$node->safe_psql('postgres', q{
	ALTER SYSTEM RESET partner_svc.webhook_max_body;
	ALTER SYSTEM RESET partner_svc.webhook_max_body_in_flight;
	ALTER SYSTEM RESET partner_svc.webhook_min_rate;
	SELECT pg_reload_conf()});
# until the reload is seen, the probe is still read (400) and kept as a
# reject: count those too
my $probes_read = 0;
ok(wait_for(sub {
	my $st = req('POST', '/webhooks/sandbox', sized(102399))->{status};
	$probes_read++ if $st == 400;
	$st == 413 }, 30),
	'back to the defaults: 64 kB is the limit again');
is(req('POST', '/webhooks/sandbox', sized(65536))->{status}, 400, 'and a body of 64 kB is read');
# the bodies read above are kept as rejects (not events): three of them,
# and the probes read before the reload took effect
my $budget_rejects = rejects() - $rejects_before;
is($budget_rejects, 3 + $probes_read, 'the three bodies read are kept in webhook_rejects');

# --- 401 with a secret ---
$node->safe_psql('postgres', "ALTER SYSTEM SET partner_svc.webhook_secret = 's3cret-value'; SELECT pg_reload_conf()");
# probe with a body over the limit (413 before the reload, 401 after: the
# secret is checked first), so that nothing is stored meanwhile
ok(wait_for(sub { post_webhook($port, 'sandbox', $big)->{status} == 401 }, 30), 'secret active after a reload');
is(post_webhook($port, 'sandbox', $good)->{status}, 401, 'missing secret: 401');
is(post_webhook($port, 'sandbox', $good, 'X-Partner-Webhook-Secret' => 's3cret-valuf')->{status}, 401, 'wrong secret: 401');
is(post_webhook($port, 'sandbox', $good, 'X-Partner-Webhook-Secret' => 's3cret')->{status}, 401, 'prefix of the secret: 401');
is(post_webhook($port, 'sandbox', $good, 'X-Partner-Webhook-Secret' => 's3cret-value2')->{status}, 401, 'longer value: 401');
is(events(), 0, 'nothing stored without the secret');
is(post_webhook($port, 'sandbox', $good, 'X-Partner-Webhook-Secret' => 's3cret-value')->{status}, 200, 'right secret: 200');
is(events(), 1, 'stored with the secret');
$node->safe_psql('postgres', "ALTER SYSTEM RESET partner_svc.webhook_secret; SELECT pg_reload_conf()");
ok(wait_for(sub { post_webhook($port, 'sandbox', order_event('ORDER_STATUS_CHANGED', 'PENDING', 'ord_good'))->{status} == 200 }, 30),
	'secret reset: no header needed');

# --- stalled clients time out without holding up others ---
my $stalled_body = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $port) or die;
print $stalled_body "POST /webhooks/sandbox HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"ev";
my $stalled_head = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $port) or die;
print $stalled_head "POST /webhooks/sandbox HTTP/1.1\r\nHo";
my $t0 = time;
is(post_webhook($port, 'sandbox', order_event('ORDER_STATUS_CHANGED', 'ACTIVE', 'ord_good'))->{status}, 200,
	'a delivery while two clients stall: 200');
for my $s ([$stalled_body, 'in the body'], [$stalled_head, 'in the headers'])
{
	my ($sock, $where) = @{$s};
	$sock->blocking(1);
	local $SIG{ALRM} = sub { die "timeout\n" };
	alarm 30;
	my $got = eval { my $buf; sysread($sock, $buf, 4096) };
	alarm 0;
	ok(defined $got && $got == 0, "client stalled $where: disconnected");
}
ok(wait_for(sub { webhook_status($node)->{timed_out} >= 1 }, 30),
	'webhook_status counts the request that timed out');

# --- counters, and the worker never restarted ---
my $st = webhook_status($node);
is($st->{state}, 'listening', 'still listening');
is($st->{rejected}, $n + 2 + $budget_rejects, 'rejected counter');
ok($st->{not_found} == 3 && $st->{bad_method} == 3, '404 and 405 counters');
ok($st->{too_large} >= 2, '413 counter');
ok($st->{unauthorized} >= 4, '401 counter');
is($st->{accepted}, 3, 'accepted counter');
is(worker_pid($node), $pid, 'the worker never restarted');
ok(!$node->log_contains('terminated by signal'), 'no process crashed');
is($node->safe_psql('postgres', 'SELECT status FROM partner_svc.order_states'), 'ACTIVE', 'order_states of the good order');

$node->stop;
done_testing();
