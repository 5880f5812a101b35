#!/usr/bin/perl
#
# fdw_bench.pl: the measurements of the FDW scan benchmark (issue 3).
#
# Run by test/bench/fdw_bench.sh, which builds and installs everything,
# starts a sandbox and a throw-away cluster preloading partner_svc, and
# passes their addresses here; see docs/performance.md for what each part
# measures and why.  Needs no PostgreSQL Perl module: it drives one psql
# session per part through IPC::Run, and times every query inside the
# server (clock_timestamp() around EXECUTE), so neither connection set-up
# nor psql's round trip is counted.
#
#   (n) the same 1,000 pages as static files served by nginx on loopback
#       (fdw_bench.sh saves and serves them): FDW count(*) and a scan of
#       every column against T, fetch_floor fetch-only over the same nginx,
#       a plain libcurl keep-alive loop that follows next_cursor and parses
#       nothing; what the scan adds to the transfer, with a server that
#       costs as little as a server can;
#   (a) bench-100k (1,000 pages of 100): FDW count(*) and a scan of every
#       column, against fetch_floor fetch-only (the transfer floor) and
#       fetch_floor jansson (a plain C client that parses every page);
#   (b) 20 ms of latency per page, rows consumed with work that costs about
#       as much as a page's fetch: partner_svc.prefetch off against on;
#   (c) 32 movies with themes, 20 ms of latency per page:
#       partner_svc.fanout 1 against 8 (the default) and 32;
#   (d) bench-1m count(*) (10,000 pages): the backend's peak memory above
#       its idle resident size.
#
# Every comparison runs its variants interleaved, repetition after
# repetition, so that the machine's noise hits all of them alike; the
# times are medians, the ratios medians of the ratios of each repetition.  A missed target is printed as MISS; the exit status
# is non-zero only when the benchmark itself could not run.
#
# Usage (normally through fdw_bench.sh):
#   fdw_bench.pl --sandbox URL --sandbox-pid PID --floor PATH/fetch_floor
#                --pglog PATH/postgres.log [--nginx URL] [--reps N]
#                [--parts nabcd] [--verbose]
# with PGHOST, PGPORT and PGUSER naming the cluster.  --parts runs only the
# parts named (default: all; (n) needs --nginx); --verbose prints every
# run's time.

use strict;
use warnings;

use Getopt::Long;
use IPC::Run ();
use JSON::PP ();
use List::Util qw(max min sum);
use Time::HiRes qw(sleep time);

my %opt = (reps => 7, parts => 'nadbc');
GetOptions(\%opt, 'sandbox=s', 'sandbox-pid=i', 'floor=s', 'pglog=s', 'nginx=s', 'reps=i', 'parts=s', 'verbose')
  or die "usage: fdw_bench.pl --sandbox URL --sandbox-pid PID --floor PATH --pglog PATH [--nginx URL] [--reps N] [--parts nabcd] [--verbose]\n";
for my $o (qw(sandbox sandbox-pid floor pglog))
{
	die "fdw_bench.pl: --$o is required\n" unless defined $opt{$o};
}
die "fdw_bench.pl: --reps must be at least 1\n" if $opt{reps} < 1;
$opt{parts} =~ s/n//g unless defined $opt{nginx};

my $REPS = $opt{reps};
my $SB = $opt{sandbox};
my $THEMES = 'GET /v1/movies/{movie}/content/themes';
my $LATENCY_MS = 20;
my $B_PAGES = 30;		# pages of part (b)
my $TARGET_MEM_MB = 64;
my $N_REPS_MIN = 5;		# part (n): at least 5 alternating runs
my $N_TARGET_COUNT = 1.25;	# part (n): count(*) / T
my $N_TARGET_ALL = 1.5;		# part (n): every column / T

$| = 1;

# ---------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------

sub median
{
	my @v = sort { $a <=> $b } @_;
	return undef unless @v;
	return $v[$#v / 2] if @v % 2;
	return ($v[@v / 2 - 1] + $v[@v / 2]) / 2;
}

# The median of the ratios a[i] / b[i] of runs made side by side: each
# pair ran at about the same time, so a change of the machine's load
# between repetitions cancels out.
sub paired
{
	my ($a, $b) = @_;
	return median(map { $a->[$_] / $b->[$_] } 0 .. $#$a);
}

# "median (min..max)" of a list of ms; with --verbose, every run too
sub spread
{
	my @v = @_;
	return sprintf("%8.1f ms  (%s)", median(@v), join(' ', map { sprintf('%.0f', $_) } @v))
	  if $opt{verbose};
	return sprintf("%8.1f ms  (%.1f..%.1f)", median(@v), min(@v), max(@v));
}

# One psql session; sql() sends a statement and returns its output lines.
package Session
{
	sub new
	{
		my ($class, $name) = @_;
		my $self = bless { name => $name, in => '', out => '' }, $class;
		$self->{h} = IPC::Run::start(
			[ 'psql', '-X', '-A', '-t', '-q', '-v', 'ON_ERROR_STOP=0', '-d', 'postgres' ],
			'<', \$self->{in}, '>', \$self->{out}, '2>&1',
			IPC::Run::timeout(900));
		$self->{pid} = ($self->sql('SELECT pg_backend_pid()'))[0];
		return $self;
	}

	# sends without waiting; collect with wait_done
	sub send
	{
		my ($self, $q) = @_;
		$self->{in} .= "$q;\n\\echo __END__\n";
		$self->{h}->pump_nb;
	}

	# true once the last statement sent is done; pumps without blocking
	sub done
	{
		my ($self) = @_;
		$self->{h}->pump_nb;
		return $self->{out} =~ /^__END__$/m;
	}

	sub wait_done
	{
		my ($self) = @_;
		$self->{h}->pump until $self->{out} =~ /^__END__$/m;
		$self->{out} =~ s/\A(.*?)^__END__\n//ms;
		my $text = $1;
		die "fdw_bench.pl: $self->{name}: $text" if $text =~ /(ERROR|FATAL):/;
		return grep { $_ ne '' } split /\n/, $text;
	}

	sub sql
	{
		my ($self, $q) = @_;
		$self->send($q);
		return $self->wait_done;
	}

	# on-CPU time of the backend so far, in ms (precise: schedstat is in ns)
	sub cpu_ms
	{
		my ($self) = @_;
		open(my $f, '<', "/proc/$self->{pid}/schedstat") or return 0;
		my ($ns) = split ' ', scalar <$f>;
		close $f;
		return $ns / 1e6;
	}

	# runs q inside the server; returns (ms, result, backend cpu ms)
	sub timed
	{
		my ($self, $q) = @_;
		(my $lit = $q) =~ s/'/''/g;
		my $c0 = $self->cpu_ms;
		my ($line) = $self->sql("SELECT * FROM bench_ms('$lit')");
		my $c1 = $self->cpu_ms;
		my ($ms, $result) = split /\|/, $line, 2;
		return ($ms, $result, $c1 - $c0);
	}

	sub finish
	{
		my ($self) = @_;
		$self->{in} .= "\\q\n";
		$self->{h}->finish;
	}
}

sub curl
{
	my ($method, $path, $body) = @_;
	my @cmd = ('curl', '-s', '-S', '-f', '-X', $method, "$SB$path");
	push @cmd, ('-H', 'Content-Type: application/json', '--data-binary', $body)
	  if defined $body;
	my $out = '';
	IPC::Run::run(\@cmd, '>', \$out) or die "fdw_bench.pl: curl $method $path failed\n";
	return $out;
}

sub set_latency
{
	my ($ms) = @_;
	curl('DELETE', '/_sandbox/faults');
	curl('POST', '/_sandbox/faults',
		 JSON::PP->new->canonical->encode({ route => $THEMES, kind => 'latency', value => $ms }))
	  if $ms > 0;
}

# CPU time of the sandbox (all its threads), in ms; 10 ms resolution
sub sandbox_cpu_ms
{
	open(my $f, '<', "/proc/$opt{'sandbox-pid'}/stat") or return 0;
	my $stat = <$f>;
	close $f;
	$stat =~ s/^.*\)\s+//;		# after "pid (comm) "
	my @f = split ' ', $stat;
	return ($f[11] + $f[12]) * 10;	# utime, stime (fields 14, 15) in ticks
}

# one walk of fetch_floor on a warm connection: (ms, cpu ms, items)
sub floor_walk
{
	my ($mode, $url) = @_;
	my $out = '';
	IPC::Run::run([ $opt{floor}, '--url', $url // $SB, '--path', '/v1/movies/bench-100k/content/themes',
					'--limit', '100', '--mode', $mode, '--repeat', '2' ], '>', \$out)
	  or die "fdw_bench.pl: fetch_floor --mode $mode failed\n";
	my @lines = split /\n/, $out;
	my (undef, $items, $pages, $ms, $cpu) = split ' ', $lines[-1];
	die "fdw_bench.pl: fetch_floor walked $pages pages, expected 1000\n" unless $pages == 1000;
	return ($ms, $cpu, $items);
}

sub status_kb
{
	my ($pid, $field) = @_;
	open(my $f, '<', "/proc/$pid/status") or return undef;
	while (<$f>)
	{
		return $1 if /^$field:\s+(\d+) kB/;
	}
	return undef;
}

my @results;	# [label, figure text, target text, PASS/MISS]

sub verdict
{
	my ($label, $figure, $target, $ok) = @_;
	push @results, [ $label, $figure, $target, $ok ? 'PASS' : 'MISS' ];
}

# ---------------------------------------------------------------------
# set-up
# ---------------------------------------------------------------------

set_latency(0);
{
	my $s = Session->new('set-up');
	$s->sql($_) for (
		"CREATE EXTENSION IF NOT EXISTS partner_svc",
		"DROP SERVER IF EXISTS movies CASCADE",
		"CREATE SERVER movies FOREIGN DATA WRAPPER partner_svc OPTIONS (service 'movies', base_url '$SB')",
		"CREATE USER MAPPING FOR PUBLIC SERVER movies OPTIONS (api_key 'sandbox-key')",
		"IMPORT FOREIGN SCHEMA movies FROM SERVER movies INTO public",
		# part (n): the same tables over nginx's static copy of bench-100k
		(defined $opt{nginx} ? (
			"DROP SCHEMA IF EXISTS static CASCADE",
			"CREATE SCHEMA static",
			"CREATE SERVER movies_static FOREIGN DATA WRAPPER partner_svc OPTIONS (service 'movies', base_url '$opt{nginx}')",
			"CREATE USER MAPPING FOR PUBLIC SERVER movies_static OPTIONS (api_key 'sandbox-key')",
			"IMPORT FOREIGN SCHEMA movies LIMIT TO (movie_themes) FROM SERVER movies_static INTO static") : ()),
		# the time of one query, measured in the server; the result as text
		"CREATE OR REPLACE FUNCTION bench_ms(q text, OUT ms float8, OUT result text)
		 LANGUAGE plpgsql AS \$\$
		 DECLARE t0 timestamptz;
		 BEGIN
		   t0 := clock_timestamp();
		   EXECUTE q INTO result;
		   ms := extract(epoch FROM clock_timestamp() - t0) * 1000;
		 END \$\$");
	$s->finish;
}

printf "partner_svc FDW scan benchmark: %d repetitions per figure, medians (min..max);\n", $REPS;
print "ratios: medians of the ratios within each repetition\n";
printf "machine: %s CPUs, load average %s at the start\n\n",
  (`nproc` =~ s/\s+//gr), join(' ', (split ' ', `cat /proc/loadavg`)[0 .. 2]);

# ---------------------------------------------------------------------
# (n) bench-100k as static pages served by nginx: the scan against T
# ---------------------------------------------------------------------

if ($opt{parts} =~ /n/)
{
	my $reps = $REPS < $N_REPS_MIN ? $N_REPS_MIN : $REPS;
	my $count_q = "SELECT count(*) FROM static.movie_themes WHERE movie = 'bench-100k'";
	my $all_q = "SELECT sum(pg_column_size(t)) FROM static.movie_themes t WHERE movie = 'bench-100k'";
	printf "(n) bench-100k as 1,000 static pages served by nginx on loopback, %d alternating runs\n", $reps;
	my $s = Session->new('(n)');
	my @r = $s->timed($count_q);		# warm-up: connection, caches
	die "fdw_bench.pl: count(*) over nginx gave $r[1], expected 100000\n" unless $r[1] == 100000;
	$s->timed($all_q);
	my %n;
	# the same queries with jit = off, for information: with the planner's
	# costs of a 1,000-page list far above jit_above_cost, PostgreSQL
	# compiles (and inlines) the query's expressions at every execution
	my $nojit = sub { my ($q) = @_; $s->sql('SET jit = off'); my @t = $s->timed($q);
					  $s->sql('RESET jit'); $t[0] };
	my @variants = (
		[ 'floor', sub { (floor_walk('fetch-only', $opt{nginx}))[0] } ],
		[ 'count', sub { ($s->timed($count_q))[0] } ],
		[ 'all', sub { ($s->timed($all_q))[0] } ],
		[ 'count_nojit', sub { $nojit->($count_q) } ],
		[ 'all_nojit', sub { $nojit->($all_q) } ]);
	for my $rep (1 .. $reps)
	{
		for my $i (0 .. $#variants)
		{
			my ($name, $run) = @{ $variants[($i + $rep) % @variants] };
			push @{ $n{$name} }, $run->();
		}
		print ".";
	}
	print "\n";
	$s->finish;
	printf "  %-44s %s\n", 'fetch_floor fetch-only over nginx (T)', spread(@{ $n{floor} });
	printf "  %-44s %s\n", 'FDW  SELECT count(*) over nginx', spread(@{ $n{count} });
	printf "  %-44s %s\n", 'FDW  every column over nginx', spread(@{ $n{all} });
	printf "  %-44s %s\n", 'FDW  SELECT count(*), jit = off', spread(@{ $n{count_nojit} });
	printf "  %-44s %s\n", 'FDW  every column, jit = off', spread(@{ $n{all_nojit} });
	for my $v (qw(count all))
	{
		printf "  %-44s %8.1f us\n", "above T per page, " . ($v eq 'count' ? 'count(*)' : 'every column'),
		  # ms over 1,000 pages: us per page
		  median(map { $n{$v}[$_] - $n{floor}[$_] } 0 .. $reps - 1);
	}
	print "\n";
	my $r = paired($n{count}, $n{floor});
	verdict('(n) nginx: FDW count(*) / T', sprintf('%.2fx', $r), "<= ${N_TARGET_COUNT}x", $r <= $N_TARGET_COUNT);
	$r = paired($n{all}, $n{floor});
	verdict('(n) nginx: FDW every column / T', sprintf('%.2fx', $r), "<= ${N_TARGET_ALL}x", $r <= $N_TARGET_ALL);
	push @results, [ '    count(*) / T with jit = off', sprintf('%.2fx', paired($n{count_nojit}, $n{floor})),
					 '(information)', '' ];
	push @results, [ '    every column / T with jit = off', sprintf('%.2fx', paired($n{all_nojit}, $n{floor})),
					 '(information)', '' ];
}

# ---------------------------------------------------------------------
# (a) bench-100k without latency
# ---------------------------------------------------------------------

my $A_COUNT = "SELECT count(*) FROM movie_themes WHERE movie = 'bench-100k'";
my $A_ALL = "SELECT sum(pg_column_size(t)) FROM movie_themes t WHERE movie = 'bench-100k'";
my $A_TYPED = "SELECT sum(pg_column_size(ROW(movie, position, title, emoji, explanation))) "
  . "FROM movie_themes WHERE movie = 'bench-100k'";
my (%ms, %cpu);
if ($opt{parts} =~ /a/)
{
	print "(a) bench-100k: 100,000 themes in 1,000 pages of 100, no latency\n";
	my $s = Session->new('(a)');
	my @r = $s->timed($A_COUNT);		# warm-up: connection, caches
	die "fdw_bench.pl: count(*) gave $r[1], expected 100000\n" unless $r[1] == 100000;
	$s->timed($A_ALL);
	my @variants = (
		[ 'floor', sub { floor_walk('fetch-only') } ],
		[ 'jansson', sub { my @w = floor_walk('jansson');
						   die "fdw_bench.pl: jansson counted $w[2] items\n" unless $w[2] == 100000;
						   @w } ],
		[ 'count', sub { my @t = $s->timed($A_COUNT); ($t[0], $t[2]) } ],
		[ 'all', sub { my @t = $s->timed($A_ALL); ($t[0], $t[2]) } ],
		[ 'typed', sub { my @t = $s->timed($A_TYPED); ($t[0], $t[2]) } ]);
	my $sb_cpu = 0;
	for my $rep (1 .. $REPS)
	{
		# rotate the order, so no variant always runs right after another
		for my $i (0 .. $#variants)
		{
			my ($name, $run) = @{ $variants[($i + $rep) % @variants] };
			my $c0 = sandbox_cpu_ms();
			my ($t, $c) = $run->();
			$sb_cpu += sandbox_cpu_ms() - $c0 if $name eq 'count';
			push @{ $ms{$name} }, $t;
			push @{ $cpu{$name} }, $c;
		}
		print ".";
	}
	print "\n";
	$s->finish;

	my %label = (floor => 'fetch_floor fetch-only (transfer floor)',
				 jansson => 'fetch_floor jansson (parses every item)',
				 count => 'FDW  SELECT count(*)',
				 all => 'FDW  every column: sum(pg_column_size(t))',
				 typed => 'FDW  every column but raw jsonb');
	for my $v (qw(floor jansson count all typed))
	{
		printf "  %-44s %s   client CPU %6.1f ms\n", $label{$v}, spread(@{ $ms{$v} }),
		  median(@{ $cpu{$v} });
	}
	printf "  %-44s %8.1f ms  (per FDW count(*) walk, 10 ms resolution)\n",
	  'sandbox CPU serving the 1,000 pages', $sb_cpu / $REPS;
	print "\n";

	my ($f, $j, $c, $a, $t) = map { $ms{$_} } qw(floor jansson count all typed);
	my $r;
	$r = paired($c, $f);
	verdict('(a) FDW count(*) / fetch-only', sprintf('%.2fx', $r), '<= 3x', $r <= 3);
	$r = paired($a, $f);
	verdict('(a) FDW all columns / fetch-only', sprintf('%.2fx', $r), '<= 3x', $r <= 3);
	$r = paired($j, $c);
	verdict('(a) jansson / FDW count(*)', sprintf('%.2fx', $r), '>= 2x', $r >= 2);
	$r = paired($j, $a);
	verdict('(a) jansson / FDW all columns', sprintf('%.2fx', $r), '>= 2x', $r >= 2);
	push @results, [ '    bound: jansson / fetch-only', sprintf('%.2fx', paired($j, $f)),
					 '(no client that fetches page after page can do better)', '' ];
	push @results, [ '    jansson / FDW every column but raw',
					 sprintf('%.2fx', paired($j, $t)), '(information)', '' ];
	push @results, [ '    client CPU: jansson / FDW count(*)',
					 sprintf('%.2fx', median(@{ $cpu{jansson} }) / median(@{ $cpu{count} })),
					 '(information)', '' ];
	push @results, [ '    client CPU: jansson / FDW all columns',
					 sprintf('%.2fx', median(@{ $cpu{jansson} }) / median(@{ $cpu{all} })),
					 '(information)', '' ];
}

# ---------------------------------------------------------------------
# (d) bench-1m: peak memory
# ---------------------------------------------------------------------

if ($opt{parts} =~ /d/)
{
	print "(d) bench-1m: count(*) over 1,000,000 themes (10,000 pages), peak backend memory\n";
	my $s = Session->new('(d)');
	my $pid = $s->{pid};
	# warm-up through bench_ms, as the scan will run: loads PL/pgSQL (3 MB
	# of resident size of its own), libcurl, the caches
	$s->timed("SELECT count(*) FROM movie_themes WHERE movie = 'inception'");
	my $idle_rss = status_kb($pid, 'VmRSS');
	my $hwm_before = status_kb($pid, 'VmHWM');
	# reset the peak to the current size (Linux: "5" into clear_refs)
	my $reset = 0;
	if (open(my $cr, '>', "/proc/$pid/clear_refs"))
	{
		$reset = print($cr "5\n") && close($cr);
	}
	my $hwm_reset = status_kb($pid, 'VmHWM');
	my $log_size = -s $opt{pglog} // 0;

	my $t0 = time;
	$s->send("SELECT * FROM bench_ms('SELECT count(*) FROM movie_themes WHERE movie = ''bench-1m''')");
	my ($samples, $max_rss, $logged) = (0, $idle_rss, 0);
	until ($s->done)
	{
		my $r = status_kb($pid, 'VmRSS');
		if (defined $r)
		{
			$samples++;
			$max_rss = $r if $r > $max_rss;
		}
		if (!$logged && time - $t0 > 1.0)
		{
			# the memory contexts, logged by the backend in the middle of the scan
			IPC::Run::run([ 'psql', '-X', '-A', '-t', '-q', '-d', 'postgres', '-c',
							"SELECT pg_log_backend_memory_contexts($pid)" ], '>', \my $o);
			$logged = 1;
		}
		sleep 0.01;
	}
	my ($line) = $s->wait_done;
	my ($ms, $count) = split /\|/, $line;
	die "fdw_bench.pl: bench-1m count(*) gave $count\n" unless $count == 1000000;
	my $hwm_after = status_kb($pid, 'VmHWM');
	$s->finish;

	# "Grand total" of the contexts logged by that backend
	my $grand = '';
	if (open(my $log, '<', $opt{pglog}))
	{
		seek($log, $log_size, 0);
		while (<$log>)
		{
			$grand = "$1 bytes in $2 blocks, $3 used" if /\[$pid\].*Grand total: (\d+) bytes in (\d+) blocks; \d+ free \(\d+ chunks\); (\d+) used/;
		}
		close $log;
	}

	my $peak = max($hwm_after // 0, $max_rss) - $idle_rss;
	printf "  %-44s %8.1f ms  (%.0f rows/s)\n", 'time of the scan', $ms, 1e6 / ($ms / 1000);
	printf "  %-44s %8d kB\n", 'VmRSS idle (after a warm-up query)', $idle_rss;
	printf "  %-44s %8d kB%s\n", 'VmHWM after the scan', $hwm_after,
	  $reset ? " (peak reset to $hwm_reset kB before it)" : " (could not reset the peak: was $hwm_before kB)";
	printf "  %-44s %8d kB  (%d samples, every 10 ms)\n", 'VmRSS highest sample during the scan', $max_rss, $samples;
	printf "  %-44s %s\n", 'memory contexts at ~1 s (Grand total)', $grand || '(not found in the log)';
	print "\n";
	verdict('(d) peak memory above idle, bench-1m', sprintf('%.1f MB', $peak / 1024),
			"< $TARGET_MEM_MB MB", $peak / 1024 < $TARGET_MEM_MB);
}

# ---------------------------------------------------------------------
# (b) prefetch with 20 ms of latency per page
# ---------------------------------------------------------------------

if ($opt{parts} =~ /b/)
{
	my $rows = $B_PAGES * 100;
	print "(b) $LATENCY_MS ms latency per page, $B_PAGES pages of 100 rows consumed with work: prefetch off vs on\n";
	set_latency($LATENCY_MS);
	my $s = Session->new('(b)');
	my $src = "(SELECT title FROM movie_themes WHERE movie = 'bench-100k' LIMIT $rows) s";
	$s->sql("SET partner_svc.prefetch = off");
	$s->timed("SELECT count(*) FROM $src");	# warm-up

	# what a page costs to fetch, without prefetch and without work
	my @fetch = map { ($s->timed("SELECT count(*) FROM $src"))[0] / $B_PAGES } 1 .. 3;
	my $fetch_page = median(@fetch);

	# what the work costs per 100 rows: a first guess on a local copy of a
	# page, then corrected twice by runs over the scan itself
	$s->sql("CREATE TEMP TABLE bench_page AS SELECT title FROM movie_themes WHERE movie = 'bench-100k' LIMIT 100");
	my $work = sub { "(SELECT sum(length(md5(title || g))) FROM generate_series(1, $_[0]) g)" };
	my $w100 = median(map { ($s->timed("SELECT sum(" . $work->(100) . ") FROM bench_page"))[0] } 1 .. 5);
	my $n = max(1, int(100 * $fetch_page / $w100 + 0.5));
	for my $round (1 .. 2)
	{
		my $situ = median(map { ($s->timed("SELECT sum(" . $work->($n) . ") FROM $src"))[0] } 1 .. 3)
		  / $B_PAGES - $fetch_page;
		$n = max(1, int($n * $fetch_page / $situ + 0.5)) if $situ > 0;
	}
	printf "  fetch of a page without prefetch: %.1f ms; work per row: sum(length(md5(title || g))) over g in 1..%d\n",
	  $fetch_page, $n;

	my $q = "SELECT sum(" . $work->($n) . ") FROM $src";
	my (@off, @on);
	for my $rep (1 .. $REPS)
	{
		for my $mode ($rep % 2 ? qw(off on) : qw(on off))
		{
			$s->sql("SET partner_svc.prefetch = $mode");
			my ($t) = $s->timed($q);
			push @{ $mode eq 'on' ? \@on : \@off }, $t;
		}
		print ".";
	}
	print "\n";
	$s->finish;
	set_latency(0);
	printf "  %-44s %s\n", 'prefetch off', spread(@off);
	printf "  %-44s %s\n", 'prefetch on', spread(@on);
	my $work_page = median(@off) / $B_PAGES - $fetch_page;
	printf "  %-44s %8.1f ms  (off / %d pages - fetch)\n", 'work per page, as consumed', $work_page, $B_PAGES;
	printf "  %-44s %8.1f ms  (%d x max(fetch, work): ideal ratio %.2fx)\n", 'ideal with prefetch',
	  $B_PAGES * max($fetch_page, $work_page), $B_PAGES,
	  ($fetch_page + $work_page) / max($fetch_page, $work_page);
	print "\n";
	my $r = paired(\@off, \@on);
	verdict('(b) prefetch off / on', sprintf('%.2fx', $r), '>= 1.5x', $r >= 1.5);
}

# ---------------------------------------------------------------------
# (c) fan-out over 32 movies with 20 ms of latency per page
# ---------------------------------------------------------------------

if ($opt{parts} =~ /c/)
{
	print "(c) $LATENCY_MS ms latency per page, movie = ANY(32 movies): fanout 1 vs 8 (default) vs 32\n";
	my $catalogue = JSON::PP::decode_json(curl('GET', '/_sandbox/movies'));
	my @movies = grep {
		my $m = $_;
		$m->{id} < 1000 && ($m->{counts}{themes} // 0) > 0 &&
		  grep { $_ eq 'themes' } @{ $m->{available_content} }
	} @{ $catalogue->{data} };
	die "fdw_bench.pl: fewer than 32 movies with themes\n" if @movies < 32;
	@movies = @movies[0 .. 31];
	my $expect = sum(map { $_->{counts}{themes} } @movies);
	my $pages = sum(map { int(($_->{counts}{themes} + 99) / 100) } @movies);
	my $q = "SELECT count(*) FROM movie_themes WHERE movie = ANY(ARRAY["
	  . join(',', map { "'$_->{slug}'" } @movies) . "])";
	printf "  32 movies (ids %d..%d), %d themes in %d pages\n", $movies[0]{id}, $movies[-1]{id}, $expect, $pages;

	set_latency($LATENCY_MS);
	my $s = Session->new('(c)');
	$s->sql("SET partner_svc.fanout = 32");
	$s->timed($q);		# warm-up: opens the connections
	my %t;
	for my $rep (1 .. $REPS)
	{
		for my $f ($rep % 2 ? (1, 8, 32) : (32, 8, 1))
		{
			$s->sql("SET partner_svc.fanout = $f");
			my ($ms, $count) = $s->timed($q);
			die "fdw_bench.pl: fan-out count gave $count, expected $expect\n" unless $count == $expect;
			push @{ $t{$f} }, $ms;
		}
		print ".";
	}
	print "\n";
	$s->finish;
	set_latency(0);
	printf "  %-44s %s\n", "fanout = $_", spread(@{ $t{$_} }) for (1, 8, 32);
	print "\n";
	for my $f (32, 8)
	{
		my $r = paired($t{1}, $t{$f});
		verdict("(c) fanout 1 / fanout $f" . ($f == 8 ? ' (default)' : ''),
				sprintf('%.1fx', $r), '>= 6x', $r >= 6);
	}
}

# ---------------------------------------------------------------------
# the table
# ---------------------------------------------------------------------

print "Results\n";
printf "  %-44s %-10s %-8s %s\n", 'figure', 'value', 'target', 'result';
for my $r (@results)
{
	if ($r->[3] eq '')
	{
		printf "  %-44s %-10s %s\n", @$r[0 .. 2];
	}
	else
	{
		printf "  %-44s %-10s %-8s %s\n", @$r;
	}
}
my $missed = grep { $_->[3] eq 'MISS' } @results;
my $met = grep { $_->[3] eq 'PASS' } @results;
printf "\n%d of %d targets met%s\n", $met, $met + $missed,
  $missed ? " (a miss is reported here; it does not fail the script)" : '';
exit 0;
