# Sandbox.pm: starts a partner_svc_sandbox on a free loopback port for one
# test file and talks HTTP to it.  Core Perl only (HTTP::Tiny, JSON::PP), so
# the suite needs nothing beyond Debian's perl.
package Sandbox;

use strict;
use warnings;
use File::Temp qw(tempdir);
use FindBin;
use HTTP::Tiny;
use JSON::PP;
use POSIX qw(:sys_wait_h);
use Time::HiRes qw(sleep time);

our $JSON = JSON::PP->new->canonical->allow_nonref;

sub binary
{
	return $ENV{SANDBOX_BIN} if $ENV{SANDBOX_BIN};
	return "$FindBin::Bin/../../../src/sandbox/partner_svc_sandbox";
}

# Sandbox->start(keys => [...], args => [...], env => {...}): waits until it
# answers; env sets variables of the sandbox's environment only.
sub start
{
	my ($class, %o) = @_;
	my $dir = tempdir(CLEANUP => 1);
	my @cmd = (binary(), '--port', '0', '--port-file', "$dir/port");
	push @cmd, map { ('--key', $_) } @{ $o{keys} || [] };
	push @cmd, @{ $o{args} || [] };
	my $pid = fork() // die "fork: $!";
	if ($pid == 0)
	{
		open(STDOUT, '>', "$dir/stdout");
		open(STDERR, '>', "$dir/stderr") unless $ENV{SANDBOX_VERBOSE};
		# env => { NAME => VALUE }: the sandbox's environment only
		$ENV{$_} = $o{env}{$_} for keys %{ $o{env} || {} };
		exec(@cmd) or die "exec $cmd[0]: $!";
	}
	my $self = bless { pid => $pid, dir => $dir,
		http => Sandbox::HTTP->new(timeout => 30, keep_alive => 1) }, $class;
	my $deadline = time + 10;
	while (time < $deadline)
	{
		if (-s "$dir/port")
		{
			open(my $fh, '<', "$dir/port");
			my $p = <$fh>;
			close $fh;
			chomp $p;
			$self->{port} = $p if $p;
			last if $p;
		}
		die "sandbox exited: " . _slurp("$dir/stderr")
		  if waitpid($pid, WNOHANG) == $pid;
		sleep 0.02;
	}
	die "sandbox did not start" unless $self->{port};
	return $self;
}

sub _slurp { my ($f) = @_; open(my $fh, '<', $f) or return ''; local $/; <$fh> }

sub port { $_[0]{port} }
sub url { "http://127.0.0.1:$_[0]{port}" }
sub stdout { _slurp("$_[0]{dir}/stdout") }

# req(METHOD, PATH, key => K, json => DATA, body => BYTES, ctype => T,
#     headers => {...}, once => 1): returns {status, body, json, headers}.
#
# HTTP::Tiny sends an idempotent request (GET, HEAD, PUT, DELETE, OPTIONS,
# TRACE) a second time, silently, when the connection closes before an
# answer (RFC 2616 8.1.4), so with a "drop" fault a single req() can reach
# the sandbox twice.  once => 1 sends it exactly once: a closed connection
# then gives status 599 with HTTP::Tiny's error text as body, as it does for
# POST.  Only that one call is affected.
sub req
{
	my ($self, $method, $path, %o) = @_;
	my %h = %{ $o{headers} || {} };
	$h{Authorization} = "Bearer $o{key}" if defined $o{key};
	my %args = (headers => \%h);
	if (exists $o{json})
	{
		$args{content} = $JSON->encode($o{json});
		$h{'Content-Type'} = $o{ctype} // 'application/json';
	}
	elsif (defined $o{body})
	{
		$args{content} = $o{body};
		$h{'Content-Type'} = $o{ctype} if defined $o{ctype};
	}
	local $self->{http}{sb_once} = $o{once} ? 1 : 0;
	my $r = $self->{http}->request($method, $self->url . $path, \%args);
	my $json;
	if (defined $r->{content} && length $r->{content})
	{
		$json = eval { $JSON->decode($r->{content}) };
	}
	return { status => $r->{status}, body => $r->{content}, json => $json,
		headers => $r->{headers}, reason => $r->{reason} };
}

sub _admin
{
	my ($self, $method, $path, $data) = @_;
	my $r = $self->req($method, $path, defined $data ? (json => $data) : ());
	die "$method $path: $r->{status} $r->{body}" unless $r->{status} == 200;
	return $r->{json};
}

sub config { my ($s, $k) = @_; $s->_admin('POST', '/_sandbox/config', $k) }
sub fault { my ($s, $f) = @_; $s->_admin('POST', '/_sandbox/faults', $f) }
sub clear_faults { $_[0]->_admin('DELETE', '/_sandbox/faults') }
sub stats { $_[0]->_admin('GET', '/_sandbox/stats') }
sub reset_stats { $_[0]->_admin('POST', '/_sandbox/stats/reset') }
sub reset_all { $_[0]->_admin('POST', '/_sandbox/reset') }

# requests(ROUTE): the logged requests, optionally of one "METHOD /template".
sub requests
{
	my ($self, $route) = @_;
	my $q = defined $route ? '?route=' . _enc($route) : '';
	return $self->_admin('GET', "/_sandbox/requests$q")->{requests};
}

# count(ROUTE): requests counted for "METHOD /template".
sub count
{
	my ($self, $route) = @_;
	my ($m, $p) = split / /, $route, 2;
	for my $r (@{ $self->stats->{routes} })
	{
		return $r->{count} if $r->{method} eq $m && $r->{route} eq $p;
	}
	return 0;
}

sub _enc { my ($s) = @_; $s =~ s/([^A-Za-z0-9_.~-])/sprintf('%%%02X', ord $1)/ge; $s }

# wait_until(CODE, SECONDS): polls CODE until true; returns its value or undef.
sub wait_until
{
	my ($code, $secs) = @_;
	my $deadline = time + ($secs // 10);
	while (time < $deadline)
	{
		my $v = $code->();
		return $v if $v;
		sleep 0.02;
	}
	return undef;
}

sub stop
{
	my ($self) = @_;
	return unless $self->{pid};
	kill 'TERM', $self->{pid};
	my $deadline = time + 5;
	while (time < $deadline)
	{
		last if waitpid($self->{pid}, WNOHANG) == $self->{pid};
		sleep 0.02;
	}
	if (kill 0, $self->{pid})
	{
		kill 'KILL', $self->{pid};
		waitpid($self->{pid}, 0);
	}
	delete $self->{pid};
}

sub DESTROY { $_[0]->stop }

# HTTP::Tiny whose automatic resend can be turned off per request (sb_once,
# see req).  HTTP::Tiny::request() calls _request() once, and once more for
# the resend; a redirect calls _request() from inside _request().  With
# sb_once the second top-level call fails the way the first one did, which
# ends request()'s loop with the same error and no second request on the
# wire.  _request() is HTTP::Tiny's internal method (stable for years;
# checked with 0.080); 11_faults.t fails if this stops working.
package Sandbox::HTTP;

use parent -norequire, 'HTTP::Tiny';

sub request
{
	my ($self, @a) = @_;
	local $self->{sb_calls} = 0;
	local $self->{sb_depth} = 0;
	local $self->{sb_error};
	return $self->SUPER::request(@a);
}

sub _request
{
	my ($self, @a) = @_;
	return $self->SUPER::_request(@a) unless $self->{sb_once};
	die $self->{sb_error} if $self->{sb_depth} == 0 && $self->{sb_calls}++;
	my $r;
	{
		local $self->{sb_depth} = $self->{sb_depth} + 1;
		$r = eval { $self->SUPER::_request(@a) };
	}
	if (my $e = $@)
	{
		$self->{sb_error} = $e if $self->{sb_depth} == 0;
		die $e;
	}
	return $r;
}

1;
