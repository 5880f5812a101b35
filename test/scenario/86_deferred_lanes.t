# 86_deferred_lanes.t: one role's backlog, or one stuck call, never holds
# another role's deferred call; a role's unfinished calls are capped
# (issue 27, item 3; docs/deferred-calls.md#fairness-across-roles).
#
# Two hostile partners of the test's own, on loopback: one that answers
# every request 429 with Retry-After a day ("429 for ever"), and a socket
# that accepts connections (the kernel's backlog) and never answers.  The
# senders are 4 (partner_svc.deferred_senders), the clock is the sandbox's at
# 0.01 as in every deferred scenario.
#
#  1. The cap: with partner_svc.deferred_max_per_role = 2, a role's third
#     unfinished call is refused by defer() with 53400 (its message names
#     the role and the setting, with a detail and a hint); the role cannot
#     lift its cap itself (42501).
#  2. A stuck call: role hanger's create hangs in its request (the socket
#     that never answers, request_timeout 10 min), holding the one sender
#     that runs; role victim's create, committed then, is done while the
#     hung call is still in its request (the commit starts another sender;
#     before, the victim waited for the hung request's timeout).
#  3. A backlog: role noisy has 20,000 unfinished creates (inserted in one
#     statement) against the 429 partner, attempted over and over; role
#     victim's create, committed then, is done before the senders made
#     more than two batches each of noisy's attempts (the batch each may
#     have claimed already, and one more).  Before, the claim read only
#     the first 2,048 unfinished calls by id, all noisy's, and the victim
#     waited until they had failed for good.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use DeferredTest;
use IO::Select;
use IO::Socket::INET;
use POSIX qw(:sys_wait_h);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(sleep time);

my $senders = 4;
my $batch = 16;		# PSVC_DEF_BATCH of src/deferred/deferred_sender.c

# --- the hostile partners ---

# 429 for ever: one process, one connection at a time, bounded in time
my $busy = IO::Socket::INET->new(LocalAddr => '127.0.0.1', LocalPort => 0,
	Listen => 64, ReuseAddr => 1, Proto => 'tcp') or die "listen: $!";
my $busy_url = 'http://127.0.0.1:' . $busy->sockport;
my $busy_pid = fork() // die "fork: $!";
if ($busy_pid == 0)
{
	my $until = time + 900;
	my $sel = IO::Select->new($busy);
	while (time < $until)
	{
		next unless $sel->can_read(0.5);
		my $c = $busy->accept or next;
		$c->blocking(1);
		my ($head, $len) = ('', 0);
		my $deadline = time + 5;
		while ($head !~ /\r\n\r\n/ && time < $deadline)
		{
			last unless IO::Select->new($c)->can_read(1);
			sysread($c, my $buf, 65536) or last;
			$head .= $buf;
		}
		my $body = '{"error":{"code":"rate_limited","message":"Too many requests."}}';
		print $c "HTTP/1.1 429 Too Many Requests\r\nRetry-After: 86400\r\n"
		  . "Content-Type: application/json\r\nContent-Length: " . length($body)
		  . "\r\nConnection: close\r\n\r\n$body";
		close $c;
	}
	POSIX::_exit(0);
}
# never answers: listens, never accepts (connections wait in the backlog)
my $hang = IO::Socket::INET->new(LocalAddr => '127.0.0.1', LocalPort => 0,
	Listen => 128, ReuseAddr => 1, Proto => 'tcp') or die "listen: $!";
my $hang_url = 'http://127.0.0.1:' . $hang->sockport;

my ($node, $sb) = deferred_setup('deferred_lanes',
	conf => "partner_svc.deferred_senders = $senders\n");
sub sql { $node->safe_psql('postgres', $_[0]) }

sub payload_sql
{
	my $p = order_payload($_[0]);
	$p =~ s/'/''/g;
	return "jsonb_build_object('payload', '$p'::jsonb)";
}

sql(qq{
CREATE SERVER busy FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'orders', base_url '$busy_url', tier 'premium', max_retries '0');
CREATE SERVER hang FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'orders', base_url '$hang_url', tier 'premium', max_retries '0',
           request_timeout '10min');
CREATE USER MAPPING FOR PUBLIC SERVER busy OPTIONS (api_key 'noisy-key');
CREATE USER MAPPING FOR PUBLIC SERVER hang OPTIONS (api_key 'hang-key');
});
for my $role (qw(victim noisy hanger capped))
{
	sql(qq{CREATE ROLE $role;
GRANT USAGE ON SCHEMA partner_svc TO $role;
GRANT USAGE ON FOREIGN SERVER orders, busy, hang TO $role;});
}

# queues a create of custom id cid on server as role in its own
# transaction; returns the call's id
sub defer_as
{
	my ($role, $cid, $server) = @_;
	return sql("SET ROLE $role; SELECT partner_svc.defer('create_order', "
		  . payload_sql($cid) . ", '$server')");
}

# waits (bounded) for call id to be in one of states; returns its state
sub wait_state
{
	my ($id, $secs, @states) = @_;
	my $deadline = time + $secs;
	my $state = '';
	while (time < $deadline)
	{
		$state = sql("SELECT state FROM partner_svc.deferred_calls WHERE id = $id");
		return $state if grep { $_ eq $state } @states;
		sleep 0.05;
	}
	return $state;
}

# --- 1. the cap ---
{
	my ($rc, $out, $err) = $node->psql('postgres', qq{
SET partner_svc.deferred_max_per_role = 2;
SET ROLE capped;
BEGIN;
SELECT partner_svc.defer('create_order', @{[ payload_sql('CAP-1') ]}, 'orders') > 0;
SELECT partner_svc.defer('create_order', @{[ payload_sql('CAP-2') ]}, 'orders') > 0;
SELECT partner_svc.defer('create_order', @{[ payload_sql('CAP-3') ]}, 'orders');
ROLLBACK;},
		extra_params => [ '-v', 'VERBOSITY=verbose' ]);
	is($out, "t\nt", 'cap: the first two calls are queued');
	like($err, qr/ERROR:  53400: role "capped" has 2 unfinished deferred calls, the most partner_svc.deferred_max_per_role allows/,
		'cap: the third is refused with 53400, naming the role and the setting');
	like($err, qr/DETAIL:  A deferred call is unfinished while it is queued or sending/, 'cap: with a detail');
	like($err, qr/HINT:  .*ALTER ROLE \.\.\. SET/, 'cap: and a hint');
	($rc, $out, $err) = $node->psql('postgres',
		"SET ROLE capped; SET partner_svc.deferred_max_per_role = 0;",
		extra_params => [ '-v', 'VERBOSITY=verbose' ]);
	like($err, qr/ERROR:  42501/, 'cap: a role cannot lift its own cap');
	is(sql("SELECT count(*) FROM partner_svc.deferred_queue"), '0', 'cap: nothing queued');
}

# --- 2. a stuck call ---
{
	my $h = defer_as('hanger', 'HANG-1', 'hang');
	is(wait_state($h, 60, 'sending'), 'sending', 'stuck: the hung call is in its request')
	  or diag(sql("SELECT sqlstate, message, detail FROM partner_svc.deferred_queue WHERE id = $h"));
	sleep 0.5;		# its sender is inside the request, busy
	my $t0 = time;
	my $v = defer_as('victim', 'VIC-1', 'orders');
	my $state = wait_state($v, 60, 'done', 'failed');
	my $took = time - $t0;
	is($state, 'done', 'stuck: the victim call is done');
	is(sql("SELECT state FROM partner_svc.deferred_calls WHERE id = $h"), 'sending',
		'stuck: ... while the hung call is still in its request');
	note(sprintf('stuck: the victim call was done %.2f s after its commit', $took));
	cmp_ok($took, '<', 30, 'stuck: the victim did not wait for the hung request (10 min)');
}
# the hung request ends (its connection is reset); its call retries alone
close $hang;

# --- 3. a backlog of another role ---
{
	my $n = 20000;
	sql(qq{
INSERT INTO partner_svc.deferred_queue (operation, args, server, role, lanes)
SELECT 'create_order',
       jsonb_build_object('payload', jsonb_build_object(
         'terms_and_privacy_accepted', true, 'order_has_been_paid', true,
         'vehicles', jsonb_build_array(jsonb_build_object('plate', 'LJ N' || g, 'country', 'SI')),
         'vignettes', jsonb_build_array(jsonb_build_object('custom_id', 'NOISY-' || g,
           'name', 'Slovenia 1 year', 'period', '1_year', 'start_date', '2030-01-01')))),
       'busy', 'noisy'::regrole,
       ARRAY['noisy'::regrole::oid || '/busy/order:NOISY-' || g,
             'noisy'::regrole::oid || '/xact:' || g]
FROM generate_series(1, $n) g;});
	# (no commit of defer() wakes a sender: sender 0 finds them within a second)
	my $attempts = "SELECT COALESCE(sum(attempts), 0) FROM partner_svc.deferred_queue"
	  . " WHERE role = 'noisy'::regrole";
	my $deadline = time + 120;
	sleep 0.1 while time < $deadline && sql($attempts) < 4 * $senders * $batch;
	cmp_ok(sql($attempts), '>=', 4 * $senders * $batch, 'backlog: the noisy calls are being attempted');
	# every claim of a call, in the order the claims ran (a test-only trigger)
	sql(q{
CREATE TABLE public.claims (seq bigserial PRIMARY KEY, id int8, role oid);
CREATE FUNCTION public.log_claim() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO public.claims (id, role) VALUES (NEW.id, NEW.role::oid);
  RETURN NULL;
END $$;
CREATE TRIGGER log_claim AFTER UPDATE ON partner_svc.deferred_queue
  FOR EACH ROW WHEN (NEW.attempts > OLD.attempts) EXECUTE FUNCTION public.log_claim();});
	my $v = defer_as('victim', 'VIC-2', 'orders');
	my $mark = sql("SELECT nextval('public.claims_seq_seq')");
	my $state = wait_state($v, 120, 'done', 'failed');
	my $before = sql("SELECT count(*) FROM public.claims WHERE seq > $mark"
		  . " AND seq < COALESCE((SELECT min(seq) FROM public.claims WHERE id = $v),"
		  . "                    (SELECT max(seq) + 1 FROM public.claims))"
		  . " AND role = 'noisy'::regrole");
	is($state, 'done', 'backlog: the victim call is done');
	my $unfinished = sql("SELECT count(*) FROM partner_svc.deferred_queue"
		  . " WHERE role = 'noisy'::regrole AND state IN ('queued', 'sending')");
	note("backlog: $before noisy calls claimed between the victim's commit and its claim (or until now); $unfinished noisy calls unfinished");
	cmp_ok($before, '<=', 2 * $senders * $batch,
		'backlog: at most two batches per sender of noisy calls were claimed first');
	cmp_ok($unfinished, '>', $n / 2, 'backlog: while noisy still has most of its calls queued');
	is(sql("SELECT count(*) FROM partner_svc.deferred_queue WHERE role = 'noisy'::regrole AND state = 'done'"),
		'0', 'backlog: no noisy call got through the 429 partner');
	is(sql("SELECT string_agg(DISTINCT sqlstate, ',') FROM partner_svc.deferred_queue"
		  . " WHERE role = 'noisy'::regrole AND attempts > 0"),
		'53300', 'backlog: the noisy calls wait for a retry after 53300 (429, the key blocked)');
	my $orders = sandbox_orders($sb, 'VIC-');
	is_deeply($orders, { 'VIC-1' => 1, 'VIC-2' => 1 }, 'the victim orders exist once each at the sandbox');
}

$node->stop('fast');
done_testing();

# the 429 partner goes with the test, whatever ended it
END
{
	local $?;	# the test's exit status, not the child's
	if ($busy_pid)
	{
		kill 'TERM', $busy_pid;
		waitpid($busy_pid, 0);
	}
}
