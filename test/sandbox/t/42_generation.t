# Generation and key validation: success shapes, determinism, problem+json
# errors, 401 without a key, 429 problem response after the limit.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/../lib";
use Sandbox;
use Test::More;
use JSON::PP ();

# Real-time minute windows (time scale 1), so a rate-limit window cannot
# roll over in the middle of the few requests the 429 checks make.
my @keys = ('k1=standard', 'k2=premium', 'k3=standard', 'k4=standard', 'k5=enterprise');
my $sb = Sandbox->start(keys => \@keys, args => ['--time-scale', '1', '--seed', '7']);

sub problem
{
	my ($r, $status, $name) = @_;
	is($r->{status}, $status, "$name: status $status");
	like($r->{headers}{'content-type'} // '', qr{^application/problem\+json}, "$name: problem+json");
	my $j = $r->{json} // {};
	ok(defined $j->{type} && !ref $j->{type} && length $j->{type}, "$name: type");
	ok(defined $j->{title} && !ref $j->{title} && length $j->{title}, "$name: title");
	ok(defined $j->{status} && $j->{status} == $status, "$name: status member $status");
	ok(!exists $j->{instance} || !ref $j->{instance}, "$name: instance is a string if present");
}

sub gen { my ($body, %o) = @_; return $sb->req('POST', '/v1/generate', key => 'k1', json => $body, %o) }

# --- generate ---
my $r = gen({ prompt => 'road trips' });
is($r->{status}, 200, 'generate: 200');
like($r->{headers}{'content-type'} // '', qr{^application/json}, 'generate: JSON');
my $j = $r->{json};
is(ref $j->{threads}, 'ARRAY', 'threads array');
is(scalar @{ $j->{threads} }, 3, 'count defaults to 3');
is($j->{count}, 3, 'count member');
is($j->{prompt}, 'road trips', 'prompt echoed');
like($j->{id}, qr/^gen_[0-9a-f]{16}$/, 'generation id');
for my $t (@{ $j->{threads} })
{
	like($t->{id}, qr/^thr_[0-9a-f]{16}$/, 'thread id');
	like($t->{text}, qr/road trips/, 'thread text mentions the prompt');
}
my %tid = map { $_->{id} => 1 } @{ $j->{threads} };
is(scalar keys %tid, 3, 'thread ids differ');

is_deeply(gen({ prompt => 'road trips' }, key => 'k2')->{json}, $j,
		  'deterministic: same prompt, same threads (any key)');
my $five = gen({ prompt => 'road trips', count => 5 })->{json};
is(scalar @{ $five->{threads} }, 5, 'count 5');
is_deeply([map { $_->{id} } @{ $five->{threads} }[0 .. 2]],
		  [map { $_->{id} } @{ $j->{threads} }], 'first threads stable across counts');
isnt(gen({ prompt => 'cooking' })->{json}{threads}[0]{id}, $j->{threads}[0]{id},
	 'another prompt gives other threads');
is(scalar @{ gen({ prompt => 'x', count => 1 })->{json}{threads} }, 1, 'count 1');
is(scalar @{ gen({ prompt => 'x', count => 10 }, key => 'k2')->{json}{threads} }, 10, 'count 10');

my $other = Sandbox->start(keys => ['k1'], args => ['--time-scale', '1', '--seed', '8']);
my $o = $other->req('POST', '/v1/generate', key => 'k1', json => { prompt => 'road trips' });
is($o->{status}, 200, 'other sandbox: 200');
isnt($o->{json}{threads}[0]{id}, $j->{threads}[0]{id}, 'another seed gives other threads');
$other->stop;

# --- generate errors: problem+json (k2 has a larger limit) ---
for my $c ([{}, 'missing prompt'],
		   [{ prompt => '' }, 'empty prompt'],
		   [{ prompt => 7 }, 'prompt not a string'],
		   [{ prompt => 'x' x 4001 }, 'prompt too long'],
		   [{ prompt => 'x', count => 0 }, 'count 0'],
		   [{ prompt => 'x', count => 11 }, 'count 11'],
		   [{ prompt => 'x', count => '2' }, 'count a string'],
		   [{ prompt => 'x', count => 2.5 }, 'count a float'],
		   [{ prompt => 'x', temperature => 1 }, 'unknown member'],
		   [[], 'array body'])
{
	problem(gen($c->[0], key => 'k2'), 400, "generate: $c->[1]");
}
problem($sb->req('POST', '/v1/generate', key => 'k2', body => '{', ctype => 'application/json'),
		400, 'generate: broken JSON');
problem($sb->req('POST', '/v1/generate?x=1', key => 'k2', json => { prompt => 'x' }),
		400, 'generate: query parameter');

# --- key validation ---
$r = $sb->req('GET', '/v1/key/validate', key => 'k1');
is($r->{status}, 200, 'validate: 200');
ok(JSON::PP::is_bool($r->{json}{valid}) && $r->{json}{valid}, 'valid: true');
is($r->{json}{partner_tier}, 'standard', 'tier standard');
is($sb->req('GET', '/v1/key/validate', key => 'k2')->{json}{partner_tier}, 'premium', 'tier premium');
is($sb->req('GET', '/v1/key/validate', key => 'k5')->{json}{partner_tier}, 'enterprise',
   'tier enterprise');
unlike($r->{body}, qr/k1/, 'key not echoed');
problem($sb->req('GET', '/v1/key/validate?verbose=1', key => 'k1'), 400, 'validate: query parameter');

# --- 401 ---
problem($sb->req('GET', '/v1/key/validate'), 401, 'validate without key');
problem($sb->req('GET', '/v1/key/validate', key => 'wrong'), 401, 'validate with unknown key');
problem($sb->req('POST', '/v1/generate', json => { prompt => 'x' }), 401, 'generate without key');
problem($sb->req('POST', '/v1/generate', key => 'wrong', json => { prompt => 'x' }), 401,
		'generate with unknown key');

# --- 429 after the limit (k3 and k4 are untouched so far) ---
my $cfg = $sb->req('POST', '/_sandbox/config',
				   json => { 'rate_limit.POST /v1/generate' => 3,
							 'rate_limit.GET /v1/key/validate' => 2 });
ok($cfg->{status} >= 200 && $cfg->{status} < 300, 'lowered the limits') or diag $cfg->{body};

my @st = map { gen({ prompt => "p$_" }, key => 'k3')->{status} } 1 .. 3;
is_deeply(\@st, [200, 200, 200], 'generate: 3 requests within the limit');
$r = gen({ prompt => 'p4' }, key => 'k3');
problem($r, 429, 'generate over the limit');
is($r->{json}{status}, 429, 'status member is 429');
ok(!exists $r->{json}{threads}, 'no threads in the 429');
problem(gen({ prompt => 'p5' }, key => 'k3'), 429, 'generate stays limited');
is(gen({ prompt => 'p1' }, key => 'k4')->{status}, 200, 'another key has its own counter');

@st = map { $sb->req('GET', '/v1/key/validate', key => 'k3')->{status} } 1 .. 2;
is_deeply(\@st, [200, 200], 'validate: 2 requests within the limit (own row)');
problem($sb->req('GET', '/v1/key/validate', key => 'k3'), 429, 'validate over the limit');

$sb->stop;
done_testing();
