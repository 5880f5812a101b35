# 81_deferred_crash.t: deferred calls survive crashes (docs/deferred-calls.md).
#
# 200 create_order calls are queued in 200 transactions while the sandbox
# holds every create 150 ms.  Then:
#  1. a sender with a create in flight is killed with SIGKILL (the
#     postmaster resets every process);
#  2. separately, with another 200 calls, the cluster is stopped with
#     pg_ctl stop -m immediate and started again.
# Each time, after the restart every call is done and the sandbox holds
# exactly one order per custom id.
#  3. A deferred append_upload of 3,000 bytes whose sender is killed after
#     the sandbox appended and while its answer trickles in is resumed by
#     the file's size kept before the request: after the restart the call
#     is done, marked recovered, one PUT reached the sandbox, and the file
#     holds the chunk exactly once.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use DeferredTest;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(sleep time);

my ($node, $sb) = deferred_setup('deferred_crash');
sub sql { $node->safe_psql('postgres', $_[0]) }

# queue(prefix): 200 calls, one transaction each
sub queue_calls
{
	my ($prefix) = @_;
	my $sqlfile = PostgreSQL::Test::Utils::tempdir() . "/$prefix.sql";
	open(my $fh, '>', $sqlfile) or die;
	for my $i (1 .. 200)
	{
		my $p = order_payload(sprintf('%s-%03d', $prefix, $i));
		$p =~ s/'/''/g;
		print $fh "SELECT partner_svc.defer('create_order', jsonb_build_object('payload', '$p'::jsonb));\n";
	}
	close $fh;
	$node->command_ok([ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('postgres'),
		'-f', $sqlfile ], "$prefix: 200 calls queued");
}

sub check
{
	my ($prefix) = @_;
	ok(wait_done($node, "args #>> '{payload,vignettes,0,custom_id}' LIKE '$prefix-%'", 120),
		"$prefix: every call finished after the restart");
	is(sql("SELECT string_agg(DISTINCT state, ',') FROM partner_svc.deferred_calls
		WHERE args #>> '{payload,vignettes,0,custom_id}' LIKE '$prefix-%'"), 'done', "$prefix: all done");
	my $orders = sandbox_orders($sb, "$prefix-");
	is(scalar(keys %$orders), 200, "$prefix: 200 custom ids at the sandbox");
	is(scalar(grep { $_ != 1 } values %$orders), 0, "$prefix: exactly one order each");
	note "$prefix: " . sql("SELECT count(*) FILTER (WHERE answer ? 'recovered') || ' recovered, attempts max ' || max(attempts)
		FROM partner_svc.deferred_calls WHERE args #>> '{payload,vignettes,0,custom_id}' LIKE '$prefix-%'");
}

# a sender pid with a create in flight (partner_svc.requests)
sub sender_in_flight
{
	my $deadline = time + 30;
	while (time < $deadline)
	{
		my $pid = sql("SELECT r.pid FROM partner_svc.requests r JOIN pg_stat_activity a USING (pid)
			WHERE a.backend_type = 'partner_svc deferred sender' AND r.route = 'POST /public/orders' LIMIT 1");
		return $pid if $pid;
		sleep 0.01;
	}
	return undef;
}

$sb->fault({ route => 'POST /public/orders', kind => 'latency', value => 150 });

# --- 1. SIGKILL of a sender with a create in flight ---
queue_calls('KILL');
my $pid = sender_in_flight();
ok($pid, 'a sender has a create in flight');
kill 'KILL', $pid;
ok($node->poll_query_until('postgres', "SELECT count(*) > 0 FROM pg_stat_activity WHERE backend_type = 'partner_svc deferred sender'"),
	'the senders run again after the crash');
check('KILL');

# --- 2. immediate stop with calls in flight ---
queue_calls('STOP');
ok(sender_in_flight(), 'a create is in flight');
$node->stop('immediate');
$node->start;
check('STOP');

# --- 3. append_upload resumed by size ---
$sb->clear_faults;
$sb->reset_stats;
my $url = $sb->url;
sql("CREATE SERVER files FOREIGN DATA WRAPPER partner_svc OPTIONS (service 'files', base_url '$url');
	CREATE USER MAPPING FOR PUBLIC SERVER files OPTIONS (api_key 'sandbox-key')");
my $file = sql("SELECT partner_svc.create_upload('deferred.bin') ->> 'file_id'");
ok($file, 'an upload session');
# the sandbox appends, then sends its answer 16 bytes every 60 ms: the
# sender is killed after the append and before the answer is in
$sb->fault({ route => 'PUT /uploads/{file_id}', kind => 'drip', value => 60, count => 1 });
my $aid = sql("SELECT partner_svc.defer('append_upload', jsonb_build_object('file_id', '$file',
	'chunk', '\\x' || (SELECT string_agg(lpad(to_hex(i % 256), 2, '0'), '') FROM generate_series(1, 3000) i)))");
my $deadline = time + 30;
my $put_pid;
while (time < $deadline && !$put_pid)
{
	$put_pid = sql("SELECT pid FROM partner_svc.requests WHERE route = 'PUT /uploads/{file_id}' LIMIT 1");
	sleep 0.01 unless $put_pid;
}
ok($put_pid, 'the append is in flight');
kill 'KILL', $put_pid if $put_pid;
ok($node->poll_query_until('postgres', "SELECT count(*) > 0 FROM pg_stat_activity WHERE backend_type = 'partner_svc deferred sender'"),
	'append: the server is back');
ok(wait_done($node, "id = $aid", 60), 'append: finished after the restart');
is(sql("SELECT state FROM partner_svc.deferred_calls WHERE id = $aid"), 'done', 'append: done')
  or diag sql("SELECT row_to_json(q) FROM partner_svc.deferred_queue q WHERE id = $aid");
is(sql("SELECT partner_svc.file_info('$file') ->> 'size'"), 3000, 'append: the file holds the chunk once');
is(sql("SELECT answer ->> 'recovered' FROM partner_svc.deferred_calls WHERE id = $aid"), 'true',
	'append: the resumed call found the chunk arrived, and sent nothing more');
is(scalar(grep { $_->{method} eq 'PUT' } @{ $sb->requests('/uploads/{file_id}') }), 1, 'append: one PUT reached the sandbox');

$node->stop;
done_testing();
