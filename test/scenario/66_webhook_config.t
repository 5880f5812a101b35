# Configuration errors and pinned settings (issue 10).
# - partner_svc.worker_database names a database that does not exist:
#   one FATAL, then webhook_status() (read from another database) says
#   why, and the worker checks again with pauses instead of a FATAL every
#   5 s.  The database created without the extension: last_error says the
#   extension is missing and deliveries get 503; with the extension they
#   are stored there, and last_error clears.
# - partner_svc.worker_role names a role that does not exist yet: the
#   same, then, once it exists (a LOGIN role that may only write the
#   webhook tables), the worker connects as it.  Its transactions run with
#   synchronous_commit on, search_path pg_catalog, the configured
#   lock_timeout and read-write, although the role and the database carry
#   other defaults, and a schema on the role's search_path shadows the
#   text = operator.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use WebhookTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(sleep);

sub node_with
{
	my ($name, $conf) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);
	my $port = PostgreSQL::Test::Cluster::get_free_port();
	$node->init;
	$node->append_conf('postgresql.conf', <<"CONF" . $conf);
shared_preload_libraries = 'partner_svc'
listen_addresses = '127.0.0.1'
partner_svc.webhook_port = $port
CONF
	$node->start;
	$node->safe_psql('postgres', 'CREATE EXTENSION partner_svc');
	return ($node, $port);
}
sub status_of { my $s = webhook_status($_[0]); return "$s->{state}: " . ($s->{last_error} // '') }

# --- a missing database ---
my ($node, $port) = node_with('nodb', "partner_svc.worker_database = 'hooks'\n");
ok(wait_for(sub { status_of($node) eq 'failed: database "hooks" does not exist' }, 60),
	'missing database: webhook_status() in another database says so')
  or diag status_of($node);
is(webhook_status($node)->{database}, 'hooks', 'missing database: the database column');
# the worker checks after 5, 10, 20 s: a FATAL every 5 s would show 3+ here
sleep(16);
my $fatals = () = slurp_file($node->logfile) =~ /FATAL:  database "hooks" does not exist/g;
cmp_ok($fatals, '<=', 1, "missing database: no FATAL every 5 s ($fatals in 16 s)");
like(slurp_file($node->logfile), qr/WARNING:  partner_svc webhook worker cannot start: database "hooks" does not exist/,
	'missing database: one warning in the log');
is(status_of($node), 'failed: database "hooks" does not exist', 'missing database: still the same status');

# the database without the extension: 503, last_error says why
$node->safe_psql('postgres', 'CREATE DATABASE hooks');
ok(wait_for(sub { webhook_status($node)->{state} eq 'listening' }, 90),
	'created: the worker connects and listens') or diag status_of($node);
is(webhook_status($node)->{last_error},
	'extension "partner_svc" is not installed in the webhook database', 'no extension: last_error says so');
my $r = post_webhook($port, 'sandbox', order_event('ORDER_STATUS_CHANGED', 'CREATED', 'db-1'));
is($r->{status}, 503, 'no extension: 503');
is($r->{headers}{'retry-after'}, 5, 'no extension: with Retry-After');
$node->safe_psql('hooks', 'CREATE EXTENSION partner_svc');
is(post_webhook($port, 'sandbox', order_event('ORDER_STATUS_CHANGED', 'CREATED', 'db-1'))->{status}, 200,
	'with the extension: 200');
is($node->safe_psql('hooks', 'SELECT unique_id FROM partner_svc.webhook_events'), 'db-1',
	'stored in the configured database');
ok(wait_for(sub { !defined webhook_status($node)->{last_error} }, 90),
	'with the extension: last_error clears') or diag status_of($node);
$node->stop;

# --- a missing role, then pinned settings ---
($node, $port) = node_with('role', "partner_svc.worker_role = 'hook'\npartner_svc.webhook_lock_timeout = '1500ms'\n");
sub sql { $node->safe_psql('postgres', $_[0]) }
ok(wait_for(sub { status_of($node) eq 'failed: role "hook" does not exist' }, 60),
	'missing role: webhook_status() says so') or diag status_of($node);
sql(q{CREATE ROLE hook NOLOGIN});
ok(wait_for(sub { status_of($node) eq 'failed: role "hook" is not permitted to log in' }, 60),
	'role without LOGIN: webhook_status() says so') or diag status_of($node);
sql(q{
CREATE SCHEMA evil;
CREATE FUNCTION evil.text_eq(text, text) RETURNS boolean LANGUAGE plpgsql
  AS $$BEGIN RAISE EXCEPTION 'the shadowing = was called'; END$$;
CREATE OPERATOR evil.= (LEFTARG = text, RIGHTARG = text, FUNCTION = evil.text_eq);
GRANT USAGE ON SCHEMA evil TO PUBLIC;
CREATE TABLE public.seen (sc text, sp text, lt text, ro text, usr text);
GRANT INSERT ON public.seen TO hook;
CREATE FUNCTION public.record_settings() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO public.seen VALUES (pg_catalog.current_setting('synchronous_commit'),
    pg_catalog.current_setting('search_path'), pg_catalog.current_setting('lock_timeout'),
    pg_catalog.current_setting('transaction_read_only'), current_user::text);
  RETURN NEW;
END$$;
CREATE TRIGGER record_settings AFTER INSERT ON partner_svc.webhook_events
  FOR EACH ROW EXECUTE FUNCTION public.record_settings();
GRANT USAGE ON SCHEMA partner_svc TO hook;
GRANT SELECT, INSERT, UPDATE ON partner_svc.webhook_events, partner_svc.order_states,
  partner_svc.transactions, partner_svc.webhook_rejects TO hook;
ALTER DATABASE postgres SET synchronous_commit = off;
ALTER ROLE hook SET search_path = evil, pg_catalog;
ALTER ROLE hook SET lock_timeout = '1h';
ALTER ROLE hook SET default_transaction_read_only = on;
ALTER ROLE hook LOGIN;
});
ok(wait_for(sub { webhook_status($node)->{state} eq 'listening' }, 90),
	'the role exists: the worker listens') or diag status_of($node);
is(sql("SELECT usename FROM pg_stat_activity WHERE backend_type = 'partner_svc webhook worker'"), 'hook',
	'the worker is connected as partner_svc.worker_role');
is(sql('SELECT rolsuper FROM pg_roles WHERE rolname = \'hook\''), 'f', 'a role that is not a superuser');
is(post_webhook($port, 'sandbox', checkout_event('tx-9', 'SUCCESS', 'ord-9'))->{status}, 200,
	'a checkout is stored (the statement does not use the shadowing =)');
is(sql('SELECT status FROM partner_svc.transactions'), 'SUCCESS', 'transactions updated');
is(sql('SELECT sc, sp, lt, ro, usr FROM public.seen'), 'on|pg_catalog, pg_temp|1500ms|off|hook',
	'synchronous_commit, search_path, lock_timeout and read-write pinned; connected as hook');
# a reload keeps them and applies a new lock timeout
sql("ALTER SYSTEM SET partner_svc.webhook_lock_timeout = '2s'; SELECT pg_reload_conf()");
ok(wait_for(sub {
	post_webhook($port, 'sandbox', order_event('ORDER_STATUS_CHANGED', 'CREATED', 'ord-' . int(rand(1e9))))->{status} == 200
	  && sql("SELECT lt FROM public.seen ORDER BY ctid DESC LIMIT 1") eq '2s' }, 30),
	'after a reload: the new lock_timeout');
is(sql("SELECT sc || ' ' || sp FROM public.seen ORDER BY ctid DESC LIMIT 1"), 'on pg_catalog, pg_temp',
	'after a reload: still pinned');
$node->stop;
done_testing();
