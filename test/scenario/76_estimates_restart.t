# 76_estimates_restart.t: learned row estimates kept across a clean restart
# (src/shmem/estimates_file.c, docs/estimates.md):
#   1. A complete scan teaches an estimate; after a clean restart (fast
#      stop, start) EXPLAIN VERBOSE shows the same learned estimate and the
#      plan's rows; the file is read and removed at start.
#   2. A file written by another version (its format version changed) is
#      ignored with a LOG: the defaults after the start.
#   3. A damaged file (a byte of an entry changed, or cut short) is
#      ignored with a LOG.
#   4. estimates_reset() and a clean restart: the defaults.
#   5. An immediate stop (a crash) writes nothing: the defaults after it.
# Runs as the postgres user with the installed extension and sandbox, the
# way test/scenario.sh runs every scenario test.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/../sandbox/lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Sandbox;
use Test::More;

$ENV{SANDBOX_BIN} ||= (grep { -x } map { "$_/partner_svc_sandbox" } split /:/, $ENV{PATH})[0];

my $sb = Sandbox->start(keys => ['sandbox-key=standard'], args => [ '--seed', '1' ]);
my $url = $sb->url;

my $node = PostgreSQL::Test::Cluster->new('estimates_restart');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'partner_svc'
statement_timeout = '120s'
});
$node->start;
$node->safe_psql('postgres', qq{
CREATE EXTENSION partner_svc;
CREATE SERVER movies FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'movies', base_url '$url');
CREATE USER MAPPING FOR PUBLIC SERVER movies OPTIONS (api_key 'sandbox-key');
IMPORT FOREIGN SCHEMA movies LIMIT TO (movie_themes) FROM SERVER movies INTO public;
});

my $file = $node->data_dir . '/pg_stat/partner_svc_estimates.stat';

sub sql { return $node->safe_psql('postgres', $_[0]); }

# The estimate line and the plan's rows of a scan of movie 52's themes.
sub estimate
{
	my $plan = sql("EXPLAIN (VERBOSE) SELECT * FROM movie_themes WHERE movie = '52'");
	my ($line) = $plan =~ /Partner Estimate: (.*)$/m;
	my ($rows) = $plan =~ /Foreign Scan on .* rows=(\d+)/;
	return ($line // '(none)', $rows // -1);
}

# Restarts cleanly; returns what the server logged while starting.
sub restart_logged
{
	my ($mode) = @_;
	$node->stop($mode // 'fast');
	my $from = -s $node->logfile;
	$node->start;
	return substr(slurp_file($node->logfile), $from);
}

sub learn
{
	return sql("SELECT count(*) FROM movie_themes WHERE movie = '52'");
}

# ---- 1. kept across a clean restart ----

my ($line, $rows) = estimate();
is($line, '250 rows (default)', 'before any scan: the default');
my $count = learn();
cmp_ok($count, '>', 0, "movie 52 has themes ($count)");
($line, $rows) = estimate();
is($line, "$count rows (learned from 1 scan)", 'after a complete scan: learned');
is($rows, $count, "the plan's rows are the learned count");

$node->stop('fast');
ok(-f $file, 'a clean shutdown writes the file');
$node->start;
($line, $rows) = estimate();
is($line, "$count rows (learned from 1 scan)", 'after a clean restart: the same learned estimate');
is($rows, $count, "after a clean restart: the plan's rows are the learned count");
ok(!-e $file, 'the file is removed once read');
is(sql("SELECT scans || ' ' || last_rows FROM partner_svc.estimates WHERE kind = 'key'"),
	"1 $count", 'the entry is whole: scans and last rows');

# ---- 2. a file of another version is ignored ----

# patches len bytes at offset of the file written by a clean stop
sub patch_file
{
	my ($offset, $bytes) = @_;
	open(my $fh, '+<:raw', $file) or die "open $file: $!";
	seek($fh, $offset, 0) or die;
	print $fh $bytes or die;
	close($fh) or die;
}

$node->stop('fast');
ok(-f $file, 'the file is written again');
patch_file(4, pack('L', 999));		# the format version follows the magic
my $from = -s $node->logfile;
$node->start;
like(substr(slurp_file($node->logfile), $from),
	qr/ignoring file "pg_stat\/partner_svc_estimates.stat": it was written by another version/,
	'another version: logged');
($line) = estimate();
is($line, '250 rows (default)', 'another version: ignored, the default');
ok(!-e $file, 'another version: the file is removed');

# ---- 3. a damaged file is ignored ----

learn();
$node->stop('fast');
my $size = -s $file;
patch_file($size - 20, "\xff");		# inside the last entry
$from = -s $node->logfile;
$node->start;
like(substr(slurp_file($node->logfile), $from),
	qr/ignoring file "pg_stat\/partner_svc_estimates.stat": its checksum does not match/,
	'a changed byte: logged');
($line) = estimate();
is($line, '250 rows (default)', 'a changed byte: ignored, the default');

learn();
$node->stop('fast');
truncate($file, (-s $file) - 10) or die "truncate: $!";
$from = -s $node->logfile;
$node->start;
like(substr(slurp_file($node->logfile), $from),
	qr/ignoring file "pg_stat\/partner_svc_estimates.stat": it is too short/,
	'a short file: logged');
($line) = estimate();
is($line, '250 rows (default)', 'a short file: ignored, the default');

# ---- 4. estimates_reset() and a clean restart ----

learn();
($line) = estimate();
is($line, "$count rows (learned from 1 scan)", 'learned again');
sql("SELECT partner_svc.estimates_reset()");
my $log = restart_logged();
unlike($log, qr/ignoring file/, 'after a reset: nothing to ignore');
ok(!-e $file, 'after a reset and a restart: no file');
($line) = estimate();
is($line, '250 rows (default)', 'after estimates_reset() and a restart: the default');

# ---- 5. an immediate stop writes nothing ----

learn();
($line) = estimate();
is($line, "$count rows (learned from 1 scan)", 'learned before the crash');
$node->stop('immediate');
ok(!-e $file, 'an immediate stop writes no file');
$node->start;
($line) = estimate();
is($line, '250 rows (default)', 'after an immediate stop: the default');

$node->stop;
$sb->stop;
done_testing();
