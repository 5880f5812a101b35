# 77_pg_upgrade.t: pg_upgrade from an older PostgreSQL major to the one
# this test runs under, with partner_svc installed and live data
# (docs/upgrades.md, "Upgrading PostgreSQL to a new major").
#
# The old major's bindir comes from PSVC_OLD_PG_BIN (test/run_major.sh
# exports it, e.g. /usr/lib/postgresql/15/bin when the suite runs on 18);
# partner_svc must be installed into it too.  The test is skipped, and
# says why, when that is not set, holds no partner_svc, or is not older
# than the PostgreSQL of the test.
#
# The old cluster preloads partner_svc, its worker in database postgres
# (the default of partner_svc.worker) listens for webhooks, and it holds:
#  - webhooks received: events, order states, a checkout, a reject;
#  - deferred calls: two done, four of its own still queued (their server
#    at a closed loopback port, so they wait for a retry), and two held
#    (given another cluster's origin, as a restored queue has);
#  - a learned estimate, written to pg_stat/ at its clean stop.
# It is stopped cleanly, a new cluster with the same settings is made and
# pg_upgrade --copy runs.  Then:
#  1. pg_upgrade succeeded, and no partner_svc worker ran in either server
#     it started (binary-upgrade mode): its own server log says so.  Before
#     the fix the senders, connected to database postgres, made its DROP
#     DATABASE fail, and the old cluster's workers sent and listened while
#     pg_upgrade ran it.
#  2. Every row of the webhook tables and of the queue is there, and the
#     identity sequences go on after the old ids.
#  3. pg_upgrade gave the cluster a new system identifier (the database
#     OID is kept): every unfinished call is held, and nothing is sent,
#     until the DBA releases the calls of the old cluster's origin
#     (recorded before the upgrade).  They are then sent exactly once each
#     (the sandbox's request log and its orders); the two held calls stay
#     held and are never sent.
#  4. The learned estimates are not carried over (pg_upgrade does not copy
#     pg_stat/, and a copied file of another major is ignored): the
#     default until a scan teaches it again.
use strict;
use warnings;
use Cwd qw(getcwd);
use File::Basename qw(dirname);
use File::Copy qw(copy);
use FindBin;
use lib "$FindBin::Bin/lib";
use lib "$FindBin::Bin/../sandbox/lib";
use DeferredTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Sandbox;
use Test::More;
use Time::HiRes qw(sleep time);
use WebhookTest;

# --- what to upgrade from, or why not ---
my $old_bin = $ENV{PSVC_OLD_PG_BIN};
my ($old_major, $new_major);
sub major { my ($v) = $_[0] =~ /PostgreSQL (\d+)/; return $v }
$new_major = major(`pg_config --version`);
my $why;
if (!defined $old_bin || $old_bin eq '')
{
	$why = 'PSVC_OLD_PG_BIN is not set (the bindir of the older PostgreSQL to upgrade from)';
}
elsif (!-x "$old_bin/pg_config" || !-x "$old_bin/pg_ctl" || !-x "$old_bin/postgres")
{
	$why = "PSVC_OLD_PG_BIN=$old_bin is not the bindir of a PostgreSQL installation";
}
elsif (dirname($old_bin) . '/bin' ne $old_bin || !-d dirname($old_bin) . '/lib')
{
	$why = "PSVC_OLD_PG_BIN=$old_bin: its parent must hold bin and lib (PostgreSQL::Test::Cluster's install_path)";
}
else
{
	$old_major = major(`"$old_bin/pg_config" --version`);
	my $pkglib = `"$old_bin/pg_config" --pkglibdir`;
	my $share = `"$old_bin/pg_config" --sharedir`;
	chomp($pkglib, $share);
	if (!-f "$pkglib/partner_svc.so" || !-f "$share/extension/partner_svc.control")
	{
		$why = "partner_svc is not installed into the PostgreSQL of PSVC_OLD_PG_BIN=$old_bin";
	}
	elsif (!defined $new_major || !defined $old_major || $old_major >= $new_major)
	{
		$why = "PostgreSQL " . ($new_major // '?') . " runs this test: nothing older than it to upgrade from"
		  . " (PSVC_OLD_PG_BIN is PostgreSQL " . ($old_major // '?') . ")";
	}
}
plan skip_all => "pg_upgrade scenario: $why" if $why;

note("pg_upgrade from PostgreSQL $old_major ($old_bin) to $new_major");

my $sb = Sandbox->start(keys => ['sandbox-key=premium'], args => ['--time-scale', '0.01', '--seed', '7']);
$sb->config({ 'orders.pending_after_min' => 100000 });
my $url = $sb->url;
my $closed = PostgreSQL::Test::Cluster::get_free_port();
my $listen = PostgreSQL::Test::Cluster::get_free_port();

# The settings of partner_svc, which the new cluster must have too
# (poll_after: the reconciler leaves the webhooks' order states alone
# while the test compares them).
my $conf = <<"CONF";
shared_preload_libraries = 'partner_svc'
partner_svc.webhook_port = $listen
partner_svc.worker_database = 'postgres'
partner_svc.deferred_max_attempts = 1000
partner_svc.poll_after = '30d'
partner_svc.time_scale = 0.01
synchronous_commit = on
CONF
# Both clusters with the same locale and encoding, and without data
# checksums (18's initdb turns them on by default; pg_upgrade needs both
# alike).
my @initdb = ('--locale=C', '--encoding=UTF8');

my $old = PostgreSQL::Test::Cluster->new('old', install_path => dirname($old_bin));
$old->init(extra => [@initdb]);
$old->append_conf('postgresql.conf', $conf);
$old->start;
sub old_sql { $old->safe_psql($_[1] // 'postgres', $_[0]) }

# a second database with partner_svc (staging, its server at a closed
# port), upgraded beside postgres
old_sql('CREATE DATABASE staging');
for my $db ('staging', 'postgres')
{
	my $base = $db eq 'staging' ? "http://127.0.0.1:$closed" : $url;
	old_sql(qq{
CREATE EXTENSION partner_svc;
CREATE SERVER orders FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'orders', base_url '$base', tier 'premium');
CREATE USER MAPPING FOR PUBLIC SERVER orders OPTIONS (api_key 'sandbox-key');
}, $db);
}
old_sql(q{SELECT setval('partner_svc.deferred_queue_id_seq', 1000)}, 'staging');

sub defer_sql
{
	my ($cid) = @_;
	my $p = order_payload($cid);
	$p =~ s/'/''/g;
	return "SELECT partner_svc.defer('create_order', jsonb_build_object('payload', '$p'::jsonb))";
}

# two calls sent and done before the upgrade
old_sql(defer_sql($_)) for ('UD-1', 'UD-2');
ok(wait_done($old, 'NOT held', 60), 'old: the first calls are done');
is(old_sql("SELECT string_agg(state, ',' ORDER BY id) FROM partner_svc.deferred_calls WHERE NOT held"),
	'done,done', 'old: two calls done');

# four calls of its own that cannot be sent yet: they wait for a retry
old_sql("ALTER SERVER orders OPTIONS (SET base_url 'http://127.0.0.1:$closed')");
old_sql(defer_sql($_)) for ('UP-1', 'UP-2', 'UP-3', 'UP-4');
ok($old->poll_query_until('postgres',
	q{SELECT count(*) = 4 FROM partner_svc.deferred_calls WHERE attempts > 0 AND state = 'queued' AND NOT held}),
	'old: four queued calls were tried and wait for a retry');

# two calls of another origin, as a restore of another cluster's queue
# leaves them (docs/backups.md): queued here, then given the origin of
# another cluster; they are held (defer() in database staging is refused:
# the senders serve postgres only)
# (in the transaction that queues them, so that no sender claims one first)
old_sql(join(";\n", 'BEGIN', defer_sql('UH-1'), defer_sql('UH-2'),
	q{UPDATE partner_svc.deferred_queue SET origin = '1/1'
	WHERE args #>> '{payload,vignettes,0,custom_id}' LIKE 'UH-%'}, 'COMMIT'));
is(old_sql('SELECT count(*) FROM partner_svc.deferred_calls WHERE held'), 2, 'old: two held calls');
my $old_origin = old_sql('SELECT partner_svc.deferred_origin()');
my $old_sysid = old_sql('SELECT system_identifier FROM pg_control_system()');
like($old_origin, qr{^$old_sysid/\d+$}, "old: origin $old_origin");

# webhooks received
$old->poll_query_until('postgres', q{SELECT state = 'listening' FROM partner_svc.webhook_status()})
  or die 'the webhook worker does not listen';
my @posts = (
	order_event('ORDER_STATUS_CHANGED', 'CREATED', 'pu-1'),
	order_event('ORDER_STATUS_CHANGED', 'ACTIVE', 'pu-1'),
	order_event('ORDER_CONFIRMATION_RECEIVED', 'ACTIVE', 'pu-1', pdf_url => 'https://example.invalid/pu-1.pdf'),
	order_event('ORDER_STATUS_CHANGED', 'PENDING', 'pu-2'),
	checkout_event('tx-pu', 'SUCCESS', 'pu-1', 'pu-2'),
);
is(post_webhook($listen, 'sandbox', $_)->{status}, 200, 'old: a webhook stored') for @posts;
is(post_webhook($listen, 'sandbox', '{"event_type": 1}')->{status}, 400, 'old: a reject');

# a learned estimate
old_sql(qq{
CREATE SERVER movies FOREIGN DATA WRAPPER partner_svc OPTIONS (service 'movies', base_url '$url');
CREATE USER MAPPING FOR PUBLIC SERVER movies OPTIONS (api_key 'sandbox-key');
IMPORT FOREIGN SCHEMA movies LIMIT TO (movie_themes) FROM SERVER movies INTO public;
});
my $themes = old_sql(q{SELECT count(*) FROM movie_themes WHERE movie = '52'});
sub estimate
{
	my ($node) = @_;
	my ($line) = $node->safe_psql('postgres', q{EXPLAIN (VERBOSE) SELECT * FROM movie_themes WHERE movie = '52'})
	  =~ /Partner Estimate: (.*)$/m;
	return $line // '(none)';
}
is(estimate($old), "$themes rows (learned from 1 scan)", 'old: the estimate is learned');

# What must be there after the upgrade.  The queue's unfinished calls
# still retry until the stop (attempts, times, errors change; a call may
# be left 'sending' by the stop), so the queue is compared by what a
# retry does not change.
my %query = (
	webhook_events => 'SELECT id, environment, event_type, status, unique_id, custom_id,
		transaction_id, pdf_url, payload, dedupe_key, received_at FROM partner_svc.webhook_events ORDER BY id',
	order_states => 'SELECT * FROM partner_svc.order_states ORDER BY unique_id',
	transactions => 'SELECT * FROM partner_svc.transactions ORDER BY transaction_id',
	webhook_rejects => 'SELECT * FROM partner_svc.webhook_rejects ORDER BY id',
	deferred_queue => q{SELECT id, operation, args, server, role, lanes,
		CASE WHEN state IN ('queued', 'sending') THEN 'unfinished' ELSE state END,
		CASE WHEN state = 'done' THEN attempts END, answer, created_at, done_at, origin
		FROM partner_svc.deferred_queue ORDER BY id},
);
my %before = map { $_ => old_sql($query{$_}) } keys %query;
ok($before{$_} ne '', "old: $_ has rows") for sort keys %query;
is(scalar(split /\n/, $before{deferred_queue}), 8, 'old: eight deferred calls');
my $extversion = old_sql(q{SELECT extversion FROM pg_extension WHERE extname = 'partner_svc'});

# Debian's PostgreSQL 15.20 (this machine's) records a pg_attver=N option
# on every column of every table (pg_attribute.attoptions); its own
# pg_dump leaves it out, a newer major's pg_dump (pg_upgrade uses the new
# one) copies it and the new server refuses it ('unrecognized parameter
# "pg_attver"'), so pg_upgrade fails on any database that has a table,
# with or without partner_svc.  Removed from the user's columns here, as
# docs/upgrades.md tells a DBA upgrading from such a server.
my $attver = q{SELECT count(*) FROM pg_catalog.pg_attribute
	WHERE attrelid >= 16384 AND attoptions::text LIKE '%pg\_attver=%'};
for my $db ('postgres', 'staging')
{
	next unless old_sql($attver, $db) > 0;
	note("old: removing pg_attver from the attoptions of database $db");
	old_sql(q{UPDATE pg_catalog.pg_attribute
		SET attoptions = NULLIF(ARRAY(SELECT o FROM unnest(attoptions) o WHERE o NOT LIKE 'pg\_attver=%'), '{}')
		WHERE attrelid >= 16384 AND attoptions::text LIKE '%pg\_attver=%'}, $db);
	is(old_sql($attver, $db), 0, "old: no pg_attver left in database $db");
}

# --- the upgrade ---
$old->stop('fast');
ok(-f $old->data_dir . '/pg_stat/partner_svc_estimates.stat', 'old: its clean stop wrote the estimates file');

my $new = PostgreSQL::Test::Cluster->new('new');
$new->init(extra => [ @initdb, $new_major >= 18 ? ('--no-data-checksums') : () ]);
$new->append_conf('postgresql.conf', $conf);
my $new_bin = $new->config_data('--bindir');

my $cwd = getcwd();
my $upgrade_dir = PostgreSQL::Test::Utils::tempdir();
chdir $upgrade_dir or die "chdir $upgrade_dir: $!";
my $upgraded = run_log([ "$new_bin/pg_upgrade", '--no-sync', '--copy', '--retain',
	'-b', $old_bin, '-B', $new_bin, '-d', $old->data_dir, '-D', $new->data_dir,
	'-s', $new->host, '-p', $old->port, '-P', $new->port ]);
ok($upgraded, 'pg_upgrade --copy');
chdir $cwd;
if (!$upgraded)
{
	for my $log (glob($new->data_dir . '/pg_upgrade_output.d/*/log/*.log'))
	{
		diag("---- $log\n" . join('', (split /^/, slurp_file($log))[-15 .. -1]))
		  if -s $log;
	}
	BAIL_OUT('pg_upgrade failed');
}
my @server_logs = glob($new->data_dir . '/pg_upgrade_output.d/*/log/pg_upgrade_server.log');
is(scalar @server_logs, 1, 'pg_upgrade kept its server log (--retain)');
my $server_log = @server_logs ? slurp_file($server_logs[0]) : '';
like($server_log, qr/database system is ready to accept connections/, 'the server log of pg_upgrade is the one of its servers');
my @workers = $server_log =~ /^.*partner_svc (?:webhook worker|deferred sender|quota worker).*$/mg;
is(scalar @workers, 0, 'no partner_svc worker ran in the servers pg_upgrade started (binary-upgrade mode)')
  or diag(join("\n", @workers[0 .. ($#workers < 9 ? $#workers : 9)]));

# A copy of the old estimates file is of another major: ignored.
copy($old->data_dir . '/pg_stat/partner_svc_estimates.stat', $new->data_dir . '/pg_stat/partner_svc_estimates.stat')
  or die "copy: $!";
my $log_from = -s $new->logfile // 0;
$new->start;
sub new_sql { $new->safe_psql($_[1] // 'postgres', $_[0]) }
like(substr(slurp_file($new->logfile), $log_from),
	qr/ignoring file "pg_stat\/partner_svc_estimates\.stat": it was written by another version/,
	'new: the estimates file of the old major is ignored');

is(new_sql('SHOW server_version_num') =~ /^(\d+)\d{4}$/ ? $1 : '', $new_major, "new: PostgreSQL $new_major");
my $new_sysid = new_sql('SELECT system_identifier FROM pg_control_system()');
isnt($new_sysid, $old_sysid, 'new: pg_upgrade gave the cluster a new system identifier');
my ($old_dboid) = $old_origin =~ m{/(\d+)$};
is(new_sql('SELECT partner_svc.deferred_origin()'), "$new_sysid/$old_dboid", 'new: the database keeps its OID');

# --- every row ---
for my $t (sort keys %query)
{
	is(new_sql($query{$t}), $before{$t}, "new: $t: every row is there");
}

# --- the worker listens again; a new webhook goes after the old ids ---
ok($new->poll_query_until('postgres', q{SELECT state = 'listening' FROM partner_svc.webhook_status()}),
	'new: the webhook worker listens on the same port');
is(post_webhook($listen, 'sandbox', order_event('ORDER_STATUS_CHANGED', 'ACTIVE', 'pu-2'))->{status}, 200,
	'new: a webhook stored');
is(new_sql(q{SELECT status FROM partner_svc.order_states WHERE unique_id = 'pu-2'}), 'ACTIVE', 'new: its order state');
ok(new_sql(q{SELECT max(id) FROM partner_svc.webhook_events WHERE unique_id = 'pu-2'})
	> (split /\|/, (split /\n/, $before{webhook_events})[-1])[0], 'new: its id goes on after the old ones');

# --- deferred calls: held, then the old cluster's released ---
new_sql("ALTER SERVER orders OPTIONS (SET base_url '$url')");
$sb->reset_stats;
is(new_sql(q{SELECT count(*) FROM partner_svc.deferred_calls WHERE held}), 6,
	'new: every unfinished call is held (the four of the old cluster and the two held before)');
sleep 3;
is(scalar @{ $sb->requests('/public/orders') }, 0, 'new: nothing is sent while they are held');
is(new_sql(qq{SELECT partner_svc.deferred_release(ARRAY(
	SELECT id FROM partner_svc.deferred_queue
	WHERE origin = '$old_origin' AND state IN ('queued', 'sending')))}), 4,
	"new: the four calls of the old cluster's origin released");
ok(wait_done($new, 'NOT held', 60), 'new: the released calls finished');
is(new_sql(q{SELECT string_agg(args #>> '{payload,vignettes,0,custom_id}' || ' ' || state, ',' ORDER BY id)
	FROM partner_svc.deferred_calls}),
	'UD-1 done,UD-2 done,UP-1 done,UP-2 done,UP-3 done,UP-4 done,UH-1 queued,UH-2 queued',
	'new: the released calls done, the held ones still queued');
is(new_sql(q{SELECT count(*) FROM partner_svc.deferred_calls WHERE held}), 2, 'new: the two held calls stay held');
sleep 3;
my @creates = grep { $_->{method} eq 'POST' } @{ $sb->requests('/public/orders') };
is(scalar @creates, 4, 'sandbox: four creates after the upgrade, one per released call');
my $orders = sandbox_orders($sb, 'U');
is_deeply({ map { $_ => $orders->{$_} } grep { !/^UD-/ } keys %$orders },
	{ map { ("UP-$_" => 1) } 1 .. 4 }, 'sandbox: one order per released call, none for the held ones');
is(new_sql(q{SELECT count(*) FROM partner_svc.deferred_calls WHERE held}), 2, 'new: still held');

# --- estimates: relearned ---
is(estimate($new), '250 rows (default)', 'new: the estimate is the default after the upgrade');
new_sql(q{SELECT count(*) FROM movie_themes WHERE movie = '52'});
is(estimate($new), "$themes rows (learned from 1 scan)", 'new: a scan teaches it again');

# --- the extension's SQL objects: as installed, updated if the version changed ---
new_sql('ALTER EXTENSION partner_svc UPDATE');
is(new_sql(q{SELECT extversion = default_version FROM pg_extension, pg_available_extensions
	WHERE extname = 'partner_svc' AND name = extname}), 't',
	"new: ALTER EXTENSION partner_svc UPDATE (from $extversion)");
is(new_sql('SELECT partner_svc.version()'), new_sql(q{SELECT extversion FROM pg_extension WHERE extname = 'partner_svc'}),
	'new: the library and the SQL objects agree');

$new->stop;
$sb->stop;
done_testing();
