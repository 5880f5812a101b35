# 53_limiter_room.t: another role cannot take the limiter's key table from
# a role's plain routes (trust round three, item 2).
#
# max_keys = 16, one-minute windows, so nothing falls idle during the test.
#  1. Role "intruder", with USAGE on the wrapper, makes 17 servers with keys
#     of its own against the sandbox and reads a plain route (GET
#     /public/orders) through 16 of them: the table is full of its keys, and
#     the 17th fails with 53400 (the intruder holds the whole table).
#  2. Role "victim" reads a plain route through its own server: it finds
#     room (the intruder's least recently used key is evicted), and so do
#     its next reads on more accounts, up to its fair share of 8 keys; the
#     9th fails with 53400, as the victim then holds as many as the intruder.
#  3. The intruder, continuing, gets 53400 for itself only; the victim's
#     routes keep working.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/../sandbox/lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Sandbox;
use Test::More;

$ENV{SANDBOX_BIN} ||= (grep { -x } map { "$_/partner_svc_sandbox" } split /:/, $ENV{PATH})[0];

my $sb = Sandbox->start(keys => [ (map { "key-i$_=standard" } 1 .. 17),
	(map { "key-v$_=standard" } 1 .. 9) ]);

my $node = PostgreSQL::Test::Cluster->new('limiter_room');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'partner_svc'
partner_svc.max_keys = 16
});
$node->start;

my $url = $sb->url;
$node->safe_psql('postgres', q{
CREATE EXTENSION partner_svc;
CREATE ROLE intruder LOGIN;
CREATE ROLE victim LOGIN;
GRANT USAGE ON FOREIGN DATA WRAPPER partner_svc TO intruder, victim;
GRANT CREATE ON SCHEMA public TO intruder, victim;
GRANT USAGE ON SCHEMA partner_svc TO intruder, victim;});

# servers, mappings and tables of one role: one account (key) each
sub make_servers
{
	my ($role, $prefix, $n) = @_;
	my $sql = '';
	for my $i (1 .. $n)
	{
		$sql .= qq{CREATE SERVER $prefix$i FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'orders', base_url '$url');
CREATE USER MAPPING FOR CURRENT_USER SERVER $prefix$i OPTIONS (api_key 'key-$prefix$i');
CREATE FOREIGN TABLE $prefix$i (id text) SERVER $prefix$i OPTIONS (resource 'orders');
};
	}
	$node->safe_psql('postgres', "SET ROLE $role;\n$sql");
}
make_servers('intruder', 'i', 17);
make_servers('victim', 'v', 9);

sub read_as
{
	my ($role, $table) = @_;
	return $node->psql('postgres', "SET ROLE $role; SELECT count(*) FROM $table");
}

# ---------------------------------------------------------------------
# 1. the intruder fills the table
# ---------------------------------------------------------------------
my $fails = 0;
for my $i (1 .. 16)
{
	my ($rc, $out, $err) = read_as('intruder', "i$i");
	$fails++ if $rc != 0;
}
is($fails, 0, 'the intruder reads a plain route through 16 accounts');
my $got = $node->safe_psql('postgres', 'SELECT count(*) FROM partner_svc.rate_limits');
is($got, '16', 'the key table is full');
my ($rc, $out, $err) = read_as('intruder', 'i17');
like($err, qr/ERROR:  rate limiter of partner_svc has no room for GET \/public\/orders on server "i17"/,
	'the intruder, holding the whole table, gets no room for a 17th account');

# ---------------------------------------------------------------------
# 2. the victim still finds room, up to its share
# ---------------------------------------------------------------------
($rc, $out, $err) = read_as('victim', 'v1');
is($rc, 0, 'the victim reads a plain route of its own account: no 53400')
  or diag($err);
unlike($err, qr/no room/, '... and no error about room');
$fails = 0;
for my $i (2 .. 8)
{
	($rc, $out, $err) = read_as('victim', "v$i");
	$fails++ if $rc != 0;
}
is($fails, 0, 'the victim gets room for 8 accounts, its fair share of 16 keys');
($rc, $out, $err) = read_as('victim', 'v9');
like($err, qr/ERROR:  rate limiter of partner_svc has no room for GET \/public\/orders on server "v9"/,
	'a 9th account of the victim finds no room: it holds as many keys as the intruder');
$got = $node->safe_psql('postgres', q{
SELECT count(*) FILTER (WHERE server LIKE 'v%'), count(*) FILTER (WHERE server LIKE 'i%')
FROM partner_svc.rate_limits});
is($got, '8|8', 'the table holds 8 keys of each role');

# ---------------------------------------------------------------------
# 3. the intruder, continuing, is refused alone
# ---------------------------------------------------------------------
($rc, $out, $err) = read_as('intruder', 'i17');
like($err, qr/no room for GET \/public\/orders on server "i17"/,
	'the intruder, continuing, gets 53400');
($rc, $out, $err) = read_as('intruder', 'i1');
like($err, qr/no room for GET \/public\/orders on server "i1"/,
	'... also for an account whose key was evicted');
$fails = 0;
for my $i (1 .. 8)
{
	($rc, $out, $err) = read_as('victim', "v$i");
	$fails++ if $rc != 0;
}
is($fails, 0, "the victim's 8 accounts keep working");
unlike($out . $err, qr/key-/, 'no API key in any output');

$node->stop;
$sb->stop;
done_testing();
