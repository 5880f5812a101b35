# Webhook secrets: a rotation (old and new secret both accepted while the
# sender switches, the old one refused once removed) loses no delivery; and
# without a secret the worker refuses to listen on an address that is not
# loopback (it binds nothing and says why).  Only loopback traffic: the
# non-loopback address is a configuration value the worker must refuse.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use WebhookTest;
use IO::Socket::INET;
use POSIX ();
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(sleep time);

my ($node, $port) = webhook_node('secrets');
my $H = 'X-Partner-Webhook-Secret';
my ($old, $new) = ('old-secret-0123456789', 'new-secret-9876543210');
my $big = '{"x":"' . ('b' x 70000) . '"}';	# 413 when let in, 401 when not

sub set_conf
{
	my ($sql) = @_;
	$node->safe_psql('postgres', "$sql; SELECT pg_reload_conf()");
}
sub status_with
{
	my ($secret, $body) = @_;
	return post_webhook($port, 'sandbox', $body // $big, defined $secret ? ($H => $secret) : ())->{status};
}
sub events { $node->safe_psql('postgres', 'SELECT count(*) FROM partner_svc.webhook_events') }

# --- the old secret alone ---------------------------------------------------
set_conf("ALTER SYSTEM SET partner_svc.webhook_secret = '$old'");
ok(wait_for(sub { status_with(undef) == 401 }, 30), 'secret set: a delivery without it is 401');
is(status_with($old), 413, 'the secret lets a request in (413: too large, nothing stored)');
is(status_with($new), 401, 'the future secret is not accepted yet');

# --- rotation: a sender posts with the old secret throughout ---------------
my $okfile = "$PostgreSQL::Test::Utils::tmp_check/rotation_ok";
my $sender = fork // die "fork: $!";
if ($sender == 0)
{
	# posts with the old secret until told to switch (file "switch"), then
	# with the new one, until told to stop; records each id and status
	open(my $out, '>', $okfile) or die;
	$out->autoflush(1);
	my $i = 0;
	my $t_end = time + 60;
	while (time < $t_end && !-e "$okfile.stop")
	{
		my $secret = -e "$okfile.switch" ? $new : $old;
		my $id = sprintf('ord_rot_%04d', $i++);
		my $r = post_webhook($port, 'sandbox', order_event('ORDER_STATUS_CHANGED', 'CREATED', $id), $H => $secret);
		print $out "$id $r->{status} " . ($secret eq $new ? 'new' : 'old') . "\n";
		sleep 0.02;
	}
	close $out;
	POSIX::_exit(0);	# no END blocks of the test framework in the child
}
sleep 1;
# the receiver starts the rotation: new secret, old one still accepted
set_conf("ALTER SYSTEM SET partner_svc.webhook_secret = '$new, $old'");
ok(wait_for(sub { status_with($new) == 413 }, 30), 'rotation: the new secret is accepted');
is(status_with($old), 413, 'rotation: the old secret is still accepted');
is(status_with('old-secret-012345678'), 401, 'rotation: a prefix of the old secret is refused');
is(status_with($new . 'x'), 401, 'rotation: the new secret with an extra byte is refused');
is(status_with(undef), 401, 'rotation: no secret is refused');
sleep 1;
# the partner switches to the new secret
open(my $sw, '>', "$okfile.switch") or die;
close $sw;
sleep 1;
# the receiver ends the rotation
set_conf("ALTER SYSTEM SET partner_svc.webhook_secret = '$new'");
ok(wait_for(sub { status_with($old) == 401 }, 30), 'after the rotation the old secret is refused');
is(status_with($new), 413, 'after the rotation the new secret is accepted');
sleep 1;
open(my $st, '>', "$okfile.stop") or die;
close $st;
waitpid($sender, 0);

my @lines = do { open(my $in, '<', $okfile) or die; <$in> };
chomp @lines;
my @old_sent = grep { / old$/ } @lines;
my @new_sent = grep { / new$/ } @lines;
ok(@old_sent >= 10 && @new_sent >= 10, 'the sender posted with both secrets during the rotation')
  or diag(scalar(@old_sent) . ' old, ' . scalar(@new_sent) . ' new');
my @not_ok = grep { !/ 200 / } @lines;
is(scalar @not_ok, 0, 'no delivery of the sender was refused during the rotation')
  or diag(join("\n", @not_ok[0 .. ($#not_ok < 4 ? $#not_ok : 4)]));
is(events(), scalar @lines, 'every delivery of the sender is stored, once');
is($node->safe_psql('postgres',
	"SELECT count(DISTINCT unique_id) FROM partner_svc.webhook_events WHERE unique_id LIKE 'ord_rot_%'"),
	scalar @lines, 'each id once');

# --- the secrets are hidden ---------------------------------------------
$node->safe_psql('postgres', 'CREATE ROLE watcher LOGIN');
my ($ret, $out, $err) = $node->psql('postgres', 'SHOW partner_svc.webhook_secret',
	extra_params => ['-U', 'watcher']);
isnt($ret, 0, 'the secrets are hidden from roles that are not superuser');
($ret, $out, $err) = $node->psql('postgres',
	"SELECT setting FROM pg_settings WHERE name = 'partner_svc.webhook_secret'",
	extra_params => ['-U', 'watcher']);
unlike($out, qr/secret-/, 'pg_settings does not show them either');

# --- without a secret, only loopback addresses ----------------------------
set_conf("ALTER SYSTEM RESET partner_svc.webhook_secret");
ok(wait_for(sub { status_with(undef) == 413 }, 30), 'no secret: requests pass without the header (loopback address)');
my $log_at = -s $node->logfile;
set_conf("ALTER SYSTEM SET partner_svc.webhook_listen_address = '0.0.0.0'; ALTER SYSTEM SET partner_svc.webhook_port = $port");
ok(wait_for(sub { webhook_status($node)->{state} eq 'failed' }, 30),
	'0.0.0.0 without a secret: state failed');
my $s = webhook_status($node);
like($s->{last_error}, qr/refusing to listen on "0\.0\.0\.0": it is not a loopback address and partner_svc\.webhook_secret is not set/,
	'last_error says why');
ok(wait_for(sub { $node->log_contains(qr/WARNING:  partner_svc webhook worker cannot listen: refusing to listen on "0\.0\.0\.0"/, $log_at) }, 30),
	'and so does the log');
my $c = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $port, Proto => 'tcp', Timeout => 5);
ok(!$c, 'nothing is bound: 127.0.0.1 on the port refuses connections');
my $tcp = do { local (@ARGV, $/) = ('/proc/net/tcp', '/proc/net/tcp6'); <> } // '';
my $hexport = sprintf(':%04X ', $port);
my @listening = grep { /$hexport/ && / 0A / } split /\n/, $tcp;
is(scalar @listening, 0, 'no socket listens on the port (any address)');

set_conf("ALTER SYSTEM SET partner_svc.webhook_listen_address = '::'; ALTER SYSTEM SET partner_svc.webhook_port = $port");
ok(wait_for(sub { (webhook_status($node)->{last_error} // '') =~ /refusing to listen on "::"/ }, 30),
	':: without a secret is refused too');
set_conf("ALTER SYSTEM SET partner_svc.webhook_listen_address = '127.0.0.1'; ALTER SYSTEM SET partner_svc.webhook_port = $port");
ok(wait_for(sub { webhook_status($node)->{state} eq 'listening' }, 30),
	'back on 127.0.0.1 (loopback), no secret needed: listening');
is(status_with(undef, order_event('ORDER_STATUS_CHANGED', 'PENDING', 'ord_rot_0000')), 200,
	'and deliveries are accepted again');

$node->stop;
done_testing();
