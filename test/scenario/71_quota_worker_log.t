# The quota worker's log lines (item 14 of "trust round three"):
# - a NOTICE the coordinator sends (here from a trigger on quota_windows)
#   reaches the node's log through the server's logging, with its
#   log_line_prefix, not as a bare line on stderr;
# - the DETAIL of "coordinator unreachable" has no doubled full stop after
#   libpq's message (which ends with its own punctuation).
# - a multi-host coordinator string whose first host hangs (accepts and
#   never answers): leases come from the second host within the per-host
#   deadline plus one backoff (item 12).
# The node is its own coordinator, as in 60_fleet_quota.t.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/../sandbox/lib";
use lib "$FindBin::Bin/lib";

use IO::Socket::INET;
use JSON::PP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Sandbox;
use Test::More;
use Time::HiRes qw(time sleep);

$ENV{SANDBOX_BIN} ||= (grep { -x } map { "$_/partner_svc_sandbox" } split /:/, $ENV{PATH})[0];
my $sb = Sandbox->start(keys => ['sandbox-key=standard'], args => [ '--seed', '7' ]);

my $node = PostgreSQL::Test::Cluster->new('quota_log');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'partner_svc'
partner_svc.connect_timeout = 2000
partner_svc.request_timeout = 5000
log_line_prefix = 'PFX %m [%p] '
});
$node->start;
my $self_conn = 'host=' . $node->host . ' port=' . $node->port . ' dbname=postgres';
my $url = $sb->url;
$node->safe_psql('postgres', qq{
CREATE EXTENSION partner_svc;
CREATE SERVER orders FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'orders', base_url '$url');
CREATE USER MAPPING FOR PUBLIC SERVER orders OPTIONS (api_key 'sandbox-key');
CREATE FUNCTION public.chatty() RETURNS trigger LANGUAGE plpgsql AS
\$\$BEGIN RAISE NOTICE 'coordinator says hello to %', NEW.key; RETURN NEW; END\$\$;
CREATE TRIGGER chatty BEFORE INSERT OR UPDATE ON partner_svc.quota_windows
  FOR EACH ROW EXECUTE FUNCTION public.chatty();
});
my $r = $sb->req('POST', '/public/orders', key => 'sandbox-key', json => {
	terms_and_privacy_accepted => JSON::PP::true,
	order_has_been_paid => JSON::PP::true,
	vehicles => [ { plate => 'LJ QL-1', country => 'SI' } ],
	vignettes => [ { custom_id => 'QL-1', name => 'Slovenia 1 year',
		period => '1_year', start_date => '2026-01-01' } ] });
die "create order: $r->{status} $r->{body}" unless $r->{status} == 201;

sub poll_status
{
	$node->psql('postgres', "SELECT partner_svc.order_status('QL-1', 'orders')");
}

# --- the coordinator's notices go through the log, with the prefix ---
$node->append_conf('postgresql.conf', "partner_svc.quota_coordinator = '$self_conn'\n");
$node->reload;
my $log = '';
my $ok = 0;
my $deadline = time + 60;
while (time < $deadline)
{
	poll_status();
	$log = slurp_file($node->logfile);
	if ($log =~ /coordinator says hello to [0-9a-f]{32}\|GET \/public\/orders/) { $ok = 1; last; }
	sleep 0.5;
}
ok($ok, 'the coordinator sent its notice') or diag $log;
sleep 0.5;
$log = slurp_file($node->logfile);
my @lines = grep { /coordinator says hello to [0-9a-f]{32}\|GET \/public\/orders/ } split /\n/, $log;
my @bare = grep { !/^PFX / } @lines;
ok(@lines > 0 && @bare == 0, 'every notice line of the worker carries the log prefix')
  or diag join("\n", @lines);

# --- coordinator unreachable: one full stop after libpq's message ---
my $dead = PostgreSQL::Test::Cluster::get_free_port();
$node->safe_psql('postgres', "ALTER SYSTEM SET partner_svc.quota_coordinator = 'host=127.0.0.1 port=$dead dbname=postgres'");
$node->reload;
$deadline = time + 60;
$ok = 0;
while (time < $deadline)
{
	poll_status();
	$log = slurp_file($node->logfile);
	if ($log =~ /DETAIL:  connecting to the quota coordinator: [^\n]*port $dead[^\n]*/) { $ok = 1; last; }
	sleep 0.5;
}
ok($ok, 'the fallback is logged with a DETAIL') or diag $log;
my ($detail) = $log =~ /(DETAIL:  connecting to the quota coordinator: [^\n]*port $dead[^\n]*)/;
$detail //= '';
unlike($detail, qr/[.?!]\s*\.\s/, 'no doubled full stop in the DETAIL') or diag $detail;
like($detail, qr/[.?!]  The share is used from /, 'the DETAIL goes on with the share');

# --- item 12: a multi-host coordinator whose first host hangs ---
# The first host accepts the connection (the kernel does, for the backlog
# of a socket nobody accepts on) and never answers.  Each host has its own
# deadline (connect_timeout, 2 s here), so the worker reaches the second
# host, this node, within that deadline plus one backoff (1 s).
$node->safe_psql('postgres', "ALTER SYSTEM SET partner_svc.quota_coordinator = ''");
$node->reload;
ok($node->poll_query_until('postgres', "SELECT mode = 'local' FROM partner_svc.quota_status()"),
	'coordinator emptied: the node is local again');
my $hang = IO::Socket::INET->new(LocalAddr => '127.0.0.1', LocalPort => 0,
	Listen => 16, Proto => 'tcp', ReuseAddr => 1) or die "listen: $!";
my $hang_port = $hang->sockport;
my $multi = "host=127.0.0.1," . $node->host . " port=$hang_port," . $node->port
  . " dbname=postgres target_session_attrs=read-write";
$node->safe_psql('postgres', "ALTER SYSTEM SET partner_svc.quota_coordinator = '$multi'");
$node->reload;
my $t0 = time;
my $leased_after;
$deadline = time + 40;
while (time < $deadline)
{
	poll_status();
	if ($node->safe_psql('postgres', 'SELECT mode FROM partner_svc.quota_status()') eq 'leased')
	{
		$leased_after = time - $t0;
		last;
	}
	sleep 0.2;
}
ok(defined $leased_after, 'first host hangs: leases come from the second host')
  or diag $node->safe_psql('postgres', 'SELECT * FROM partner_svc.quota_status()');
cmp_ok($leased_after // 999, '<', 2 + 1 + 4,
	'within the per-host deadline (2 s) plus one backoff (1 s), and a little slack');
my ($ok_calls) = $node->psql('postgres', "SELECT partner_svc.order_status('QL-1', 'orders') IS NOT NULL");
is($ok_calls, 0, 'a limited request is served with a leased unit');
close $hang;

$node->stop;
$sb->stop if $sb->can('stop');
done_testing();
