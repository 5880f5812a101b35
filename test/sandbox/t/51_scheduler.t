# Scheduler service: user jobs (list, save, read, delete), executions
# (run, SUCCESS/FAILED, parallel runs, stop), pause/activate, clone,
# sync-token, the capped execution summary, notification addresses,
# execution emails, per-partner isolation, knobs and reset.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/../lib";
use Sandbox;
use Test::More;
use JSON::PP ();

my $sb = Sandbox->start(keys => ['k1=standard', 'k2=premium'],
						args => ['--time-scale', '0.001', '--seed', '7']);

my $ISO = qr/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z$/;

sub plain_error
{
	my ($r, $status, $code, $name) = @_;
	is($r->{status}, $status, "$name: status $status");
	is(eval { $r->{json}{error}{code} }, $code, "$name: code $code")
		or diag $r->{body};
	ok(defined eval { $r->{json}{error}{message} }, "$name: message present");
}

sub get { my ($path, $key) = @_; $sb->req('GET', $path, key => $key // 'k1') }
sub job { get("/api/user-jobs/$_[0]", $_[1])->{json} }
sub summary { get("/api/user-jobs/user-job-executions/$_[0]", $_[1])->{json} }
sub save { my ($body, $key) = @_; $sb->req('PUT', '/api/user-jobs', key => $key // 'k1', json => $body) }
sub tokens { get('/_sandbox/scheduler/tokens', $_[0])->{json} }

sub empty_ok
{
	my ($r, $name) = @_;
	is($r->{status}, 200, "$name: 200");
	is($r->{body} // '', '', "$name: empty body");
}

# waits until no execution of the job is RUNNING; returns the summary
sub settled
{
	my ($jid, $key) = @_;
	return Sandbox::wait_until(sub {
		my $s = summary($jid, $key);
		return (grep { $_->{status} eq 'RUNNING' } @{ $s->{executions} }) ? undef : $s;
	}, 15);
}

my %base = (name => 'Hourly sales', isActive => JSON::PP::true,
			timeZone => 'Europe/Berlin', jobCronExpression => '0 0 * * * *');

# --- auth ---
is($sb->req('GET', '/api/user-jobs')->{status}, 401, 'no key: 401');
is(get('/api/notifications', 'bogus')->{status}, 401, 'bad key: 401');

plain_error(get('/api/user-jobs?limit=5'), 400, 'unknown_parameter', 'query parameters are rejected');

# --- seeded jobs ---
my $r = get('/api/user-jobs');
is($r->{status}, 200, 'GET /api/user-jobs: 200');
my $seed = $r->{json};
is(scalar @$seed, 2, 'two seeded jobs');
for my $j (@$seed)
{
	ok($j->{id} =~ /^\d+$/ && defined $j->{name} && JSON::PP::is_bool($j->{isActive})
	   && defined $j->{timeZone} && defined $j->{jobCronExpression}, "job $j->{id}: required fields")
		or diag explain $j;
	ok(exists $j->{userReportGenerationTasks} && !defined $j->{userReportGenerationTasks}
	   && exists $j->{userEmailTasks} && !defined $j->{userEmailTasks},
	   "job $j->{id}: task lists are null");
	is($j->{status}, 'READY', "job $j->{id}: READY");
	is($j->{lastRun}, undef, "job $j->{id}: never run");
}
my $k2seed = get('/api/user-jobs', 'k2')->{json};
is(scalar @$k2seed, 2, 'k2 has its own two seeded jobs');
my %k1ids = map { $_->{id} => 1 } @$seed;
ok(!grep({ $k1ids{$_->{id}} } @$k2seed), 'ids differ across partners');
my $jid = $seed->[0]{id};
is_deeply(job($jid), $seed->[0], 'GET /api/user-jobs/{id} equals the listed job');
plain_error(get('/api/user-jobs/abc'), 400, 'invalid_id', 'non-integer id');
plain_error(get('/api/user-jobs/1.5'), 400, 'invalid_id', 'fractional id');
plain_error(get('/api/user-jobs/424242'), 404, 'job_not_found', 'unknown id');
plain_error(get("/api/user-jobs/$jid", 'k2'), 404, 'job_not_found', 'k2 reading a k1 job');

# --- save: create ---
$r = save({ %base, jobRunFrequency => 'HOURLY', userJobStartTime => '2030-01-01T08:00:00Z',
			userReportGenerationTasks => [{ report => 1 }], status => 'FAILED' });
is($r->{status}, 200, 'PUT without id creates: 200');
my $new = $r->{json};
ok($new->{id} =~ /^\d+$/ && !$k1ids{$new->{id}}, 'new id');
is($new->{name}, 'Hourly sales', 'name');
ok($new->{isActive}, 'isActive');
is($new->{timeZone}, 'Europe/Berlin', 'timeZone');
is($new->{jobCronExpression}, '0 0 * * * *', 'cron');
is($new->{jobRunFrequency}, 'HOURLY', 'frequency');
is($new->{userJobStartTime}, '2030-01-01T08:00:00Z', 'userJobStartTime kept');
is($new->{status}, 'READY', 'status is not writable: READY');
is($new->{userReportGenerationTasks}, undef, 'tasks null in the answer');
like($new->{nextRun}, $ISO, 'active hourly job has a nextRun');
is(scalar @{ get('/api/user-jobs')->{json} }, 3, 'list grew to 3');
is_deeply(job($new->{id}), $new, 'GET the created job');

for my $f (qw(name isActive timeZone jobCronExpression))
{
	my %b = %base;
	delete $b{$f};
	$r = save(\%b);
	plain_error($r, 400, 'missing_field', "missing $f");
	like($r->{json}{error}{message} // '', qr/\Q$f\E/, "message names $f");
	$b{$f} = undef;
	plain_error(save(\%b), 400, 'missing_field', "null $f");
}
plain_error(save({ %base, isActive => 'yes' }), 400, 'invalid_field', 'isActive not boolean');
plain_error(save({ %base, name => '' }), 400, 'invalid_field', 'empty name');
plain_error(save({ %base, jobCronExpression => 'every day' }), 400, 'invalid_cron', 'bad cron');
plain_error(save({ %base, jobRunFrequency => 'YEARLY' }), 400, 'invalid_field', 'bad frequency');
plain_error(save({ %base, userJobStartTime => 'tomorrow' }), 400, 'invalid_field', 'bad start time');
plain_error(save({ %base, id => 'abc' }), 400, 'invalid_field', 'string id');
plain_error(save({ %base, id => 424242 }), 404, 'job_not_found', 'update of an unknown id');
plain_error(save({ %base, id => $new->{id} }, 'k2'), 404, 'job_not_found', 'k2 updating a k1 job');
plain_error($sb->req('PUT', '/api/user-jobs', key => 'k1', json => [1]), 400, 'invalid_request',
			'array body');
is(scalar @{ get('/api/user-jobs')->{json} }, 3, 'failed saves created nothing');

# --- save: update ---
$r = save({ %base, id => $new->{id}, name => 'Hourly sales v2', isActive => JSON::PP::false });
is($r->{status}, 200, 'PUT with id updates: 200');
is($r->{json}{id}, $new->{id}, 'same id');
is($r->{json}{name}, 'Hourly sales v2', 'name changed');
ok(!$r->{json}{isActive}, 'isActive changed');
is($r->{json}{jobRunFrequency}, undef, 'omitted optional field reset to null (full replace)');
is($r->{json}{nextRun}, undef, 'inactive job: nextRun null');
is(job($new->{id})->{name}, 'Hourly sales v2', 'GET shows the update');
is(scalar @{ get('/api/user-jobs')->{json} }, 3, 'update did not add a job');

# --- run -> SUCCESS ---
$sb->config({ 'scheduler.run_duration_min' => 5 });	# 300 real ms
$r = get("/api/user-jobs/run/$jid");
is($r->{status}, 200, 'run: 200');
my $ex = $r->{json};
ok($ex->{id} =~ /^\d+$/, 'execution id');
is($ex->{jobId}, $jid, 'execution jobId');
is($ex->{status}, 'RUNNING', 'execution RUNNING');
like($ex->{startTime}, $ISO, 'startTime');
ok(!defined $ex->{endTime} && !defined $ex->{duration} && !defined $ex->{errorMessage},
   'no endTime, duration, errorMessage yet');
my $j = job($jid);
is($j->{status}, 'RUNNING', 'job RUNNING');
is($j->{lastRun}, $ex->{startTime}, 'job lastRun = execution start');
my $s = settled($jid);
ok($s, 'execution ended');
my ($done) = grep { $_->{id} == $ex->{id} } @{ $s->{executions} };
is($done->{status}, 'SUCCESS', 'execution SUCCESS');
like($done->{endTime}, $ISO, 'endTime set');
ok($done->{duration} >= 300000, 'duration >= 5 sandbox minutes') or diag $done->{duration};
is($done->{errorMessage}, undef, 'no errorMessage');
$j = job($jid);
is($j->{status}, 'SUCCESS', 'job SUCCESS');
is($j->{jobDuration}, $done->{duration}, 'job jobDuration = execution duration');
is($j->{jobErrorDetails}, undef, 'no jobErrorDetails');
plain_error(get('/api/user-jobs/run/x1'), 400, 'invalid_id', 'run non-integer');
plain_error(get('/api/user-jobs/run/424242'), 404, 'job_not_found', 'run unknown');
plain_error(get("/api/user-jobs/run/$jid", 'k2'), 404, 'job_not_found', 'k2 running a k1 job');

# --- run -> FAILED (name contains "fail"), and by fail_rate ---
my $fid = save({ %base, name => 'Nightly FAIL check' })->{json}{id};
$ex = get("/api/user-jobs/run/$fid")->{json};
$s = settled($fid);
($done) = grep { $_->{id} == $ex->{id} } @{ $s->{executions} };
is($done->{status}, 'FAILED', 'job named "fail": execution FAILED');
like($done->{errorMessage}, qr/fail/i, 'errorMessage set');
$j = job($fid);
is($j->{status}, 'FAILED', 'job FAILED');
is($j->{jobErrorDetails}, $done->{errorMessage}, 'jobErrorDetails = errorMessage');

$sb->config({ 'scheduler.fail_rate' => 1 });
$ex = get("/api/user-jobs/run/$jid")->{json};
$s = settled($jid);
is($s->{executions}[0]{status}, 'FAILED', 'fail_rate 1: FAILED');
like($s->{executions}[0]{errorMessage}, qr/fail_rate/, 'errorMessage names the knob');
$sb->config({ 'scheduler.fail_rate' => 0 });
$ex = get("/api/user-jobs/run/$jid")->{json};
$s = settled($jid);
is($s->{executions}[0]{status}, 'SUCCESS', 'fail_rate 0: SUCCESS again');
is(job($jid)->{jobErrorDetails}, undef, 'success clears jobErrorDetails');

# --- parallel runs and stop ---
$sb->config({ 'scheduler.run_duration_min' => 10000 });	# 10 real s: stays running
my $e1 = get("/api/user-jobs/run/$jid")->{json};
my $e2 = get("/api/user-jobs/run/$jid")->{json};
isnt($e1->{id}, $e2->{id}, 'two parallel executions, own ids');
$s = summary($jid);
is_deeply([map { $_->{status} } @{ $s->{executions} }[0, 1]], ['RUNNING', 'RUNNING'],
		  'both RUNNING');
is($s->{executions}[0]{id}, $e2->{id}, 'newest first');
empty_ok(get("/api/user-jobs/stop/$jid"), 'stop');
$s = summary($jid);
for my $e (@{ $s->{executions} }[0, 1])
{
	is($e->{status}, 'FAILED', "stopped execution $e->{id}: FAILED");
	is($e->{errorMessage}, 'stopped', "stopped execution $e->{id}: errorMessage stopped");
	like($e->{endTime}, $ISO, "stopped execution $e->{id}: endTime");
}
$j = job($jid);
is($j->{status}, 'FAILED', 'job FAILED after stop');
is($j->{jobErrorDetails}, 'stopped', 'job jobErrorDetails stopped');
empty_ok(get("/api/user-jobs/stop/$jid"), 'stop with nothing running');
plain_error(get('/api/user-jobs/stop/424242'), 404, 'job_not_found', 'stop unknown');
plain_error(get('/api/user-jobs/stop/abc'), 400, 'invalid_id', 'stop non-integer');

# --- pause / activate ---
my $wid = $seed->[0]{id};
empty_ok(get("/api/user-jobs/pause/$wid"), 'pause');
ok(!job($wid)->{isActive}, 'paused: isActive false');
is(job($wid)->{nextRun}, undef, 'paused: nextRun null');
empty_ok(get("/api/user-jobs/activate/$wid"), 'activate');
ok(job($wid)->{isActive}, 'activated: isActive true');
like(job($wid)->{nextRun}, $ISO, 'activated daily job: nextRun set');
plain_error(get('/api/user-jobs/pause/424242'), 404, 'job_not_found', 'pause unknown');
plain_error(get('/api/user-jobs/activate/zz'), 400, 'invalid_id', 'activate non-integer');
plain_error(get("/api/user-jobs/pause/$wid", 'k2'), 404, 'job_not_found', 'k2 pausing a k1 job');

# --- clone and sync-token ---
$sb->config({ 'scheduler.run_duration_min' => 0 });
my $orig = job($fid);
$r = get("/api/user-jobs/clone/$fid");
is($r->{status}, 200, 'clone: 200');
my $cid = $r->{json}{newJobId};
ok($cid =~ /^\d+$/ && $cid != $fid, 'newJobId is a new id');
my $c = job($cid);
is($c->{$_}, $orig->{$_}, "clone copies $_")
	for qw(name timeZone jobCronExpression jobRunFrequency userJobStartTime);
is(!!$c->{isActive}, !!$orig->{isActive}, 'clone copies isActive');
is($c->{status}, 'READY', 'clone is READY');
is($c->{lastRun}, undef, 'clone never ran');
is(summary($cid)->{totalExecutions}, 0, 'clone has no executions');
my $tok = tokens();
is($tok->{$cid}, $tok->{$fid}, 'clone has the token of its original');
isnt($tok->{$jid}, $tok->{$fid}, 'other jobs have other tokens');
plain_error(get('/api/user-jobs/clone/424242'), 404, 'job_not_found', 'clone unknown');

$r = get("/api/user-jobs/sync-token/$jid");
is($r->{status}, 200, 'sync-token: 200');
is_deeply($r->{json}, { newJobId => $jid }, 'sync-token: newJobId is the job itself');
$tok = tokens();
is(scalar(keys %$tok), scalar @{ get('/api/user-jobs')->{json} }, 'a token per job');
ok(!grep({ $_ ne $tok->{$jid} } values %$tok), 'every job of the user now has its token');
my $k2tok = tokens('k2');
ok(!grep({ $_ eq $tok->{$jid} } values %$k2tok), 'k2 jobs untouched');
plain_error(get('/api/user-jobs/sync-token/abc'), 400, 'invalid_id', 'sync-token non-integer');

# --- summary is capped at the last 15 ---
my @ids = map { get("/api/user-jobs/run/$fid")->{json}{id} } 1 .. 17;
$s = settled($fid);
is($s->{jobId}, $fid, 'summary jobId');
is($s->{jobName}, 'Nightly FAIL check', 'summary jobName');
is(scalar @{ $s->{executions} }, 15, '15 executions listed');
is($s->{totalExecutions}, 15, 'totalExecutions counts the 15 shown');
is($s->{failedExecutions}, 15, 'failedExecutions');
is($s->{successfulExecutions}, 0, 'successfulExecutions');
is_deeply([map { $_->{id} } @{ $s->{executions} }], [reverse @ids[2 .. 16]],
		  'the newest 15, newest first');
plain_error(get('/api/user-jobs/user-job-executions/abc'), 400, 'invalid_id', 'summary non-integer');
plain_error(get('/api/user-jobs/user-job-executions/424242'), 404, 'job_not_found', 'summary unknown');

# --- notifications ---
is_deeply(get('/api/notifications')->{json}, [], 'no addresses at first');
$r = $sb->req('POST', '/api/notifications', key => 'k1', json => 'ops@example.com');
is($r->{status}, 200, 'POST JSON string: 200');
is($r->{json}, 'ops@example.com', 'echoes the address');
$r = $sb->req('POST', '/api/notifications', key => 'k1', body => 'alerts+jobs@mail.example.org',
			  ctype => 'text/plain');
is($r->{status}, 200, 'POST bare text address: 200');
$r = $sb->req('POST', '/api/notifications', key => 'k1', json => 'OPS@example.com');
is($r->{status}, 200, 'duplicate (other case): 200');
is_deeply(get('/api/notifications')->{json}, ['ops@example.com', 'alerts+jobs@mail.example.org'],
		  'duplicate not stored twice; insertion order');
for my $bad ('not-an-email', 'a@b', 'a@@b.example', '.a@b.example', 'a..b@c.example',
			 'a@-b.example', 'a@b.c', 'a b@c.example', '')
{
	plain_error($sb->req('POST', '/api/notifications', key => 'k1', json => $bad), 400,
				'invalid_email', "invalid address '$bad'");
}
plain_error($sb->req('POST', '/api/notifications', key => 'k1', json => "a\x{0}b\@c.example"), 400,
			'invalid_email', 'address with NUL');
plain_error($sb->req('POST', '/api/notifications', key => 'k1', body => '"unterminated',
					 ctype => 'application/json'), 400, 'invalid_request', 'broken JSON string');
is(scalar @{ get('/api/notifications')->{json} }, 2, 'invalid addresses not stored');
is_deeply(get('/api/notifications', 'k2')->{json}, [], 'k2 has no addresses');

# --- execution emails ---
my $eid = $ids[16];
empty_ok(get("/api/email/jobExecution/$eid"), 'email trigger');
my $mails = get('/_sandbox/scheduler/emails')->{json};
is(scalar @$mails, 1, 'one email recorded');
is($mails->[0]{executionId}, $eid, 'email executionId');
is($mails->[0]{jobId}, $fid, 'email jobId');
is($mails->[0]{executionStatus}, 'FAILED', 'email executionStatus');
is_deeply($mails->[0]{to}, ['ops@example.com', 'alerts+jobs@mail.example.org'],
		  'sent to the notification addresses');
like($mails->[0]{sentAt}, $ISO, 'sentAt');
plain_error(get('/api/email/jobExecution/999999'), 404, 'execution_not_found', 'email for unknown execution');
plain_error(get('/api/email/jobExecution/x'), 400, 'invalid_id', 'email non-integer');
plain_error(get("/api/email/jobExecution/$eid", 'k2'), 404, 'execution_not_found',
			'k2 emailing a k1 execution');
is_deeply(get('/_sandbox/scheduler/emails', 'k2')->{json}, [], 'k2 has no emails');
is(scalar @{ get('/_sandbox/scheduler/emails')->{json} }, 1, 'failed triggers recorded nothing');

# --- delete ---
empty_ok($sb->req('DELETE', "/api/user-jobs/$fid", key => 'k1'), 'DELETE job');
plain_error(get("/api/user-jobs/$fid"), 404, 'job_not_found', 'deleted job');
plain_error(get("/api/user-jobs/user-job-executions/$fid"), 404, 'job_not_found', 'summary of deleted job');
plain_error(get("/api/email/jobExecution/$eid"), 404, 'execution_not_found', 'its executions are gone');
ok(!grep({ $_->{id} == $fid } @{ get('/api/user-jobs')->{json} }), 'not listed');
plain_error($sb->req('DELETE', "/api/user-jobs/$fid", key => 'k1'), 404, 'job_not_found', 'delete twice');
plain_error($sb->req('DELETE', '/api/user-jobs/abc', key => 'k1'), 400, 'invalid_id', 'delete non-integer');
is(job($cid)->{name}, 'Nightly FAIL check', 'the clone survives its original');

# --- knobs, reset ---
is($sb->req('POST', '/_sandbox/config', json => { 'scheduler.fail_rate' => 2 })->{status}, 400,
   'fail_rate above 1 rejected');
is($sb->req('POST', '/_sandbox/config', json => { 'scheduler.run_duration_min' => -1 })->{status}, 400,
   'negative run duration rejected');
my $cfg = get('/_sandbox/config')->{json};
is($cfg->{'scheduler.run_duration_min'}, 0, 'config shows run_duration_min');
is($cfg->{'scheduler.fail_rate'}, 0, 'config shows fail_rate');

$sb->config({ 'scheduler.run_duration_min' => 1 });
get("/api/user-jobs/run/$jid");		# its timer fires after the reset
$sb->reset_all;
$r = get('/api/user-jobs');
is_deeply([map { $_->{name} } @{ $r->{json} }], [map { $_->{name} } @$seed], 'reset: seeded jobs again');
is($r->{json}[0]{status}, 'READY', 'reset: READY');
is_deeply(get('/api/notifications')->{json}, [], 'reset: no addresses');
is_deeply(get('/_sandbox/scheduler/emails')->{json}, [], 'reset: no emails');
select(undef, undef, undef, 0.2);
is(job($r->{json}[0]{id})->{status}, 'READY', 'a timer from before the reset changes nothing');

done_testing();
