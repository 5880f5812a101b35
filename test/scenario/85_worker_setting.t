# A bad worker setting never widens privileges (issue 27, item 5; issue
# 31, item 3).
# - a misspelt name (partner_svc.worker_rol = 'hook'): PostgreSQL only
#   warns and removes it, which would keep the default role, the bootstrap
#   superuser.  The webhook worker and the deferred senders stay stopped
#   instead: the log says so, naming the setting; none of their backends
#   appears in pg_stat_activity (so none as a superuser), nothing listens
#   on the webhook port, webhook_status() is stopped and says why;
# - the same with the 0.3 string partner_svc.worker left in the file
#   ('database=postgres role=hook'): the log names the settings to use;
# - an empty partner_svc.worker_database, which PostgreSQL refuses: the
#   same;
# - a role that does not exist ('role=nohook'), which may be created while
#   the server runs: both wait connected to no database (as PostgreSQL runs
#   a background worker without a role: its bootstrap superuser's id, no
#   query, no user code) and the log says why;
# - the setting corrected, after a restart: both connect as the role.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use WebhookTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(sleep);

my $node = PostgreSQL::Test::Cluster->new('worker_setting');
my $port = PostgreSQL::Test::Cluster::get_free_port();
$node->init;
$node->append_conf('postgresql.conf', <<"CONF");
shared_preload_libraries = 'partner_svc'
listen_addresses = '127.0.0.1'
partner_svc.webhook_port = $port
CONF
# the worker's lines of postgresql.conf replaced by these
sub worker_conf
{
	my $file = $node->data_dir . '/postgresql.conf';
	my $conf = join '', grep { !/^partner_svc\.worker/ } split /^/m, slurp_file($file);
	open my $fh, '>', $file or die "$file: $!";
	print $fh $conf, @_;
	close $fh;
}
worker_conf("partner_svc.worker_database = 'postgres'\n", "partner_svc.worker_rol = 'hook'\n");
$node->start;
sub sql { $node->safe_psql('postgres', $_[0]) }
sql('CREATE EXTENSION partner_svc');

# the backends of the webhook worker and the deferred senders, by role
# ("-" for one connected as no role)
my $workers = q{SELECT coalesce(string_agg(backend_type || ':' || coalesce(usename::text, '-'), ',' ORDER BY backend_type), '')
FROM pg_stat_activity
WHERE backend_type IN ('partner_svc webhook worker', 'partner_svc deferred sender')};
# what the log says from offset on
sub log_from { substr(slurp_file($node->logfile), $_[0]) }

# Checks that the worker and the senders stay stopped because of setting
# (a name in a regexp), the log from offset off saying why.
sub stays_stopped
{
	my ($what, $setting, $off) = @_;
	my $log = log_from($off);
	like($log, qr/WARNING:  partner_svc webhook worker stays stopped: untrusted setting "$setting"\n.*DETAIL:  \S/,
		"$what: the log says the webhook worker stays stopped, and why");
	like($log, qr/WARNING:  partner_svc deferred senders stay stopped: untrusted setting "$setting"/,
		"$what: and that the deferred senders stay stopped");
	# a worker with the default role would connect within a second or two
	ok(!wait_for(sub { sql($workers) ne '' }, 10),
		"$what: no worker or sender connects, as any role") or diag sql($workers);
	is(sql(q{SELECT count(*) FROM pg_stat_activity a JOIN pg_roles r ON r.rolname = a.usename
WHERE r.rolsuper AND a.backend_type LIKE 'partner_svc%'}), '0', "$what: no partner_svc backend is a superuser");
	is(post_webhook($port, 'sandbox', order_event('ORDER_STATUS_CHANGED', 'CREATED', 'ord_1'))->{status}, 599,
		"$what: nothing listens on the webhook port");
	my $s = webhook_status($node);
	is($s->{state}, 'stopped', "$what: webhook_status() is stopped");
	like($s->{last_error} // '', qr/^untrusted setting "$setting": \S/,
		"$what: webhook_status()'s last_error names the setting");
	return $log;
}

# --- a misspelt name ---
my $log = stays_stopped('misspelt name', 'partner_svc\.worker_rol', 0);
my $off;
like($log, qr/DETAIL:  "partner_svc\.worker_rol" is no setting of partner_svc; the worker's are partner_svc\.worker_database and partner_svc\.worker_role\./,
	'misspelt name: the detail names the settings meant');

# --- the string of 0.3 left in the file ---
worker_conf("partner_svc.worker = 'database=postgres role=hook'\n");
$off = length(slurp_file($node->logfile));
$node->restart;
$log = stays_stopped('0.3 string', 'partner_svc\.worker', $off);
like($log, qr/WARNING:  parameter "partner_svc\.worker" of partner_svc 0\.3 is ignored\n.*HINT:  Replace partner_svc\.worker by: partner_svc\.worker_database = 'postgres', partner_svc\.worker_role = 'hook'\./s,
	'0.3 string: the log names the settings to use');

# --- an empty database ---
worker_conf("partner_svc.worker_database = ''\n", "partner_svc.worker_role = 'hook'\n");
$off = length(slurp_file($node->logfile));
$node->restart;
$log = stays_stopped('empty database', 'partner_svc\.worker_database', $off);
like($log, qr/invalid value for parameter "partner_svc\.worker_database": ""/,
	'empty database: PostgreSQL refuses the value');

# --- a role that does not exist ---
worker_conf("partner_svc.worker_database = 'postgres'\n", "partner_svc.worker_role = 'nohook'\n");
$off = length(slurp_file($node->logfile));
$node->restart;
ok(wait_for(sub { log_from($off) =~ /webhook worker cannot start: role "nohook" does not exist/ }, 60),
	'missing role: the webhook worker says it cannot start') or diag log_from($off);
ok(wait_for(sub { log_from($off) =~ /deferred sender cannot start: role "nohook" does not exist/ }, 60),
	'and so does the deferred sender') or diag log_from($off);
is(sql(q{SELECT count(*) FROM pg_stat_activity
WHERE backend_type IN ('partner_svc webhook worker', 'partner_svc deferred sender') AND datname IS NOT NULL}),
	'0', 'missing role: no worker or sender is connected to a database');
unlike(log_from($off), qr/stays stopped/, 'a valid setting: nothing stays stopped for it');

# --- corrected: the role, after a restart ---
sql(q{
CREATE ROLE hook LOGIN;
GRANT USAGE ON SCHEMA partner_svc TO hook;
GRANT SELECT, INSERT, UPDATE, DELETE ON partner_svc.webhook_events, partner_svc.order_states,
  partner_svc.transactions, partner_svc.webhook_rejects TO hook;
});
worker_conf("partner_svc.worker_role = 'hook'\n");
$node->restart;
ok(wait_for(sub { webhook_status($node)->{state} eq 'listening' }, 60),
	'corrected: the webhook worker listens') or diag explain webhook_status($node);
ok(wait_for(sub { sql($workers) eq 'partner_svc deferred sender:hook,partner_svc webhook worker:hook' }, 60),
	'the webhook worker and the deferred sender connect as partner_svc.worker_role')
  or diag sql($workers);
is(webhook_status($node)->{last_error}, undef, 'webhook_status(): no error');

$node->stop;
done_testing();
