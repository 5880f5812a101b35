# 85_deferred_identity.t: deferred calls and created orders belong to a
# role by its OID, not its name (issue 27, item 4; docs/deferred-calls.md,
# docs/privileges.md#identity-of-background-work).
#
# The sandbox has three partners: sandbox-key (the PUBLIC mapping),
# key-one and key-two.  Each role below has its own user mapping, so the
# partner that received a request (the sandbox's request log, and its
# orders per key) shows whose key was sent.
#
#  1. tenant_a (mapping key-one) queues a create; in the same transaction
#     (so the call cannot be sent before) tenant_a is renamed tenant_b and
#     a new role tenant_a is made, with its own mapping (key-two).  The
#     call is sent with key-one (as tenant_b), never key-two; the new
#     tenant_a neither sees it in deferred_calls nor reads its result,
#     tenant_b does, and the view names it tenant_b.
#  2. tenant_c queues a create and is dropped in the same transaction, and
#     a new tenant_c is made with key-two: the call fails with 42704 "the
#     role that queued deferred call N no longer exists", nothing is sent,
#     and the new tenant_c does not see it.
#  3. While tenant_d's create is in flight (held 5 s by the sandbox),
#     DROP ROLE tenant_d waits for it (lock_timeout: 55P03); once the call
#     is done the role can be dropped.
#  4. The reconciler: tenant_x (key-one) creates an order directly; once
#     the worker recorded it, tenant_x is renamed tenant_y and a new
#     tenant_x (key-two) is made: order_states.created_by names tenant_y
#     and the order's status is polled with key-one, never key-two.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use DeferredTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(sleep time);

# the sandbox's partner index of each key: the order of --key
my %partner = ('sandbox-key' => 0, 'key-one' => 1, 'key-two' => 2);
my $wport = PostgreSQL::Test::Cluster::get_free_port();
my ($node, $sb) = deferred_setup('deferred_identity',
	keys => [ 'key-one=premium', 'key-two=premium' ],
	conf => "partner_svc.webhook_port = $wport\n"
	  . "partner_svc.poll_after = '1s'\npartner_svc.poll_interval = '1s'\n");
sub sql { $node->safe_psql('postgres', $_[0]) }

# psql as role (SET ROLE): (stdout, stderr)
sub as_role
{
	my ($role, $q) = @_;
	my ($rc, $out, $err) = $node->psql('postgres', "SET ROLE $role;\n$q",
		extra_params => [ '-v', 'VERBOSITY=verbose' ]);
	return ($out, $err);
}

sub payload_sql
{
	my $p = order_payload($_[0]);
	$p =~ s/'/''/g;
	return "jsonb_build_object('payload', '$p'::jsonb)";
}

# { custom_id => count } of the orders of the partner of key
sub orders_of { return sandbox_orders($sb, $_[1], $_[0]) }

# the partners (sorted, distinct) of the logged requests whose method is
# m and whose path matches re
sub partners_of
{
	my ($m, $re) = @_;
	my %p = map { ($_->{partner} => 1) }
	  grep { $_->{method} eq $m && $_->{path} =~ $re } @{ $sb->requests };
	return join(',', sort keys %p);
}

sub new_tenant
{
	my ($role, $key) = @_;
	return qq{CREATE ROLE $role;
GRANT USAGE ON SCHEMA partner_svc TO $role;
GRANT USAGE ON FOREIGN SERVER orders TO $role;
CREATE USER MAPPING FOR $role SERVER orders OPTIONS (api_key '$key');
};
}

# --- 1. renamed, and a new role of the old name ---
sql(new_tenant('tenant_a', 'key-one'));
$sb->reset_stats;
my $id = sql("BEGIN;
SET ROLE tenant_a;
SELECT partner_svc.defer('create_order', " . payload_sql('ID-1') . ");
RESET ROLE;
ALTER ROLE tenant_a RENAME TO tenant_b;
" . new_tenant('tenant_a', 'key-two') . "
COMMIT;");
ok(wait_done($node, "id = $id", 60), 'rename: the call finished');
is(sql("SELECT state || ' ' || role FROM partner_svc.deferred_calls WHERE id = $id"), 'done tenant_b',
	'rename: done, and the view names the renamed role');
is(partners_of('POST', qr/orders/), $partner{'key-one'}, "rename: the create was sent with the renamed role's key only");
is_deeply([ orders_of('key-one', 'ID-')->{'ID-1'} // 0, orders_of('key-two', 'ID-')->{'ID-1'} // 0 ], [ 1, 0 ],
	"rename: one order at the renamed role's partner, none at the new role's");
my ($out, $err) = as_role('tenant_a', "SELECT count(*) FROM partner_svc.deferred_calls WHERE id = $id");
is($out, '0', 'rename: the new role of the old name does not see the call');
($out, $err) = as_role('tenant_a', "SELECT partner_svc.deferred_result($id)");
like($err, qr/42704: deferred call $id does not exist/, 'rename: nor read its result');
unlike($out, qr/ID-1/, 'rename: nothing of the answer reaches it');
($out, $err) = as_role('tenant_b', "SELECT partner_svc.deferred_result($id) #>> '{orders,0,custom_id}'");
is($out, 'ID-1', 'rename: the renamed role reads its result');
($out, $err) = as_role('tenant_b', "SELECT count(*) FROM partner_svc.deferred_calls WHERE id = $id");
is($out, '1', 'rename: and sees the call');

# --- 2. dropped, and a new role of the old name ---
sql(new_tenant('tenant_c', 'key-one'));
$sb->reset_stats;
$id = sql("BEGIN;
SET ROLE tenant_c;
SELECT partner_svc.defer('create_order', " . payload_sql('ID-2') . ");
RESET ROLE;
DROP OWNED BY tenant_c;
DROP ROLE tenant_c;
" . new_tenant('tenant_c', 'key-two') . "
COMMIT;");
ok(wait_done($node, "id = $id", 60), 'drop: the call finished');
is(sql("SELECT state || ' ' || sqlstate || ' ' || message FROM partner_svc.deferred_calls WHERE id = $id"),
	"failed 42704 the role that queued deferred call $id no longer exists", 'drop: failed with the clear error');
like(sql("SELECT role::text FROM partner_svc.deferred_calls WHERE id = $id"), qr/^\d+$/,
	"drop: the view shows the dropped role's OID");
is(scalar(grep { $_->{method} eq 'POST' } @{ $sb->requests }), 0, 'drop: nothing was sent');
is_deeply([ orders_of('key-one', 'ID-')->{'ID-2'} // 0, orders_of('key-two', 'ID-')->{'ID-2'} // 0 ], [ 0, 0 ],
	'drop: no order at any partner');
($out, $err) = as_role('tenant_c', "SELECT count(*) FROM partner_svc.deferred_calls WHERE id = $id");
is($out, '0', 'drop: the new role of the old name does not see the call');
($out, $err) = as_role('tenant_c', "SELECT partner_svc.deferred_result($id)");
like($err, qr/42704: deferred call $id does not exist/, 'drop: nor read its error');

# --- 3. a role is not dropped while one of its calls is being sent ---
sql(new_tenant('tenant_d', 'key-one'));
$sb->reset_stats;
$sb->fault({ route => 'POST /public/orders', kind => 'latency', value => 5000, count => 1 });
($out, $err) = as_role('tenant_d', "SELECT partner_svc.defer('create_order', " . payload_sql('ID-4') . ")");
$id = $out;
ok(Sandbox::wait_until(sub { grep { $_->{route} eq '/public/orders' && $_->{method} eq 'POST' } @{ $sb->stats->{routes} } }, 30),
	'in flight: the create reached the sandbox');
my ($rc, $dout, $derr) = $node->psql('postgres', "SET lock_timeout = '300ms'; DROP OWNED BY tenant_d; DROP ROLE tenant_d;",
	extra_params => [ '-v', 'VERBOSITY=verbose', '-v', 'ON_ERROR_STOP=1' ]);
like($derr, qr/55P03/, 'in flight: DROP ROLE waits for the call (lock timeout)');
ok(wait_done($node, "id = $id", 60), 'in flight: the call finished');
is(sql("SELECT state || ' ' || role FROM partner_svc.deferred_calls WHERE id = $id"), 'done tenant_d',
	'in flight: done, as tenant_d');
sql('DROP OWNED BY tenant_d; DROP ROLE tenant_d');
is(sql("SELECT count(*) FROM pg_roles WHERE rolname = 'tenant_d'"), 0, 'in flight: then the role can be dropped');
$sb->clear_faults;

# --- 4. the reconciler polls as the creator, by OID ---
ok($node->poll_query_until('postgres', "SELECT state = 'listening' FROM partner_svc.webhook_status()"),
	'the webhook worker listens');
sql(new_tenant('tenant_x', 'key-one'));
($out, $err) = as_role('tenant_x', "SELECT partner_svc.create_order(" . payload_sql('RC-1') . " -> 'payload') #>> '{orders,0,id}'");
my $oid = $out;
ok($oid ne '', "reconcile: tenant_x created order $oid") or diag($err);
ok($node->poll_query_until('postgres',
	"SELECT count(*) = 1 FROM partner_svc.order_states WHERE custom_id = 'RC-1' AND created_by::text = 'tenant_x'"),
	'reconcile: the worker recorded the order and its creator');
sql("BEGIN; ALTER ROLE tenant_x RENAME TO tenant_y;\n" . new_tenant('tenant_x', 'key-two') . "COMMIT;");
is(sql("SELECT created_by::text FROM partner_svc.order_states WHERE custom_id = 'RC-1'"), 'tenant_y',
	'reconcile: created_by names the renamed role');
$sb->reset_stats;
my $path = qr{/orders/\Q$oid\E/status};
ok(Sandbox::wait_until(sub { scalar(grep { $_->{path} =~ $path } @{ $sb->requests }) >= 3 }, 60),
	'reconcile: the order was polled three times after the rename');
is(partners_of('GET', $path), $partner{'key-one'}, "reconcile: polled with the renamed creator's key only");

$node->stop;
done_testing();
