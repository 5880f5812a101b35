# Job families (docs/sandbox-jobs.md): creating a job from an uploaded
# file, its status on the sandbox clock, its result, failures, validation,
# per-partner isolation, the seeded jobs' status and result, the
# rate-limit rows of our own, and a reset.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/../lib";
use Sandbox;
use Test::More;
use MIME::Base64 qw(encode_base64);

my ($K1, $K2) = ('life-key-one', 'life-key-two');
my $sb = Sandbox->start(keys => [$K1, "$K2=premium"], args => ['--seed', '3']);
$sb->_admin('POST', '/_sandbox/clock', { freeze => JSON::PP::true });

sub upload
{
	my ($key, $bytes) = @_;
	my $r = $sb->req('POST', '/uploads', key => $key, json => { filename => 'doc.pdf' });
	die "upload: $r->{status}" unless $r->{status} == 201;
	my $id = $r->{json}{file_id};
	if (length $bytes)
	{
		$r = $sb->req('PUT', "/uploads/$id", key => $key, json => { data => encode_base64($bytes, '') });
		die "append: $r->{status}" unless $r->{status} == 200;
	}
	return $id;
}

sub advance { $sb->_admin('POST', '/_sandbox/clock', { advance_ms => $_[0] }) }

my $file = upload($K1, 'Rechnung 2026-001');
my $empty = upload($K1, '');

# --- create, status, result ---
my $r = $sb->req('POST', '/jobs/ocr', key => $K1, json => { file_id => $file });
is($r->{status}, 201, 'create: 201');
my $job = $r->{json};
like($job->{id}, qr/^ocr_[0-9a-f]{12}$/, 'create: an id of the family');
is($job->{status}, 'queued', 'create: queued');
is($job->{model}, 'ocr-standard', 'create: the default model');
is($job->{file_id}, $file, 'create: the file');
ok(!defined $job->{finished_at} && !defined $job->{error}, 'create: not finished, no error');
is($r->{headers}{location}, "/jobs/ocr/$job->{id}", 'create: Location of the job');

my $st = $sb->req('GET', "/jobs/ocr/$job->{id}", key => $K1);
is_deeply($st->{json}, $job, 'status: the job as created');
$r = $sb->req('GET', "/jobs/ocr/$job->{id}/result", key => $K1);
is($r->{status}, 409, 'result: 409 while queued');
is($r->{json}{error}{code}, 'job_not_finished', 'result: job_not_finished');

advance(1_000);
is($sb->req('GET', "/jobs/ocr/$job->{id}", key => $K1)->{json}{status}, 'running',
   'status: running after a tenth of jobs.run_s');
advance(9_000);
$st = $sb->req('GET', "/jobs/ocr/$job->{id}", key => $K1)->{json};
is($st->{status}, 'succeeded', 'status: succeeded after jobs.run_s (10 s)');
like($st->{finished_at}, qr/^\d{4}-\d\d-\d\dT/, 'status: finished_at set');
$r = $sb->req('GET', "/jobs/ocr/$job->{id}/result", key => $K1);
is($r->{status}, 200, 'result: 200');
is($r->{json}{job_id}, $job->{id}, 'result: of the job');
ok(@{ $r->{json}{pages} } >= 1, 'result: ocr pages');
is_deeply($sb->req('GET', "/jobs/ocr/$job->{id}/result", key => $K1)->{json}, $r->{json},
		  'result: the same when read again');

# the job ends the history
my $hist = $sb->req('GET', '/jobs/ocr/history?limit=100', key => $K1)->{json}{data};
is(scalar @$hist, 46, 'history: 45 seeded jobs and the new one');
is($hist->[-1]{id}, $job->{id}, 'history: the new job last');
is($sb->req('GET', '/jobs/ocr/history?status=succeeded&limit=100', key => $K1)->{json}{data}[-1]{id},
   $job->{id}, 'history: the status filter sees it');

# an empty file fails
$r = $sb->req('POST', '/jobs/summarize', key => $K1, json => { file_id => $empty, model => 'sum-bullets' });
is($r->{status}, 201, 'empty file: created');
my $fail = $r->{json}{id};
is($r->{json}{model}, 'sum-bullets', 'empty file: the model asked for');
advance(10_000);
$st = $sb->req('GET', "/jobs/summarize/$fail", key => $K1)->{json};
is($st->{status}, 'failed', 'empty file: failed');
is($st->{error}{code}, 'empty_file', 'empty file: error empty_file');
$r = $sb->req('GET', "/jobs/summarize/$fail/result", key => $K1);
is($r->{status}, 409, 'empty file: result 409');
is($r->{json}{error}{code}, 'job_failed', 'empty file: job_failed');

# --- every family's result ---
my $tok = $sb->req('POST', '/oauth/token',
				   body => "grant_type=client_credentials&client_id=client-$K1&client_secret=$K1",
				   ctype => 'application/x-www-form-urlencoded')->{json}{access_token};
my %auth = (translate => { headers => { Authorization => "Bearer $tok" } });
my %member = (ocr => 'pages', translate => 'text', summarize => 'summary',
			  classify => 'labels', extract => 'fields', redact => 'redactions');
my %made;
for my $f (sort keys %member)
{
	my $q = $f eq 'classify' ? "?api_key=$K1" : '';
	my %a = $auth{$f} ? %{ $auth{$f} } : $f eq 'classify' ? () : (key => $K1);
	my $body = { file_id => $file };
	$body->{options} = { target_language => 'fr' } if $f eq 'translate';
	$r = $sb->req('POST', "/jobs/$f$q", %a, json => $body);
	is($r->{status}, 201, "$f: created");
	$made{$f} = $r->{json}{id};
}
advance(10_000);
for my $f (sort keys %member)
{
	my $q = $f eq 'classify' ? "?api_key=$K1" : '';
	my %a = $auth{$f} ? %{ $auth{$f} } : $f eq 'classify' ? () : (key => $K1);
	$r = $sb->req('GET', "/jobs/$f/$made{$f}/result$q", %a);
	is($r->{status}, 200, "$f: result 200");
	ok(defined $r->{json}{$member{$f}}, "$f: result has $member{$f}");
}
is($sb->req('GET', "/jobs/translate/$made{translate}/result", %{ $auth{translate} })->{json}{target_language},
   'fr', 'translate: the target language asked for');

# --- validation ---
my @bad = (
	['ocr', {}, 400, 'missing_field', 'no file_id'],
	['ocr', { file_id => 7 }, 400, 'invalid_field', 'a number as file_id'],
	['ocr', { file_id => 'file_0000000000000000' }, 400, 'file_not_found', 'an unknown file'],
	['ocr', { file_id => $file, model => 'sum-short' }, 400, 'unknown_model', 'a model of another family'],
	['ocr', { file_id => $file, options => [] }, 400, 'invalid_field', 'options not an object'],
	['ocr', [], 400, 'invalid_request', 'an array body'],
	['translate', { file_id => $file }, 400, 'missing_field', 'translate without target_language'],
);
for my $b (@bad)
{
	my ($f, $body, $status, $code, $name) = @$b;
	my %a = $auth{$f} ? %{ $auth{$f} } : (key => $K1);
	$r = $sb->req('POST', "/jobs/$f", %a, json => $body);
	is($r->{status}, $status, "validation: $name: $status");
	is($r->{json}{error}{code}, $code, "validation: $name: $code");
}
$r = $sb->req('POST', '/jobs/ocr', key => $K1, body => 'file_id=x', ctype => 'text/plain');
is($r->{json}{error}{code}, 'unsupported_media_type', 'validation: a body that is not JSON');
is($sb->req('POST', '/jobs/ocr/history', key => $K1, json => {})->{status}, 405,
   'POST on history: 405');

# --- partners ---
is($sb->req('GET', "/jobs/ocr/$job->{id}", key => $K2)->{status}, 404, 'another partner: 404');
is($sb->req('GET', "/jobs/ocr/$job->{id}", key => $K2)->{json}{error}{code}, 'job_not_found',
   'another partner: job_not_found');
is(scalar @{ $sb->req('GET', '/jobs/ocr/history?limit=100', key => $K2)->{json}{data} }, 45,
   'another partner: only the seeded jobs');
$r = $sb->req('POST', '/jobs/ocr', key => $K2, json => { file_id => $file });
is($r->{json}{error}{code}, 'file_not_found', 'another partner: cannot use my file');

# --- seeded jobs ---
my $seeded = $hist->[0];
$r = $sb->req('GET', "/jobs/ocr/$seeded->{id}", key => $K2);
is_deeply($r->{json}, $seeded, 'seeded: status equals its history item, for any partner');
my ($sf) = grep { $_->{status} eq 'failed' } @$hist;
is($sb->req('GET', "/jobs/ocr/$sf->{id}/result", key => $K1)->{json}{error}{code}, 'job_failed',
   'seeded: a failed job has no result');
my ($ss) = grep { $_->{status} eq 'succeeded' } @$hist;
is($sb->req('GET', "/jobs/ocr/$ss->{id}/result", key => $K1)->{status}, 200, 'seeded: a result');
is($sb->req('GET', '/jobs/ocr/ocr_000000000000', key => $K1)->{status}, 404, 'an unknown id: 404');

# --- rate-limit rows of our own ---
$sb->config({ 'rate_limit.GET /jobs/extract/history' => 2 });
my @codes = map { $sb->req('GET', '/jobs/extract/history', key => $K1)->{status} } 1 .. 3;
is_deeply(\@codes, [200, 200, 429], 'rate limit: GET /jobs/extract/history row');
my $cfg = $sb->_admin('GET', '/_sandbox/config');
is($cfg->{rate_limits}{'POST /jobs/ocr'}{standard}, 30, 'rate limit: POST /jobs/ocr row');
is($cfg->{'jobs.run_s'}, 10, 'knob jobs.run_s: 10 by default');

# --- knob and reset ---
$sb->config({ 'jobs.run_s' => 100 });
$r = $sb->req('POST', '/jobs/ocr', key => $K1, json => { file_id => $file });
advance(50_000);
is($sb->req('GET', "/jobs/ocr/$r->{json}{id}", key => $K1)->{json}{status}, 'running',
   'knob jobs.run_s 100: running after 50 s');
$sb->reset_all;
is(scalar @{ $sb->req('GET', '/jobs/ocr/history?limit=100', key => $K1)->{json}{data} }, 45,
   'reset: the created jobs are gone');

done_testing();
