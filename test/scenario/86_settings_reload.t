# Settings a DBA can read (issue 31, item 3): every tunable is a setting
# of its own, so ALTER SYSTEM of one, and a reload, change that one only.
# In 0.3 the worker's duties were keys of one string, and
# ALTER SYSTEM SET partner_svc.worker_tasks = 'poll_after=5min' put
# senders back to its default.
# - every partner_svc.* row of pg_settings is the same after
#   ALTER SYSTEM SET partner_svc.poll_after and a reload, but poll_after;
#   so after a RESET of it;
# - the webhook worker reads a new listener setting at the reload (it
#   reopens the listener) and keeps the others (its port);
# - a 0.3 string left in postgresql.conf is reported at start and at each
#   reload, once, with the settings to use, and changes nothing.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use WebhookTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my ($node, $port) = webhook_node('settings_reload', conf => <<'CONF');
partner_svc.deferred_senders = 4
partner_svc.poll_share = 30
partner_svc.webhook_max_body = '128kB'
partner_svc.worker_tasks = 'senders=2, poll_share="10"'
CONF
sub sql { $node->safe_psql('postgres', $_[0]) }
sub log_from { substr(slurp_file($node->logfile), $_[0]) }

# every setting of partner_svc with its value and where it comes from
my $settings = q{SELECT string_agg(name || '=' || setting || ' (' || source || ')', E'\n' ORDER BY name)
FROM pg_settings WHERE name LIKE 'partner_svc.%'};
my $warning = qr/WARNING:  parameter "partner_svc\.worker_tasks" of partner_svc 0\.3 is ignored\n.*DETAIL:  Since 0\.4 each of its keys is a setting of its own: senders is partner_svc\.deferred_senders, .*\n.*HINT:  Replace partner_svc\.worker_tasks by: partner_svc\.deferred_senders = '2', partner_svc\.poll_share = '10'\./;

# --- the 0.3 string at start: reported, ignored ---
my @warned = log_from(0) =~ /$warning/g;
is(scalar @warned, 1, 'start: the 0.3 string is reported once, with the settings to use');
is(sql("SELECT current_setting('partner_svc.deferred_senders') || ' ' || current_setting('partner_svc.poll_share')"),
	'4 30', 'start: the 0.3 string changes nothing');

# --- ALTER SYSTEM of one setting ---
my $before = sql($settings);
like($before, qr/^partner_svc\.deferred_senders=4 \(configuration file\)$/m, 'deferred_senders from the file');
my $off = length(slurp_file($node->logfile));
sql("ALTER SYSTEM SET partner_svc.poll_after = '5min'");
sql('SELECT pg_reload_conf()');
ok($node->poll_query_until('postgres', "SELECT current_setting('partner_svc.poll_after') = '5min'"),
	'poll_after is 5min after the reload');
my $after = sql($settings);
(my $expected = $before) =~ s/^partner_svc\.poll_after=1800 \(default\)$/partner_svc.poll_after=300 (configuration file)/m;
isnt($expected, $before, 'poll_after had its default before');
is($after, $expected, 'after ALTER SYSTEM SET poll_after and a reload, every other setting is unchanged');
# the reload's report is the postmaster's: once, whatever the backends
ok(wait_for(sub { log_from($off) =~ $warning }, 30), 'reload: the 0.3 string is reported again');
sleep 1;
@warned = log_from($off) =~ /$warning/g;
is(scalar @warned, 1, 'reload: once');

# --- the webhook worker reads one listener setting at a reload ---
my $since = webhook_status($node)->{listening_since};
sql("ALTER SYSTEM SET partner_svc.webhook_header_timeout = '20s'");
sql('SELECT pg_reload_conf()');
ok(wait_for(sub { my $s = webhook_status($node); $s->{state} eq 'listening' && $s->{listening_since} ne $since }, 30),
	'a new header timeout reopens the listener');
is(webhook_status($node)->{port}, $port, 'on the same port');
my $big = '{"pad":"' . ('x' x 100000) . '"}';
is(post_webhook($port, 'sandbox', $big)->{status}, 400,
	'webhook_max_body (128kB) is kept: a body of 100 kB is read (and is not an event: 400)');

# --- RESET of one: back to the file and the defaults, the rest unchanged ---
sql('ALTER SYSTEM RESET partner_svc.poll_after');
sql('ALTER SYSTEM RESET partner_svc.webhook_header_timeout');
sql('SELECT pg_reload_conf()');
ok($node->poll_query_until('postgres',
	"SELECT current_setting('partner_svc.poll_after') = '30min' AND current_setting('partner_svc.webhook_header_timeout') = '10s'"),
	'poll_after and webhook_header_timeout back to their defaults');
is(sql($settings), $before, 'after the RESETs every setting is as at start');

# --- the 0.3 string removed: nothing more to report ---
my $file = $node->data_dir . '/postgresql.conf';
my $conf = join '', grep { !/^partner_svc\.worker_tasks/ } split /^/m, slurp_file($file);
open my $fh, '>', $file or die "$file: $!";
print $fh $conf;
close $fh;
$off = length(slurp_file($node->logfile));
sql('SELECT pg_reload_conf()');
# a reload is seen by the postmaster's next message: a settings change
sql("ALTER SYSTEM SET partner_svc.poll_interval = '2min'");
sql('SELECT pg_reload_conf()');
ok($node->poll_query_until('postgres', "SELECT current_setting('partner_svc.poll_interval') = '2min'"),
	'a later reload is applied');
unlike(log_from($off), qr/0\.3 is ignored/, 'without the 0.3 string nothing is reported');

$node->stop;
done_testing();
