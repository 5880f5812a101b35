# max_in_flight of /_sandbox/stats and stats.tsv: the most requests of one
# route handled at once since the last reset.  Requests are held by a
# latency fault long enough (2 s) that clients started together overlap on
# any machine; nothing here measures time.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/../lib";
use Sandbox;
use Test::More;
use POSIX ();

my $sb = Sandbox->start(keys => ['k1']);

sub route_stat
{
	my ($method, $route) = @_;
	for my $r (@{ $sb->stats->{routes} })
	{
		return $r if $r->{method} eq $method && $r->{route} eq $route;
	}
	return undef;
}

sub max_in_flight
{
	my $r = route_stat(@_);
	return defined $r ? $r->{max_in_flight} : undef;
}

# n clients at once, each one GET of path; returns when all are answered.
sub concurrent_gets
{
	my ($n, $path) = @_;
	my @pids;
	for (1 .. $n)
	{
		my $pid = fork() // die "fork: $!";
		if ($pid == 0)
		{
			my $r = $sb->req('GET', $path, once => 1);
			# _exit: the copy of $sb must not stop the sandbox
			POSIX::_exit($r->{status} == 200 ? 0 : 1);
		}
		push @pids, $pid;
	}
	my $ok = 0;
	for my $pid (@pids)
	{
		waitpid($pid, 0);
		$ok++ if $? == 0;
	}
	return $ok;
}

# one request at a time: never more than one in flight
$sb->req('GET', '/todos') for 1 .. 3;
is(max_in_flight('GET', '/todos'), 1, 'requests one after another: max_in_flight 1');
is(route_stat('GET', '/todos')->{count}, 3, 'and all three counted');

# three at once, each held 2 s
$sb->fault({ route => 'GET /todos', kind => 'latency', value => 2000 });
$sb->reset_stats;
is(concurrent_gets(3, '/todos'), 3, 'three concurrent requests answered');
is(max_in_flight('GET', '/todos'), 3, 'three held at once: max_in_flight 3');
is(max_in_flight('GET', '/todos/{id}'), undef, 'another route is not touched');

# the three have left: one more request alone does not raise it, and after
# a reset it is 1 again (in_flight went back to 0)
$sb->req('GET', '/todos');
is(max_in_flight('GET', '/todos'), 3, 'kept until reset');
$sb->reset_stats;
is(route_stat('GET', '/todos'), undef, 'reset forgets the route');
$sb->req('GET', '/todos');
is(max_in_flight('GET', '/todos'), 1, 'after reset, one request alone: 1');

# a reset while requests are held: they leave without touching the new
# counters, so a later request alone is still 1
$sb->reset_stats;
my $pid = fork() // die "fork: $!";
if ($pid == 0)
{
	$sb->req('GET', '/todos', once => 1);
	POSIX::_exit(0);
}
ok(Sandbox::wait_until(sub { (max_in_flight('GET', '/todos') // 0) >= 1 }, 10),
	'a held request is in flight before it is answered');
$sb->reset_stats;
waitpid($pid, 0);
$sb->req('GET', '/todos');
is(max_in_flight('GET', '/todos'), 1, 'a request that entered before a reset does not count after it');

# control routes are never counted; stats.tsv carries it as its 7th column
$sb->clear_faults;
my $tsv = $sb->req('GET', '/_sandbox/stats.tsv')->{body};
my ($line) = grep { /^GET\t\/todos\t/ } split /\n/, $tsv;
is((split /\t/, $line // '')[6], 1, 'stats.tsv: max_in_flight is the 7th field');
ok(!(grep { /_sandbox/ } split /\n/, $tsv), 'control routes are not in the stats');

done_testing();
