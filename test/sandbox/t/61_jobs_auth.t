# Job families (docs/sandbox-jobs.md): the OAuth2 client-credentials token
# route and the translate family behind it (token expiry on the sandbox's
# clock and at its time scale, 401 with WWW-Authenticate, renewal), the
# classify family's key in the query parameter api_key, and the request
# log that shows which credentials a request carried, never their values.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/../lib";
use Sandbox;
use Test::More;
use MIME::Base64 qw(encode_base64);
use Time::HiRes qw(time sleep);

my $K1 = 'auth-key-one';
my $K2 = 'auth-key-two';
my $sb = Sandbox->start(keys => ["$K1=standard", "$K2=premium"], args => ['--seed', '5']);
my $FORM = 'application/x-www-form-urlencoded';

sub token_req
{
	my ($s, $body, %o) = @_;
	return $s->req('POST', '/oauth/token', body => $body, ctype => $o{ctype} // $FORM,
				   headers => $o{headers});
}

sub token
{
	my ($s, $key) = @_;
	my $r = token_req($s, "grant_type=client_credentials&client_id=client-$key&client_secret=$key");
	die "token: $r->{status} $r->{body}" unless $r->{status} == 200;
	return $r->{json}{access_token};
}

sub clock { my ($s, $body) = @_; $s->_admin('POST', '/_sandbox/clock', $body) }

sub last_logged
{
	my ($s, $route) = @_;
	my $all = $s->requests($route);
	return $all->[-1];
}

sub translate
{
	my ($s, $tok, $path) = @_;
	return $s->req('GET', $path // '/jobs/translate/history?limit=5',
				   defined $tok ? (headers => { Authorization => "Bearer $tok" }) : ());
}

# --- the token route ---
{
	my $r = token_req($sb, "grant_type=client_credentials&client_id=client-$K1&client_secret=$K1");
	is($r->{status}, 200, 'token: 200');
	like($r->{json}{access_token}, qr/^sbat_[0-9a-f]{32}$/, 'token: an opaque access_token');
	is($r->{json}{token_type}, 'Bearer', 'token: token_type Bearer');
	is($r->{json}{expires_in}, 3600, 'token: expires_in 3600 (sandbox seconds)');
	is($r->{headers}{'cache-control'}, 'no-store', 'token: Cache-Control no-store');
	my $log = last_logged($sb, 'POST /oauth/token');
	is($log->{partner}, 0, 'token: the log names the client by its partner');
	is($log->{query}, '', 'token: nothing in the query');
	is($log->{auth}, 'none', 'token: credentials in the body, no header');

	# client_secret_basic
	my $basic = encode_base64("client-$K2:$K2", '');
	$r = token_req($sb, 'grant_type=client_credentials', headers => { Authorization => "Basic $basic" });
	is($r->{status}, 200, 'token: with Basic client credentials');
	is(last_logged($sb, 'POST /oauth/token')->{auth}, 'basic', 'token: the log says basic');
	is(last_logged($sb, 'POST /oauth/token')->{partner}, 1, 'token: the second client');

	my @bad = (
		["client_id=client-$K1&client_secret=$K1", 400, 'invalid_request', 'no grant_type'],
		["grant_type=password&client_id=client-$K1&client_secret=$K1", 400, 'unsupported_grant_type', 'grant_type password'],
		["grant_type=client_credentials&client_id=client-$K1&client_secret=$K2", 401, 'invalid_client', 'another client\'s secret'],
		["grant_type=client_credentials&client_id=client-$K1&client_secret=nope", 401, 'invalid_client', 'a wrong secret'],
		["grant_type=client_credentials&client_id=$K1&client_secret=$K1", 401, 'invalid_client', 'an unknown client id'],
		["grant_type=client_credentials&client_id=client-$K1", 401, 'invalid_client', 'no secret'],
	);
	for my $b (@bad)
	{
		$r = token_req($sb, $b->[0]);
		is($r->{status}, $b->[1], "token: $b->[3]: $b->[1]");
		is($r->{json}{error}, $b->[2], "token: $b->[3]: $b->[2]");
		ok(defined $r->{json}{error_description}, "token: $b->[3]: error_description");
		like($r->{headers}{'www-authenticate'}, qr/^Basic realm=/, "token: $b->[3]: WWW-Authenticate")
		  if $b->[1] == 401;
	}
	$r = token_req($sb, "grant_type=client_credentials&client_id=client-$K1&client_secret=$K1",
				   ctype => 'application/json');
	is($r->{json}{error}, 'invalid_request', 'token: a JSON body is invalid_request');
	# percent-encoding of the form
	$r = token_req($sb, "grant_type=client_credentials&client_id=client%2D$K1&client_secret=" .
				   join('', map { sprintf('%%%02X', ord) } split //, $K1));
	is($r->{status}, 200, 'token: a percent-encoded form');
}

# --- the translate family with a token ---
{
	my $t1 = token($sb, $K1);
	my $t2 = token($sb, $K2);
	my $r = translate($sb, $t1);
	is($r->{status}, 200, 'translate: 200 with an access token');
	my $log = last_logged($sb, 'GET /jobs/translate/history');
	is($log->{auth}, 'bearer:token', 'translate: the log shows a Bearer access token');
	is($log->{partner}, 0, 'translate: the token\'s client');
	translate($sb, $t2);
	is(last_logged($sb, 'GET /jobs/translate/history')->{partner}, 1, 'translate: the other client\'s token');

	$r = translate($sb, undef);
	is($r->{status}, 401, 'translate: no Authorization is 401');
	is($r->{json}{error}{code}, 'missing_token', 'translate: missing_token');
	is($r->{headers}{'www-authenticate'}, 'Bearer realm="jobs"', 'translate: WWW-Authenticate Bearer');

	$r = $sb->req('GET', '/jobs/translate/history', key => $K1);
	is($r->{status}, 401, 'translate: an API key instead of a token is 401');
	is($r->{json}{error}{code}, 'invalid_token', 'translate: invalid_token');
	like($r->{headers}{'www-authenticate'}, qr/^Bearer realm="jobs", error="invalid_token"/,
		 'translate: WWW-Authenticate error="invalid_token"');
	is(last_logged($sb, 'GET /jobs/translate/history')->{auth}, 'bearer:key',
	   'translate: the log shows the API key was sent');

	# the other families take the API key, not a token
	$r = $sb->req('GET', '/jobs/ocr/models', headers => { Authorization => "Bearer $t1" });
	is($r->{status}, 401, 'ocr: an access token is not an API key');
	is($sb->req('GET', '/jobs/ocr/models', key => $K1)->{status}, 200, 'ocr: the API key');
}

# --- expiry on the sandbox clock, renewal ---
{
	clock($sb, { freeze => JSON::PP::true });
	my $old = token($sb, $K1);
	clock($sb, { advance_ms => 3599_000 });
	is(translate($sb, $old)->{status}, 200, 'expiry: valid 3599 sandbox seconds later');
	clock($sb, { advance_ms => 1_000 });
	my $r = translate($sb, $old);
	is($r->{status}, 401, 'expiry: 401 after 3600 sandbox seconds');
	is($r->{json}{error}{code}, 'token_expired', 'expiry: token_expired');
	is($r->{headers}{'www-authenticate'},
	   'Bearer realm="jobs", error="invalid_token", error_description="The access token expired"',
	   'expiry: WWW-Authenticate error="invalid_token" (RFC 6750)');
	is(last_logged($sb, 'GET /jobs/translate/history')->{auth}, 'bearer:expired',
	   'expiry: the log shows an expired token');
	my $new = token($sb, $K1);
	isnt($new, $old, 'renewal: a new token');
	is(translate($sb, $new)->{status}, 200, 'renewal: the new token works');
	is(translate($sb, $old)->{status}, 401, 'renewal: the old one stays expired');

	# the lifetime is a knob
	$sb->config({ 'oauth.token_ttl_s' => 60 });
	my $r2 = token_req($sb, "grant_type=client_credentials&client_id=client-$K1&client_secret=$K1");
	is($r2->{json}{expires_in}, 60, 'knob oauth.token_ttl_s: expires_in 60');
	clock($sb, { advance_ms => 60_000 });
	is(translate($sb, $r2->{json}{access_token})->{status}, 401, 'knob: expired after 60 s');
	my $bad = $sb->req('POST', '/_sandbox/config', json => { 'oauth.token_ttl_s' => 0 });
	is($bad->{status}, 400, 'knob: 0 is refused');

	# a reset forgets every token
	my $t = token($sb, $K1);
	$sb->reset_all;
	is(translate($sb, $t)->{status}, 401, 'reset: tokens are forgotten');
}

# --- expiry at the sandbox's time scale (real time) ---
{
	my $fast = Sandbox->start(keys => [$K1], args => ['--time-scale', '0.001']);
	my $t0 = time;
	my $tok = token($fast, $K1);
	# 3600 sandbox seconds are 3.6 real seconds: never expired earlier
	my $expired_at = Sandbox::wait_until(sub {
		translate($fast, $tok)->{status} == 401 ? time : 0 }, 60);
	ok(defined $expired_at, 'time scale 0.001: the token expires');
	cmp_ok($expired_at - $t0, '>=', 3.5, 'time scale 0.001: not before 3.6 real seconds');
	is(translate($fast, token($fast, $K1))->{status}, 200, 'time scale 0.001: a new token works');
	$fast->stop;
}

# --- classify: the key in the query parameter api_key ---
{
	$sb->reset_stats;
	my $r = $sb->req('GET', "/jobs/classify/history?limit=3&api_key=$K1");
	is($r->{status}, 200, 'classify: 200 with api_key');
	my $log = last_logged($sb, 'GET /jobs/classify/history');
	is($log->{query}, 'limit=3&api_key=REDACTED', 'classify: the log shows the parameter, not the key');
	is($log->{auth}, 'query:api_key', 'classify: auth query:api_key');
	is($log->{partner}, 0, 'classify: the key\'s partner');
	$sb->req('GET', "/jobs/classify/models?api_key=$K2");
	is(last_logged($sb, 'GET /jobs/classify/models')->{partner}, 1, 'classify: the other key');

	$r = $sb->req('GET', '/jobs/classify/history', key => $K1);
	is($r->{status}, 401, 'classify: the key in the header only is 401');
	is($r->{json}{error}{code}, 'missing_api_key', 'classify: missing_api_key');
	is(last_logged($sb, 'GET /jobs/classify/history')->{auth}, 'bearer:key',
	   'classify: the log shows the header was sent instead');
	$r = $sb->req('GET', '/jobs/classify/history?api_key=wrong');
	is($r->{status}, 401, 'classify: a wrong key is 401');
	is($r->{json}{error}{code}, 'invalid_api_key', 'classify: invalid_api_key');

	# both: the query decides
	$r = $sb->req('GET', "/jobs/classify/history?api_key=$K2", key => $K1);
	is(last_logged($sb, 'GET /jobs/classify/history')->{auth}, 'bearer:key,query:api_key',
	   'classify: the log shows both');
	is(last_logged($sb, 'GET /jobs/classify/history')->{partner}, 1, 'classify: the query key counts');

	# another family does not take a query key
	$r = $sb->req('GET', "/jobs/ocr/history?api_key=$K1", key => $K1);
	is($r->{json}{error}{code}, 'unknown_parameter', 'ocr: api_key is an unknown parameter');
	is(last_logged($sb, 'GET /jobs/ocr/history')->{query}, 'api_key=REDACTED',
	   'ocr: the log hides a key sent in the query there too');
	$r = $sb->req('GET', "/jobs/classify/models?limit=2&api%5Fkey=$K1");
	is($r->{status}, 200, 'classify: a percent-encoded parameter name is the same parameter');
	is(last_logged($sb, 'GET /jobs/classify/models')->{query}, 'limit=2&api%5Fkey=REDACTED',
	   'classify: the log hides its value too');

	my $all = $sb->req('GET', '/_sandbox/requests')->{body};
	unlike($all, qr/\Q$K1\E|\Q$K2\E/, 'no key appears in the request log');
	my $tsv = $sb->req('GET', '/_sandbox/requests.tsv?route=' . Sandbox::_enc('GET /jobs/classify/history'))->{body};
	like($tsv, qr{^\d+\tGET\t/jobs/classify/history\t/jobs/classify/history\tlimit=3&api_key=REDACTED\t200$}m,
		 'requests.tsv: six fields as before');
	$tsv = $sb->req('GET', '/_sandbox/requests.tsv?with=auth&route=' . Sandbox::_enc('GET /jobs/classify/history'))->{body};
	like($tsv, qr{^\d+\tGET\t/jobs/classify/history\t/jobs/classify/history\tlimit=3&api_key=REDACTED\t200\tquery:api_key$}m,
		 'requests.tsv?with=auth: the credentials as a seventh field');
}

# --- the other services' log: auth of a plain key, of nothing ---
{
	$sb->req('GET', '/public/orders', key => $K1);
	is(last_logged($sb, 'GET /public/orders')->{auth}, 'bearer:key', 'orders: bearer:key');
	$sb->req('GET', '/todos');
	is(last_logged($sb, 'GET /todos')->{auth}, 'none', 'todos: none');
	$sb->req('GET', '/todos', headers => { Authorization => 'Token x' });
	is(last_logged($sb, 'GET /todos')->{auth}, 'other', 'todos: another scheme');
	# a key in a header of the client's choice, alone or after a prefix
	$sb->req('GET', '/todos', headers => { 'X-API-Key' => $K1 });
	is(last_logged($sb, 'GET /todos')->{auth}, 'header:x-api-key', 'todos: a key in X-API-Key');
	$sb->req('GET', '/public/orders', key => $K2, headers => { 'X-Partner-Key' => "Token $K1" });
	is(last_logged($sb, 'GET /public/orders')->{auth}, 'bearer:key,header:x-partner-key',
	   'orders: the Bearer key and a prefixed key in another header');
	$sb->req('GET', '/todos', headers => { 'X-API-Key' => 'not-a-key' });
	is(last_logged($sb, 'GET /todos')->{auth}, 'none', 'todos: a header without a key is not noted');
	unlike($sb->req('GET', '/_sandbox/requests')->{body}, qr/\Q$K1\E|\Q$K2\E/,
		   'still no key in the log');
}

done_testing();
