# 60_tls_proxy.t: the proxy and TLS options of a server, end to end.
#
#  1. The cluster runs with http_proxy, HTTPS_PROXY, ALL_PROXY (and their
#     other spellings) pointing at a recording listener on loopback.  A
#     server without the option "proxy" ignores them: the requests reach
#     the sandbox, the listener sees no connection.
#  2. proxy = the listener's URL: the requests go to it (absolute-form
#     request line); proxy = 'environment': libcurl's variables apply.
#  3. TLS with verification on: a TLS front (socat) on loopback, with a
#     certificate made here by openssl for 127.0.0.1 and localhost, relays
#     to the sandbox.  ssl_ca_file = the CA that signed it succeeds; a
#     wrong CA, or none (the system's), is refused with 08001 and a message
#     on certificate verification; the key is in no message.
#     A certificate of the right CA for another host name is refused too.
#  4. Client certificates: a front that requires one refuses a server
#     without ssl_cert_file and accepts one with the certificate and key.
#     (With TLS 1.3 the refusal arrives after the handshake, as an alert on
#     the first read, so libcurl reports it as a lost connection: 08006.)
#     And connect_timeout, the server's or the parameter's, limits a TLS
#     handshake that never gets an answer.
#
# Runs as the postgres user, with the installed extension and sandbox, the
# way test/scenario.sh runs every scenario test.  Needs openssl and socat.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/../sandbox/lib";

use File::Temp qw(tempdir);
use IO::Socket::INET;
use IPC::Run;
use POSIX qw(:sys_wait_h);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Sandbox;
use Test::More;
use Time::HiRes qw(time sleep);

$ENV{SANDBOX_BIN} ||= (grep { -x } map { "$_/partner_svc_sandbox" } split /:/, $ENV{PATH})[0];

my $dir = tempdir(CLEANUP => 1);
my $sb = Sandbox->start(keys => ['sandbox-key=standard'], args => [ '--seed', '1' ]);
my $sbport = $sb->port;

# --------------------------------------------------------------------------
# A recording listener on loopback: logs the request line of every
# connection (and whether it carried an Authorization header), answers 502
# and closes.  Lives at most 300 s.
# --------------------------------------------------------------------------
sub start_recorder
{
	my ($log) = @_;
	my $sock = IO::Socket::INET->new(LocalAddr => '127.0.0.1', LocalPort => 0,
		Listen => 16, ReuseAddr => 1, Proto => 'tcp') or die "listen: $!";
	my $port = $sock->sockport;
	my $pid = fork() // die "fork: $!";
	if ($pid == 0)
	{
		my $deadline = time + 300;
		$sock->timeout(1);
		while (time < $deadline)
		{
			my $c = $sock->accept or next;
			my $head = '';
			my $until = time + 5;
			$c->blocking(0);
			while (time < $until && $head !~ /\r\n\r\n/)
			{
				my $n = sysread($c, my $buf, 4096);
				if (defined $n && $n == 0) { last }
				if (defined $n) { $head .= $buf } else { sleep 0.01 }
			}
			my ($line) = split /\r\n/, $head;
			my $auth = $head =~ /^authorization:/mi ? 'auth' : 'noauth';
			open(my $fh, '>>', $log) or die;
			print $fh ($line // '(nothing)') . " $auth\n";
			close $fh;
			my $body = '{"error":{"code":"recorder","message":"recorded"}}';
			$c->blocking(1);
			print $c "HTTP/1.1 502 Bad Gateway\r\nContent-Type: application/json\r\n"
			  . "Content-Length: " . length($body) . "\r\nConnection: close\r\n\r\n$body";
			close $c;
		}
		POSIX::_exit(0);
	}
	close $sock;
	return ($pid, $port);
}

sub slurp_lines
{
	my ($f) = @_;
	open(my $fh, '<', $f) or return ();
	my @l = <$fh>;
	chomp @l;
	return @l;
}

my $reclog = "$dir/recorder.log";
my ($recpid, $recport) = start_recorder($reclog);
my @fronts;

# children go with the script, also when it dies half-way
END
{
	kill 'TERM', $recpid if $recpid;
	$_->kill_kill for @fronts;
}
my $recurl = "http://127.0.0.1:$recport";

# --------------------------------------------------------------------------
# The cluster, started with every proxy variable libcurl reads pointing at
# the recorder (set for pg_ctl only: this script's HTTP::Tiny reads them too)
# --------------------------------------------------------------------------
my $node = PostgreSQL::Test::Cluster->new('tls_proxy');
$node->init;
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'partner_svc'\npartner_svc.max_retries = 0\n");
{
	local %ENV = %ENV;
	delete @ENV{qw(no_proxy NO_PROXY)};
	$ENV{$_} = $recurl for qw(http_proxy HTTP_PROXY https_proxy HTTPS_PROXY all_proxy ALL_PROXY);
	$node->start;
}

my $url = $sb->url;
$node->safe_psql('postgres', qq{
CREATE EXTENSION partner_svc;
CREATE SERVER movies FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'movies', base_url '$url');
CREATE USER MAPPING FOR PUBLIC SERVER movies OPTIONS (api_key 'sandbox-key');
CREATE FOREIGN TABLE movie_themes (movie text, "position" int, title text)
  SERVER movies OPTIONS (resource 'movie_themes');
});

# psql: (rc, stdout, stderr)
sub psql
{
	my ($sql) = @_;
	my ($out, $err) = ('', '');
	my $rc = $node->psql('postgres', $sql, stdout => \$out, stderr => \$err,
		extra_params => [ '-v', 'VERBOSITY=verbose' ]);
	return ($rc, $out, $err);
}

my $summary = q{SELECT partner_svc.movie_summary('inception', server => 'movies') LIKE '%Cobb%'};

# 1. the environment's proxies are ignored
$sb->reset_stats;
my ($rc, $out, $err) = psql($summary);
is($out, 't', 'function call with proxy variables set: answered by the sandbox') or diag $err;
($rc, $out, $err) = psql(q{SELECT count(*) FROM movie_themes WHERE movie = 'inception'});
is($out, '5', 'foreign scan with proxy variables set: answered by the sandbox') or diag $err;
is($sb->count('GET /v1/movies/{movie}/content/summary'), 1, 'the sandbox got the function call');
is($sb->count('GET /v1/movies/{movie}/content/themes'), 1, 'the sandbox got the scan');
sleep 0.2;
is_deeply([ slurp_lines($reclog) ], [], 'the proxy of the environment saw no connection');

# 2. an explicit proxy is used; "environment" follows the variables
$node->safe_psql('postgres', "ALTER SERVER movies OPTIONS (ADD proxy '$recurl')");
($rc, $out, $err) = psql($summary);
like($err, qr/ERROR:  HV00N: GET \/v1\/movies\/\{movie\}\/content\/summary failed with HTTP status 502/,
	'with proxy set, the request is answered by the proxy');
my @lines = slurp_lines($reclog);
is(scalar(@lines), 1, 'the proxy saw one request');
is($lines[0] // '', "GET http://127.0.0.1:$sbport/v1/movies/inception/content/summary HTTP/1.1 auth",
	'the proxy got the absolute-form request');
unlike($err, qr/sandbox-key/, 'the key is not in the error');

unlink $reclog;
$node->safe_psql('postgres', "ALTER SERVER movies OPTIONS (SET proxy 'environment')");
($rc, $out, $err) = psql(q{SELECT count(*) FROM movie_themes WHERE movie = 'inception'});
like($err, qr/failed with HTTP status 502/, "proxy 'environment': libcurl's variables apply");
@lines = slurp_lines($reclog);
like($lines[0] // '', qr{^GET http://127\.0\.0\.1:$sbport/v1/movies/inception/content/themes\?limit=100 HTTP/1\.1},
	'the proxy of the environment got the scan');

# a proxy that does not answer: the hint names the option
my $closed = PostgreSQL::Test::Cluster::get_free_port();
$node->safe_psql('postgres', "ALTER SERVER movies OPTIONS (SET proxy 'http://127.0.0.1:$closed')");
($rc, $out, $err) = psql($summary);
like($err, qr/ERROR:  HV00N: could not connect to server "movies"/, 'a proxy that is down: HV00N');
like($err, qr/HINT:  Check the options base_url and proxy of server "movies"/, 'the hint names the proxy option');

unlink $reclog;
$node->safe_psql('postgres', "ALTER SERVER movies OPTIONS (DROP proxy)");
($rc, $out, $err) = psql($summary);
is($out, 't', 'without the option again: straight to the sandbox') or diag $err;
is_deeply([ slurp_lines($reclog) ], [], 'and the proxy saw nothing');

# --------------------------------------------------------------------------
# 3. TLS.  Certificates: a CA, a server certificate it signs (127.0.0.1 and
# localhost), another CA that signed nothing of ours, a client CA and a
# client certificate it signs.
# --------------------------------------------------------------------------
sub openssl
{
	my @cmd = ('openssl', @_);
	my ($o, $e) = ('', '');
	IPC::Run::run(\@cmd, '<', \undef, '>', \$o, '2>', \$e)
	  or die "openssl @_ failed: $e";
}

sub make_ca
{
	my ($name) = @_;
	openssl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1',
		'-nodes', '-keyout', "$dir/$name.key", '-out', "$dir/$name.pem", '-days', '2',
		'-subj', "/CN=partner_svc test $name");
}

sub make_cert
{
	my ($name, $ca, $cn, $ext) = @_;
	open(my $fh, '>', "$dir/$name.ext") or die;
	print $fh "$ext\n";
	close $fh;
	openssl('req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
		'-keyout', "$dir/$name.key", '-out', "$dir/$name.csr", '-subj', "/CN=$cn");
	openssl('x509', '-req', '-in', "$dir/$name.csr", '-CA', "$dir/$ca.pem",
		'-CAkey', "$dir/$ca.key", '-CAcreateserial', '-out', "$dir/$name.pem",
		'-days', '2', '-extfile', "$dir/$name.ext");
}

make_ca('ca');
make_ca('wrong_ca');
make_ca('client_ca');
make_cert('server', 'ca', 'localhost',
	"subjectAltName = IP:127.0.0.1, DNS:localhost\nextendedKeyUsage = serverAuth");
make_cert('client', 'client_ca', 'partner_svc client', 'extendedKeyUsage = clientAuth');
make_cert('other', 'ca', 'other.invalid',
	"subjectAltName = DNS:other.invalid\nextendedKeyUsage = serverAuth");

# A TLS front on loopback that relays to the sandbox: socat, one child per
# connection.  verify=1 asks for a client certificate signed by client_ca.

sub start_front
{
	my ($verify, $cert) = @_;
	$cert //= 'server';
	my $port = PostgreSQL::Test::Cluster::get_free_port();
	my $listen = "OPENSSL-LISTEN:$port,bind=127.0.0.1,reuseaddr,fork,"
	  . "cert=$dir/$cert.pem,key=$dir/$cert.key,cafile=$dir/client_ca.pem,verify=$verify";
	my $h = IPC::Run::start([ 'socat', $listen, "TCP:127.0.0.1:$sbport" ],
		'<', \undef, '>', "$dir/socat_$port.out", '2>', "$dir/socat_$port.err");
	push @fronts, $h;
	my $deadline = time + 10;
	while (time < $deadline)
	{
		my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $port, Proto => 'tcp');
		if ($s) { close $s; return $port }
		sleep 0.05;
	}
	die "socat did not listen on $port";
}

my $tls_port = start_front(0);
my $mtls_port = start_front(1);
my $other_port = start_front(0, 'other');

my $tls_sql = '';
for my $s ([ 'tls_ok', "https://127.0.0.1:$tls_port", "ssl_ca_file '$dir/ca.pem'" ],
	[ 'tls_localhost', "https://localhost:$tls_port", "ssl_ca_file '$dir/ca.pem'" ],
	[ 'tls_wrong', "https://127.0.0.1:$tls_port", "ssl_ca_file '$dir/wrong_ca.pem'" ],
	[ 'tls_system', "https://127.0.0.1:$tls_port", undef ],
	[ 'tls_other_name', "https://127.0.0.1:$other_port", "ssl_ca_file '$dir/ca.pem'" ],
	[ 'mtls_nocert', "https://127.0.0.1:$mtls_port", "ssl_ca_file '$dir/ca.pem'" ],
	[ 'mtls_cert', "https://127.0.0.1:$mtls_port",
		"ssl_ca_file '$dir/ca.pem', ssl_cert_file '$dir/client.pem', ssl_key_file '$dir/client.key'" ])
{
	my ($name, $base, $opts) = @$s;
	$tls_sql .= "CREATE SERVER $name FOREIGN DATA WRAPPER partner_svc OPTIONS (service 'movies', "
	  . "base_url '$base', max_retries '0'" . ($opts ? ", $opts" : '') . ");\n"
	  . "CREATE USER MAPPING FOR PUBLIC SERVER $name OPTIONS (api_key 'sandbox-key');\n";
}
$node->safe_psql('postgres', $tls_sql);

sub summary_on
{
	my ($server) = @_;
	return psql("SELECT partner_svc.movie_summary('inception', server => '$server') LIKE '%Cobb%'");
}

$sb->reset_stats;
($rc, $out, $err) = summary_on('tls_ok');
is($out, 't', 'TLS with the right CA: answered through the TLS front') or diag $err;
($rc, $out, $err) = summary_on('tls_localhost');
is($out, 't', 'TLS to localhost: the name in the certificate matches') or diag $err;
is($sb->count('GET /v1/movies/{movie}/content/summary'), 2, 'the sandbox got both requests');
($rc, $out, $err) = psql("CREATE FOREIGN TABLE tls_themes (movie text, \"position\" int) SERVER tls_ok "
	  . "OPTIONS (resource 'movie_themes'); SELECT count(*) FROM tls_themes WHERE movie = 'inception'");
is($out, '5', 'a foreign scan over TLS') or diag $err;

($rc, $out, $err) = summary_on('tls_wrong');
isnt($rc, 0, 'TLS with a wrong CA fails');
like($err, qr/ERROR:  08001: certificate verification failed for server "tls_wrong" during GET \/v1\/movies\/\{movie\}\/content\/summary/,
	'a wrong CA: 08001, certificate verification failed');
like($err, qr/DETAIL:  libcurl reported: SSL certificate problem/, 'the detail gives the reason');
like($err, qr/HINT:  .*ssl_ca_file option of server "tls_wrong"/, 'the hint names the option');
unlike($err, qr/sandbox-key/, 'the key is not in the error');

($rc, $out, $err) = summary_on('tls_system');
like($err, qr/ERROR:  08001: certificate verification failed for server "tls_system"/,
	'without ssl_ca_file the system CAs do not trust the test CA: verification is on');

# a certificate of the right CA for another name: the host is checked too
($rc, $out, $err) = summary_on('tls_other_name');
like($err, qr/ERROR:  08001: certificate verification failed for server "tls_other_name"/,
	'a certificate for another host name is refused');
like($err, qr/DETAIL:  libcurl reported: .*host name/, 'the detail says the name does not match');

# connect_timeout covers the TLS handshake: a listener that never accepts
# (the kernel completes the TCP handshake) and never answers the TLS hello
my $silent = IO::Socket::INET->new(LocalAddr => '127.0.0.1', LocalPort => 0,
	Listen => 16, Proto => 'tcp') or die "listen: $!";
my $silent_port = $silent->sockport;
$node->safe_psql('postgres',
	"CREATE SERVER silent FOREIGN DATA WRAPPER partner_svc OPTIONS (service 'movies', "
	  . "base_url 'https://127.0.0.1:$silent_port', ssl_ca_file '$dir/ca.pem', connect_timeout '300ms'); "
	  . "CREATE USER MAPPING FOR PUBLIC SERVER silent OPTIONS (api_key 'sandbox-key')");
($rc, $out, $err) = psql("SET partner_svc.connect_timeout = '20s'; "
	  . "SELECT partner_svc.movie_summary('inception', server => 'silent')");
like($err, qr/ERROR:  HV00N: could not connect to server "silent" for GET \/v1\/movies\/\{movie\}\/content\/summary within 300 ms/,
	"the server's connect_timeout wins over the parameter");
like($err, qr/HINT:  The limit is set by the connect_timeout option of server "silent"/, 'the hint names the option');
$node->safe_psql('postgres', "ALTER SERVER silent OPTIONS (DROP connect_timeout)");
($rc, $out, $err) = psql("SET partner_svc.connect_timeout = '200ms'; "
	  . "SELECT partner_svc.movie_summary('inception', server => 'silent')");
like($err, qr/could not connect to server "silent" for GET \S+ within 200 ms/,
	'without the option, partner_svc.connect_timeout applies');
close $silent;

# 4. client certificates
($rc, $out, $err) = summary_on('mtls_nocert');
isnt($rc, 0, 'a front that requires a client certificate refuses a server without one');
like($err, qr/ERROR:  (08001|08006): /, 'as a connection failure') or diag $err;
unlike($err, qr/sandbox-key/, 'the key is not in the error');
($rc, $out, $err) = summary_on('mtls_cert');
is($out, 't', 'with ssl_cert_file and ssl_key_file the front accepts the client') or diag $err;

# a missing CA file is reported, naming the problem
$node->safe_psql('postgres', "ALTER SERVER tls_ok OPTIONS (SET ssl_ca_file '$dir/no_such_ca.pem')");
($rc, $out, $err) = summary_on('tls_ok');
like($err, qr/ERROR:  08001: /, 'a missing CA file: 08001') or diag $err;
like($err, qr/no_such_ca\.pem|certificate/i, 'the error names the CA file or the certificate problem');

is_deeply([ slurp_lines($reclog) ], [], 'no TLS request went to the proxy of the environment');

$node->stop;
$_->kill_kill for @fronts;
@fronts = ();
kill 'TERM', $recpid;
waitpid($recpid, 0);
$recpid = undef;
$sb->stop;
done_testing();
