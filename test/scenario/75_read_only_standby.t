# Read-only means read-only: on a hot standby, where every transaction is
# read-only, and in a read-only transaction of the primary, create_order
# and an INSERT into the writable foreign table todos fail with 25006
# (as PostgreSQL refuses an INSERT) and the sandbox receives nothing;
# reads keep working on the standby (test/sql/read_only.sql has the other
# functions that write).
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/../sandbox/lib";
use Sandbox;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

$ENV{SANDBOX_BIN} ||= (grep { -x } map { "$_/partner_svc_sandbox" } split /:/, $ENV{PATH})[0];

my $sb = Sandbox->start(keys => ['k1=standard'], args => ['--seed', '75']);
my $url = $sb->url;

my $primary = PostgreSQL::Test::Cluster->new('ro_primary');
$primary->init(allows_streaming => 1);
$primary->append_conf('postgresql.conf', <<"CONF");
shared_preload_libraries = 'partner_svc'
listen_addresses = '127.0.0.1'
CONF
$primary->start;
$primary->safe_psql('postgres', qq{
	CREATE EXTENSION partner_svc;
	CREATE SERVER orders FOREIGN DATA WRAPPER partner_svc OPTIONS (service 'orders', base_url '$url');
	CREATE USER MAPPING FOR CURRENT_USER SERVER orders OPTIONS (api_key 'k1');
	CREATE SERVER todos FOREIGN DATA WRAPPER partner_svc OPTIONS (service 'todos', base_url '$url');
	CREATE USER MAPPING FOR CURRENT_USER SERVER todos;
	IMPORT FOREIGN SCHEMA todos FROM SERVER todos INTO public;
});
my $order = q{'{"terms_and_privacy_accepted": true, "order_has_been_paid": true,
	"vehicles": [{"plate": "LJ RO-75", "country": "SI"}],
	"vignettes": [{"custom_id": "%s", "name": "read-only", "period": "1_day", "start_date": "2030-01-01"}]}'};
my $id = $primary->safe_psql('postgres',
	sprintf("SELECT partner_svc.create_order(%s) #>> '{orders,0,id}'", sprintf($order, 'RO-PRIMARY')));
like($id, qr/^ord_/, 'the primary creates an order');
$primary->backup('b');
my $standby = PostgreSQL::Test::Cluster->new('ro_standby');
$standby->init_from_backup($primary, 'b', has_streaming => 1);
$standby->start;
$primary->wait_for_catchup($standby);
is($standby->safe_psql('postgres', 'SELECT pg_is_in_recovery()'), 't', 'a hot standby');

$sb->reset_stats;
sub refused
{
	my ($node, $sql, $msg, $name) = @_;
	my ($rc, $out, $err) = $node->psql('postgres', "\\set VERBOSITY verbose\n$sql");
	like($err, qr/ERROR:  25006: \Q$msg\E/, $name);
}
refused($standby, sprintf('SELECT partner_svc.create_order(%s)', sprintf($order, 'RO-STANDBY')),
	'cannot execute create_order() in a read-only transaction', 'standby: create_order gives 25006');
refused($standby, q{INSERT INTO todos (title, user_id) VALUES ('RO standby', 1)},
	'cannot execute INSERT in a read-only transaction', 'standby: INSERT INTO todos gives 25006');
refused($standby, "SELECT partner_svc.cancel_pending('$id')",
	'cannot execute cancel_pending() in a read-only transaction', 'standby: cancel_pending gives 25006');
refused($primary, sprintf("BEGIN READ ONLY;\nSELECT partner_svc.create_order(%s);", sprintf($order, 'RO-TX')),
	'cannot execute create_order() in a read-only transaction', 'primary, read-only transaction: create_order gives 25006');
refused($primary, "BEGIN READ ONLY;\nINSERT INTO todos (title, user_id) VALUES ('RO tx', 1);",
	'cannot execute INSERT in a read-only transaction', 'primary, read-only transaction: INSERT INTO todos gives 25006');
is(scalar @{ $sb->requests() }, 0, 'the sandbox received nothing');

# reads on the standby
is($standby->safe_psql('postgres', "SELECT partner_svc.order_status('$id')"), 'CREATED',
	'standby: order_status reads');
is($standby->safe_psql('postgres', "SELECT partner_svc.order_detail('RO-PRIMARY') ->> 'id'"), $id,
	'standby: order_detail reads');
ok($standby->safe_psql('postgres', 'SELECT count(*) FROM todos') > 0, 'standby: the foreign table todos reads');
is(join(',', map { "$_->{method} $_->{route}" } @{ $sb->requests() }),
	'GET /public/orders/{id}/status,GET /public/orders/{id},GET /todos', 'only reads reached the sandbox');

$standby->stop;
$primary->stop;
done_testing();
