# Hostile.pm: starts test/hostile/hostile.pl (a hostile partner service on
# loopback, described at the top of that file) for one test file, and reads
# the requests it received.  Core Perl only.
#
#   my $h = Hostile->start;
#   $h->url;            # http://127.0.0.1:PORT
#   $h->clear;          # forget the requests logged so far
#   $h->requests;       # the request lines logged since, in order
#   $h->log;            # the whole log text since (request lines and bodies)
#   $h->get($target);   # the body of a GET of $target (logged too)
package Hostile;

use strict;
use warnings;
use File::Basename qw(dirname);
use File::Spec;
use File::Temp qw(tempdir);
use IO::Socket::INET;
use POSIX qw(:sys_wait_h);
use Time::HiRes qw(sleep time);

sub start
{
	my ($class, %o) = @_;
	my $dir = tempdir(CLEANUP => 1);
	my $script = File::Spec->catfile(dirname(File::Spec->rel2abs(__FILE__)), 'hostile.pl');
	my $pid = fork() // die "fork: $!";
	if ($pid == 0)
	{
		open(STDOUT, '>', "$dir/stdout");
		open(STDERR, '>', "$dir/stderr");
		exec($^X, $script, '--port-file', "$dir/port", '--log', "$dir/log",
			'--lifetime', $o{lifetime} // 1800)
		  or die "exec: $!";
	}
	# owner: only the process that started the service stops it (not a
	# child of the test that happens to destroy a copy of this object)
	my $self = bless { pid => $pid, dir => $dir, owner => $$ }, $class;
	my $deadline = time + 20;
	while (time < $deadline && !$self->{port})
	{
		if (-s "$dir/port")
		{
			open(my $fh, '<', "$dir/port");
			my $p = <$fh>;
			close $fh;
			chomp $p if defined $p;
			$self->{port} = $p if $p;
		}
		die "hostile service exited" if waitpid($pid, WNOHANG) == $pid;
		sleep 0.02 unless $self->{port};
	}
	die "hostile service did not start" unless $self->{port};
	return $self;
}

sub url { "http://127.0.0.1:$_[0]{port}" }

# The body the service answers to GET $target (the service closes every
# connection after one answer, so the body is everything after the head).
sub get
{
	my ($self, $target) = @_;
	my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $self->{port},
		Proto => 'tcp', Timeout => 20) or die "connect: $!";
	binmode $s;
	print $s "GET $target HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
	my $data = '';
	while (sysread($s, my $buf, 65536)) { $data .= $buf; }
	close $s;
	my (undef, $body) = split /\r\n\r\n/, $data, 2;
	return $body // '';
}

sub log
{
	my ($self) = @_;
	open(my $fh, '<', "$self->{dir}/log") or return '';
	local $/;
	my $t = <$fh>;
	close $fh;
	return $t // '';
}

sub clear { unlink "$_[0]{dir}/log"; }

sub requests
{
	my ($self) = @_;
	return [ grep { !/^  body: / } split /\n/, $self->log ];
}

sub stop
{
	my ($self) = @_;
	return unless $self->{pid} && $self->{owner} == $$;
	kill 'TERM', $self->{pid};
	waitpid($self->{pid}, 0);
	$self->{pid} = undef;
}

sub DESTROY { $_[0]->stop }

1;
