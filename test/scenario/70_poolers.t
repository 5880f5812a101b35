# partner_svc behind pgbouncer (Debian's package), on loopback, as
# docs/poolers.md describes it.  One pgbouncer in front of a cluster with
# the webhook worker, two pools of ONE server connection each (so that
# "the next client" of a server connection is certain, not luck):
#   tx   pool_mode = transaction
#   sess pool_mode = session
# and, through them:
#   1. mutations (partner_svc.create_order, alone and two in one
#      transaction) work in transaction mode: each reaches the partner once;
#   2. statement_timeout: SET LOCAL inside the transaction cancels a slow
#      partner call (57014) in transaction mode; a plain SET there stays on
#      the server connection and reaches the next client, and so does
#      SET partner_svc.cache = off; in session mode pgbouncer's DISCARD ALL
#      resets both;
#   3. a client cancel (psql's SIGINT: a cancel request to pgbouncer) stops
#      a slow partner call, and the pool goes on working;
#   4. LISTEN partner_svc_events: a webhook's notification reaches a direct
#      session and a session-mode client, never a transaction-mode client;
#   5. named prepared statements (pgbench -M prepared, two clients) fail in
#      transaction mode before pgbouncer 1.21 ("already exists": both
#      clients prepare on the one server connection), and work from 1.21
#      with max_prepared_statements.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use lib "$FindBin::Bin/../sandbox/lib";
use WebhookTest;
use Sandbox;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time sleep);

$ENV{SANDBOX_BIN} ||= (grep { -x } map { "$_/partner_svc_sandbox" } split /:/, $ENV{PATH})[0];

my ($pgbouncer) = grep { -x } map { "$_/pgbouncer" } split(/:/, $ENV{PATH}), '/usr/sbin', '/usr/bin';
die "pgbouncer not found: run test/setup.sh as root (Debian package pgbouncer)\n" unless $pgbouncer;
my ($pgb_version) = `$pgbouncer --version` =~ /(\d+\.\d+(?:\.\d+)?)/;
my ($pgb_major, $pgb_minor) = split /\./, $pgb_version;
my $pgb_prepared = $pgb_major > 1 || $pgb_minor >= 21;
note "pgbouncer $pgb_version at $pgbouncer";

my ($node, $whport) = webhook_node('poolers');
my $sb = Sandbox->start(keys => ['sandbox-key=standard']);
my $sburl = $sb->url;
$node->safe_psql('postgres', qq{
	CREATE SERVER orders FOREIGN DATA WRAPPER partner_svc OPTIONS (service 'orders', base_url '$sburl');
	CREATE USER MAPPING FOR CURRENT_USER SERVER orders OPTIONS (api_key 'sandbox-key')});
my $user = $node->safe_psql('postgres', 'SELECT current_user');

# pgbouncer, loopback only, no socket, trust (a throw-away cluster)
my $dir = PostgreSQL::Test::Utils::tempdir();
my $bport = PostgreSQL::Test::Cluster::get_free_port();
my $pgport = $node->port;
open(my $fh, '>', "$dir/users.txt") or die;
print $fh qq{"$user" ""\n};
close $fh;
open($fh, '>', "$dir/pgbouncer.ini") or die;
print $fh <<"INI" . ($pgb_prepared ? "max_prepared_statements = 100\n" : '');
[databases]
tx = host=127.0.0.1 port=$pgport dbname=postgres pool_mode=transaction pool_size=1
sess = host=127.0.0.1 port=$pgport dbname=postgres pool_mode=session pool_size=1
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $bport
unix_socket_dir =
auth_type = trust
auth_file = $dir/users.txt
logfile = $dir/pgbouncer.log
pidfile =
max_client_conn = 20
default_pool_size = 1
query_wait_timeout = 20
INI
close $fh;
my $bouncer = IPC::Run::start([ $pgbouncer, "$dir/pgbouncer.ini" ],
	'>', "$dir/pgbouncer.out", '2>', "$dir/pgbouncer.err");
END { $bouncer->kill_kill if $bouncer }

# psql(DB, SQL): a new client; (stdout, stderr, seconds).  DB is tx or sess
# (through pgbouncer) or direct (the cluster itself).
sub psql
{
	my ($db, $sql) = @_;
	my ($port, $dbname) = $db eq 'direct' ? ($pgport, 'postgres') : ($bport, $db);
	my ($out, $err) = ('', '');
	my $t0 = time;
	# psql exits at once when nothing listens yet (pgbouncer still
	# starting on a busy machine) and IPC::Run then dies writing its input
	# ("Broken pipe"): that is a client that failed, not the test's end
	eval {
		IPC::Run::run([ 'psql', '-X', '-A', '-t', '-q', '-h', '127.0.0.1', '-p', $port, '-d', $dbname ],
			'<', \$sql, '>', \$out, '2>', \$err, IPC::Run::timeout(60));
		1;
	} or $err .= $@;
	chomp $out;
	return ($out, $err, time - $t0);
}

ok(wait_for(sub { (psql('tx', 'SELECT 1'))[0] eq '1' }, 20), 'pgbouncer answers on 127.0.0.1')
  or BAIL_OUT('pgbouncer did not start: ' . slurp_file("$dir/pgbouncer.log"));

# ---- 1. mutations ----
sub order_json
{
	my ($cid) = @_;
	return qq{'{"terms_and_privacy_accepted": true, "order_has_been_paid": true,
		"vehicles": [{"plate": "LJ PB-1", "country": "SI"}],
		"vignettes": [{"custom_id": "$cid", "name": "SI", "period": "1_year", "start_date": "2020-01-01"}]}'::jsonb};
}
my ($out, $err) = psql('tx', "SELECT partner_svc.create_order(" . order_json('P-1') . ", 'orders') -> 'orders' -> 0 ->> 'custom_id'");
is($out, 'P-1', 'transaction mode: create_order') or diag $err;
($out, $err) = psql('tx', 'BEGIN; SELECT partner_svc.create_order(' . order_json('P-2') . ", 'orders') IS NOT NULL;"
	. ' SELECT partner_svc.create_order(' . order_json('P-3') . ", 'orders') IS NOT NULL; COMMIT;");
is($out, "t\nt", 'transaction mode: two create_order in one transaction') or diag $err;
($out) = psql('tx', "SELECT partner_svc.order_status('P-3', 'orders')");
is($out, 'CREATED', 'transaction mode: order_status');
is($sb->count('POST /public/orders'), 3, 'each create reached the partner once');

# ---- 2. statement_timeout and SET ----
$sb->fault({ route => 'GET /public/orders/{id}/status', kind => 'latency', value => 3000 });
my $secs;
($out, $err, $secs) = psql('tx', "BEGIN; SET LOCAL statement_timeout = '300ms';"
	. " SELECT partner_svc.order_status('P-1', 'orders'); COMMIT;");
like($err, qr/canceling statement due to statement timeout/, 'transaction mode: SET LOCAL statement_timeout cancels a slow call');
cmp_ok($secs, '<', 2.5, 'within the timeout, not the latency');
$sb->clear_faults;

($out) = psql('tx', "SET statement_timeout = '4321ms'; SET partner_svc.cache = off;");
($out) = psql('tx', "SHOW statement_timeout; SHOW partner_svc.cache;");
is($out, "4321ms\noff", 'transaction mode: a plain SET reaches the next client of the server connection');
psql('tx', 'RESET statement_timeout; RESET partner_svc.cache;');
psql('sess', "SET statement_timeout = '4321ms'; SET partner_svc.cache = off;");
($out) = psql('sess', "SHOW statement_timeout; SHOW partner_svc.cache;");
is($out, "0\non", 'session mode: DISCARD ALL resets them for the next client');

# ---- 3. client cancel ----
$sb->reset_stats;
$sb->fault({ route => 'GET /public/orders/{id}/status', kind => 'latency', value => 5000 });
my ($cout, $cerr) = ('', '');
my $t0 = time;
my $h = IPC::Run::start([ 'psql', '-X', '-A', '-t', '-h', '127.0.0.1', '-p', $bport, '-d', 'tx',
	'-c', "SELECT partner_svc.order_status('P-2', 'orders')" ], '>', \$cout, '2>', \$cerr, IPC::Run::timeout(30));
ok(wait_for(sub { grep { $_->{route} eq '/public/orders/{id}/status' } @{ $sb->stats->{routes} } }, 10),
	'the slow call is at the partner');
$h->signal('INT');
$h->finish;
my $took = time - $t0;
like($cerr, qr/canceling statement due to user request/, 'transaction mode: psql\'s cancel reaches the backend (57014)');
cmp_ok($took, '<', 4.5, 'the call stopped before its latency ended');
$sb->clear_faults;
($out) = psql('tx', "SELECT partner_svc.order_status('P-2', 'orders')");
is($out, 'CREATED', 'the pool works after the cancel');

# ---- 4. LISTEN ----
my $n = 0;
sub listen_script
{
	$n++;
	my $body = order_event('ORDER_STATUS_CHANGED', 'PENDING', "ord_pool$n");
	open(my $bf, '>', "$dir/body$n.json") or die;
	print $bf $body;
	close $bf;
	# the webhook arrives while this client is idle, as a LISTEN loop is
	return "LISTEN partner_svc_events;\n"
	  . "\\! curl -s --noproxy '*' -o /dev/null -X POST --data-binary \@$dir/body$n.json http://127.0.0.1:$whport/webhooks/sandbox\n"
	  . "\\! sleep 1\n"
	  . "SELECT 'after';\n";
}
my $notified = qr/Asynchronous notification "partner_svc_events"/;
($out, $err) = psql('direct', listen_script());
like($out, $notified, 'direct: the webhook\'s notification arrives') or diag "$out\n$err";
($out, $err) = psql('sess', listen_script());
like($out, $notified, 'session mode: it arrives') or diag "$out\n$err";
($out, $err) = psql('tx', listen_script());
unlike($out, $notified, 'transaction mode: it never arrives');
like($out, qr/after/, 'transaction mode: the client goes on') or diag $err;
is($node->safe_psql('postgres', "SELECT count(*) FROM partner_svc.webhook_events WHERE unique_id LIKE 'ord_pool%'"),
	3, 'all three webhooks were stored (and notified)');

# ---- 5. named prepared statements ----
open($fh, '>', "$dir/bench.sql") or die;
print $fh "SELECT partner_svc.version();\n";
close $fh;
my ($bout, $berr) = ('', '');
IPC::Run::run([ 'pgbench', '-n', '-M', 'prepared', '-c', '2', '-j', '1', '-t', '5', '-f', "$dir/bench.sql",
	'-h', '127.0.0.1', '-p', $bport, 'tx' ], '>', \$bout, '2>', \$berr, IPC::Run::timeout(60));
if ($pgb_prepared)
{
	like($bout, qr/number of failed transactions: 0 /, "pgbouncer $pgb_version with max_prepared_statements: pgbench -M prepared works")
	  or diag "$bout\n$berr";
}
else
{
	# pgbench names its statements P_0... (P0_0... in older versions)
	like($berr, qr/prepared statement "P\w*" (?:already exists|does not exist)/,
		"pgbouncer $pgb_version (before 1.21): named prepared statements fail in transaction mode") or diag "$bout\n$berr";
}
($bout, $berr) = ('', '');
IPC::Run::run([ 'pgbench', '-n', '-M', 'extended', '-c', '2', '-j', '1', '-t', '5', '-f', "$dir/bench.sql",
	'-h', '127.0.0.1', '-p', $bport, 'tx' ], '>', \$bout, '2>', \$berr, IPC::Run::timeout(60));
like($bout, qr/number of transactions actually processed: 10\/10/, 'unnamed statements (-M extended) work in transaction mode')
  or diag "$bout\n$berr";

note "pgbouncer.log, server connections closed:\n",
  join('', grep { /closing because/ } split /^/m, slurp_file("$dir/pgbouncer.log"));
$bouncer->kill_kill;
$bouncer = undef;
$sb->stop;
$node->stop;
done_testing();
