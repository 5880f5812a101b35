# Paths whose decoded segments are not UTF-8: every route with a path
# parameter answers 400 invalid_path to its own methods and 405 (with
# Allow) to the others, unknown paths 404, never a 500; valid UTF-8 in a
# segment is passed on as before.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/../lib";
use Sandbox;
use Test::More;

my $sb = Sandbox->start(keys => ['std-key']);

# every route template with a parameter, and its methods
my %routes = (
	'/_sandbox/movies/{movie}' => 'GET',
	'/awards/{award}' => 'GET',
	'/books/{book}' => 'GET',
	'/collections/{type}/{collection}' => 'GET',
	'/concerts/{concert}' => 'GET',
	'/_sandbox/orders/chargeback/{id}' => 'POST',
	'/_sandbox/orders/checkout/{transaction_id}' => 'GET',
	'/_sandbox/orders/pdf/{id}' => 'GET',
	'/_sandbox/orders/transactions/{transaction_id}/fail' => 'POST',
	'/_sandbox/orders/transactions/{transaction_id}/pay' => 'POST',
	'/api/email/jobExecution/{id}' => 'GET',
	'/api/user-jobs/activate/{jobId}' => 'GET',
	'/api/user-jobs/clone/{jobId}' => 'GET',
	'/api/user-jobs/pause/{jobId}' => 'GET',
	'/api/user-jobs/run/{jobId}' => 'GET',
	'/api/user-jobs/stop/{jobId}' => 'GET',
	'/api/user-jobs/sync-token/{jobId}' => 'GET',
	'/api/user-jobs/user-job-executions/{jobId}' => 'GET',
	'/api/user-jobs/{id}' => 'DELETE GET',
	'/files/{file_id}/content' => 'GET',
	'/files/{file_id}' => 'GET',
	'/public/orders/{id}/cancel-deferred' => 'POST',
	'/public/orders/{id}/cancel-pending' => 'POST',
	'/public/orders/{id}/status' => 'GET',
	'/public/orders/{id}' => 'GET',
	'/public/transaction/{id}/cancel' => 'POST',
	'/public/transaction/{id}/data' => 'GET',
	'/public/transaction/{unique_id}/fee' => 'GET',
	'/public/transaction/{unique_id}/status' => 'GET',
	'/public/users/{id}/orders' => 'GET',
	'/public/users/{id}/vehicles' => 'GET',
	'/todos/{id}' => 'DELETE PUT',
	'/uploads/{file_id}' => 'PUT',
	'/v1/business-questions/{questionId}/answer' => 'GET',
	'/v1/business-questions/{questionId}' => 'GET',
	'/v1/movies/{movie}' => 'GET',
);

for my $tmpl (sort keys %routes)
{
	(my $path = $tmpl) =~ s/\{[^}]+\}/%FF/g;
	my %allowed = map { $_ => 1 } split ' ', $routes{$tmpl};
	for my $m (qw(GET POST PUT PATCH DELETE))
	{
		my $r = $sb->req($m, $path, key => 'std-key', $m =~ /^P/ ? (body => '{}', ctype => 'application/json') : ());
		if ($allowed{$m})
		{
			is($r->{status}, 400, "$m $path: 400");
			my $code = $r->{json}{error}{code} // ($r->{json}{type} // '') =~ s{.*/}{}r;
			is($code, 'invalid_path', "$m $path: invalid_path");
		}
		else
		{
			is($r->{status}, 405, "$m $path: 405");
			my @allow = sort split /,\s*/, $r->{headers}{allow} // '';
			is("@allow", join(' ', sort keys %allowed), "$m $path: Allow lists the route's methods");
		}
		ok(defined $r->{json}, "$m $path: the answer is JSON");
	}
}

# the kinds of invalid UTF-8, on one route
for my $seg ('%FF', 'ab%C3', '%C0%AF', '%ED%A0%80', '%F4%90%80%80', '%E2%82', 'x%80y')
{
	my $r = $sb->req('GET', "/public/orders/$seg", key => 'std-key');
	is($r->{status}, 400, "GET /public/orders/$seg: 400");
	like($r->{json}{error}{message} // '', qr{not valid UTF-8: /public/orders/}, "GET /public/orders/$seg: says why");
}
my $r = $sb->req('GET', '/public/orders/%FF');
is($r->{status}, 400, 'without a key too: 400 (the path is checked first)');

# a NUL byte in a segment would end the decoded parameter early (A-1%00x
# read as A-1): 400 invalid_path on every route, before the key
for my $p ('/public/orders/A-1%00x', '/v1/movies/1000%00x', '/concerts/1%00', '/todos/1%00')
{
	my $m = $p =~ /todos/ ? 'DELETE' : 'GET';
	$r = $sb->req($m, $p);
	is($r->{status}, 400, "$m $p: 400");
	is($r->{json}{error}{code}, 'invalid_path', "$m $p: invalid_path");
	like($r->{json}{error}{message} // '', qr/NUL byte/, "$m $p: says why");
}

# unknown paths with invalid UTF-8: 404, the path shown escaped
$r = $sb->req('GET', '/no/such/%FF');
is($r->{status}, 404, 'unknown path with %FF: 404');
is($r->{json}{error}{message}, 'no route for GET /no/such/%FF', '404 message shows the raw path');
$r = $sb->req('PATCH', '/v1/movies/%FF/x');
is($r->{status}, 404, 'unknown deeper path: 404');

# valid UTF-8 in a segment still reaches the handler
$r = $sb->req('GET', '/public/orders/%C3%A9t%C3%A9', key => 'std-key');
is($r->{status}, 404, 'valid UTF-8 id: the handler answers (no such order: 404)');
$r = $sb->req('PATCH', '/todos/%C3%A9');
is($r->{status}, 405, 'valid UTF-8, wrong method: 405');
like($r->{json}{error}{message}, qr{^method PATCH is not allowed on /todos/[^%]+$}, "405 message shows the decoded path");

my $st = $sb->req('GET', '/_sandbox/stats');
unlike($st->{body} // '', qr/"internal"/, 'no "internal" error was ever answered');

done_testing();
