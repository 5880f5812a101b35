# 52_retry_after_cap.t: a 429's Retry-After blocks a key for at most a
# day, in both of its forms.
#
# A loopback service answers every request 429: for ids with DATE with
# Retry-After as an HTTP date in 2100, for ids with SECS with 99999999
# seconds.  Neither blocks its key for more than one day (the cap of
# src/call/http_attempt.c); before, the date blocked the route until 2100.
#
# Runs as the postgres user, with the installed extension, the way
# test/scenario.sh runs every scenario test.
use strict;
use warnings;

use IO::Socket::INET;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $listener = IO::Socket::INET->new(
	LocalAddr => '127.0.0.1',
	LocalPort => 0,
	Listen => 16,
	ReuseAddr => 1) or die "listen: $!";
my $port = $listener->sockport;
my $pid = fork() // die "fork: $!";
if ($pid == 0)
{
	# bounded: at most 50 connections and 60 s
	alarm 60;
	for (1 .. 50)
	{
		my $c = $listener->accept or next;
		my $line = <$c> // '';
		while (my $h = <$c>) { last if $h =~ /^\r?\n$/; }
		my $after = $line =~ /DATE/ ? 'Fri, 01 Jan 2100 00:00:00 GMT' : '99999999';
		print $c "HTTP/1.1 429 Too Many Requests\r\nRetry-After: $after\r\n"
		  . "Content-Length: 0\r\nConnection: close\r\n\r\n";
		close $c;
	}
	exit 0;
}
close $listener;

my $node = PostgreSQL::Test::Cluster->new('retry_after');
$node->init;
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'partner_svc'\n");
$node->start;
$node->safe_psql('postgres', qq{
CREATE EXTENSION partner_svc;
CREATE SERVER orders FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'orders', base_url 'http://127.0.0.1:$port');
CREATE USER MAPPING FOR PUBLIC SERVER orders OPTIONS (api_key 'k');
IMPORT FOREIGN SCHEMA orders FROM SERVER orders INTO public;
});

for my $id (qw(DATE-1 SECS-1))
{
	my ($rc, $out, $err) = $node->psql('postgres', qq{
SET partner_svc.max_retries = 0;
SELECT count(*) FROM orders WHERE custom_id = '$id';});
	like($err, qr/429/, "$id: the 429 fails the request");
	is($node->safe_psql('postgres', qq{
SELECT blocked_until > now() + interval '23 hours'
   AND blocked_until <= now() + interval '1 day 1 minute'
FROM partner_svc.rate_limits WHERE resource = '$id'}), 't',
		"$id: the key is blocked for a day, no longer");
}

$node->stop;
kill 'TERM', $pid;
waitpid($pid, 0);
done_testing();
