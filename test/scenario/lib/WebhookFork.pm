# WebhookFork.pm: a webhook POST that runs in a child process, for the
# fault scenarios (a delivery that waits on a lock, or arrives while
# memory runs out) where the test must act while the request is open.
package WebhookFork;

use strict;
use warnings;
use Exporter 'import';
use HTTP::Tiny;
use POSIX ();

our @EXPORT = qw(post_in_child child_result);

# post_in_child(port, env, body, file, chunked): pid of a child that POSTs
# body to /webhooks/env and writes "STATUS RETRY-AFTER" into file (599 when
# the connection failed or was dropped, "-" when no Retry-After).
sub post_in_child
{
	my ($port, $env, $body, $file, $chunked) = @_;
	my $pid = fork();
	die "fork: $!" unless defined $pid;
	return $pid if $pid;
	my $content = $body;
	if ($chunked)
	{
		my @c = map { substr($body, $_ * 65536, 65536) } 0 .. int((length($body) - 1) / 65536);
		$content = sub { shift @c };
	}
	my $r = HTTP::Tiny->new(timeout => 120)->request('POST',
		"http://127.0.0.1:$port/webhooks/$env",
		{ content => $content, headers => { 'Content-Type' => 'application/json' } });
	if (open(my $fh, '>', "$file.tmp"))
	{
		print $fh "$r->{status} " . ($r->{headers}{'retry-after'} // '-') . "\n";
		close $fh;
		rename("$file.tmp", $file);
	}
	# not exit(): the END blocks of PostgreSQL::Test::Cluster would stop the nodes
	POSIX::_exit(0);
}

# child_result(file): (status, retry_after), ('none', '-') before the answer
sub child_result
{
	my ($file) = @_;
	open(my $fh, '<', $file) or return ('none', '-');
	my $l = <$fh> // '';
	chomp $l;
	return split / /, $l;
}

1;
