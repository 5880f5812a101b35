# 62_recheck.t: rows satisfy their WHERE even when the service does not
# apply what it was asked.  A tiny loopback service, written here, ignores
# every filter and key: its order list always holds the same three orders,
# its order detail always answers with the first one, whatever the id, and
# its movie search ignores genre and limit.  Every condition pushed to it
# must be checked again by the scan:
#   - status = 'ACTIVE' gives the ACTIVE order only, also under LIMIT (the
#     recheck runs before a pushed LIMIT counts rows);
#   - status = 'ACTIVE' AND status IS DISTINCT FROM 'ACTIVE' gives nothing;
#   - custom_id = / id = of another order than the one the detail route
#     answers give nothing;
#   - genre = gives only movies whose genres hold it;
#   - persona IN (...), fanned out over its documented values, gives each
#     question once: a stream keeps only the rows of its own value;
#   - EXPLAIN ANALYZE counts the rows the recheck removed.
use strict;
use warnings;

use IO::Socket::INET;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

# ---- the filter-ignoring service (127.0.0.1, a free port) ----

my $orders = '[{"id":"ord_1","custom_id":"A-1","email":"a@example.com","created_date":1,"status":"PENDING"},'
  . '{"id":"ord_2","custom_id":"A-2","email":"b@example.com","created_date":2,"status":"ACTIVE"},'
  . '{"id":"ord_3","custom_id":"A-3","email":"c@example.com","created_date":3,"status":"DEFERRED"}]';
my $order_1 = '{"id":"ord_1","custom_id":"A-1","email":"a@example.com","created_date":1,"status":"PENDING"}';
my $movies = '[{"id":1,"slug":"one","title":"One","genres":["drama","war"]},'
  . '{"id":2,"slug":"two","title":"Two","genres":["comedy"]},'
  . '{"id":3,"slug":"three","title":"Three","genres":["Drama"]}]';
my $nopage = '"pagination":{"limit":100,"has_more":false,"next_cursor":null}';
my $questions = '[{"id":"BQ-HR-001","persona":"hr","question":"a","answerability":"source_required"},'
  . '{"id":"BQ-EK-001","persona":"einkauf","question":"b","answerability":"partial_evidence"},'
  . '{"id":"BQ-KA-001","persona":"kalkulation","question":"c","answerability":"source_required"}]';

my %answers = (
	'/public/orders' => qq({"error":null,"data":$orders,$nopage}),
	'/public/orders/' => qq({"error":null,"data":$order_1}),
	'/movies' => qq({"data":$movies,$nopage}),
	'/v1/business-questions' => qq({"result":$questions,"count":3}),);

my $listener = IO::Socket::INET->new(
	LocalAddr => '127.0.0.1',
	LocalPort => 0,
	Listen => 16,
	ReuseAddr => 1) or die "listen: $!";
my $port = $listener->sockport;
my $log = PostgreSQL::Test::Utils::tempdir() . '/requests.log';

my $pid = fork() // die "fork: $!";
if ($pid == 0)
{
	# bounded: at most 500 connections and 120 s
	alarm 120;
	for (1 .. 500)
	{
		my $c = $listener->accept or next;
		my $line = <$c> // '';
		while (my $h = <$c>) { last if $h =~ /^\r?\n$/; }
		my ($path) = $line =~ m{^GET (\S+)};
		$path //= '';
		open my $fh, '>>', $log;
		print $fh "$path\n";
		close $fh;
		(my $route = $path) =~ s/\?.*//;
		$route = '/public/orders/' if $route =~ m{^/public/orders/.};
		my $body = $answers{$route};
		if (defined $body)
		{
			print $c "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
			  . "Content-Length: " . length($body) . "\r\nConnection: close\r\n\r\n$body";
		}
		else
		{
			print $c "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
		}
		close $c;
	}
	exit 0;
}
close $listener;

# ---- the cluster ----

my $node = PostgreSQL::Test::Cluster->new('recheck');
$node->init;
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'partner_svc'\n");
$node->start;
$node->safe_psql('postgres', qq{
CREATE EXTENSION partner_svc;
CREATE SERVER orders FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'orders', base_url 'http://127.0.0.1:$port');
CREATE SERVER movies FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'movies', base_url 'http://127.0.0.1:$port');
CREATE SERVER catalog FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'catalog', base_url 'http://127.0.0.1:$port');
CREATE USER MAPPING FOR PUBLIC SERVER orders OPTIONS (api_key 'k');
CREATE USER MAPPING FOR PUBLIC SERVER movies OPTIONS (api_key 'k');
CREATE USER MAPPING FOR PUBLIC SERVER catalog OPTIONS (api_key 'k');
IMPORT FOREIGN SCHEMA orders FROM SERVER orders INTO public;
IMPORT FOREIGN SCHEMA movies FROM SERVER movies INTO public;
IMPORT FOREIGN SCHEMA catalog FROM SERVER catalog INTO public;
SET partner_svc.rate_limit = off;
});

sub sql { my ($sql) = @_; return $node->safe_psql('postgres', "SET partner_svc.rate_limit = off; $sql"); }

is(sql("SELECT string_agg(custom_id, ',' ORDER BY custom_id) FROM orders"), 'A-1,A-2,A-3',
	'the service lists three orders');
is(sql("SELECT string_agg(custom_id, ',') FROM orders WHERE status = 'ACTIVE'"), 'A-2',
	'status = ACTIVE: only the ACTIVE order, though the service sent all three');
is(sql("SELECT count(*) FROM orders WHERE status = 'ACTIVE' AND status IS DISTINCT FROM 'ACTIVE'"), '0',
	'contradictory conditions: no row');
is(sql("SELECT string_agg(custom_id, ',') FROM (SELECT * FROM orders WHERE status = 'ACTIVE' LIMIT 1) s"), 'A-2',
	'under a pushed LIMIT the recheck comes first');
is(sql("SELECT string_agg(custom_id, ',') FROM orders WHERE status = 'DEFERRED'"), 'A-3',
	'status = DEFERRED (sent as WILL BE ACTIVE): only the DEFERRED order');
is(sql("SELECT count(*) FROM orders WHERE custom_id = 'A-2'"), '0',
	'custom_id = A-2: the detail answered with A-1, so no row');
is(sql("SELECT count(*) FROM orders WHERE id = 'ord_3'"), '0',
	'id = ord_3: the detail answered with ord_1, so no row');
is(sql("SELECT string_agg(custom_id, ',') FROM orders WHERE custom_id = 'A-1'"), 'A-1',
	'custom_id = A-1: the detail that matches is kept');
is(sql("SELECT string_agg(slug || ':' || genre, ',' ORDER BY id) FROM movies WHERE genre = 'drama'"),
	'one:drama,three:drama', 'genre = drama: only movies whose genres hold it (any case)');
is(sql("SELECT string_agg(id, ',' ORDER BY id) FROM business_questions WHERE persona IN ('hr', 'einkauf', 'HR')"),
	'BQ-EK-001,BQ-HR-001', 'persona IN (...): each question once, though each request got all three');
is(sql("SELECT string_agg(id, ',' ORDER BY id) FROM business_questions WHERE persona = 'hr' OR persona = 'kalkulation'"),
	'BQ-HR-001,BQ-KA-001', 'an OR of personas: the same');
is(sql("SELECT count(*) FROM business_questions WHERE persona = 'HR'"), '0',
	'persona = HR, no documented value: no row');
like(sql("EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT * FROM orders WHERE status = 'ACTIVE'"),
	qr/Rows Removed by Partner Recheck: 2/, 'EXPLAIN ANALYZE counts the removed rows');

# the requests really carried the filters the service ignored
open my $fh, '<', $log or die "log: $!";
my @paths = <$fh>;
close $fh;
ok((grep { m{^/public/orders\?status=ACTIVE} } @paths), 'status was sent');
ok((grep { m{^/public/orders\?status=WILL(%20|\+)BE(%20|\+)ACTIVE} } @paths), 'DEFERRED was sent as WILL BE ACTIVE');
ok((grep { m{^/public/orders/A-2$} } @paths), 'custom_id was sent as the detail key');
ok((grep { m{^/movies\?genre=drama} } @paths), 'genre was sent');
is(join(',', sort map { m{^/v1/business-questions\?persona=(\w+)$} ? $1 : () } @paths),
	'einkauf,hr,hr,kalkulation', 'one request per documented persona, none for HR');

$node->stop;
kill 'TERM', $pid;
waitpid($pid, 0);
done_testing();
