# The sandbox clock (POST /_sandbox/clock): advancing it fires the timers it
# passes at once (the order state machine at real-time scale, where a
# sandbox minute is a real minute), freezing it holds them, reset lets it
# run again, and bad bodies are refused.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/../lib";
use Sandbox;
use Test::More;
use JSON::PP ();
use Time::HiRes qw(sleep time);
use IO::Socket::INET;

my $T = JSON::PP::true;
my $F = JSON::PP::false;

sub paid_order
{
	my ($cid) = @_;
	return { terms_and_privacy_accepted => $T, order_has_been_paid => $T,
		vehicles => [{ plate => 'LJ AB-123', country => 'SI' }],
		vignettes => [{ custom_id => $cid, name => "SI e-vignette $cid", period => '1_year',
			start_date => '2020-01-01' }],
		user => { email => 'ana@example.com' } };
}

sub clock { my ($sb, $body) = @_; $sb->req(defined $body ? 'POST' : 'GET', '/_sandbox/clock',
	defined $body ? (json => $body) : ()) }

# Real-time scale: the state machine's first step (CREATED -> PENDING) is a
# real minute away, far beyond this test's run.
my $sb = Sandbox->start(keys => ['k1=standard'], args => ['--time-scale', '1', '--seed', '3']);

sub create
{
	my $r = $sb->req('POST', '/public/orders', key => 'k1', json => paid_order($_[0]));
	is($r->{status}, 201, "create $_[0]") or diag $r->{body};
	return $r->{json}{data}{orders}[0]{id} // $r->{json}{data}{transaction}{orders}[0]{id};
}
sub status_of { $sb->req('GET', "/public/orders/$_[0]/status", key => 'k1')->{json}{data}{status} }

my $c = clock($sb);
is($c->{status}, 200, 'GET clock');
is($c->{json}{frozen}, $F, 'not frozen at start');
is($c->{json}{advanced_ms}, 0, 'not advanced at start');

# --- advance fires every timer it passes, in order ---
my $o = create('C-1');
ok(defined $o, 'order id') or diag explain $o;
is(status_of($o), 'CREATED', 'CREATED right after create');
my $before = clock($sb)->{json}{now_ms};
$c = clock($sb, { advance_ms => 61_000 });
is($c->{status}, 200, 'advance 61 s: 200') or diag $c->{body};
cmp_ok($c->{json}{now_ms} - $before, '>=', 61_000, 'now_ms moved by at least the advance');
is($c->{json}{advanced_ms}, 61_000, 'advanced_ms counts the advance');

# a running clock fires timers on the timer thread: poll (bounded)
sub wait_status
{
	my ($id, $want) = @_;
	my $s;
	for (1 .. 200)
	{
		$s = status_of($id);
		return $s if $s eq $want;
		sleep 0.05;
	}
	return $s;
}
is(status_of($o), 'PENDING', 'one sandbox minute later: PENDING, as soon as the advance answers');
clock($sb, { advance_ms => 120_000 });
is(status_of($o), 'ACTIVE', 'two more minutes: ACTIVE');

# --- the answer of an advance comes after every timer it made due ---
# The advance also wakes the timer thread, which must not take a due timer
# off the list before it holds the state lock (the advance's own run of
# the due timers would miss it, and the answer would come first).  That
# was a race, so it is tried many times.
my @late;
for my $i (1 .. 60)
{
	my $r = $sb->req('POST', '/public/orders', key => 'k1', json => paid_order("R-$i"));
	my $id = $r->{json}{data}{orders}[0]{id} // $r->{json}{data}{transaction}{orders}[0]{id};
	clock($sb, { advance_ms => 61_000 });
	my $s = status_of($id);
	push @late, "R-$i: $s" unless defined $s && $s eq 'PENDING';
}
is_deeply(\@late, [], 'each of 60 orders is PENDING as soon as the advance past its minute answers');

# --- webhook retries run on the sandbox clock too ---
# a port nobody listens on: every delivery fails at once, and the retry
# comes a sandbox minute later, a real minute at this scale
my $tmp = IO::Socket::INET->new(LocalAddr => '127.0.0.1', LocalPort => 0, Listen => 1, Proto => 'tcp')
  or die "listen: $!";
my $closed = $tmp->sockport;
close $tmp;
is($sb->req('PUT', '/_sandbox/orders/callback', key => 'k1',
	json => { sandbox => "http://127.0.0.1:$closed/hook", production => "http://127.0.0.1:$closed/prod" })->{status},
	200, 'callback set to a closed port');
my $u = paid_order('C-W');
$u->{order_has_been_paid} = $F;
is($sb->req('POST', '/public/orders', key => 'k1', json => $u)->{status}, 201,
	'unpaid order: CHECKOUT_STATUS_CHANGED is sent');
# the attempts of the checkout event (the first order's timers send their
# own webhooks as the clock moves)
sub attempts { [ grep { $_->{event_type} eq 'CHECKOUT_STATUS_CHANGED' }
	@{ $sb->req('GET', '/_sandbox/orders/webhooks', key => 'k1')->{json} } ] }
sub wait_attempts
{
	my ($n) = @_;
	for (1 .. 100)
	{
		my $a = attempts();
		return $a if @$a >= $n;
		sleep 0.05;
	}
	return attempts();
}
my $a = wait_attempts(1);
is(scalar @$a, 1, 'one attempt');
is($a->[0]{outcome}, 'retry_scheduled', 'it failed, a retry is scheduled');
is($a->[0]{next_retry_in_min}, 1, 'in one sandbox minute');
sleep 0.3;
is(scalar @{ attempts() }, 1, 'no second attempt while the minute has not passed');
clock($sb, { advance_ms => 60_000 });
$a = wait_attempts(2);
is(scalar @$a, 2, 'advancing a minute brings the retry at once');
is($a->[1]{attempt}, 2, 'attempt 2');
cmp_ok($a->[1]{sandbox_ms} - $a->[0]{sandbox_ms}, '>=', 60_000, 'a sandbox minute after the first');

# --- freeze holds timers, however far real time moves ---
$sb->reset_all;
$sb = undef;
$sb = Sandbox->start(keys => ['k1=standard'], args => ['--time-scale', '0.001', '--seed', '3']);
# at this scale a sandbox minute is 60 real ms
$c = clock($sb, { freeze => $T });
is($c->{json}{frozen}, $T, 'frozen');
my $o2 = create('C-2');
my $n1 = clock($sb)->{json}{now_ms};
sleep 0.5;    # about eight sandbox minutes, were the clock running
is(clock($sb)->{json}{now_ms}, $n1, 'frozen: now_ms stands still');
is(status_of($o2), 'CREATED', 'frozen: the order stays CREATED');
$c = clock($sb, { advance_ms => 60_000 });
is($c->{json}{now_ms}, $n1 + 60_000, 'advance while frozen: exactly the advance');
is($c->{json}{frozen}, $T, 'still frozen after the advance');
is(status_of($o2), 'PENDING', 'advance while frozen fires the due timer');
sleep 0.3;
is(status_of($o2), 'PENDING', 'and only that one: the next step is still two minutes away');
$c = clock($sb, { freeze => $F });
is($c->{json}{frozen}, $F, 'unfrozen');
cmp_ok($c->{json}{now_ms}, '>=', $n1 + 60_000, 'runs on from where it stood (no jump back)');
cmp_ok($c->{json}{now_ms}, '<', $n1 + 60_000 + 5_000, 'and no jump over the frozen span');
is(wait_status($o2, 'ACTIVE'), 'ACTIVE', 'running again: ACTIVE in its time');

# --- reset unfreezes; time never goes back ---
clock($sb, { freeze => $T });
$sb->reset_all;
is(clock($sb)->{json}{frozen}, $F, 'reset: the clock runs again');
cmp_ok(clock($sb)->{json}{now_ms}, '>=', $n1 + 60_000, 'reset: sandbox time does not go back');

# --- bad bodies ---
for my $bad ([{ advance_ms => -1 }, 'negative advance'], [{ advance_ms => 1.5 }, 'fractional advance'],
	[{ freeze => 'yes' }, 'freeze not boolean'], [{ tick => 1 }, 'unknown field'], [[1], 'not an object'])
{
	my $r = clock($sb, $bad->[0]);
	is($r->{status}, 400, "$bad->[1]: 400");
	like($r->{body}, qr/invalid_clock/, "$bad->[1]: invalid_clock");
}
is(clock($sb)->{json}{frozen}, $F, 'a refused body changes nothing');

# --- a page's size does not depend on the clock ---
# A cursor holds the sandbox time it was issued at, zero-padded: the same
# page is as long a moment after the start as 100 sandbox days later, so
# byte counts (EXPLAIN ANALYZE's Partner Bytes in README's excerpt) are the
# same from run to run
my $fresh = Sandbox->start(keys => ['k1=standard'], args => ['--seed', '3']);
sub first_page { $fresh->req('GET', '/v1/movies/epic-saga/content/themes?limit=2', key => 'k1') }
my $early = first_page();
is($early->{status}, 200, 'a first page') or diag $early->{body};
clock($fresh, { advance_ms => 100 * 86_400_000 });
my $late = first_page();
is(length($late->{json}{pagination}{next_cursor}), length($early->{json}{pagination}{next_cursor}),
	'its cursor is as long 100 sandbox days later');
is(length($late->{body}), length($early->{body}), 'and so is the page');

done_testing();
