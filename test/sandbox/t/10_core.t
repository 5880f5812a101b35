# The sandbox's core: command line, routing errors, auth, knobs, stats and
# the request log.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/../lib";
use Sandbox;
use Test::More;

my $bin = Sandbox::binary();

# --- command line ---------------------------------------------------------
my $help = `$bin --help`;
is($? >> 8, 0, '--help exits 0');
like($help, qr/--port N/, '--help documents --port');
like($help, qr/--key KEY\[=TIER\]/, '--help documents --key');
like($help, qr/--time-scale S/, '--help documents --time-scale');
like($help, qr/--seed N/, '--help documents --seed');
like(`$bin --version`, qr/^partner_svc_sandbox \d/, '--version');
system("$bin --no-such-option >/dev/null 2>&1");
is($? >> 8, 2, 'unknown option exits 2');
system("$bin --key k=platinum >/dev/null 2>&1");
is($? >> 8, 2, 'unknown tier exits 2');
system("$bin --set no.such.knob=1 >/dev/null 2>&1");
is($? >> 8, 2, 'unknown knob exits 2');
system("$bin --fault 'GET /todos:explode' >/dev/null 2>&1");
is($? >> 8, 2, 'unknown fault kind exits 2');

my $sb = Sandbox->start(keys => ['std-key', 'prem-key=premium'],
	args => ['--set', 'short_page_rate=0.25', '--seed', '42']);
like($sb->stdout, qr{^partner_svc_sandbox listening on http://127\.0\.0\.1:(\d+)$}m,
	'port 0: the chosen address is printed');
is($sb->stdout =~ /:(\d+)$/m ? $1 : 0, $sb->port, 'printed port = port file');

# --- routing --------------------------------------------------------------
my $r = $sb->req('GET', '/no/such/route');
is($r->{status}, 404, 'unknown route: 404');
is($r->{json}{error}{code}, 'not_found', 'unknown route: error code');
$r = $sb->req('PATCH', '/todos');
is($r->{status}, 405, 'wrong method: 405');
like($r->{headers}{allow} // '', qr/GET/, '405 carries Allow');

# --- auth -----------------------------------------------------------------
$r = $sb->req('GET', '/public/orders');
is($r->{status}, 401, 'orders without key: 401');
is($r->{json}{error}{code}, 'missing_api_key', 'missing key code');
ok(exists $r->{json}{data} && !defined $r->{json}{data}, 'orders style: data is null');
$r = $sb->req('GET', '/public/orders', key => 'wrong');
is($r->{status}, 401, 'wrong key: 401');
is($r->{json}{error}{code}, 'invalid_api_key', 'invalid key code');
$r = $sb->req('GET', '/public/orders', headers => { Authorization => 'Basic std-key' });
is($r->{status}, 401, 'non-Bearer scheme: 401');
$r = $sb->req('GET', '/public/orders', key => 'std-key');
is($r->{status}, 200, 'orders with key: 200');
$r = $sb->req('GET', '/v1/key/validate');
is($r->{status}, 401, 'generation without key: 401');
like($r->{headers}{'content-type'}, qr{application/problem\+json}, 'generation 401 is problem JSON');
is($r->{json}{status}, 401, 'problem status member');
$r = $sb->req('GET', '/todos');
is($r->{status}, 200, 'todos need no key');

# --- knobs ----------------------------------------------------------------
my $cfg = $sb->req('GET', '/_sandbox/config')->{json};
is($cfg->{seed}, 42, 'config shows the seed');
is($cfg->{short_page_rate}, 0.25, '--set applied at start');
is(scalar @{ $cfg->{partners} }, 2, 'two partners');
is($cfg->{partners}[1]{tier}, 'premium', 'tier of the second key');
ok(!grep({ /key/ && $_ ne 'partners' } keys %$cfg) && $sb->req('GET', '/_sandbox/config')->{body} !~ /std-key/,
	'config never shows the keys');
is($cfg->{rate_limits}{'GET /orders/{id}/status'}{standard}, 15, 'rate-limit table row');
$cfg = $sb->config({ short_page_rate => 0.5, rl_window_ms => 1234 });
is($cfg->{short_page_rate}, 0.5, 'POST config sets a knob');
is($cfg->{rl_window_ms}, 1234, 'POST config sets the window');
$r = $sb->req('POST', '/_sandbox/config', json => { 'no_such' => 1 });
is($r->{status}, 400, 'unknown knob: 400');
is($r->{json}{error}{code}, 'unknown_knob', 'unknown knob code');
$r = $sb->req('POST', '/_sandbox/config', json => { short_page_rate => 7 });
is($r->{status}, 400, 'invalid knob value: 400');
$r = $sb->req('POST', '/_sandbox/config', json => { 'rate_limit.GET /nowhere' => 1 });
is($r->{status}, 400, 'unknown rate-limit row: 400');

my $other = Sandbox->start(args => ['--seed', '43']);
isnt($other->req('GET', '/_sandbox/config')->{json}{rl_offset_ms},
	Sandbox->start(args => ['--seed', '42'])->req('GET', '/_sandbox/config')->{json}{rl_offset_ms},
	'window alignment offset follows the seed');
$other->stop;

# --- stats and the request log -------------------------------------------
$sb->reset_stats;
$sb->req('GET', '/todos?x=1&y=%20two');
$sb->req('GET', '/todos');
$sb->req('GET', '/public/orders?status=ACTIVE', key => 'std-key');
$sb->req('GET', '/_sandbox/health');
is($sb->count('GET /todos'), 2, 'stats count per route template');
is($sb->count('GET /public/orders'), 1, 'stats of another route');
is($sb->count('GET /_sandbox/health'), 0, 'control routes are not counted');
my $reqs = $sb->requests('GET /todos');
is(scalar @$reqs, 2, 'request log filtered by route');
is($reqs->[0]{query}, 'x=1&y=%20two', 'query string kept as sent');
is($reqs->[0]{path}, '/todos', 'path kept');
my $all = $sb->requests;
is($all->[-1]{route}, '/public/orders', 'log is in order');
is($all->[-1]{partner}, 0, 'log names the partner by index');
my $tsv = $sb->req('GET', '/_sandbox/requests.tsv?route=' . Sandbox::_enc('GET /public/orders'))->{body};
like($tsv, qr{^\d+\tGET\t/public/orders\t/public/orders\tstatus=ACTIVE\t200$}m, 'requests.tsv line');
like($sb->req('GET', '/_sandbox/stats.tsv')->{body}, qr{^GET\t/todos\t2\t}m, 'stats.tsv line');
$sb->reset_stats;
is($sb->count('GET /todos'), 0, 'stats reset');
is(scalar @{ $sb->requests }, 0, 'request log reset');

# --- reset ----------------------------------------------------------------
$sb->fault({ route => 'GET /todos', kind => 'error', count => 5 });
$sb->reset_all;
is($sb->req('GET', '/todos')->{status}, 200, 'reset clears faults');

done_testing();
