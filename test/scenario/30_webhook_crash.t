# Crashes under load: 32 concurrent senders flood the worker with distinct
# webhooks and record every delivery answered 200.  Meanwhile the cluster
# is restarted with pg_ctl restart -m immediate, then (another flood) the
# worker is killed with SIGKILL (a crash: the postmaster resets every
# backend), then it is terminated with pg_terminate_backend (it comes back
# by itself).  Each time, every delivery that got a 200 must be in
# webhook_events afterwards, and none twice.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use WebhookTest;
use File::Temp qw(tempdir);
use IPC::Run;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(sleep);

my $tmp = tempdir(CLEANUP => 1);
my $flood = "$tmp/webhook_flood";
system('cc', '-O2', '-o', $flood, "$FindBin::Bin/../bench/webhook_flood.c", '-lcurl') == 0
  or BAIL_OUT('cannot build test/bench/webhook_flood.c');

my ($node, $port) = webhook_node('crash');
sub sql { $node->safe_psql('postgres', $_[0]) }

# start_flood(prefix, seconds): the running sender and its OK file
sub start_flood
{
	my ($prefix, $secs) = @_;
	my $okfile = "$tmp/$prefix.ok";
	my ($out, $err) = ('', '');
	my $h = IPC::Run::start([$flood, "http://127.0.0.1:$port/webhooks/sandbox", '-c', '32', '-d', $secs,
		'-p', $prefix, '-o', $okfile], '>', \$out, '2>', \$err);
	return { h => $h, okfile => $okfile, out => \$out, prefix => $prefix };
}

sub ok_ids
{
	my ($f) = @_;
	open(my $fh, '<', $f->{okfile}) or return ();
	my @ids = grep { length } map { chomp; $_ } <$fh>;
	return @ids;
}

# every 200 stored, nothing twice
sub check_flood
{
	my ($f, $name) = @_;
	$f->{h}->finish;
	note "$name: ${ $f->{out} }";
	my @ok = ok_ids($f);
	ok(@ok > 100, "$name: the senders got 200s (" . scalar(@ok) . ')');
	my %stored = map { $_ => 1 } split /\n/,
	  sql("SELECT unique_id FROM partner_svc.webhook_events WHERE unique_id LIKE '$f->{prefix}-%'");
	my @missing = grep { !$stored{$_} } @ok;
	is(scalar @missing, 0, "$name: every delivery answered 200 is in webhook_events")
	  or diag "missing: @missing[0 .. ($#missing < 9 ? $#missing : 9)]";
	is(sql("SELECT count(*) FROM (SELECT unique_id FROM partner_svc.webhook_events
		WHERE unique_id LIKE '$f->{prefix}-%' GROUP BY unique_id HAVING count(*) > 1) d"), 0,
		"$name: none stored twice");
	is(sql("SELECT count(*) FROM partner_svc.order_states WHERE unique_id LIKE '$f->{prefix}-%'"),
		scalar(keys %stored), "$name: one order_states row per stored order");
}

sub wait_listening
{
	my ($name) = @_;
	ok($node->poll_query_until('postgres', "SELECT state = 'listening' FROM partner_svc.webhook_status()"),
		"$name: the worker listens again");
}

# --- pg_ctl restart -m immediate under load ---
my $f = start_flood('immediate', 6);
ok(wait_for(sub { ok_ids($f) > 200 }, 30), 'immediate: flood running');
PostgreSQL::Test::Utils::system_or_bail('pg_ctl', '-w', '-D', $node->data_dir, '-l', $node->logfile,
	'-m', 'immediate', 'restart');
$node->_update_pid(1);
wait_listening('immediate');
check_flood($f, 'immediate');
ok(webhook_status($node)->{accepted} > 0, 'immediate: deliveries accepted after the restart too');

# --- SIGKILL of the worker under load ---
my $pid = worker_pid($node);
$f = start_flood('sigkill', 6);
ok(wait_for(sub { ok_ids($f) > 200 }, 30), 'sigkill: flood running');
kill 'KILL', $pid;
ok(wait_for(sub { my $p = eval { worker_pid($node) }; $p && $p != $pid }, 60), 'sigkill: a new worker');
wait_listening('sigkill');
check_flood($f, 'sigkill');
ok($node->log_contains('terminated by signal 9'), 'sigkill: the postmaster saw the crash');

# --- pg_terminate_backend: the worker comes back by itself ---
$pid = worker_pid($node);
$f = start_flood('terminate', 4);
ok(wait_for(sub { ok_ids($f) > 200 }, 30), 'terminate: flood running');
is(sql("SELECT pg_terminate_backend($pid)"), 't', 'terminate: worker terminated');
ok(wait_for(sub { my $p = eval { worker_pid($node) }; $p && $p != $pid }, 60), 'terminate: restarted after bgw_restart_time');
wait_listening('terminate');
check_flood($f, 'terminate');

$node->stop;
done_testing();
