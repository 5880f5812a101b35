# 86_upgrade_receiving.t: an update keeps receiving (issue 27, item 7;
# docs/upgrades.md, "Between the restart and the update").
#
# One cluster that preloads the current library (0.4), its worker
# listening; the extension is created at 0.3 (the frozen script), as a
# cluster of 0.3 has it when it restarts on the new library.  A child
# posts webhooks steadily, each with its own order id, and writes every
# answer down, while:
#   - the server restarts (the library restart of an upgrade);
#   - a deferred create_order is queued and an order is created through
#     partner_svc.create_order(): while the objects are 0.3 the senders
#     and the reconciler wait (the call stays queued, nothing reaches the
#     sandbox, no 'created' row), and the log says so once;
#   - ALTER EXTENSION partner_svc UPDATE runs: the call is then sent and
#     done, the created order recorded, and the log says they resume.
# Then every webhook answered 200 is in webhook_events.  A user's view on
# partner_svc.stats and a GRANT on it survive the update, partner_svc.stats
# keeps its OID, and partner_svc.stat_background (new in 0.4) is there.
# Before the gate (src/base/extversion.c) the call was sent and the order
# recorded while the objects were still 0.3.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use lib "$FindBin::Bin/../sandbox/lib";

use DeferredTest;
use HTTP::Tiny;
use POSIX ();
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Sandbox;
use Test::More;
use Time::HiRes qw(sleep time);
use WebhookTest;

my $sb = Sandbox->start(keys => ['sandbox-key=premium'], args => ['--time-scale', '0.01']);
my $node = PostgreSQL::Test::Cluster->new('upgrade_receiving');
my $port = PostgreSQL::Test::Cluster::get_free_port();
$node->init;
$node->append_conf('postgresql.conf', <<"CONF");
shared_preload_libraries = 'partner_svc'
listen_addresses = '127.0.0.1'
partner_svc.webhook_port = $port
partner_svc.time_scale = 0.01
max_worker_processes = 20
synchronous_commit = on
CONF
$node->start;
sub sql { $node->safe_psql('postgres', $_[0]) }

my $current = sql(q{SELECT default_version FROM pg_available_extensions WHERE name = 'partner_svc'});
isnt($current, '0.3', "the library is newer than 0.3 ($current)");
sql(q{CREATE EXTENSION partner_svc VERSION '0.3'});
is(sql(q{SELECT extversion FROM pg_extension WHERE extname = 'partner_svc'}), '0.3', 'objects of 0.3');
my $url = $sb->url;
sql(qq{
CREATE SERVER orders FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'orders', base_url '$url', tier 'premium');
CREATE USER MAPPING FOR PUBLIC SERVER orders OPTIONS (api_key 'sandbox-key');
CREATE ROLE watcher LOGIN;
CREATE VIEW public.my_stats AS SELECT server, route, requests FROM partner_svc.stats;
GRANT SELECT ON partner_svc.stats TO watcher;
GRANT SELECT ON public.my_stats TO watcher;
});
$sb->config({ 'orders.pending_after_min' => 100000 });
my $stats_oid = sql(q{SELECT 'partner_svc.stats'::regclass::oid});
$node->poll_query_until('postgres', "SELECT state = 'listening' FROM partner_svc.webhook_status()")
  or die 'the webhook worker does not listen';

# --- the poster: one order event every 20 ms, each answer written down ---
my $answers = $PostgreSQL::Test::Utils::tmp_check . '/answers.txt';
my $stop = $PostgreSQL::Test::Utils::tmp_check . '/stop';
my $pid = fork();
die "fork: $!" unless defined $pid;
if ($pid == 0)
{
	open(my $fh, '>', $answers) or POSIX::_exit(1);
	$fh->autoflush(1);
	my $http = HTTP::Tiny->new(timeout => 30);
	my $t_end = time + 300;
	for (my $i = 1; $i <= 20000 && time < $t_end && !-e $stop; $i++)
	{
		my $r = $http->request('POST', "http://127.0.0.1:$port/webhooks/sandbox",
			{ content => order_event('ORDER_STATUS_CHANGED', 'PENDING', "UPG-$i"),
			  headers => { 'Content-Type' => 'application/json' } });
		print $fh "UPG-$i $r->{status}\n";
		sleep 0.02;
	}
	close $fh;
	POSIX::_exit(0);
}

sub answered
{
	my %a;
	open(my $fh, '<', $answers) or return {};
	while (<$fh>) { $a{$1} = $2 if /^(\S+) (\d+)$/ }
	return \%a;
}
sub count_200 { scalar grep { $_ == 200 } values %{ answered() } }

ok(WebhookTest::wait_for(sub { count_200() >= 10 }, 60), 'webhooks are stored at 0.3 before the restart');

# --- the library restart ---
$node->restart;
$node->poll_query_until('postgres', "SELECT state = 'listening' FROM partner_svc.webhook_status()")
  or die 'the webhook worker does not listen after the restart';
my $before = count_200();
ok(WebhookTest::wait_for(sub { count_200() >= $before + 10 }, 60),
	'webhooks are stored after the restart, objects still 0.3');

# --- the duties that wait for the update ---
my $cid = 'UPG-CALL-1';
my $call = sql("SELECT partner_svc.defer('create_order', jsonb_build_object('payload', '"
	. order_payload($cid) . "'::jsonb))");
sql("SELECT partner_svc.create_order('" . order_payload('UPG-DIRECT-1') . "')");
# the senders claim every second, the worker records at every turn; a
# worker whose duties wait must not spin: its CPU time over those 3 s is
# what 150 webhooks cost (0.1 s or less), far below a busy loop's (1.2 s
# on the shared 2-core test machine)
sub cpu_s
{
	my ($pid) = @_;
	open(my $fh, '<', "/proc/$pid/stat") or return undef;
	my @f = split / /, (<$fh> =~ s/^.*\) //r);
	return ($f[11] + $f[12]) / POSIX::sysconf(POSIX::_SC_CLK_TCK);
}
my $wpid = worker_pid($node);
my $cpu0 = cpu_s($wpid);
sleep 3;
my $cpu = cpu_s($wpid) - $cpu0;
ok($cpu < 0.6, "the waiting worker does not spin (CPU ${cpu}s in 3 s)");
is(sql("SELECT state FROM partner_svc.deferred_calls WHERE id = $call"), 'queued',
	'at 0.3 the deferred call stays queued');
is(sandbox_orders($sb, 'UPG-CALL')->{$cid} // 0, 0, 'at 0.3 nothing was sent');
is(sql("SELECT count(*) FROM partner_svc.order_states WHERE source = 'created'"), '0',
	'at 0.3 the reconciler records nothing');
my $log = slurp_file($node->logfile);
my @waits = $log =~ /partner_svc deferred sender waits: extension "partner_svc" is at version 0\.3 and the library at \Q$current\E/g;
ok(@waits >= 1, 'the sender logs that it waits for the update');
@waits = $log =~ /partner_svc webhook worker waits: extension "partner_svc" is at version 0\.3 and the library at \Q$current\E/g;
is(scalar(@waits), 1, 'the webhook worker logs once that its duties wait for the update');

# --- the update, webhooks still coming ---
$before = count_200();
sql('ALTER EXTENSION partner_svc UPDATE');
is(sql(q{SELECT extversion FROM pg_extension WHERE extname = 'partner_svc'}), $current, "updated to $current");
ok(DeferredTest::wait_done($node, "id = $call", 60), 'after the update the call is sent');
is(sql("SELECT state FROM partner_svc.deferred_calls WHERE id = $call"), 'done', 'and done');
is(sandbox_orders($sb, 'UPG-CALL')->{$cid} // 0, 1, 'one order at the sandbox');
ok($node->poll_query_until('postgres',
	"SELECT count(*) > 0 FROM partner_svc.order_states WHERE source = 'created'"),
	'after the update the created order is recorded');
like(slurp_file($node->logfile), qr/partner_svc webhook worker resumes: extension "partner_svc" is at version \Q$current\E/,
	'the worker logs that it resumes');
ok(WebhookTest::wait_for(sub { count_200() >= $before + 10 }, 60), 'webhooks are stored after the update');

# --- every webhook answered 200 is stored ---
open(my $sfh, '>', $stop) or die;
close $sfh;
waitpid($pid, 0);
my $ans = answered();
my @ok = sort grep { $ans->{$_} == 200 } keys %$ans;
my %stored = map { $_ => 1 } split /\n/,
  sql("SELECT DISTINCT unique_id FROM partner_svc.webhook_events WHERE unique_id LIKE 'UPG-%'");
my @lost = grep { !$stored{$_} } @ok;
ok(@ok > 30, scalar(@ok) . ' webhooks answered 200 across the restart and the update');
is(scalar(@lost), 0, 'every webhook answered 200 is stored') or diag("lost: @lost[0 .. ($#lost < 9 ? $#lost : 9)]");
my @other = sort grep { $ans->{$_} != 200 && $ans->{$_} != 599 } keys %$ans;
is(scalar(@other), 0, 'no answer but 200 (or no connection, during the restart)')
  or diag(join ' ', map { "$_=$ans->{$_}" } @other[0 .. ($#other < 9 ? $#other : 9)]);

# --- the views and their grants ---
is(sql(q{SELECT 'partner_svc.stats'::regclass::oid}), $stats_oid, 'partner_svc.stats is the same relation');
is(sql(q{SELECT has_table_privilege('watcher', 'partner_svc.stats', 'SELECT')}), 't',
	'the GRANT on partner_svc.stats is kept');
is($node->safe_psql('postgres', q{SET ROLE watcher; SELECT count(*) >= 0 FROM public.my_stats}), 't',
	"the user's view on partner_svc.stats works for its grantee");
is(sql(q{SELECT count(DISTINCT objid) FROM pg_depend WHERE refobjid = 'partner_svc.stats'::regclass AND classid = 'pg_rewrite'::regclass
	AND objid IN (SELECT oid FROM pg_rewrite WHERE ev_class = 'public.my_stats'::regclass)}), '1',
	"the user's view still depends on partner_svc.stats");
is(sql(q{SELECT count(*) FROM partner_svc.stat_background}), '1', 'partner_svc.stat_background is there after the update');

$node->stop;
done_testing();
