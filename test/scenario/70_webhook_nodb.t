# A missing database of partner_svc.worker right after a start (item 13 of
# "trust round three"): no client has connected yet, so the shared
# relcache init file is not there.  The worker that finds the database
# missing must look it up without reading pg_class (which needs a
# database): no "FATAL: cannot read pg_class without having selected a
# database", one FATAL for the missing database, and the documented
# warning; the same after a restart.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use WebhookTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(sleep);

my $node = PostgreSQL::Test::Cluster->new('nodb_catalog');
my $port = PostgreSQL::Test::Cluster::get_free_port();
$node->init;
$node->append_conf('postgresql.conf', <<"CONF");
shared_preload_libraries = 'partner_svc'
listen_addresses = '127.0.0.1'
partner_svc.webhook_port = $port
partner_svc.worker_database = 'hooks'
autovacuum = off
CONF

for my $round ('first start', 'after a restart')
{
	my $offset = (-e $node->logfile) ? -s $node->logfile : 0;
	$round eq 'first start' ? $node->start : $node->restart;
	# no client connects: the worker alone looks for the database
	my $log = '';
	my $found = wait_for(sub {
		$log = substr(slurp_file($node->logfile), $offset);
		$log =~ /WARNING:  partner_svc webhook worker cannot start: database "hooks" does not exist/ }, 30);
	ok($found, "$round: the documented warning") or diag $log;
	sleep(6);	# a FATAL every 5 s would show here
	$log = substr(slurp_file($node->logfile), $offset);
	unlike($log, qr/cannot read pg_class without having selected a database/,
		"$round: no FATAL for reading pg_class without a database");
	# (the stop before a restart ends the worker with "FATAL: terminating")
	my $fatals = () = $log =~ /FATAL:  (?!terminating)/g;
	cmp_ok($fatals, '<=', 1, "$round: at most the one FATAL of the missing database ($fatals)");
	# only now a client connects (webhook_status() needs the extension)
	$node->safe_psql('postgres', 'CREATE EXTENSION IF NOT EXISTS partner_svc');
	is(webhook_status($node)->{last_error}, 'database "hooks" does not exist',
		"$round: webhook_status() says why");
}

$node->stop;
done_testing();
