# Todo service: no auth, shared list, CRUD round trip, atomic update, errors.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/../lib";
use Sandbox;
use Test::More;
use JSON::PP ();

my $sb = Sandbox->start(keys => ['k1=standard', 'k2=premium'],
						args => ['--time-scale', '0.001', '--seed', '7']);

sub todos { my $r = $sb->req('GET', '/todos', @_); return $r }
sub by_id { my ($list, $id) = @_; my ($t) = grep { $_->{id} == $id } @$list; return $t }

sub plain_error
{
	my ($r, $status, $code, $name) = @_;
	is($r->{status}, $status, "$name: status $status");
	is(eval { $r->{json}{error}{code} }, $code, "$name: code $code") if defined $code;
	ok(defined eval { $r->{json}{error}{message} }, "$name: message present");
}

# --- seed, no auth ---
my $r = todos();
is($r->{status}, 200, 'GET /todos without a key: 200');
like($r->{headers}{'content-type'} // '', qr{^application/json}, 'JSON content type');
is(ref $r->{json}, 'ARRAY', 'an array');
my $seed = $r->{json};
ok(@$seed >= 3, 'seeded with a few items');
for my $t (@$seed)
{
	ok($t->{id} =~ /^\d+$/ && !ref $t->{title} && defined $t->{title}
	   && JSON::PP::is_bool($t->{completed}) && $t->{userId} =~ /^\d+$/,
	   "seed item $t->{id} has id, title, completed (boolean), userId")
		or diag explain $t;
}
is_deeply(todos(key => 'k1')->{json}, $seed, 'same list with a key');
is_deeply(todos(key => 'k2')->{json}, $seed, 'same list for another key (shared)');
is(todos(key => 'not-a-key')->{status}, 200, 'an unknown key does not matter');

# --- create ---
$r = $sb->req('POST', '/todos', json => { title => 'Order toner', userId => 7 });
is($r->{status}, 201, 'POST /todos: 201');
my $t = $r->{json};
is($t->{title}, 'Order toner', 'title');
is($t->{userId}, 7, 'userId');
ok(JSON::PP::is_bool($t->{completed}) && !$t->{completed}, 'completed defaults to false');
ok($t->{id} =~ /^\d+$/ && !by_id($seed, $t->{id}), 'new integer id');
my $id = $t->{id};

$r = $sb->req('POST', '/todos', key => 'k2',
			  json => { title => 'Call supplier', userId => 2, completed => JSON::PP::true });
is($r->{status}, 201, 'POST with completed: 201');
ok($r->{json}{completed}, 'completed true kept');
my $id2 = $r->{json}{id};
isnt($id2, $id, 'ids differ');

my $list = todos()->{json};
is(scalar @$list, @$seed + 2, 'list grew by two');
is_deeply(by_id($list, $id), { id => $id, title => 'Order toner', completed => JSON::PP::false,
							   userId => 7 }, 'created todo visible through GET (no key)');
ok(by_id(todos(key => 'k1')->{json}, $id2), 'todo created with k2 is visible to k1');

# --- create errors (nothing created) ---
my @bad_create = (
	[{ userId => 1 }, 'missing_title', 'no title'],
	[{ title => 'x' }, 'missing_user_id', 'no userId'],
	[{ title => 5, userId => 1 }, 'invalid_title', 'title not a string'],
	[{ title => '', userId => 1 }, 'invalid_title', 'empty title'],
	[{ title => 'x', userId => '1' }, 'invalid_user_id', 'userId a string'],
	[{ title => 'x', userId => 1.5 }, 'invalid_user_id', 'userId a float'],
	[{ title => 'x', userId => 1, completed => 'yes' }, 'invalid_completed', 'completed not boolean'],
	[{ title => 'x', userId => 1, colour => 'red' }, 'unknown_field', 'unknown member'],
	[{ title => 'x', userId => 1, id => 99 }, 'unknown_field', 'id on create'],
	[[1, 2], 'invalid_body', 'array body'],
);
for my $c (@bad_create)
{
	plain_error($sb->req('POST', '/todos', json => $c->[0]), 400, $c->[1], "create: $c->[2]");
}
plain_error($sb->req('POST', '/todos', body => '{"title":', ctype => 'application/json'),
			400, 'invalid_json', 'create: broken JSON');
plain_error($sb->req('POST', '/todos', body => '{"title":"x","userId":1}', ctype => 'text/plain'),
			400, undef, 'create: wrong content type');
is(scalar @{ todos()->{json} }, @$seed + 2, 'failed creates added nothing');

# --- update ---
$r = $sb->req('PUT', "/todos/$id", json => { completed => JSON::PP::true });
is($r->{status}, 200, 'PUT: 200');
is_deeply($r->{json}, { id => $id, title => 'Order toner', completed => JSON::PP::true, userId => 7 },
		  'PUT returns the whole updated todo');
$r = $sb->req('PUT', "/todos/$id", key => 'k1',
			  json => { title => 'Order toner, black', userId => 8, id => $id });
is($r->{status}, 200, 'PUT several fields (and matching id): 200');
is_deeply(by_id(todos()->{json}, $id),
		  { id => $id, title => 'Order toner, black', completed => JSON::PP::true, userId => 8 },
		  'update visible through GET');
is($sb->req('PUT', "/todos/$id", json => {})->{status}, 200, 'empty update: 200');

# atomic: a bad member after good ones changes nothing
my $before = by_id(todos()->{json}, $id);
for my $c ([{ title => 'changed', completed => 'no' }, 'invalid_completed', 'bad completed'],
		   [{ title => 'changed', userId => 0 }, 'invalid_user_id', 'bad userId'],
		   [{ completed => JSON::PP::false, title => '' }, 'invalid_title', 'bad title'],
		   [{ title => 'changed', extra => 1 }, 'unknown_field', 'unknown member'],
		   [{ title => 'changed', id => $id + 1000 }, 'id_mismatch', 'other id'],
		   ['text', 'invalid_body', 'string body'])
{
	plain_error($sb->req('PUT', "/todos/$id", json => $c->[0]), 400, $c->[1], "update: $c->[2]");
	is_deeply(by_id(todos()->{json}, $id), $before, "update: $c->[2]: nothing changed");
}

plain_error($sb->req('PUT', '/todos/999999', json => { title => 'x' }), 404, 'todo_not_found',
			'update of a missing todo');
plain_error($sb->req('PUT', '/todos/abc', json => { title => 'x' }), 400, 'invalid_id',
			'update: non-integer id');
plain_error($sb->req('PUT', '/todos/1.5', json => { title => 'x' }), 400, 'invalid_id',
			'update: fractional id');

# --- delete ---
$r = $sb->req('DELETE', "/todos/$id");
is($r->{status}, 204, 'DELETE: 204');
is($r->{body} // '', '', 'DELETE: empty body');
ok(!by_id(todos()->{json}, $id), 'deleted todo gone from GET');
ok(by_id(todos()->{json}, $id2), 'the other todo stays');
plain_error($sb->req('DELETE', "/todos/$id"), 404, 'todo_not_found', 'delete again');
plain_error($sb->req('DELETE', '/todos/424242'), 404, 'todo_not_found', 'delete missing');
plain_error($sb->req('DELETE', '/todos/x1'), 400, 'invalid_id', 'delete: non-integer id');
plain_error($sb->req('PUT', "/todos/$id", json => { title => 'x' }), 404, 'todo_not_found',
			'update of a deleted todo');

# ids are not reused
$r = $sb->req('POST', '/todos', json => { title => 'Next', userId => 1 });
ok($r->{json}{id} > $id2, 'ids count up, not reused');

# query parameters are not accepted
plain_error($sb->req('GET', '/todos?userId=1'), 400, undef,
			'GET /todos?userId=1');

# seed items can be edited and deleted too
is($sb->req('DELETE', "/todos/$seed->[0]{id}")->{status}, 204, 'delete a seed item');

# --- reset restores the seed ---
$sb->req('POST', '/_sandbox/reset');
is_deeply(todos()->{json}, $seed, 'reset restores the seed list');
$r = $sb->req('POST', '/todos', json => { title => 'After reset', userId => 1 });
is($r->{json}{id}, $seed->[-1]{id} + 1, 'ids restart after reset');

$sb->stop;
done_testing();
