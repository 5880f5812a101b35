# 87_deferred_settle.t: exactly once on what the orders document shows
# (docs/deferred-calls.md, "Exactly once" and "Retries, give-up,
# retention"), against the strict order service of test/hostile/hostile.pl:
# it refuses a custom_id it holds with HTTP 400 and an error code no
# document shows, and knows nothing of the sandbox's 409 custom_id_exists.
#
#  1. 200 create_order calls, each in its own transaction, while every
#     create is answered 150 ms after its order exists; a sender with a
#     create in flight is killed with SIGKILL (the postmaster resets every
#     process).  After the restart every call is done and the service
#     holds the 200 orders: a resumed create looks its order up before it
#     sends anything, and a refused resend is settled by a lookup.
#  2. The same with pg_ctl stop -m immediate and a start.
#  3. An outage (503 for every request) of half of give_up
#     (partner_svc.deferred_give_up = 1000 s of the partners' clock, 10 s
#     at time_scale 0.01; partner_svc.deferred_max_attempts = 3):
#     while it lasts each queued call keeps the error of its own create,
#     not of a lookup; afterwards every call is done (none failed, though
#     they took more than max_attempts attempts), the service holds each
#     order once, and no call made more requests than its attempts plus
#     one (a 503 says nothing was done: it is retried with no lookup).
#  4. An outage of 502 (an answer that may follow the work) of 2 s: every
#     call is done afterwards, once, and again no call made more requests
#     than its attempts plus one (one lookup settles a 502, a failed
#     lookup is not repeated by the transport, and the next attempt looks
#     up before it sends).
#  5. A resend refused because the lost request got there after all: the
#     first create of each custom id is carried out and its answer never
#     sent, and the first lookup of it says 404 though the order exists (a
#     replica behind).  Five deferred calls and one direct create_order:
#     the lookup finds nothing, the resend is refused with 400 and the
#     unknown code, and the lookup that settles the refusal finds the
#     order: each is done, "recovered", one order each.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use lib "$FindBin::Bin/../hostile";
use DeferredTest;
use Hostile;
use JSON::PP;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(sleep time);

my $h = Hostile->start;
my ($node, $sb) = deferred_setup('deferred_settle');
sub sql { $node->safe_psql('postgres', $_[0]) }
my $hurl = $h->url;
sql("ALTER SERVER orders OPTIONS (SET base_url '$hurl/strict', SET tier 'enterprise')");
$sb->stop;

# queue_calls(prefix, n): n calls, one transaction each
sub queue_calls
{
	my ($prefix, $n) = @_;
	my $sqlfile = PostgreSQL::Test::Utils::tempdir() . "/$prefix.sql";
	open(my $fh, '>', $sqlfile) or die;
	for my $i (1 .. $n)
	{
		my $p = order_payload(sprintf('%s-%03d', $prefix, $i));
		$p =~ s/'/''/g;
		print $fh "SELECT partner_svc.defer('create_order', jsonb_build_object('payload', '$p'::jsonb));\n";
	}
	close $fh;
	$node->command_ok([ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('postgres'),
		'-f', $sqlfile ], "$prefix: $n calls queued");
}

sub mine { "args #>> '{payload,vignettes,0,custom_id}' LIKE '$_[0]-%'" }

# the orders the strict service holds whose custom id starts with prefix
sub held
{
	my ($prefix) = @_;
	my $all = decode_json($h->get('/strict/_control/orders'));
	return scalar(grep { index($_, "$prefix-") == 0 } keys %$all);
}

sub check
{
	my ($prefix, $n) = @_;
	my $where = mine($prefix);
	ok(wait_done($node, $where, 180), "$prefix: every call finished");
	is(sql("SELECT string_agg(state || ' ' || n, ', ' ORDER BY state) FROM
		(SELECT state, count(*) AS n FROM partner_svc.deferred_calls WHERE $where GROUP BY state) s"),
		"done $n", "$prefix: $n done")
	  or diag sql("SELECT string_agg(args #>> '{payload,vignettes,0,custom_id}' || ': ' || state || ' ' ||
		coalesce(sqlstate, '') || ' ' || coalesce(message, '') || ' ' || coalesce(detail, ''), E'\n')
		FROM partner_svc.deferred_queue WHERE $where AND state <> 'done'");
	is(held($prefix), $n, "$prefix: the service holds $n orders");
	note "$prefix: " . sql("SELECT count(*) FILTER (WHERE answer ? 'recovered') || ' recovered, attempts max ' || max(attempts)
		FROM partner_svc.deferred_calls WHERE $where");
}

# a sender pid with a create in flight
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

$h->get('/strict/_control/delay/150');

# --- 1. SIGKILL of a sender with a create in flight ---
queue_calls('KILL', 200);
my $pid = sender_in_flight();
ok($pid, 'a sender has a create in flight');
kill 'KILL', $pid;
ok($node->poll_query_until('postgres', "SELECT count(*) > 0 FROM pg_stat_activity WHERE backend_type = 'partner_svc deferred sender'"),
	'the senders run again after the crash');
check('KILL', 200);

# --- 2. immediate stop with creates in flight ---
queue_calls('STOP', 200);
ok(sender_in_flight(), 'a create is in flight');
$node->stop('immediate');
$node->start;
check('STOP', 200);

# --- 3. an outage of half of give_up ---
$h->get('/strict/_control/delay/0');
$node->append_conf('postgresql.conf', "partner_svc.deferred_give_up = 1000\npartner_svc.deferred_max_attempts = 3\n");
$node->reload;
ok($node->poll_query_until('postgres', "SELECT current_setting('partner_svc.deferred_give_up') = '1000s'"),
	'outage: give_up is 1000 s of the partners\' clock');
sleep 1;
$h->get('/strict/_control/outage/on');
$h->clear;
my $t0 = time;
queue_calls('OUT', 20);
my $where = mine('OUT');
# half of give_up: 500 s of the partners' clock, 5 s at time_scale 0.01
sleep 0.1 while time - $t0 < 4;
is(sql("SELECT count(*) FROM partner_svc.deferred_calls WHERE $where AND state IN ('queued', 'sending')
	AND message LIKE 'POST /public/orders failed with HTTP status 503%'"), 20,
	'outage: each call is unfinished, with the error of its own create')
  or diag sql("SELECT string_agg(DISTINCT state || ' ' || coalesce(message, ''), E'\n')
	FROM partner_svc.deferred_calls WHERE $where");
sleep 0.1 while time - $t0 < 5;
$h->get('/strict/_control/outage/off');
check('OUT', 20);
is(sql("SELECT count(*) FROM partner_svc.deferred_calls WHERE $where AND state = 'failed'"), 0, 'outage: none failed');
cmp_ok(sql("SELECT max(attempts) FROM partner_svc.deferred_calls WHERE $where"), '>', 3,
	'outage: calls took more than max_attempts attempts');

# over_requests(prefix): the calls that made more requests (its create's
# body, its lookups' path) than their attempts plus one
sub over_requests
{
	my ($prefix) = @_;
	my %req;
	my $last = '';
	for my $line (split /\n/, $h->log)
	{
		if ($line =~ m{^GET /strict/public/orders/($prefix-\d+)$}) { $req{$1}++; }
		elsif ($line =~ /^  body: .*"custom_id":\s*"($prefix-\d+)"/)
		{
			my $cid = $1;
			$req{$cid}++ if $last =~ m{^POST /strict/public/orders$};
		}
		$last = $line;
	}
	my $attempts = sql("SELECT string_agg(args #>> '{payload,vignettes,0,custom_id}' || ' ' || attempts, ',')
		FROM partner_svc.deferred_calls WHERE " . mine($prefix));
	my @over;
	my $most;
	for (split /,/, $attempts)
	{
		my ($cid, $n) = split / /;
		push @over, "$cid: " . ($req{$cid} // 0) . " requests, $n attempts" if ($req{$cid} // 0) > $n + 1;
		my $d = ($req{$cid} // 0) - $n;
		$most = $d if !defined $most || $d > $most;
	}
	my $total = 0;
	$total += $_ for values %req;
	note "$prefix: $total requests for " . sql("SELECT sum(attempts) FROM partner_svc.deferred_calls WHERE " . mine($prefix)) . " attempts, at most attempts + " . ($most // 0) . " for a call";
	return @over;
}

my @over = over_requests('OUT');
is(scalar(@over), 0, 'outage: no call made more requests than its attempts plus one')
  or diag join("\n", @over);

# --- 4. an outage of 502 ---
$h->get('/strict/_control/outage/502');
$h->clear;
$t0 = time;
queue_calls('BAD', 10);
sleep 0.1 while time - $t0 < 2;
$h->get('/strict/_control/outage/off');
check('BAD', 10);
@over = over_requests('BAD');
is(scalar(@over), 0, '502: no call made more requests than its attempts plus one')
  or diag join("\n", @over);

# --- 5. a refused resend settled by a lookup ---
$h->get('/strict/_control/drop/LATE');
$h->get('/strict/_control/stale/LATE');
$h->clear;
queue_calls('LATE', 5);
check('LATE', 5);
is(sql("SELECT count(*) FROM partner_svc.deferred_calls WHERE " . mine('LATE') . " AND answer ->> 'recovered' = 'true'"),
	5, 'refused resend: each deferred call recovered its order');
my $p = order_payload('LATED-001');
is(sql("SELECT partner_svc.create_order('$p'::jsonb) ->> 'recovered'"), 'true',
	'refused resend: a direct create_order recovers its order');
is(held('LATED'), 1, 'refused resend: one order of the direct call');
is(scalar(grep { m{^POST /strict/public/orders$} } @{ $h->requests }), 12,
	'refused resend: two creates per call, the second refused');

$node->stop;
done_testing();
