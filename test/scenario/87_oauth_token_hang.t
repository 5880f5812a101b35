# 87_oauth_token_hang.t: an OAuth2 token grant waits as every other
# transfer does, so statement_timeout and Ctrl-C stop it promptly
# (issue 28, item 4).
#
# The server's token_url is a loopback socket that listens and never
# answers (the kernel completes the handshake; nothing is ever read or
# written), and its request_timeout is an hour: only the statement's own
# timeout can end the grant.
#  1. With statement_timeout 2s, request() fails with 57014 (canceling
#     statement due to statement timeout), not with a connection error,
#     and the session is usable after it.
#  2. The wait is the call module's: while the grant waits, the backend
#     shows the call module's wait event (pg_stat_activity), not a
#     blocking libcurl call (no wait event at all).
#
# Runs as the postgres user, with the installed extension, the way
# test/scenario.sh runs every scenario test.
use strict;
use warnings;

use IO::Socket::INET;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

# a token route that never answers
my $hang = IO::Socket::INET->new(LocalAddr => '127.0.0.1', LocalPort => 0,
	Proto => 'tcp', Listen => 5, ReuseAddr => 1)
  or die "could not listen on loopback: $!";
my $hang_port = $hang->sockport;

my $node = PostgreSQL::Test::Cluster->new('oauth_hang');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'partner_svc'
});
$node->start;

$node->safe_psql('postgres', qq{
SET log_statement = none;
CREATE EXTENSION partner_svc;
CREATE SERVER jobs FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'files', base_url 'http://127.0.0.1:$hang_port',
           auth 'oauth2', token_url 'http://127.0.0.1:$hang_port/oauth/token',
           connect_timeout '10min', request_timeout '1h');
CREATE USER MAPPING FOR PUBLIC SERVER jobs
  OPTIONS (client_id 'client-id', client_secret 'client-secret');
});

# 1. statement_timeout ends the grant with 57014
my ($ret, $out, $err) = $node->psql('postgres', q{
SET statement_timeout = '2s';
\set VERBOSITY verbose
SELECT partner_svc.request('GET', '/jobs/translate/models', server => 'jobs');
}, timeout => 300);
isnt($ret, 0, 'the request fails');
like($err, qr/ERROR:\s+57014: canceling statement due to statement timeout/,
	'the hanging token grant ends with statement_timeout (57014)');
unlike($err, qr/client-secret/, 'the error holds no client secret');
is($node->safe_psql('postgres', 'SELECT 1'), '1', 'the server is usable after it');

# 2. while the grant waits, the backend waits in the call module's wait
# event; a cancel (Ctrl-C) ends it
my ($bout, $berr) = ('', '');
my $h = IPC::Run::start(
	[ $node->installed_command('psql'), '-X', '-q', '-A', '-t',
	  '-d', $node->connstr('postgres'),
	  '-c', q{SET application_name = 'hang'; SELECT partner_svc.request('GET', '/jobs/translate/models', server => 'jobs')} ],
	'>', \$bout, '2>', \$berr);
my $seen = $node->poll_query_until('postgres', q{
SELECT count(*) = 1 FROM pg_stat_activity
 WHERE application_name = 'hang' AND wait_event_type = 'Extension'
   AND state = 'active'});
ok($seen, 'the grant waits in the call module\'s wait, an Extension wait event');
$node->safe_psql('postgres',
	q{SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name = 'hang'});
$h->finish;
like($berr, qr/canceling statement due to user request/, 'a cancel ends the grant');

$node->stop;
close($hang);
done_testing();
