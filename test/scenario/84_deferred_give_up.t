# 84_deferred_give_up.t: a deferred call gives up after give_up, the one
# limit on time, with its last error, however many attempts that took;
# finished calls are removed after keep_calls (partner_svc.deferred_*,
# docs/deferred-calls.md).
#
#  1. deferred_max_attempts = 3 and deferred_give_up = 300 s of the
#     partners' clock (3 s at
#     time_scale 0.01), the server at a closed loopback port: a refused
#     connection is retried beyond max_attempts, which ends nothing, until
#     give_up; then the call fails with the connection error (HV00N).
#  2. give_up=2s of the partners' clock at time_scale 1: a call whose
#     retries keep failing fails once it is older than that, even with
#     attempts left.
#  3. keep_calls=1s: both finished calls are gone a few seconds later.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use DeferredTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(sleep time);

my $closed = PostgreSQL::Test::Cluster::get_free_port();
my ($node, $sb) = deferred_setup('deferred_give_up',
	conf => "partner_svc.deferred_max_attempts = 3\npartner_svc.deferred_give_up = 300\npartner_svc.deferred_keep_calls = 0\n");
sub sql { $node->safe_psql('postgres', $_[0]) }
sql("ALTER SERVER orders OPTIONS (SET base_url 'http://127.0.0.1:$closed')");

sub defer_order
{
	my ($cid) = @_;
	my $p = order_payload($cid);
	$p =~ s/'/''/g;
	return sql("SELECT partner_svc.defer('create_order', jsonb_build_object('payload', '$p'::jsonb))");
}

# --- 1. max_attempts ends nothing ---
my $t1 = time;
my $id = defer_order('GU-1');
ok(wait_done($node, "id = $id", 60), 'max_attempts: finished');
cmp_ok(time - $t1, '>=', 2.5, 'max_attempts: not failed before give_up');
is(sql("SELECT state || ' ' || sqlstate FROM partner_svc.deferred_calls WHERE id = $id"),
	'failed HV00N', 'max_attempts: failed at give_up with the connection error');
cmp_ok(sql("SELECT attempts FROM partner_svc.deferred_calls WHERE id = $id"), '>', 3,
	'max_attempts: tried more often than max_attempts');
like(sql("SELECT message FROM partner_svc.deferred_calls WHERE id = $id"), qr/connect/i, 'max_attempts: its message');

# --- 2. give_up, of the partners' clock ---
$node->append_conf('postgresql.conf', "partner_svc.time_scale = 1\npartner_svc.deferred_max_attempts = 1000\npartner_svc.deferred_give_up = '2s'\npartner_svc.deferred_keep_calls = 0\n");
$node->reload;
sleep 1;
my $t0 = time;
$id = defer_order('GU-2');
ok(wait_done($node, "id = $id", 60), 'give_up: finished');
cmp_ok(time - $t0, '>=', 1.5, 'give_up: not before give_up');
is(sql("SELECT state || ' ' || sqlstate FROM partner_svc.deferred_calls WHERE id = $id"), 'failed HV00N',
	'give_up: failed with the last error');
cmp_ok(sql("SELECT attempts FROM partner_svc.deferred_calls WHERE id = $id"), '<', 1000, 'give_up: with attempts left');

# --- 3. keep_calls ---
is(sql("SELECT count(*) FROM partner_svc.deferred_calls"), 2, 'keep_calls=0 keeps them');
$node->append_conf('postgresql.conf', "partner_svc.deferred_keep_calls = '1s'\n");
$node->reload;
ok($node->poll_query_until('postgres', 'SELECT count(*) = 0 FROM partner_svc.deferred_calls'),
	'keep_calls=1s: the finished calls are removed');

$node->stop;
done_testing();
