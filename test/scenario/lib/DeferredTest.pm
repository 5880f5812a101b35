# DeferredTest.pm: shared by the deferred-call scenarios (80_*.t).  A
# sandbox and a throw-away cluster that preloads partner_svc (its senders
# work in database postgres, the default of partner_svc.worker), with the
# extension, an orders server pointing at the sandbox and a user mapping
# for PUBLIC.  Runs as the postgres user, as test/scenario.sh arranges.
package DeferredTest;

use strict;
use warnings;
use Exporter 'import';
use FindBin;
use lib "$FindBin::Bin/../sandbox/lib";
use JSON::PP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Sandbox;
use Time::HiRes qw(sleep time);

our @EXPORT = qw(deferred_setup order_payload wait_done sender_pids sandbox_orders);

$ENV{SANDBOX_BIN} ||= (grep { -x } map { "$_/partner_svc_sandbox" } split /:/, $ENV{PATH})[0];

# deferred_setup(name, sandbox => [args], conf => "lines", tier => T,
#   keys => [more sandbox keys, KEY=TIER]): ($node, $sb)
sub deferred_setup
{
	my ($name, %o) = @_;
	my $tier = $o{tier} // 'premium';
	my $sb = Sandbox->start(keys => ["sandbox-key=$tier", @{ $o{keys} // [] }],
		args => $o{sandbox} // ['--time-scale', '0.01']);
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init(allows_streaming => $o{streaming} ? 1 : 0);
	$node->append_conf('postgresql.conf', <<"CONF" . ($o{conf} // ''));
shared_preload_libraries = 'partner_svc'
listen_addresses = '127.0.0.1'
restart_after_crash = on
max_connections = 60
max_worker_processes = 16
partner_svc.time_scale = 0.01
CONF
	$node->start;
	my $url = $sb->url;
	$node->safe_psql('postgres', qq{
CREATE EXTENSION partner_svc;
CREATE SERVER orders FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'orders', base_url '$url', tier '$tier');
CREATE USER MAPPING FOR PUBLIC SERVER orders OPTIONS (api_key 'sandbox-key');
});
	$sb->config({ 'orders.pending_after_min' => 100000 });
	return ($node, $sb);
}

# order_payload(custom_id): a paid order with one vignette, as JSON text
sub order_payload
{
	my ($cid) = @_;
	return JSON::PP->new->canonical->encode({
		terms_and_privacy_accepted => JSON::PP::true,
		order_has_been_paid => JSON::PP::true,
		vehicles => [ { plate => "LJ $cid", country => 'SI' } ],
		vignettes => [ { custom_id => $cid, name => 'Slovenia 1 year',
			period => '1_year', start_date => '2030-01-01' } ] });
}

# wait_done(node, where, seconds): true when no call matching where is
# queued or sending
sub wait_done
{
	my ($node, $where, $secs) = @_;
	$where //= 'true';
	my $deadline = time + ($secs // 60);
	while (time < $deadline)
	{
		my $n = $node->safe_psql('postgres',
			"SELECT count(*) FROM partner_svc.deferred_calls WHERE state IN ('queued', 'sending') AND ($where)");
		return 1 if $n == 0;
		sleep 0.05;
	}
	return 0;
}

sub sender_pids
{
	my ($node) = @_;
	return split /\n/, $node->safe_psql('postgres',
		"SELECT pid FROM pg_stat_activity WHERE backend_type = 'partner_svc deferred sender' ORDER BY pid");
}

# sandbox_orders(sb, prefix[, key]): { custom_id => count } of the orders the
# sandbox holds whose custom id starts with prefix (its own records, read
# through its admin route, outside the rate limits)
sub sandbox_orders
{
	my ($sb, $prefix, $key) = @_;
	my %n;
	my $r = $sb->req('GET', '/_sandbox/orders/transactions', key => $key // 'sandbox-key');
	die "transactions: $r->{status} $r->{body}" unless $r->{status} == 200;
	my $txs = ref $r->{json} eq 'HASH' ? ($r->{json}{data} // $r->{json}{transactions}) : $r->{json};
	for my $t (@$txs)
	{
		for my $o (@{ $t->{orders} })
		{
			my $cid = $o->{custom_id} // '';
			$n{$cid}++ if index($cid, $prefix) == 0;
		}
	}
	return \%n;
}

1;
