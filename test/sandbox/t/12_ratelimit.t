# The rate-limit table: per partner, per route, per resource id, tiers,
# fixed windows at an unknown offset, Retry-After.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/../lib";
use Sandbox;
use Test::More;
use Time::HiRes qw(sleep);

# A one-minute window at real speed: a burst of a few dozen requests never
# spans two windows except by a ~1% chance, which the test detects and
# retries once in a fresh window.
sub burst
{
	my ($sb, $n, $path, $key, $method) = @_;
	return [map { $sb->req($method // 'GET', $path, key => $key)->{status} } 1 .. $n];
}

sub count_429 { scalar grep { $_ == 429 } @{ $_[0] } }

my $sb = Sandbox->start(keys => ['std', 'prem=premium', 'ent=enterprise', 'std2']);

# GET /orders/{id}/status: 15 / 30 / 50 per minute for the same id
my $s = burst($sb, 16, '/public/orders/A-1/status', 'std');
is(count_429([@$s[0 .. 14]]), 0, 'standard: 15 status reads pass');
is($s->[15], 429, 'standard: the 16th is 429');
my $r = $sb->req('GET', '/public/orders/A-1/status', key => 'std');
is($r->{status}, 429, 'still limited in the same window');
is($r->{json}{error}{code}, 'rate_limited', '429 error code');
ok(exists $r->{json}{data}, '429 in the orders style');
like($r->{headers}{'retry-after'} // '', qr/^\d+$/, 'Retry-After present');
cmp_ok($r->{headers}{'retry-after'}, '<=', 60, 'Retry-After within the window');

isnt($sb->req('GET', '/public/orders/A-2/status', key => 'std')->{status}, 429,
	'another order id is not held back');
isnt($sb->req('GET', '/public/orders/A-1/status', key => 'std2')->{status}, 429,
	'another partner is not held back');
isnt($sb->req('GET', '/public/orders/A-1', key => 'std')->{status}, 429,
	'another route of the same id is not held back');

$s = burst($sb, 31, '/public/orders/B-1/status', 'prem');
is(count_429([@$s[0 .. 29]]), 0, 'premium: 30 pass');
is($s->[30], 429, 'premium: the 31st is 429');
$s = burst($sb, 51, '/public/orders/C-1/status', 'ent');
is(count_429([@$s[0 .. 49]]), 0, 'enterprise: 50 pass');
is($s->[50], 429, 'enterprise: the 51st is 429');

# the override knob, a plain route, 429s do not count
$sb->config({ 'rate_limit.GET /orders' => 3 });
$s = burst($sb, 5, '/public/orders', 'std');
is_deeply($s, [200, 200, 200, 429, 429], 'override: 3 per window on GET /orders');
$sb->config({ 'rate_limit.GET /orders' => undef });
$sb->stop;

# Windows: a short window resets, and it is aligned at the configured offset.
$sb = Sandbox->start(keys => ['std'], args => ['--rl-window-ms', '400', '--rl-offset-ms', '0',
	'--set', 'rate_limit.GET /orders=2']);
my $ok = 0;
for my $try (1 .. 3)
{
	$s = burst($sb, 3, '/public/orders', 'std');
	next unless $s->[2] == 429;
	sleep 0.45;
	$ok = $sb->req('GET', '/public/orders', key => 'std')->{status} == 200;
	last if $ok;
}
ok($ok, 'a new window lets requests through again');

$sb->stop;
$sb = Sandbox->start(keys => ['std'], args => ['--no-retry-after', '--set', 'rate_limit.GET /orders=1']);
burst($sb, 1, '/public/orders', 'std');
$r = $sb->req('GET', '/public/orders', key => 'std');
is($r->{status}, 429, 'limited');
ok(!exists $r->{headers}{'retry-after'}, '--no-retry-after: no header');
$sb->stop;

$sb = Sandbox->start(keys => ['std'], args => ['--no-rate-limits', '--set', 'rate_limit.GET /orders=1']);
is(count_429(burst($sb, 5, '/public/orders', 'std')), 0, '--no-rate-limits: nothing limited');
$sb->stop;

# Alignment: with a window of 1000 ms at offset 500, the counter resets at
# sandbox times 500, 1500, ...; find a reset and check it repeats 1000 ms later.
$sb = Sandbox->start(keys => ['std'], args => ['--rl-window-ms', '1000', '--rl-offset-ms', '500',
	'--set', 'rate_limit.GET /orders=1']);
my $resets = 0;
my @gaps;
my $last;
for (1 .. 250)
{
	my $st = $sb->req('GET', '/public/orders', key => 'std')->{status};
	if ($st == 200)
	{
		my $now = Time::HiRes::time();
		push @gaps, $now - $last if defined $last;
		$last = $now;
	}
	sleep 0.01;
}
ok(@gaps >= 2, 'several windows seen');
# the first window ends at the offset (500 ms after start), not a full window later
my $first = shift @gaps;
cmp_ok($first, '<', 0.56, 'the first window ends at the configured offset');
cmp_ok($first, '>', 0.3, 'the first window is not cut short');
my @bad = grep { $_ < 0.85 || $_ > 1.25 } @gaps;
diag('gaps: ' . join(' ', map { sprintf('%.3f', $_) } @gaps)) if @bad;
is(scalar @bad, 0, 'then one request per 1000 ms window: windows are fixed');

done_testing();
