# Partner order service: auth, every validation rule and its code, validate
# stores nothing, create paid / unpaid, list with status filter and paging,
# read by id and custom_id, status, cancel in the right and wrong state,
# the timed state machine up to ACTIVE and the PDF, pay and fail.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/../lib";
use Sandbox;
use Test::More;
use JSON::PP ();
use POSIX qw(strftime);

my $sb = Sandbox->start(keys => ['k1=standard', 'k2=premium'],
						args => ['--time-scale', '0.001', '--seed', '7']);

my $T = JSON::PP::true;
my $F = JSON::PP::false;
my $seq = 0;

sub vignette
{
	my (%o) = @_;
	$seq++;
	return { custom_id => "cid-$seq", name => "SI e-vignette $seq", period => '1_year',
		start_date => '2020-01-01', %o };
}

sub paid_order
{
	my (%o) = @_;
	return { terms_and_privacy_accepted => $T, order_has_been_paid => $T,
		vehicles => [{ plate => 'LJ AB-123', country => 'SI' }],
		vignettes => [vignette()], user => { email => 'ana@example.com' }, %o };
}

sub unpaid_order { paid_order(order_has_been_paid => $F, @_) }

sub orders_error
{
	my ($r, $status, $code, $name) = @_;
	is($r->{status}, $status, "$name: HTTP $status") or diag $r->{body};
	is(eval { $r->{json}{error}{code} }, $code, "$name: code $code");
	ok(defined eval { $r->{json}{error}{message} }, "$name: message");
	ok(exists $r->{json}{data} && !defined $r->{json}{data}, "$name: data null");
}

sub create { $sb->req('POST', '/public/orders', key => 'k1', json => $_[0]) }
sub get_order { $sb->req('GET', "/public/orders/$_[0]", key => $_[1] // 'k1') }
sub status_of { get_order($_[0])->{json}{data}{status} }

# --- auth ---
for my $rt (['POST', '/public/orders'], ['POST', '/public/orders/validate'],
			['GET', '/public/orders'], ['GET', '/public/orders/x'],
			['GET', '/public/orders/x/status'], ['POST', '/public/orders/x/cancel-pending'],
			['POST', '/public/orders/x/cancel-deferred'])
{
	orders_error($sb->req(@$rt), 401, 'missing_api_key', "$rt->[0] $rt->[1] without key");
	is($sb->req(@$rt, key => 'wrong')->{status}, 401, "$rt->[0] $rt->[1] wrong key: 401");
}

# --- validation: every rule has its code; validate answers the same ---
my @cases = (
	# name, mutation, status, code, create_only
	['terms missing', sub { delete $_[0]{terms_and_privacy_accepted} }, 400, 'terms_and_privacy_accepted_required', 1],
	['terms not boolean', sub { $_[0]{terms_and_privacy_accepted} = 'yes' }, 400, 'terms_and_privacy_accepted_invalid'],
	['terms false', sub { $_[0]{terms_and_privacy_accepted} = $F }, 400, 'terms_not_accepted'],
	['paid missing', sub { delete $_[0]{order_has_been_paid} }, 400, 'order_has_been_paid_required', 1],
	['paid not boolean', sub { $_[0]{order_has_been_paid} = 'true' }, 400, 'order_has_been_paid_invalid'],
	['vehicles missing', sub { delete $_[0]{vehicles} }, 400, 'vehicles_required'],
	['vehicles not array', sub { $_[0]{vehicles} = {} }, 400, 'vehicles_invalid'],
	['vehicles empty', sub { $_[0]{vehicles} = [] }, 400, 'vehicles_empty'],
	['vehicles too many', sub { $_[0]{vehicles} = [map { { plate => "AB$_", country => 'SI' } } 10 .. 20] }, 400, 'vehicles_too_many'],
	['vehicle not object', sub { $_[0]{vehicles} = ['AB1'] }, 400, 'vehicle_invalid'],
	['vehicle unknown member', sub { $_[0]{vehicles}[0]{color} = 'red' }, 400, 'vehicle_invalid'],
	['plate bad', sub { $_[0]{vehicles}[0]{plate} = 'A!' }, 400, 'vehicle_plate_invalid'],
	['plate missing', sub { delete $_[0]{vehicles}[0]{plate} }, 400, 'vehicle_plate_invalid'],
	['country bad', sub { $_[0]{vehicles}[0]{country} = 'si' }, 400, 'vehicle_country_invalid'],
	['vehicle twice', sub { push @{ $_[0]{vehicles} }, { plate => 'lj ab-123', country => 'SI' } }, 400, 'vehicles_duplicate'],
	['vignettes missing', sub { delete $_[0]{vignettes} }, 400, 'vignettes_required'],
	['vignettes not array', sub { $_[0]{vignettes} = 'x' }, 400, 'vignettes_invalid'],
	['vignettes empty', sub { $_[0]{vignettes} = [] }, 400, 'vignettes_empty'],
	['vignettes too many', sub { $_[0]{vignettes} = [map { vignette() } 1 .. 11] }, 400, 'vignettes_too_many'],
	['vignette not object', sub { $_[0]{vignettes} = [1] }, 400, 'vignette_invalid'],
	['vignette unknown member', sub { $_[0]{vignettes}[0]{price} = 3 }, 400, 'vignette_invalid'],
	['custom_id missing', sub { delete $_[0]{vignettes}[0]{custom_id} }, 400, 'vignette_custom_id_invalid', 1],
	['custom_id empty', sub { $_[0]{vignettes}[0]{custom_id} = '' }, 400, 'vignette_custom_id_invalid'],
	['name empty', sub { $_[0]{vignettes}[0]{name} = '' }, 400, 'vignette_name_invalid'],
	['period unknown', sub { $_[0]{vignettes}[0]{period} = '2_years' }, 400, 'vignette_period_invalid'],
	['start_date impossible', sub { $_[0]{vignettes}[0]{start_date} = '2025-02-29' }, 400, 'vignette_start_date_invalid'],
	['start_date format', sub { $_[0]{vignettes}[0]{start_date} = '01.02.2030' }, 400, 'vignette_start_date_invalid'],
	['flex not boolean', sub { $_[0]{vignettes}[0]{flex} = 1 }, 400, 'vignette_flex_invalid'],
	['custom_id twice', sub { push @{ $_[0]{vignettes} }, { %{ $_[0]{vignettes}[0] } } }, 400, 'vignettes_duplicate_custom_id'],
	['send_payment_link unknown', sub { $_[0]{order_has_been_paid} = $F; $_[0]{send_payment_link} = 'fax' }, 400, 'send_payment_link_invalid'],
	['send_payment_link when paid', sub { $_[0]{send_payment_link} = 'email' }, 400, 'send_payment_link_not_allowed'],
	['providers when paid', sub { $_[0]{allowed_payment_providers} = ['provider_a'] }, 400, 'allowed_payment_providers_not_allowed'],
	['providers not array', sub { $_[0]{order_has_been_paid} = $F; $_[0]{allowed_payment_providers} = 'provider_a' }, 400, 'allowed_payment_providers_invalid'],
	['providers empty', sub { $_[0]{order_has_been_paid} = $F; $_[0]{allowed_payment_providers} = [] }, 400, 'allowed_payment_providers_empty'],
	['provider unknown', sub { $_[0]{order_has_been_paid} = $F; $_[0]{allowed_payment_providers} = ['provider_x'] }, 400, 'allowed_payment_provider_unknown'],
	['providers not unique', sub { $_[0]{order_has_been_paid} = $F; $_[0]{allowed_payment_providers} = ['provider_b', 'provider_b'] }, 400, 'allowed_payment_providers_not_unique'],
	['open details when paid', sub { $_[0]{open_order_details_by_default} = $T }, 400, 'open_order_details_by_default_not_allowed'],
	['open details not boolean', sub { $_[0]{order_has_been_paid} = $F; $_[0]{open_order_details_by_default} = 'yes' }, 400, 'open_order_details_by_default_invalid'],
	['user not object', sub { $_[0]{user} = 'ana' }, 400, 'user_invalid'],
	['user email bad', sub { $_[0]{user}{email} = 'ana' }, 400, 'user_email_invalid'],
	['user phone bad', sub { $_[0]{user}{phone} = '0401' }, 400, 'user_phone_invalid'],
	['subaccount not string', sub { $_[0]{subaccount} = {} }, 400, 'subaccount_invalid'],
	['extra not object', sub { $_[0]{extra} = [1] }, 400, 'extra_invalid'],
	['unknown member', sub { $_[0]{coupon} = 'X' }, 400, 'unknown_field'],
	['email link without email', sub { $_[0]{order_has_been_paid} = $F; $_[0]{send_payment_link} = 'email'; delete $_[0]{user} }, 400, 'user_email_required'],
	['sms link without phone', sub { $_[0]{order_has_been_paid} = $F; $_[0]{send_payment_link} = 'sms' }, 400, 'user_phone_required'],
);
my %codes;
for my $c (@cases)
{
	my ($name, $mut, $status, $code, $create_only) = @$c;
	my $body = paid_order();
	$mut->($body);
	orders_error(create($body), $status, $code, "create: $name");
	$codes{$code} = 1;
	my $v = $sb->req('POST', '/public/orders/validate', key => 'k1', json => $body);
	if ($create_only)
	{
		is($v->{status}, 200, "validate: $name is fine (not required there)") or diag $v->{body};
	}
	else
	{
		orders_error($v, $status, $code, "validate: $name");
	}
}
ok(keys %codes >= 40, 'distinct codes for the rules: ' . scalar keys %codes);

orders_error($sb->req('POST', '/public/orders', key => 'k1', body => '{"a":', ctype => 'application/json'),
	400, 'body_invalid_json', 'create: broken JSON');
orders_error($sb->req('POST', '/public/orders', key => 'k1', body => '[1]', ctype => 'application/json'),
	400, 'body_not_object', 'create: array body');
orders_error($sb->req('POST', '/public/orders', key => 'k1', body => JSON::PP::encode_json(paid_order()),
	ctype => 'text/plain'), 400, 'content_type_invalid', 'create: text/plain');
orders_error($sb->req('POST', '/public/orders', key => 'k1', body => JSON::PP::encode_json(paid_order())),
	400, 'content_type_invalid', 'create: no Content-Type');
orders_error($sb->req('POST', '/public/orders/validate', key => 'k1', body => '{}', ctype => 'text/json'),
	400, 'content_type_invalid', 'validate: text/json');
is(create(paid_order())->{status} // 0, 201, 'sanity: a valid order is accepted');
$sb->reset_all;

# --- validate stores nothing ---
my $r = $sb->req('POST', '/public/orders/validate', key => 'k1',
				 json => { vehicles => [{ plate => 'ZG 1234', country => 'HR' }],
						   vignettes => [{ name => 'HR', period => '1_day', start_date => '2031-05-01' }] });
is($r->{status}, 200, 'validate: minimal payload (no terms, payment, custom_id) is valid') or diag $r->{body};
ok(!defined $r->{json}{error} && $r->{json}{data}{valid}, 'validate: error null, data.valid');
$r = $sb->req('POST', '/public/orders/validate', key => 'k1', json => paid_order(), ctype => 'application/json; charset=utf-8');
is($r->{status}, 200, 'validate: charset parameter accepted');
is_deeply($sb->req('GET', '/public/orders', key => 'k1')->{json}{data}, [], 'validate stored no order');
is_deeply($sb->req('GET', '/_sandbox/orders/events', key => 'k1')->{json}, [], 'validate sent no event');

# --- create paid: two vignettes, two orders, one transaction ---
$sb->config({ 'orders.pending_after_min' => 100000 });	# hold at CREATED
my $body = paid_order(vignettes => [vignette(custom_id => 'P-1', flex => $T), vignette(custom_id => 'P-2')],
					  subaccount => 'app-eu', extra => { campaign => 'x' });
$r = create($body);
is($r->{status}, 201, 'create paid: 201') or diag $r->{body};
ok(exists $r->{json}{error} && !defined $r->{json}{error}, 'create: error null');
my $tx = $r->{json}{data};
like($tx->{transaction_id}, qr/^txn_[0-9a-f]{12}$/, 'transaction id');
is(scalar @{ $tx->{orders} }, 2, 'one order per vignette');
ok(!defined $tx->{payment_link}, 'paid: no payment_link');
ok(!defined $tx->{checkout_status}, 'paid: no checkout');
is_deeply([map { $_->{custom_id} } @{ $tx->{orders} }], ['P-1', 'P-2'], 'custom ids kept in order');
is_deeply([map { $_->{status} } @{ $tx->{orders} }], ['CREATED', 'CREATED'], 'orders CREATED at once');
my ($o1, $o2) = map { $_->{id} } @{ $tx->{orders} };
like($o1, qr/^ord_[0-9a-f]{12}$/, 'order id');
isnt($o1, $o2, 'distinct order ids');

orders_error(create(paid_order(vignettes => [vignette(custom_id => 'P-1')])), 409, 'custom_id_exists',
	'create: custom_id already used');
orders_error($sb->req('POST', '/public/orders/validate', key => 'k1',
	json => paid_order(vignettes => [vignette(custom_id => 'P-2')])), 409, 'custom_id_exists',
	'validate: custom_id already used');
is(create(paid_order(vignettes => [vignette(custom_id => 'P-1')]))->{status} // 0, 409,
	'custom ids are per partner: k1 again 409');
is($sb->req('POST', '/public/orders', key => 'k2',
	json => paid_order(vignettes => [vignette(custom_id => 'P-1')]))->{status}, 201,
	'another partner may use the same custom_id');

# --- read by id and custom id ---
$r = get_order($o1);
is($r->{status}, 200, 'detail by id');
my $d = $r->{json}{data};
is_deeply(get_order('P-1')->{json}{data}, $d, 'detail by custom_id is the same order');
is($d->{id}, $o1, 'id');
is($d->{custom_id}, 'P-1', 'custom_id');
is($d->{email}, 'ana@example.com', 'email from user.email');
like($d->{created_date}, qr/^\d{10}$/, 'created_date: epoch seconds');
cmp_ok(abs($d->{created_date} - time), '<', 120, 'created_date is now');
is($d->{status}, 'CREATED', 'status');
ok(!defined $d->{provider_id}, 'provider_id null before PENDING');
is($d->{transaction_id}, $tx->{transaction_id}, 'transaction_id');
is($d->{subaccount}, 'app-eu', 'subaccount');
is_deeply($d->{cars}, [{ plate => 'LJ AB-123', country => 'SI', provider_id => undef, pdf => undef }],
	'cars: one per vehicle, no provider id or pdf yet');
ok($d->{flex}{enabled}, 'flex order: flex block');
ok($d->{modify}{allowed} && $d->{full_refund}{allowed} && !$d->{partial_refund}{allowed},
	'flex order at CREATED: modify and full refund allowed');
$d = get_order($o2)->{json}{data};
ok(exists $d->{flex} && !defined $d->{flex} && !exists $d->{modify}, 'non-flex order: flex null, no capability blocks');
$r = $sb->req('GET', "/public/orders/P-2/status", key => 'k1');
is_deeply($r->{json}, { error => undef, data => { id => $o2, custom_id => 'P-2', status => 'CREATED' } },
	'status route');
orders_error(get_order('nope'), 404, 'order_not_found', 'unknown id');
orders_error($sb->req('GET', '/public/orders/nope/status', key => 'k1'), 404, 'order_not_found',
	'unknown id on status');
isnt(get_order('P-1', 'k2')->{json}{data}{id}, $o1, "partners do not see each other's orders");
orders_error($sb->req('POST', '/public/orders/nope/cancel-pending', key => 'k1'), 404, 'order_not_found',
	'cancel unknown');

# bug_report on every route
is(get_order("$o1?bug_report=true")->{status}, 200, 'bug_report=true accepted');
is(get_order("$o1?bug_report=false")->{status}, 200, 'bug_report=false accepted');
orders_error(get_order("$o1?bug_report=1"), 400, 'bug_report_invalid', 'bug_report=1');
orders_error($sb->req('GET', '/public/orders?bug_report=yes', key => 'k1'), 400, 'bug_report_invalid',
	'bug_report on the list');
is($sb->req('POST', "/public/orders/validate?bug_report=true", key => 'k1', json => paid_order())->{status},
	200, 'bug_report on validate');
my $bugs = $sb->req('GET', '/_sandbox/orders/bug-reports', key => 'k1')->{json};
is(scalar @$bugs, 2, 'bug reports recorded');
orders_error(get_order("$o1?verbose=1"), 400, 'unknown_parameter', 'unknown query parameter');

# cancel in the wrong state
orders_error($sb->req('POST', "/public/orders/$o1/cancel-pending", key => 'k1'), 409, 'order_not_pending',
	'cancel-pending on CREATED');
orders_error($sb->req('POST', "/public/orders/$o1/cancel-deferred", key => 'k1'), 409, 'order_not_deferred',
	'cancel-deferred on CREATED');

# --- the state machine: PENDING, cancel while PENDING ---
$sb->reset_all;
$sb->config({ 'orders.pending_after_min' => 1, 'orders.active_after_min' => 100000,
	'orders.deferred_active_after_min' => 100000 });
my $future = strftime('%Y-%m-%d', gmtime(time + 40 * 86400));
$tx = create(paid_order(vignettes => [vignette(custom_id => 'NOW'), vignette(custom_id => 'LATER', start_date => $future)]))->{json}{data};
ok(Sandbox::wait_until(sub { status_of('NOW') eq 'PENDING' && status_of('LATER') eq 'DEFERRED' }, 10),
	'past start -> PENDING, future start -> DEFERRED');
like(get_order('NOW')->{json}{data}{provider_id}, qr/^PRV-[0-9A-F]{12}$/, 'provider_id once PENDING');
orders_error($sb->req('POST', '/public/orders/NOW/cancel-deferred', key => 'k1'), 409, 'order_not_deferred',
	'cancel-deferred on PENDING');
orders_error($sb->req('POST', '/public/orders/LATER/cancel-pending', key => 'k1'), 409, 'order_not_pending',
	'cancel-pending on DEFERRED');
$r = $sb->req('POST', '/public/orders/NOW/cancel-pending', key => 'k1');
is($r->{status}, 200, 'cancel-pending on PENDING: 200') or diag $r->{body};
is($r->{json}{data}{status}, 'REFUNDED', 'cancel-pending -> REFUNDED');
$r = $sb->req('POST', '/public/orders/LATER/cancel-deferred?bug_report=false', key => 'k1');
is($r->{status}, 200, 'cancel-deferred on DEFERRED: 200');
is($r->{json}{data}{status}, 'REFUNDED', 'cancel-deferred -> REFUNDED');
orders_error($sb->req('POST', '/public/orders/NOW/cancel-pending', key => 'k1'), 409, 'order_not_pending',
	'cancel-pending twice');
my @ev = map { "$_->{body}{product}{custom_id}:$_->{status}" }
	@{ $sb->req('GET', '/_sandbox/orders/events', key => 'k1')->{json} };
is_deeply([grep { /^NOW/ } @ev], ['NOW:CREATED', 'NOW:PENDING', 'NOW:REFUNDED'], 'events of the cancelled order');

# --- list: status filter and paging ---
$r = $sb->req('GET', '/public/orders?status=REFUNDED', key => 'k1');
is_deeply([map { $_->{custom_id} } @{ $r->{json}{data} }], ['NOW', 'LATER'], 'filter REFUNDED');
is_deeply([sort keys %{ $r->{json}{data}[0] }], [qw(created_date custom_id email id status)], 'list item fields');
is_deeply($sb->req('GET', '/public/orders?status=PENDING', key => 'k1')->{json}{data}, [], 'filter PENDING: none');
orders_error($sb->req('GET', '/public/orders?status=CREATED', key => 'k1'), 400, 'status_invalid',
	'CREATED is not a filter value');
create(paid_order(vignettes => [map { vignette(custom_id => "L$_", start_date => $future) } 1 .. 5]));
ok(Sandbox::wait_until(sub {
	@{ $sb->req('GET', '/public/orders?status=WILL%20BE%20ACTIVE', key => 'k1')->{json}{data} } == 5 }, 10),
	'filter WILL BE ACTIVE (%20) selects the deferred orders');
is(scalar @{ $sb->req('GET', '/public/orders?status=WILL+BE+ACTIVE', key => 'k1')->{json}{data} }, 5,
	'filter WILL+BE+ACTIVE works too');
my (@ids, $cursor, $first_cursor);
my $pages = 0;
do
{
	my $q = '/public/orders?limit=3' . (defined $cursor ? "&cursor=$cursor" : '');
	$r = $sb->req('GET', $q, key => 'k1');
	is($r->{status}, 200, "page $pages") or diag $r->{body};
	ok(exists $r->{json}{error} && !defined $r->{json}{error}, 'page has error null');
	push @ids, map { $_->{custom_id} } @{ $r->{json}{data} };
	$cursor = $r->{json}{pagination}{next_cursor};
	$first_cursor //= $cursor;
	$pages++;
} while ($r->{json}{pagination}{has_more} && $pages < 10);
is_deeply(\@ids, ['NOW', 'LATER', map { "L$_" } 1 .. 5], 'paging walks all orders oldest first');
is($pages, 3, 'three pages of 3');
$r = $sb->req('GET', '/public/orders?limit=3&status=REFUNDED&cursor=' . $first_cursor, key => 'k1');
is($r->{status}, 400, 'a cursor from another filter is rejected');

# --- timed path up to ACTIVE and the PDF ---
$sb->reset_all;
$sb->config({ 'orders.pending_after_min' => 1, 'orders.active_after_min' => 2, 'orders.pdf_after_min' => 1 });
$tx = create(paid_order(vehicles => [{ plate => 'LJ1', country => 'SI' }, { plate => 'W 123', country => 'AT' }],
	vignettes => [vignette(custom_id => 'RUN')]))->{json}{data};
ok(Sandbox::wait_until(sub { my $x = get_order('RUN')->{json}{data}; $x->{cars}[0]{pdf} }, 10),
	'order reaches ACTIVE and gets its PDF');
$d = get_order('RUN')->{json}{data};
is($d->{status}, 'ACTIVE', 'ACTIVE');
like($_->{provider_id}, qr/^CAR-/, "car $_->{plate}: provider id") for @{ $d->{cars} };
like($d->{cars}[1]{pdf}, qr{^http://127\.0\.0\.1:\d+/_sandbox/orders/pdf/$d->{id}\?car=1$}, 'pdf url of car 2');
(my $pdfpath = $d->{cars}[1]{pdf}) =~ s{^http://[^/]+}{};
$r = $sb->req('GET', $pdfpath);
is($r->{status}, 200, 'pdf served without a key');
like($r->{headers}{'content-type'}, qr{^application/pdf}, 'pdf content type');
like($r->{body}, qr/^%PDF-1\.\d.*W 123.*%%EOF\s*$/s, 'a PDF naming the car');
is_deeply([map { $_->{status} } @{ $sb->req('GET', "/_sandbox/orders/events?order_id=$d->{id}")->{json} }],
	['CREATED', 'PENDING', 'ACTIVE', 'ACTIVE'], 'events of the order (last one is the confirmation)');
orders_error($sb->req('POST', '/public/orders/RUN/cancel-pending', key => 'k1'), 409, 'order_not_pending',
	'cancel-pending on ACTIVE');

# --- unpaid: pay and fail ---
$r = create(unpaid_order(vignettes => [vignette(custom_id => 'U-1'), vignette(custom_id => 'U-2')],
	send_payment_link => 'email', allowed_payment_providers => ['provider_c'],
	open_order_details_by_default => $T));
is($r->{status}, 201, 'create unpaid: 201') or diag $r->{body};
$tx = $r->{json}{data};
like($tx->{payment_link}, qr{^http://127\.0\.0\.1:\d+/_sandbox/orders/checkout/$tx->{transaction_id}$}, 'payment_link');
is($tx->{checkout_status}, 'CREATED', 'checkout CREATED');
is_deeply($tx->{allowed_payment_providers}, ['provider_c'], 'providers kept');
is_deeply([map { $_->{status} } @{ $tx->{orders} }], ['AWAITING_PAYMENT', 'AWAITING_PAYMENT'], 'orders wait for payment');
(my $cpath = $tx->{payment_link}) =~ s{^http://[^/]+}{};
like($sb->req('GET', $cpath)->{body}, qr/$tx->{transaction_id}/, 'checkout page served');
is(create(unpaid_order(vignettes => [vignette(custom_id => 'U-3')]))->{json}{data}{allowed_payment_providers}[1],
	'provider_b', 'default providers provider_a, provider_b');
my $tid = $tx->{transaction_id};
orders_error($sb->req('POST', "/_sandbox/orders/transactions/$tid/pay"), 401, 'missing_api_key', 'pay needs the key');
orders_error($sb->req('POST', "/_sandbox/orders/transactions/$tid/pay", key => 'k2'), 404,
	'transaction_not_found', "another partner's transaction");
$r = $sb->req('POST', "/_sandbox/orders/transactions/$tid/pay", key => 'k1');
is($r->{status}, 200, 'pay: 200') or diag $r->{body};
is($r->{json}{data}{checkout_status}, 'SUCCESS', 'checkout SUCCESS');
ok(!defined $r->{json}{data}{payment_link}, 'no payment link after payment');
orders_error($sb->req('POST', "/_sandbox/orders/transactions/$tid/pay", key => 'k1'), 409,
	'transaction_not_open', 'pay twice');
ok(Sandbox::wait_until(sub { status_of('U-1') eq 'ACTIVE' && status_of('U-2') eq 'ACTIVE' }, 10),
	'paid orders follow the paid path to ACTIVE');

my $t3 = $sb->req('GET', '/_sandbox/orders/transactions', key => 'k1')->{json}[-1]{transaction_id};
$r = $sb->req('POST', "/_sandbox/orders/transactions/$t3/fail", key => 'k1');
is($r->{json}{data}{checkout_status}, 'FAILED', 'fail: checkout FAILED');
is(status_of('U-3'), 'DELETED', 'orders of a failed payment are DELETED');
is(scalar @{ $sb->req('GET', '/public/orders?status=DELETED', key => 'k1')->{json}{data} }, 1, 'filter DELETED');
orders_error($sb->req('POST', "/_sandbox/orders/transactions/$t3/pay", key => 'k1'), 409,
	'transaction_not_open', 'pay after fail');
orders_error($sb->req('POST', "/_sandbox/orders/transactions/nope/fail", key => 'k1'), 404,
	'transaction_not_found', 'fail unknown');
my $paid_tx = $sb->req('GET', '/_sandbox/orders/transactions', key => 'k1')->{json}[0]{transaction_id};
orders_error($sb->req('POST', "/_sandbox/orders/transactions/$paid_tx/pay", key => 'k1'), 409,
	'transaction_not_open', 'a partner-paid transaction has no checkout');

# chargeback and expiry
$r = $sb->req('POST', '/_sandbox/orders/chargeback/U-1', key => 'k1');
is($r->{json}{data}{status}, 'REFUNDED', 'chargeback -> REFUNDED');
orders_error($sb->req('POST', '/_sandbox/orders/chargeback/U-1', key => 'k1'), 409, 'order_not_chargeable',
	'chargeback twice');
$sb->config({ 'orders.expire_after_min' => 1 });
create(paid_order(vignettes => [vignette(custom_id => 'EXP')]));
ok(Sandbox::wait_until(sub { status_of('EXP') eq 'EXPIRED' }, 10), 'expire_after_min: ACTIVE -> EXPIRED');
ok((grep { $_->{custom_id} eq 'EXP' } @{ $sb->req('GET', '/public/orders?status=EXPIRED', key => 'k1')->{json}{data} }),
	'filter EXPIRED');
is(status_of('RUN'), 'ACTIVE', 'orders confirmed before the knob was set do not expire');

# --- rate limit rows of the order routes ---
$sb->config({ rl_window_ms => 600_000_000, 'rate_limit.POST /orders/validate' => 2 });
my @st = map { $sb->req('POST', '/public/orders/validate', key => 'k1', json => paid_order())->{status} } 1 .. 3;
is_deeply(\@st, [200, 200, 429], 'validate is rate limited on its own row');
@st = map { $sb->req('GET', '/public/orders/EXP/status', key => 'k1')->{status} } 1 .. 16;
is($st[14], 200, 'status: 15 per id pass');
is($st[15], 429, 'status: 16th for the same id is 429');
is($sb->req('GET', '/public/orders/RUN/status', key => 'k1')->{status}, 200, 'another id is not limited');

# --- the other routes of the rate-limit table (sandbox shapes) ---
$sb->reset_all;
$r = $sb->req('GET', '/public/products', key => 'k1');
is($r->{status}, 200, 'products');
ok(@{ $r->{json}{data} } >= 5 && $r->{json}{data}[0]{id} && $r->{json}{data}[0]{periods}, 'products: catalogue');
$r = $sb->req('GET', '/public/products/status', key => 'k1');
ok(!(grep { $_->{status} !~ /^(available|maintenance)$/ } @{ $r->{json}{data} }), 'products/status');
orders_error($sb->req('GET', '/public/products'), 401, 'missing_api_key', 'products need the key');
$r = $sb->req('POST', '/public/transaction/create', key => 'k1',
			  json => { %{ unpaid_order(vignettes => [vignette(custom_id => 'T-1')]) }, user => { email => 'bo@example.com' } });
is($r->{status}, 201, 'transaction/create') or diag $r->{body};
my $mt = $r->{json}{data}{transaction_id};
is($r->{json}{data}{checkout_status}, 'CREATED', 'transaction/create: a checkout');
orders_error($sb->req('POST', '/public/transaction/create', key => 'k1', json => paid_order()), 400,
	'order_has_been_paid_invalid', 'transaction/create refuses a paid order');
is_deeply([map { $_->{transaction_id} } @{ $sb->req('GET', '/public/transactions', key => 'k1')->{json}{data} }],
	[$mt], 'transactions list');
is($sb->req('GET', "/public/transaction/$mt/status", key => 'k1')->{json}{data}{status}, 'CREATED', 'transaction status');
$r = $sb->req('GET', "/public/transaction/$mt/fee", key => 'k1')->{json}{data};
ok($r->{amount} > 0 && $r->{fee} > 0 && abs($r->{total} - $r->{amount} - $r->{fee}) < 1e-9, 'transaction fee');
is($sb->req('GET', "/public/transaction/$mt/data", key => 'k1')->{json}{data}{orders}[0]{custom_id}, 'T-1', 'transaction data');
orders_error($sb->req('GET', '/public/transaction/nope/data', key => 'k1'), 404, 'transaction_not_found', 'unknown transaction');
$r = $sb->req('GET', '/public/users', key => 'k1');
is_deeply([map { $_->{email} } @{ $r->{json}{data} }], ['bo@example.com'], 'users: emails of orders');
my $uid = $r->{json}{data}[0]{id};
is($sb->req('GET', "/public/users/$uid/orders", key => 'k1')->{json}{data}[0]{custom_id}, 'T-1', "user's orders");
my $veh = $sb->req('GET', "/public/users/$uid/vehicles", key => 'k1')->{json}{data};
like($veh->[0]{id} // '', qr/^veh_[0-9a-f]{12}$/, "user's vehicles: a stable id");
is_deeply([map { { plate => $_->{plate}, country => $_->{country} } } @$veh],
	[{ plate => 'LJ AB-123', country => 'SI' }], "user's vehicles");
orders_error($sb->req('GET', '/public/users/usr_x/orders', key => 'k1'), 404, 'user_not_found', 'unknown user');
is($sb->req('POST', "/public/transaction/$mt/cancel", key => 'k1')->{json}{data}{checkout_status}, 'FAILED',
	'transaction cancel: checkout FAILED');
orders_error($sb->req('POST', "/public/transaction/$mt/cancel", key => 'k1'), 409, 'transaction_not_open', 'cancel twice');
is($sb->req('POST', '/public/validate-vehicle', key => 'k1', json => { plate => 'ce 12-x', country => 'SI' })->{json}{data}{plate},
	'CE 12-X', 'validate-vehicle');
orders_error($sb->req('POST', '/public/validate-vehicle', key => 'k1', json => { plate => 'ce 12-x' }), 400,
	'vehicle_country_invalid', 'validate-vehicle: bad vehicle');
$r = $sb->req('POST', '/public/mcp', key => 'k1', json => { jsonrpc => '2.0', id => 7, method => 'tools/call',
	params => { name => 'order_status', arguments => { id => 'T-1' } } });
is($r->{json}{result}{content}[0]{text}, 'DELETED', 'mcp: order_status tool');
is($sb->req('POST', '/public/mcp', key => 'k1', json => { jsonrpc => '2.0', id => 8, method => 'x' })->{json}{error}{code},
	-32601, 'mcp: unknown method');
$sb->config({ 'rate_limit.GET /products' => 2 });	# one used above
is_deeply([map { $sb->req('GET', '/public/products', key => 'k1')->{status} } 1 .. 2], [200, 429], 'products: own rate-limit row');

# knobs are listed and checked
my $cfg = $sb->req('GET', '/_sandbox/config')->{json};
ok(exists $cfg->{'orders.pending_after_min'} && exists $cfg->{'orders.webhook_secret'}, 'knobs listed');
is($sb->req('POST', '/_sandbox/config', json => { 'orders.pdf_after_min' => -1 })->{status}, 400, 'negative knob rejected');

$sb->stop;
done_testing();
