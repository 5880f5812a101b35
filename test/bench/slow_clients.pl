#!/usr/bin/env perl
# test/bench/slow_clients.pl: hostile slow HTTP clients for the webhook
# listener (the scenario test 45_webhook_slow_clients.t and the benchmark
# test/bench/webhooks.sh use it).
#
#   perl test/bench/slow_clients.pl --port PORT [--from 127.0.0.2]
#        [--count 1000] [--mode headers|body|mixed] [--interval 1]
#        [--seconds 20] [--procs 4] [--rate 100]
#
# Keeps up to COUNT connections open from the loopback address FROM to
# 127.0.0.1:PORT.  "headers" connections (slowloris) send a request line
# and then one more header line every INTERVAL seconds, never ending the
# headers; "body" connections (slow body) send complete headers with
# Content-Length: 4096 and then one byte of body every INTERVAL seconds;
# "mixed" is half of each.  All COUNT connections are opened at the start;
# a connection the server closes is opened again at a later tick, at most
# RATE reconnections per second in all (slowhttptest's -r likewise paces
# its connections), so the client spends its time holding connections,
# not opening them.
# Stops after SECONDS and prints one line:
#
#   opened=N closed_by_server=N open_at_end=N max_open=N lifetime_max=S
#
# where max_open adds up the most connections each process held at once,
# and lifetime_max is the longest time (s) a connection stayed open before
# the server closed it.  Only loopback targets: the address is
# always 127.0.0.1.
use strict;
use warnings;
use Getopt::Long;
use IO::Select;
use IO::Socket::INET;
use POSIX ();
use Time::HiRes qw(time sleep);

my %o = (from => '127.0.0.2', count => 1000, mode => 'mixed', interval => 1,
	seconds => 20, procs => 4, rate => 100);
GetOptions(\%o, 'port=i', 'from=s', 'count=i', 'mode=s', 'interval=f',
	'seconds=f', 'procs=i', 'rate=f') or die "bad options\n";
die "--port is required\n" unless $o{port};
die "--from must be a loopback address\n" unless $o{from} =~ /^127\.\d+\.\d+\.\d+$/;
die "--seconds must be between 1 and 600\n" unless $o{seconds} >= 1 && $o{seconds} <= 600;
$SIG{PIPE} = 'IGNORE';

# one process: keeps $n connections; returns its counts
sub run_share
{
	my ($n, $first, $rate) = @_;
	my %conn;					# slot => { s, body, since }
	my %slot_of;				# fileno => slot
	my ($opened, $closed, $max_open, $life_max) = (0, 0, 0, 0);
	my $sel = IO::Select->new;
	my $end = time + $o{seconds};
	my $tick = 0;
	my $budget = $n;			# the first round opens every slot
	my $last = time;
	while (time < $end)
	{
		# (re)open free slots, as the budget allows
		for my $i (0 .. $n - 1)
		{
			last if $budget < 1;
			next if $conn{$i};
			$budget--;
			my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $o{port},
				LocalAddr => $o{from}, Proto => 'tcp', Timeout => 2) or next;
			$opened++;
			my $body = $o{mode} eq 'body' || ($o{mode} eq 'mixed' && ($first + $i) % 2);
			my $head = "POST /webhooks/sandbox HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n";
			$head .= "Content-Length: 4096\r\n\r\n{" if $body;
			syswrite($s, $head);
			$conn{$i} = { s => $s, body => $body, since => time };
			$slot_of{ fileno($s) } = $i;
			$sel->add($s);
		}
		$max_open = scalar(keys %conn) if keys %conn > $max_open;
		# wait one interval, noticing closes
		my $until = time + $o{interval};
		while ((my $left = $until - time) > 0)
		{
			# IO::Select returns at once on an empty set: sleep instead of
			# spinning, so the attacker does not take the CPU the server
			# under test needs (it would be on another machine)
			if ($sel->count == 0)
			{
				sleep($left);
				last;
			}
			for my $s ($sel->can_read($left))
			{
				my $buf;
				my $r = sysread($s, $buf, 4096);
				next if defined $r && $r > 0;	# an answer: wait for the close
				my $i = delete $slot_of{ fileno($s) };
				$sel->remove($s);
				close $s;
				next unless defined $i;
				my $life = time - $conn{$i}{since};
				$life_max = $life if $life > $life_max;
				delete $conn{$i};
				$closed++;
			}
		}
		# trickle
		for my $c (values %conn)
		{
			syswrite($c->{s}, $c->{body} ? 'a' : sprintf("X-Slow-%d: x\r\n", $tick));
		}
		$tick++;
		$budget = 0 if $budget < 0 || $tick == 1;
		$budget += (time - $last) * $rate;
		$budget = $n if $budget > $n;
		$last = time;
	}
	my $open = keys %conn;
	close $_->{s} for values %conn;
	return ($opened, $closed, $open, $max_open, $life_max);
}

my $procs = $o{procs} < 1 ? 1 : $o{procs};
my @kids;
for my $p (0 .. $procs - 1)
{
	my $n = int($o{count} / $procs) + ($p < $o{count} % $procs ? 1 : 0);
	pipe(my $r, my $w) or die "pipe: $!";
	my $pid = fork // die "fork: $!";
	if ($pid == 0)
	{
		close $r;
		print $w join(' ', run_share($n, $p * 1000, $o{rate} / $procs)), "\n";
		close $w;
		POSIX::_exit(0);
	}
	close $w;
	push @kids, [$pid, $r];
}
my @sum = (0, 0, 0, 0, 0);
for my $k (@kids)
{
	my $line = readline($k->[1]) // '0 0 0 0 0';
	waitpid($k->[0], 0);
	my @v = split ' ', $line;
	$sum[$_] += $v[$_] for 0 .. 3;
	$sum[4] = $v[4] if $v[4] > $sum[4];
}
printf "opened=%d closed_by_server=%d open_at_end=%d max_open=%d lifetime_max=%.1f\n", @sum;
