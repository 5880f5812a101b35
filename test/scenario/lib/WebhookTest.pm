# WebhookTest.pm: shared by the webhook scenario tests.  A throw-away
# cluster (PostgreSQL::Test::Cluster) that preloads partner_svc with the
# webhook worker listening on a free loopback port, the extension created
# in database postgres; small HTTP helpers.  Runs as the postgres user
# (run_tests.sh arranges that).
package WebhookTest;

use strict;
use warnings;
use Exporter 'import';
use HTTP::Tiny;
use IO::Socket::INET;
use JSON::PP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Time::HiRes qw(sleep time);

our @EXPORT = qw(webhook_node post_webhook order_event checkout_event wait_for
  worker_pid webhook_status);
our $JSON = JSON::PP->new->canonical;

# webhook_node(name, conf => "extra postgresql.conf lines"): ($node, $port)
sub webhook_node
{
	my ($name, %o) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);
	my $port = PostgreSQL::Test::Cluster::get_free_port();
	$node->init;
	$node->append_conf('postgresql.conf', <<"CONF" . ($o{conf} // ''));
shared_preload_libraries = 'partner_svc'
listen_addresses = '127.0.0.1'
partner_svc.webhook_port = $port
synchronous_commit = on
restart_after_crash = on
CONF
	$node->start;
	$node->safe_psql('postgres', 'CREATE EXTENSION partner_svc');
	$node->poll_query_until('postgres',
		"SELECT state = 'listening' FROM partner_svc.webhook_status()")
	  or die "the webhook worker does not listen";
	return ($node, $port);
}

# post_webhook(port, env_or_path, body, headers): HTTP::Tiny response
sub post_webhook
{
	my ($port, $path, $body, %h) = @_;
	$path = "/webhooks/$path" unless $path =~ m{^/};
	return HTTP::Tiny->new(timeout => 30)->request('POST', "http://127.0.0.1:$port$path",
		{ content => $body, headers => { 'Content-Type' => 'application/json', %h } });
}

# The JSON text of an order webhook as the sandbox sends it.
sub order_event
{
	my ($type, $status, $id, %o) = @_;
	my %p = (custom_id => $o{custom_id} // "C-$id", unique_id => $id, name => "vignette $id");
	$p{pdf_url} = $o{pdf_url} if $o{pdf_url};
	return JSON::PP->new->encode({ event_type => $type, status => $status, product => \%p });
}

sub checkout_event
{
	my ($txid, $status, @ids) = @_;
	return JSON::PP->new->encode({ transaction_id => $txid, event_type => 'CHECKOUT_STATUS_CHANGED',
		status => $status, products => [map { { custom_id => "C-$_", unique_id => $_, name => "v $_" } } @ids] });
}

# wait_for(CODE, SECONDS): polls CODE until true; its value or undef.
sub wait_for
{
	my ($code, $secs) = @_;
	my $deadline = time + ($secs // 30);
	while (time < $deadline)
	{
		my $v = $code->();
		return $v if $v;
		sleep 0.05;
	}
	return undef;
}

sub worker_pid
{
	my ($node) = @_;
	return $node->safe_psql('postgres',
		"SELECT pid FROM pg_stat_activity WHERE backend_type = 'partner_svc webhook worker'");
}

# webhook_status(node): hashref of partner_svc.webhook_status()
sub webhook_status
{
	my ($node) = @_;
	my $j = $node->safe_psql('postgres', 'SELECT row_to_json(s) FROM partner_svc.webhook_status() s');
	return $JSON->decode($j);
}

1;
