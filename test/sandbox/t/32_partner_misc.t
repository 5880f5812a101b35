# The other routes of document 000's rate-limit table, whose shapes the
# document does not show (docs/sandbox-orders.md, "Other partner routes of
# the rate-limit table"): every route's documented shape, stable ids,
# paging where the list is paged, the error envelope, the catalogue's
# cache headers and 304, and their rate-limit rows.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/../lib";
use Sandbox;
use Test::More;
use JSON::PP ();

my $sb = Sandbox->start(keys => ['k1', 'k2=premium'], args => ['--seed', '7', '--no-rate-limits']);
my $T = JSON::PP::true;
my $F = JSON::PP::false;

sub keys_of { join(',', sort keys %{ $_[0] }) }
sub get { $sb->req('GET', $_[0], key => $_[1] // 'k1') }
sub post { $sb->req('POST', $_[0], key => 'k1', json => $_[1]) }
sub enc { my ($s) = @_; $s =~ s/([^A-Za-z0-9_.~-])/sprintf('%%%02X', ord $1)/ge; $s }

sub orders_error
{
	my ($r, $status, $code, $name) = @_;
	is($r->{status}, $status, "$name: HTTP $status") or diag $r->{body};
	is(eval { $r->{json}{error}{code} }, $code, "$name: code $code");
	is(keys_of($r->{json} // {}), 'data,error', "$name: the orders envelope");
	ok(!defined $r->{json}{data}, "$name: data null");
}

sub ok_envelope
{
	my ($r, $status, $name) = @_;
	is($r->{status}, $status, "$name: HTTP $status") or diag $r->{body};
	ok(exists $r->{json}{error} && !defined $r->{json}{error}, "$name: error null");
}

# Walks a paged list with limit 1; returns the items.
sub walk
{
	my ($path) = @_;
	my (@items, $cursor);
	my $pages = 0;
	do
	{
		my $r = get("$path?limit=1" . (defined $cursor ? '&cursor=' . enc($cursor) : ''));
		die "walk $path: $r->{status} $r->{body}" unless $r->{status} == 200;
		die "walk $path: envelope" unless keys_of($r->{json}) eq 'data,error,pagination';
		push @items, @{ $r->{json}{data} };
		$cursor = $r->{json}{pagination}{next_cursor};
		die "walk $path: too many pages" if ++$pages > 100;
	} while (defined $cursor);
	return \@items;
}

my $seq = 0;
sub order
{
	my (%o) = @_;
	my $email = delete $o{email};
	my $plate = delete $o{plate} // 'LJ AB-123';
	$seq++;
	return { terms_and_privacy_accepted => $T, order_has_been_paid => $T,
		vehicles => [{ plate => $plate, country => 'SI' }],
		vignettes => [{ custom_id => "M-$seq", name => "SI $seq", period => '1_year', start_date => '2030-01-01' }],
		user => { email => $email }, %o };
}

# --- every route needs the key ---------------------------------------------------
for my $rt (['GET', '/public/products'], ['GET', '/public/products/status'], ['GET', '/public/users'],
	['GET', '/public/users/x/orders'], ['GET', '/public/users/x/vehicles'], ['POST', '/public/validate-vehicle'],
	['POST', '/public/transaction/create'], ['GET', '/public/transactions'],
	['GET', '/public/transaction/x/status'], ['GET', '/public/transaction/x/fee'],
	['GET', '/public/transaction/x/data'], ['POST', '/public/transaction/x/cancel'], ['POST', '/public/mcp'])
{
	orders_error($sb->req(@$rt), 401, 'missing_api_key', "$rt->[0] $rt->[1] without a key");
}

# --- products: fixed catalogue, cache headers, 304 --------------------------------
my $r = get('/public/products');
ok_envelope($r, 200, 'products');
my @p = @{ $r->{json}{data} };
is(scalar(@p), 8, 'products: 8 products');
ok(!(grep { keys_of($_) ne 'country,currency,id,name,periods,prices' } @p), 'products: fields of every product');
ok(!(grep { join(',', sort @{ $_->{periods} }) ne join(',', sort keys %{ $_->{prices} }) } @p),
	'products: a price for every period');
is_deeply([map { $_->{id} } @p], [sort map { $_->{id} } @p], 'products: ordered by id');
is($r->{headers}{'cache-control'}, 'public, max-age=3600', 'products: Cache-Control');
my $etag = $r->{headers}{etag};
like($etag // '', qr/^"[0-9a-f]{16}"$/, 'products: a strong ETag');
is(get('/public/products')->{body}, $r->{body}, 'products: the same bytes every time');
is(get('/public/products')->{headers}{etag}, $etag, 'products: the same ETag every time');
my $nm = $sb->req('GET', '/public/products', key => 'k1', headers => { 'If-None-Match' => $etag });
is($nm->{status}, 304, 'products: If-None-Match with the ETag: 304');
is($nm->{body} // '', '', '... without a body');
is($nm->{headers}{etag}, $etag, '... with the ETag');
is($nm->{headers}{'cache-control'}, 'public, max-age=3600', '... and Cache-Control');
is($sb->req('GET', '/public/products', key => 'k1', headers => { 'If-None-Match' => "\"x\", $etag" })->{status},
	304, 'products: ETag in a list: 304');
is($sb->req('GET', '/public/products', key => 'k1', headers => { 'If-None-Match' => '"0000000000000000"' })->{status},
	200, 'products: another ETag: 200');
is(get('/public/products', 'k2')->{headers}{etag}, $etag, 'products: every partner sees the same catalogue');
orders_error(get('/public/products?limit=5'), 400, 'unknown_parameter', 'products take no limit');
orders_error(get('/public/products?bug_report=maybe'), 400, 'bug_report_invalid', 'products: bug_report checked');
is(get('/public/products?bug_report=true')->{status}, 200, 'products: bug_report=true accepted');

$r = get('/public/products/status');
ok_envelope($r, 200, 'products/status');
is_deeply([map { $_->{id} } @{ $r->{json}{data} }], [map { $_->{id} } @p], 'products/status: one row per product');
ok(!(grep { keys_of($_) ne 'id,status' || $_->{status} !~ /^(available|maintenance)$/ } @{ $r->{json}{data} }),
	'products/status: id and status');
is($r->{headers}{'cache-control'}, 'public, max-age=60', 'products/status: Cache-Control');
is($sb->req('GET', '/public/products/status', key => 'k1', headers => { 'If-None-Match' => $r->{headers}{etag} })->{status},
	304, 'products/status: 304');
isnt($r->{headers}{etag}, $etag, 'the two catalogue routes have different ETags');

# --- users, their orders and vehicles --------------------------------------------
is(post('/public/orders', order(email => $_->[0], plate => $_->[1]))->{status}, 201, "an order of $_->[0]")
  for ['ana@example.com', 'LJ AB-1'], ['bo@example.com', 'LJ BO-1'], ['ana@example.com', 'LJ AB-2'],
  ['cy@example.com', 'LJ CY-1'], ['ana@example.com', 'LJ AB-1'];
my $users = walk('/public/users');
is_deeply([map { $_->{email} } @$users], ['ana@example.com', 'bo@example.com', 'cy@example.com'],
	'users: distinct emails, in order of their first order, one per page');
ok(!(grep { keys_of($_) ne 'created_date,email,id,orders' } @$users), 'users: fields');
is_deeply([map { $_->{orders} } @$users], [3, 1, 1], 'users: order counts');
ok(!(grep { $_->{id} !~ /^usr_[0-9a-f]{12}$/ } @$users), 'users: ids usr_ + 12 hex');
is_deeply([map { $_->{id} } @{ walk('/public/users') }], [map { $_->{id} } @$users], 'users: ids are stable');
my ($ana, $bo) = map { $_->{id} } @$users;
my $uo = walk("/public/users/$ana/orders");
is(scalar(@$uo), 3, "user orders: ana's three orders over three pages");
ok(!(grep { keys_of($_) ne 'created_date,custom_id,email,id,status' } @$uo), 'user orders: list item fields');
my $c = get("/public/users/$ana/orders?limit=1")->{json}{pagination}{next_cursor};
orders_error(get("/public/users/$bo/orders?cursor=" . enc($c)), 400, 'cursor_mismatch', "a cursor of ana's orders on bo's");
orders_error(get('/public/users/usr_000000000000/orders'), 404, 'user_not_found', 'user orders: unknown user');
orders_error(get('/public/users/usr_000000000000/vehicles'), 404, 'user_not_found', 'user vehicles: unknown user');
is(get("/public/users/$ana/orders", 'k2')->{status}, 404, "another partner does not see ana");
$r = get("/public/users/$ana/vehicles");
ok_envelope($r, 200, 'user vehicles');
is_deeply([map { $_->{plate} } @{ $r->{json}{data} }], ['LJ AB-1', 'LJ AB-2'], 'user vehicles: distinct, in order');
ok(!(grep { keys_of($_) ne 'country,id,plate' } @{ $r->{json}{data} }), 'user vehicles: fields');
my @vid = map { $_->{id} } @{ $r->{json}{data} };
ok($vid[0] ne $vid[1] && !(grep { !/^veh_[0-9a-f]{12}$/ } @vid), 'user vehicles: distinct ids veh_ + 12 hex');
is_deeply([map { $_->{id} } @{ get("/public/users/$ana/vehicles")->{json}{data} }], \@vid, 'user vehicles: ids are stable');
orders_error(get("/public/users/$ana/vehicles?limit=1"), 400, 'unknown_parameter', 'user vehicles are not paged');

# --- validate-vehicle -------------------------------------------------------------
$r = post('/public/validate-vehicle', { plate => 'ce 12-x', country => 'SI' });
ok_envelope($r, 200, 'validate-vehicle');
is_deeply($r->{json}{data}, { valid => $T, plate => 'CE 12-X', country => 'SI' }, 'validate-vehicle: shape');
orders_error(post('/public/validate-vehicle', { plate => 'ce 12-x' }), 400, 'vehicle_country_invalid', 'validate-vehicle: no country');
orders_error(post('/public/validate-vehicle', [1]), 400, 'body_not_object', 'validate-vehicle: not an object');
orders_error($sb->req('POST', '/public/validate-vehicle', key => 'k1', body => '{', ctype => 'application/json'),
	400, 'body_invalid_json', 'validate-vehicle: broken JSON');

# --- transactions -----------------------------------------------------------------
my $cr = post('/public/transaction/create', { %{ order(email => 'dee@example.com') }, order_has_been_paid => $F });
ok_envelope($cr, 201, 'transaction/create');
my $tx = $cr->{json}{data};
is(keys_of($tx), 'allowed_payment_providers,checkout_status,open_order_details_by_default,order_has_been_paid,orders,payment_link,send_payment_link,transaction_id',
	'transaction/create: the transaction object');
like($tx->{transaction_id}, qr/^txn_[0-9a-f]{12}$/, 'transaction id txn_ + 12 hex');
is($tx->{checkout_status}, 'CREATED', 'a checkout, CREATED');
my %unpaid = %{ order(email => 'dee@example.com') };
delete $unpaid{order_has_been_paid};
my $cr2 = post('/public/transaction/create', \%unpaid);
is($cr2->{json}{data}{order_has_been_paid}, $F, '... and is then false');
is($cr2->{status}, 201, 'transaction/create: order_has_been_paid may be left out');
orders_error(post('/public/transaction/create', order(email => 'x@example.com')), 400, 'order_has_been_paid_invalid',
	'transaction/create: a paid order is refused');
my $txs = walk('/public/transactions');
is(scalar(@$txs), 7, 'transactions: every transaction (five partner-paid, two checkouts), one per page');
is_deeply([map { $_->{transaction_id} } @$txs[5, 6]], [$tx->{transaction_id}, $cr2->{json}{data}{transaction_id}],
	'transactions: oldest first');
my $tid = $tx->{transaction_id};
my $oid = $tx->{orders}[0]{id};
for my $ref ($tid, $oid)
{
	$r = get("/public/transaction/$ref/status");
	ok_envelope($r, 200, "transaction status by $ref");
	is_deeply($r->{json}{data}, { transaction_id => $tid, order_has_been_paid => $F, status => 'CREATED' },
		"transaction status by $ref: shape");
	$r = get("/public/transaction/$ref/fee");
	is(keys_of($r->{json}{data}), 'amount,currency,fee,total,transaction_id', "transaction fee by $ref: shape");
	is($r->{json}{data}{transaction_id}, $tid, "transaction fee by $ref: the transaction");
}
my $fee = $r->{json}{data};
ok($fee->{amount} > 0 && abs($fee->{fee} - (int(($fee->{amount} * 0.025 + 0.30) * 100 + 0.5) / 100)) < 1e-9,
	'fee: 2.5 % + 0.30 on a checkout');
my $paid_tid = $txs->[0]{transaction_id};
is(get("/public/transaction/$paid_tid/fee")->{json}{data}{fee}, 0, 'fee: 0 when the partner paid');
is(get("/public/transaction/$paid_tid/status")->{json}{data}{status}, undef, 'status: null when the partner paid');
$r = get("/public/transaction/$tid/data");
ok_envelope($r, 200, 'transaction data');
is_deeply($r->{json}{data}, $tx, 'transaction data: the transaction object');
orders_error(get("/public/transaction/$oid/data"), 404, 'transaction_not_found', 'transaction data takes a transaction id only');
orders_error(get('/public/transaction/txn_000000000000/status'), 404, 'transaction_not_found', 'status: unknown');
orders_error(get('/public/transaction/txn_000000000000/fee'), 404, 'transaction_not_found', 'fee: unknown');
orders_error(get("/public/transaction/$tid/data", 'k2'), 404, 'transaction_not_found', 'another partner: 404');
$r = $sb->req('POST', "/public/transaction/$tid/cancel", key => 'k1');
ok_envelope($r, 200, 'transaction cancel');
is($r->{json}{data}{checkout_status}, 'FAILED', 'cancel: checkout FAILED');
is_deeply([map { $_->{status} } @{ $r->{json}{data}{orders} }], ['DELETED'], 'cancel: its orders DELETED');
orders_error($sb->req('POST', "/public/transaction/$tid/cancel", key => 'k1'), 409, 'transaction_not_open', 'cancel twice');
orders_error($sb->req('POST', "/public/transaction/$paid_tid/cancel", key => 'k1'), 409, 'transaction_not_open',
	'cancel a partner-paid transaction');
orders_error($sb->req('POST', '/public/transaction/nope/cancel', key => 'k1'), 404, 'transaction_not_found', 'cancel: unknown');

# --- mcp ---------------------------------------------------------------------------
$r = post('/public/mcp', { jsonrpc => '2.0', id => 1, method => 'initialize' });
is($r->{status}, 200, 'mcp initialize: 200');
is(keys_of($r->{json}), 'id,jsonrpc,result', 'mcp: a JSON-RPC 2.0 answer');
is(keys_of($r->{json}{result}), 'capabilities,protocolVersion,serverInfo', 'mcp initialize: result');
$r = post('/public/mcp', { jsonrpc => '2.0', id => 2, method => 'tools/list' });
is_deeply([map { $_->{name} } @{ $r->{json}{result}{tools} }], ['order_status'], 'mcp tools/list: one tool');
$r = post('/public/mcp', { jsonrpc => '2.0', id => 'a', method => 'tools/call',
	params => { name => 'order_status', arguments => { id => 'M-1' } } });
is($r->{json}{id}, 'a', 'mcp: the request id is echoed');
is_deeply($r->{json}{result}, { content => [{ type => 'text', text => 'CREATED' }], isError => $F },
	'mcp tools/call order_status: the status');
$r = post('/public/mcp', { jsonrpc => '2.0', id => 3, method => 'tools/call',
	params => { name => 'order_status', arguments => { id => 'nope' } } });
is($r->{json}{result}{isError}, $T, 'mcp: unknown order is a tool error');
is($r->{json}{error}, undef, '... not a protocol error');
is(post('/public/mcp', { jsonrpc => '2.0', id => 4, method => 'tools/call', params => { name => 'x' } })->{json}{error}{code},
	-32602, 'mcp: unknown tool -32602');
is(post('/public/mcp', { jsonrpc => '2.0', id => 5, method => 'x' })->{json}{error}{code}, -32601, 'mcp: unknown method -32601');
is(post('/public/mcp', [1])->{json}{error}{code}, -32600, 'mcp: not an object -32600');
orders_error($sb->req('POST', '/public/mcp', key => 'k1', body => '{', ctype => 'application/json'), 400,
	'body_invalid_json', 'mcp: broken JSON');
is(get('/public/mcp')->{status}, 405, 'mcp: GET is 405 (POST only)');

# --- the rate-limit rows of these routes, as the document's table ---------------------
my %table = (
	'GET /products' => [50, 100, 300], 'GET /products/status' => [25, 100, 300],
	'GET /users' => [100, 500, 1000], 'GET /users/{id}/orders' => [50, 200, 1000],
	'GET /users/{id}/vehicles' => [50, 200, 1000], 'POST /validate-vehicle' => [250, 1000, 2500],
	'POST /transaction/create' => [50, 250, 1000], 'GET /transactions' => [100, 500, 1000],
	'GET /transaction/{unique_id}/status' => [100, 300, 1000],
	'GET /transaction/{unique_id}/fee' => [50, 200, 500], 'GET /transaction/{id}/data' => [100, 300, 1000],
	'POST /transaction/{id}/cancel' => [25, 100, 250], '/mcp' => [100, 300, 1000],
);
my $cfg = $sb->_admin('GET', '/_sandbox/config')->{rate_limits};
for my $row (sort keys %table)
{
	is_deeply([@{ $cfg->{$row} }{qw(standard premium enterprise)}], $table{$row}, "row $row");
}
# each route counts on its own row (2 per window), per id where the row says so
$sb->config({ rate_limits => $T, map { ("rate_limit.$_" => 2) } keys %table });
for my $rt (['GET', '/public/products'], ['GET', '/public/products/status'], ['GET', '/public/users'],
	['GET', "/public/users/$ana/orders"], ['GET', "/public/users/$ana/vehicles"], ['GET', '/public/transactions'],
	['GET', "/public/transaction/$tid/status"], ['GET', "/public/transaction/$tid/fee"],
	['GET', "/public/transaction/$tid/data"], ['POST', '/public/mcp'])
{
	my @s = map { $sb->req(@$rt, key => 'k1', $rt->[0] eq 'POST' ? (json => { jsonrpc => '2.0', id => 1, method => 'initialize' }) : ())->{status} } 1 .. 3;
	is_deeply(\@s, [200, 200, 429], "$rt->[0] $rt->[1]: its own row");
}
is(get("/public/users/$bo/orders")->{status}, 200, 'users/{id}/orders counts per id');
is(get("/public/transaction/$paid_tid/fee")->{status}, 200, 'transaction/{unique_id}/fee counts per id');

done_testing();
