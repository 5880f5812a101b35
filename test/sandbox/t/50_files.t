# Files service: upload sessions (create, append, size), chunk limit,
# non-idempotent appends, drop-after-apply, multipart direct upload,
# content read-back, listing, per-partner isolation, expiry, errors.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/../lib";
use Sandbox;
use Test::More;
use Digest::SHA qw(sha256_hex);
use MIME::Base64 qw(encode_base64);
use Time::Local qw(timegm);
use IO::Socket::INET;

my $MAX = 5 * 1024 * 1024;		# 5 MB read as 5 MiB

my $sb = Sandbox->start(keys => ['k1=standard', 'k2=premium'],
						args => ['--time-scale', '0.001', '--seed', '7']);

sub plain_error
{
	my ($r, $status, $code, $name) = @_;
	is($r->{status}, $status, "$name: status $status");
	is(eval { $r->{json}{error}{code} }, $code, "$name: code $code")
		or diag $r->{body};
	ok(defined eval { $r->{json}{error}{message} }, "$name: message present");
}

sub random_bytes
{
	my ($n) = @_;
	open(my $fh, '<:raw', '/dev/urandom') or die "urandom: $!";
	my $buf = '';
	while (length $buf < $n)
	{
		my $got = read($fh, $buf, $n - length $buf, length $buf);
		die "read: $!" unless $got;
	}
	close $fh;
	return $buf;
}

# epoch seconds of an ISO-8601 UTC timestamp (fraction dropped)
sub epoch
{
	my ($s) = @_;
	$s =~ /^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.\d+)?Z$/ or return undef;
	return timegm($6, $5, $4, $3, $2 - 1, $1);
}

# a - b in ms for two ISO-8601 timestamps
sub msdiff
{
	my ($a, $b) = @_;
	my ($fa) = $a =~ /\.(\d{3})Z$/;
	my ($fb) = $b =~ /\.(\d{3})Z$/;
	return (epoch($a) - epoch($b)) * 1000 + ($fa // 0) - ($fb // 0);
}

sub create { my ($name, $key) = @_; $sb->req('POST', '/uploads', key => $key // 'k1', json => { filename => $name }) }

# append raw bytes: builds the JSON by hand (JSON::PP is slow on MBs)
sub append
{
	my ($id, $bytes, %o) = @_;
	my $b64 = encode_base64($bytes, $o{mime} ? "\n" : '');
	$b64 =~ s/\n/\\n/g;
	return $sb->req('PUT', "/uploads/$id", key => $o{key} // 'k1',
					body => qq({"data":"$b64"}), ctype => 'application/json');
}

sub info { my ($id, $key) = @_; $sb->req('GET', "/files/$id", key => $key // 'k1') }
sub content { my ($id, $key) = @_; $sb->req('GET', "/files/$id/content", key => $key // 'k1') }

# --- auth ---
is($sb->req('POST', '/uploads', json => { filename => 'x' })->{status}, 401,
   'POST /uploads without a key: 401');
is($sb->req('GET', '/files', key => 'nope')->{status}, 401, 'GET /files with a bad key: 401');

plain_error($sb->req('GET', '/files?limit=5', key => 'k1'), 400, 'unknown_parameter',
			'query parameters are rejected');

# --- create an upload session ---
my $r = create('report.pdf');
is($r->{status}, 201, 'POST /uploads: 201');
my $f = $r->{json};
like($f->{file_id}, qr/^file_[0-9a-f]{16}$/, 'file_id');
is($f->{filename}, 'report.pdf', 'filename');
is($f->{size}, 0, 'size 0');
for my $k (qw(created_at updated_at expires_at))
{
	ok(defined epoch($f->{$k}), "$k is an ISO-8601 date-time") or diag $f->{$k};
}
# timestamps are real wall-clock times: 24 sandbox hours = 86.4 real s
ok(abs(msdiff($f->{expires_at}, $f->{created_at}) - 86_400) <= 1,
   'expires 24 sandbox hours (files.retention_min default) after creation');
is_deeply(info($f->{file_id})->{json}, $f, 'GET /files/{id} equals the created FileInfo');
isnt(create('report.pdf')->{json}{file_id}, $f->{file_id}, 'a second session has a new id');

plain_error($sb->req('POST', '/uploads', key => 'k1', json => {}), 400, 'missing_field', 'no filename');
plain_error($sb->req('POST', '/uploads', key => 'k1', json => { filename => 7 }), 400,
			'invalid_field', 'numeric filename');
plain_error($sb->req('POST', '/uploads', key => 'k1', json => { filename => '' }), 400,
			'invalid_field', 'empty filename');
plain_error($sb->req('POST', '/uploads', key => 'k1', json => ['x']), 400,
			'invalid_request', 'array body');
is($sb->req('POST', '/uploads', key => 'k1', body => '{"filename":', ctype => 'application/json')->{status},
   400, 'broken JSON: 400');

# --- a chunked upload of random bytes reads back identical ---
my @sizes = (1_000_000, 777_777, 1, 2, 123_457);
my @chunks = map { random_bytes($_) } @sizes;
my $whole = join '', @chunks;
my $id = create('random.bin')->{json}{file_id};
my $total = 0;
for my $i (0 .. $#chunks)
{
	$r = append($id, $chunks[$i], mime => ($i == 1));	# chunk 1 with MIME line breaks
	$total += length $chunks[$i];
	is($r->{status}, 200, "chunk $i: 200");
	is($r->{json}{size}, $total, "chunk $i: size is the running total $total");
}
is(info($id)->{json}{size}, length $whole, 'GET /files/{id}: total size');
$r = content($id);
is($r->{status}, 200, 'content: 200');
like($r->{headers}{'content-type'}, qr{^application/octet-stream}, 'content: octet-stream');
is(length $r->{body}, length $whole, 'content: length');
is(sha256_hex($r->{body}), sha256_hex($whole), 'content: digest equals the input');

# --- not idempotent: the same chunk twice is stored twice ---
$id = create('twice.txt')->{json}{file_id};
is(append($id, 'abc')->{json}{size}, 3, 'first append: 3');
is(append($id, 'abc')->{json}{size}, 6, 'same chunk again: 6');
is(content($id)->{body}, 'abcabc', 'content holds the chunk twice');
is(append($id, '')->{json}{size}, 6, 'an empty chunk appends nothing');

# --- chunk limit: exactly 5 MiB passes, one byte more is 413 ---
$id = create('limit.bin')->{json}{file_id};
my $big = random_bytes($MAX + 1);
plain_error(append($id, $big), 413, 'chunk_too_large', '5 MiB + 1 byte');
is(info($id)->{json}{size}, 0, 'rejected chunk not stored');
$r = append($id, substr($big, 0, $MAX));
is($r->{status}, 200, 'exactly 5 MiB: 200');
is($r->{json}{size}, $MAX, 'size 5242880');
is(sha256_hex(content($id)->{body}), sha256_hex(substr($big, 0, $MAX)), '5 MiB content intact');
undef $big;

# --- invalid bodies and unknown files ---
$id = create('bad.txt')->{json}{file_id};
for my $case (['!!!!', 'bad characters'], ['abc', 'length not a multiple of 4'],
			  ['ab=c', 'data after padding'], ['a===', 'three padding characters'],
			  ['YWJj-_8=', 'URL-safe alphabet'])
{
	plain_error($sb->req('PUT', "/uploads/$id", key => 'k1', json => { data => $case->[0] }),
				400, 'invalid_base64', "base64 $case->[1]");
}
plain_error($sb->req('PUT', "/uploads/$id", key => 'k1', json => {}), 400, 'missing_field', 'no data');
plain_error($sb->req('PUT', "/uploads/$id", key => 'k1', json => { data => 5 }), 400,
			'invalid_field', 'numeric data');
is(info($id)->{json}{size}, 0, 'nothing appended by the bad requests');
plain_error(append('file_0000000000000000', 'x'), 404, 'file_not_found', 'PUT unknown file');
plain_error(info('file_0000000000000000'), 404, 'file_not_found', 'GET unknown file');
plain_error(content('nope'), 404, 'file_not_found', 'content of unknown file');

# --- a dropped answer after the append: size tells the client it landed ---
$id = create('drop.bin')->{json}{file_id};
append($id, 'first');
$sb->fault({ route => 'PUT /uploads/{file_id}', kind => 'drop_after_apply', rate => 1, count => 1 });
# A raw one-shot request: HTTP::Tiny would silently resend an idempotent
# method (PUT) once after a closed connection, which appends twice.
{
	my $body = '{"data":"' . encode_base64('second', '') . '"}';
	my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $sb->port,
								  Proto => 'tcp', Timeout => 10) or die "connect: $!";
	print $s "PUT /uploads/$id HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer k1\r\n"
	  . "Content-Type: application/json\r\nContent-Length: " . length($body)
	  . "\r\nConnection: close\r\n\r\n$body";
	local $/;
	my $answer = <$s>;
	close $s;
	is($answer // '', '', 'append with drop_after_apply: connection closed without an answer');
}
is(info($id)->{json}{size}, 11, 'but the chunk was appended (size 11)');
is(content($id)->{body}, 'firstsecond', 'content after the dropped answer');
$sb->clear_faults;

# --- multipart direct upload, binary-safe ---
my $boundary = 'XyZ' . int(rand(1e9));
my $bin = "\0\r\n--$boundary-not-really\r\n\0" . random_bytes(300_000) . "\r\n";
sub multipart
{
	my ($parts, $close) = @_;
	my $body = "preamble to ignore\r\n";
	for my $p (@$parts)
	{
		$body .= "--$boundary\r\nContent-Disposition: form-data; $p->[0]\r\n"
		  . "Content-Type: application/octet-stream\r\n\r\n$p->[1]\r\n";
	}
	$body .= "--$boundary--\r\n" if $close // 1;
	return $body;
}
$r = $sb->req('POST', '/files', key => 'k1',
			  body => multipart([['name="note"', 'hello'],
								 ['name="file"; filename="scan \"1\".bin"', $bin]]),
			  ctype => "multipart/form-data; boundary=\"$boundary\"");
is($r->{status}, 201, 'POST /files multipart: 201') or diag $r->{body};
is($r->{json}{filename}, 'scan "1".bin', 'filename from Content-Disposition (quoted, escaped)');
is($r->{json}{size}, length $bin, 'size of the binary part');
my $mid = $r->{json}{file_id};
is(sha256_hex(content($mid)->{body}), sha256_hex($bin), 'multipart content round trip (digest)');
is(info($mid)->{json}{size}, length $bin, 'GET /files/{id} after multipart');

plain_error($sb->req('POST', '/files', key => 'k1', json => { file => 'x' }), 400,
			'unsupported_media_type', 'POST /files with JSON');
plain_error($sb->req('POST', '/files', key => 'k1', body => multipart([['name="file"; filename="a"', 'x']]),
					 ctype => 'multipart/form-data'), 400, 'invalid_multipart', 'no boundary');
plain_error($sb->req('POST', '/files', key => 'k1',
					 body => multipart([['name="file"; filename="a"', 'x']], 0),
					 ctype => "multipart/form-data; boundary=$boundary"),
			400, 'invalid_multipart', 'truncated body (no close delimiter)');
plain_error($sb->req('POST', '/files', key => 'k1', body => multipart([['name="other"; filename="a"', 'x']]),
					 ctype => "multipart/form-data; boundary=$boundary"),
			400, 'missing_field', 'no field "file"');
plain_error($sb->req('POST', '/files', key => 'k1', body => multipart([['name="file"', 'x']]),
					 ctype => "multipart/form-data; boundary=$boundary"),
			400, 'missing_filename', 'field "file" without filename');
$r = $sb->req('POST', '/files', key => 'k1', body => multipart([['name="file"; filename="empty.txt"', '']]),
			  ctype => "multipart/form-data; boundary=$boundary");
is($r->{status}, 201, 'empty file by multipart: 201');
is($r->{json}{size}, 0, 'empty file: size 0');

# --- listing and per-partner isolation ---
$r = $sb->req('GET', '/files', key => 'k1');
is($r->{status}, 200, 'GET /files: 200');
my %listed = map { $_->{file_id} => $_ } @{ $r->{json} };
ok($listed{$mid} && $listed{$id}, 'list holds upload-session and multipart files');
is($listed{$mid}{size}, length $bin, 'listed FileInfo has the size');
is_deeply($sb->req('GET', '/files', key => 'k2')->{json}, [], 'partner k2 lists no files of k1');
plain_error(info($mid, 'k2'), 404, 'file_not_found', 'k2 reading a k1 file');
plain_error(append($id, 'x', key => 'k2'), 404, 'file_not_found', 'k2 appending to a k1 file');
plain_error(content($mid, 'k2'), 404, 'file_not_found', 'k2 reading k1 content');
my $k2id = create('mine.txt', 'k2')->{json}{file_id};
is(append($k2id, 'k2data', key => 'k2')->{json}{size}, 6, 'k2 has its own uploads');
is(scalar @{ $sb->req('GET', '/files', key => 'k2')->{json} }, 1, 'k2 lists one file');
plain_error(info($k2id), 404, 'file_not_found', 'k1 reading a k2 file');

# --- knob and expiry (5 sandbox minutes = 300 real ms at this time scale) ---
is($sb->req('POST', '/_sandbox/config', json => { 'files.retention_min' => -1 })->{status},
   400, 'files.retention_min must be positive');
is($sb->req('GET', '/_sandbox/config')->{json}{'files.retention_min'}, 1440,
   'config shows the default retention');
$sb->config({ 'files.retention_min' => 5 });
is($sb->req('GET', '/_sandbox/config')->{json}{'files.retention_min'}, 5, 'retention set to 5');
$r = create('short.txt');
my $sid = $r->{json}{file_id};
ok(abs(msdiff($r->{json}{expires_at}, $r->{json}{created_at}) - 300) <= 1,
   'expires_at is 5 sandbox minutes (300 real ms) after created_at');
is(append($sid, 'tmp')->{status}, 200, 'append before expiry');
ok(Sandbox::wait_until(sub { info($sid)->{status} == 404 }, 10), 'file disappears after retention');
plain_error(info($sid), 404, 'file_expired', 'GET expired file');
plain_error(append($sid, 'x'), 404, 'file_expired', 'PUT expired file');
plain_error(content($sid), 404, 'file_expired', 'content of expired file');
ok(!grep({ $_->{file_id} eq $sid } @{ $sb->req('GET', '/files', key => 'k1')->{json} }),
   'expired file not listed');
is(info($mid)->{status}, 200, 'files created under the old retention keep their expires_at');

# --- reset forgets everything ---
$sb->reset_all;
plain_error(info($mid), 404, 'file_not_found', 'after reset');
is_deeply($sb->req('GET', '/files', key => 'k1')->{json}, [], 'empty list after reset');

done_testing();
