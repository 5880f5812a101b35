# 87_oauth_token.t: the OAuth2 access token of a partner account is
# fetched once for many sessions (issue 28, item 4).
#
#  1. Eight sessions start at once, each sending five requests to the
#     sandbox's translate routes (OAuth2 client credentials) through a
#     server of auth 'oauth2'.  The token route answers after 1 s (an
#     injected latency), so the sessions all want a token while the first
#     grant is under way: the sandbox receives one grant, and every one of
#     the forty requests carries a live token (no 401).
#  2. The token expires (the sandbox clock is advanced an hour): eight
#     sessions again, and again one grant between them.
#  3. Neither the client secret nor a token is in the server's log.
#
# Runs as the postgres user, with the installed extension and sandbox, the
# way test/scenario.sh runs every scenario test.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/../sandbox/lib";

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Sandbox;
use Test::More;

$ENV{SANDBOX_BIN} ||= (grep { -x } map { "$_/partner_svc_sandbox" } split /:/, $ENV{PATH})[0];

my $sb = Sandbox->start(keys => ['sandbox-key=standard'], args => [ '--seed', '3' ]);
my $url = $sb->url;

my $node = PostgreSQL::Test::Cluster->new('oauth');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'partner_svc'
max_connections = 30
log_min_messages = debug1
});
$node->start;

# the statement that holds the secret is not logged (the TAP framework
# logs every statement)
$node->safe_psql('postgres', qq{
SET log_statement = none;
CREATE EXTENSION partner_svc;
CREATE SERVER jobs FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'files', base_url '$url', auth 'oauth2',
           token_url '$url/oauth/token');
CREATE USER MAPPING FOR PUBLIC SERVER jobs
  OPTIONS (client_id 'client-sandbox-key', client_secret 'sandbox-key');
});

# psql in the background; returns the IPC::Run handle and its output
sub bg_psql
{
	my ($sql) = @_;
	my ($out, $err) = ('', '');
	my $h = IPC::Run::start(
		[ $node->installed_command('psql'), '-X', '-q', '-A', '-t',
		  '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('postgres'),
		  '-c', $sql ],
		'>', \$out, '2>', \$err);
	return { h => $h, out => \$out, err => \$err };
}

# request() is volatile: called once per row
my $five = q{SELECT count(*) FROM generate_series(1, 5) i
  WHERE jsonb_array_length(partner_svc.request('GET', '/jobs/translate/models',
                                               server => 'jobs') -> 'results') = 5};

# eight sessions at once, each five requests; checks what the sandbox got
sub eight_sessions
{
	my ($what) = @_;
	$sb->reset_stats;
	$sb->fault({ route => 'POST /oauth/token', kind => 'latency', value => 1000, count => 1 });
	my @procs = map { bg_psql($five) } 1 .. 8;
	$_->{h}->finish for @procs;
	$sb->clear_faults;
	my @failed = grep { $_->{h}->result(0) != 0 } @procs;
	is(scalar(@failed), 0, "$what: eight sessions ran without error")
	  or diag(join("\n", map { ${ $_->{err} } } @failed));
	is(join(',', map { ${ $_->{out} } =~ s/\s+//gr } @procs), join(',', (5) x 8),
		"$what: each session got five answers");
	my $reqs = $sb->requests;
	my @grants = grep { $_->{path} eq '/oauth/token' } @$reqs;
	my @routes = grep { $_->{path} eq '/jobs/translate/models' } @$reqs;
	is(scalar(@grants), 1, "$what: one grant for eight sessions");
	is(scalar(@routes), 40, "$what: forty requests sent");
	is(scalar(grep { $_->{status} != 200 } @routes), 0, "$what: none refused (no 401)");
	is(scalar(grep { ($_->{auth} // '') ne 'bearer:token' } @routes), 0,
		"$what: every request carried a live token");
}

eight_sessions('first token');

# an hour of sandbox time: the kept token has expired; the first session
# to send it gets a 401 and fetches the new one, the others wait for it
# or take it
$sb->_admin('POST', '/_sandbox/clock', { advance_ms => 3600000 });
$sb->reset_stats;
my @procs = map { bg_psql($five) } 1 .. 8;
$_->{h}->finish for @procs;
is(scalar(grep { $_->{h}->result(0) != 0 } @procs), 0, 'expired token: eight sessions ran without error')
  or diag(join("\n", map { ${ $_->{err} } } @procs));
my $reqs = $sb->requests;
my @grants = grep { $_->{path} eq '/oauth/token' } @$reqs;
my @ok = grep { $_->{path} eq '/jobs/translate/models' && $_->{status} == 200 } @$reqs;
my @refused = grep { $_->{path} eq '/jobs/translate/models' && $_->{status} == 401 } @$reqs;
is(scalar(@grants), 1, 'expired token: one new grant for eight sessions');
is(scalar(@ok), 40, 'expired token: forty requests answered');
ok(scalar(@refused) >= 1 && scalar(@refused) <= 8,
	'expired token: at most one refusal per session (' . scalar(@refused) . ')');

# the log: no secret and no token
my $log = slurp_file($node->logfile);
unlike($log, qr/sandbox-key/, 'the server log holds no client secret');
unlike($log, qr/sbat_/, 'the server log holds no access token');

$node->stop;
done_testing();
