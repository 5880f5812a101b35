# 83_deferred_restore.t: a queue restored into another cluster is never
# sent without someone deciding it (docs/backups.md), and defer() is
# refused on a hot standby (25006).
#
#  1. Cluster A queues create_order calls while its server points at a
#     closed loopback port, so they stay queued (retries).  Its database is
#     dumped with pg_dump and restored into cluster B, whose server is then
#     pointed at the sandbox.  B's senders hold the calls (origin: A's
#     system identifier and database): the sandbox receives nothing.  One
#     call is cancelled with deferred_cancel(), the others released with
#     deferred_release(): they are sent, once each; the cancelled one never.
#     One more call was queued in A by the role restore_tenant, which has
#     another OID in B (roles are restored first, by name): the restore
#     gives it to B's restore_tenant, by name, and it is sent as that role.
#  2. A standby of A: defer() fails with 25006, like an INSERT, and the
#     sandbox receives nothing.
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
my ($a, $sb) = deferred_setup('restore_a', streaming => 1,
	conf => "partner_svc.deferred_max_attempts = 1000\n");
$a->safe_psql('postgres', "ALTER SERVER orders OPTIONS (SET base_url 'http://127.0.0.1:$closed')");
my $tenant_grants = 'GRANT USAGE ON SCHEMA partner_svc TO restore_tenant;
GRANT USAGE ON FOREIGN SERVER orders TO restore_tenant;';
$a->safe_psql('postgres', "CREATE ROLE restore_tenant; $tenant_grants");
for my $i (1 .. 6)
{
	my $p = order_payload($i == 6 ? 'RT-1' : "RS-$i");
	$p =~ s/'/''/g;
	$a->safe_psql('postgres', ($i == 6 ? 'SET ROLE restore_tenant; ' : '')
		. "SELECT partner_svc.defer('create_order', jsonb_build_object('payload', '$p'::jsonb))");
}
my $tenant_oid_a = $a->safe_psql('postgres', "SELECT oid FROM pg_roles WHERE rolname = 'restore_tenant'");
ok($a->poll_query_until('postgres',
	"SELECT count(*) = 6 FROM partner_svc.deferred_calls WHERE attempts > 0 AND state = 'queued'"),
	'A: the calls were tried and wait for a retry');

# --- 2. the standby first (A is running) ---
$a->backup('b1');
my $standby = PostgreSQL::Test::Cluster->new('restore_standby');
$standby->init_from_backup($a, 'b1', has_streaming => 1);
$standby->start;
$a->wait_for_catchup($standby);
$sb->reset_stats;
my ($rc, $out, $err) = $standby->psql('postgres',
	q{SELECT partner_svc.defer('cancel_pending', '{"id": "RS-1"}')}, extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($err, qr/ERROR:\s+25006/, 'standby: defer() fails with 25006');
is(scalar @{ $sb->requests }, 0, 'standby: the sandbox received nothing');
is($standby->safe_psql('postgres', 'SELECT count(*) FROM partner_svc.deferred_calls'), 6, 'standby: the queue can be read');
$standby->stop;

# --- 1. pg_dump of A into B ---
my $dump = PostgreSQL::Test::Utils::tempdir() . '/a.sql';
$a->command_ok([ 'pg_dump', '-d', $a->connstr('postgres'), '-f', $dump ], 'pg_dump of A');
$a->stop;

my $b = PostgreSQL::Test::Cluster->new('restore_b');
$b->init;
$b->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'partner_svc'
partner_svc.time_scale = 0.01
});
$b->start;
# the roles first (as pg_dumpall --roles-only would), with other OIDs than A's
$b->safe_psql('postgres', 'CREATE ROLE restore_pad; CREATE ROLE restore_tenant');
isnt($b->safe_psql('postgres', "SELECT oid FROM pg_roles WHERE rolname = 'restore_tenant'"), $tenant_oid_a,
	'B: restore_tenant has another OID than in A');
$b->command_ok([ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', $b->connstr('postgres'), '-f', $dump ],
	'restored into B');
my $url = $sb->url;
$b->safe_psql('postgres', "ALTER SERVER orders OPTIONS (SET base_url '$url')");
$sb->reset_stats;
is($b->safe_psql('postgres', "SELECT count(*) FROM partner_svc.deferred_calls WHERE held"), 6,
	'B: the 6 restored calls are held (queued, or sending when A was dumped in the middle of an attempt)');
sleep 3;
is(scalar @{ $sb->requests }, 0, 'B: nothing sent while held');
is($b->safe_psql('postgres', "SELECT partner_svc.deferred_cancel(ARRAY[id]) FROM partner_svc.deferred_calls
	WHERE args #>> '{payload,vignettes,0,custom_id}' = 'RS-5'"), 1, 'B: one call cancelled');
is($b->safe_psql('postgres', 'SELECT partner_svc.deferred_release()'), 5, 'B: the others released');
ok(wait_done($b, 'true', 60), 'B: the released calls finished');
is($b->safe_psql('postgres', "SELECT string_agg(state, ',' ORDER BY id) FROM partner_svc.deferred_calls"),
	'done,done,done,done,failed,done', 'B: five done, the cancelled one failed');
is_deeply(sandbox_orders($sb, 'RS-'), { map { ("RS-$_" => 1) } 1 .. 4 }, 'B: one order per released call, none for the cancelled one');
is($b->safe_psql('postgres', "SELECT role::text || ' ' || (role = (SELECT oid FROM pg_roles WHERE rolname = 'restore_tenant'))
	FROM partner_svc.deferred_calls WHERE args #>> '{payload,vignettes,0,custom_id}' = 'RT-1'"),
	'restore_tenant true', "B: restore_tenant's call is B's restore_tenant's, by name");
is_deeply(sandbox_orders($sb, 'RT-'), { 'RT-1' => 1 }, "B: restore_tenant's call was sent");
# a new call in B is B's own: sent at once
my $p = order_payload('RS-NEW');
$p =~ s/'/''/g;
my $id = $b->safe_psql('postgres', "SELECT partner_svc.defer('create_order', jsonb_build_object('payload', '$p'::jsonb))");
ok(wait_done($b, "id = $id", 30), 'B: a call queued in B is sent');
is($b->safe_psql('postgres', "SELECT state FROM partner_svc.deferred_calls WHERE id = $id"), 'done', 'B: and done');

$b->stop;
done_testing();
