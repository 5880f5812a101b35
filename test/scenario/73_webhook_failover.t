# Failover of the webhook database.  The partner never resends a webhook
# answered 200, so every 200 must survive the loss of the primary.  A
# primary with a synchronous standby (synchronous_standby_names names it;
# the worker commits with synchronous_commit = on, so a 200 waits for the
# standby's flush) takes webhooks from four steady posters; it is stopped
# with -m immediate in mid-stream and the standby promoted: its worker
# starts listening on its own configured port, and every webhook answered
# 200 is in webhook_events there.
#
# The control: the same pair with asynchronous replication, whose standby
# stops receiving WAL (primary_conninfo emptied) while the primary goes on
# answering 200.  After the same stop and promotion those last webhooks
# are missing: asynchronous replication loses acknowledged webhooks, which
# the synchronous standby above does not.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use WebhookTest;
use File::Temp qw(tempdir);
use HTTP::Tiny;
use POSIX ();
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(sleep time);

my $tmp = tempdir(CLEANUP => 1);
my $POSTERS = 4;
my $PER_POSTER = 400;	# bounded: at most 1,600 webhooks a run

# A primary that allows streaming and a standby made from its backup, each
# with a webhook listener of its own on loopback.  With $sync the standby
# is the primary's synchronous standby once it streams.
sub make_pair
{
	my ($name, $sync) = @_;
	my $primary = PostgreSQL::Test::Cluster->new("${name}_primary");
	my $pport = PostgreSQL::Test::Cluster::get_free_port();
	$primary->init(allows_streaming => 1);
	$primary->append_conf('postgresql.conf', <<"CONF");
shared_preload_libraries = 'partner_svc'
listen_addresses = '127.0.0.1'
partner_svc.webhook_port = $pport
synchronous_commit = on
CONF
	$primary->start;
	$primary->safe_psql('postgres', 'CREATE EXTENSION partner_svc');
	$primary->poll_query_until('postgres',
		"SELECT state = 'listening' FROM partner_svc.webhook_status()")
	  or BAIL_OUT("$name: the primary's worker does not listen");
	$primary->backup('b');

	my $standby = PostgreSQL::Test::Cluster->new("${name}_standby");
	my $sport = PostgreSQL::Test::Cluster::get_free_port();
	$standby->init_from_backup($primary, 'b', has_streaming => 1);
	# once promoted it has no standby of its own: it must not wait for one
	$standby->append_conf('postgresql.conf', <<"CONF");
partner_svc.webhook_port = $sport
synchronous_standby_names = ''
CONF
	$standby->start;
	$primary->wait_for_catchup($standby);
	if ($sync)
	{
		$primary->append_conf('postgresql.conf',
			"synchronous_standby_names = '" . $standby->name . "'\n");
		$primary->reload;
		ok($primary->poll_query_until('postgres',
			"SELECT sync_state = 'sync' FROM pg_stat_replication WHERE application_name = '"
			  . $standby->name . "'"), "$name: the standby is synchronous");
	}
	return ($primary, $pport, $standby, $sport);
}

# A poster in a child process: $PER_POSTER distinct webhooks, one after the
# other, a few milliseconds apart; the unique_id of each one answered 200
# is appended to its file at once.  A refused connection (the primary is
# gone) is not a 200 and is not retried.
sub start_poster
{
	my ($port, $prefix) = @_;
	my $file = "$tmp/$prefix.ok";
	my $pid = fork();
	die "fork: $!" unless defined $pid;
	return { pid => $pid, file => $file } if $pid;
	open(my $fh, '>', $file) or POSIX::_exit(1);
	$fh->autoflush(1);
	my $http = HTTP::Tiny->new(timeout => 10);
	my $deadline = time + 40;
	for my $i (1 .. $PER_POSTER)
	{
		last if time > $deadline;
		my $id = "$prefix-$i";
		my $r = $http->request('POST', "http://127.0.0.1:$port/webhooks/sandbox",
			{ content => order_event('ORDER_STATUS_CHANGED', 'CREATED', $id),
			  headers => { 'Content-Type' => 'application/json' } });
		print $fh "$id\n" if $r->{status} == 200;
		sleep 0.005;
	}
	close $fh;
	# not exit(): the END blocks of PostgreSQL::Test::Cluster would stop the nodes
	POSIX::_exit(0);
}

sub ok_ids
{
	my @ids;
	for my $p (@_)
	{
		open(my $fh, '<', $p->{file}) or next;
		push @ids, grep { length } map { chomp; $_ } <$fh>;
	}
	return @ids;
}

# Runs one failover; returns (answered 200, of which missing on the new primary).
sub failover
{
	my ($name, $sync) = @_;
	my ($primary, $pport, $standby, $sport) = make_pair($name, $sync);
	my @posters = map { start_poster($pport, "$name$_") } 1 .. $POSTERS;

	ok(wait_for(sub { ok_ids(@posters) >= 200 }, 30), "$name: webhooks answered 200 in a steady stream");
	unless ($sync)
	{
		# the standby stops receiving WAL; the primary goes on answering
		$standby->append_conf('postgresql.conf', "primary_conninfo = ''\n");
		$standby->reload;
		ok($standby->poll_query_until('postgres', 'SELECT count(*) = 0 FROM pg_stat_wal_receiver'),
			"$name: the standby no longer receives WAL");
		my $n = ok_ids(@posters);
		ok(wait_for(sub { ok_ids(@posters) >= $n + 20 }, 30),
			"$name: the primary still answers 200 without the standby");
	}
	else
	{
		my $n = ok_ids(@posters);
		wait_for(sub { ok_ids(@posters) >= $n + 50 }, 10);
	}

	$primary->stop('immediate');
	for my $p (@posters)
	{
		my $gone = wait_for(sub { waitpid($p->{pid}, POSIX::WNOHANG()) > 0 }, 45);
		kill 'KILL', $p->{pid} unless $gone;
	}

	$standby->promote;
	ok($standby->poll_query_until('postgres',
		"SELECT state = 'listening' AND port = $sport FROM partner_svc.webhook_status()"),
		"$name: after promotion the worker listens on the standby's port");
	is(post_webhook($sport, 'sandbox', order_event('ORDER_STATUS_CHANGED', 'CREATED', "$name-after"))->{status},
		200, "$name: the new primary stores webhooks");

	my @ok = ok_ids(@posters);
	my %stored = map { $_ => 1 } split /\n/, $standby->safe_psql('postgres',
		"SELECT unique_id FROM partner_svc.webhook_events WHERE unique_id LIKE '$name%'");
	my @missing = grep { !$stored{$_} } @ok;
	diag "$name: " . scalar(@ok) . " answered 200, " . scalar(@missing) . ' missing';
	$standby->stop;
	return (scalar @ok, \@missing);
}

# --- a synchronous standby: no webhook answered 200 is lost ---
my ($ok, $missing) = failover('sync', 1);
ok($ok >= 250, "sync: $ok webhooks answered 200 before the stop");
is(scalar @$missing, 0, 'sync: every webhook answered 200 is on the new primary')
  or diag "missing: @$missing[0 .. ($#$missing < 9 ? $#$missing : 9)]";

# --- the control: asynchronous replication loses acknowledged webhooks ---
($ok, $missing) = failover('async', 0);
ok(scalar @$missing >= 20,
	'async: webhooks answered 200 after the standby fell behind are missing on the new primary ('
	  . scalar(@$missing) . " of $ok)");

done_testing();
