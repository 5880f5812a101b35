#!/usr/bin/perl
#
# test/include_graph.pl: prints the include graph of the extension's
# sources (src/*.c and src/*.h; the sandbox under src/sandbox/ is a program
# of its own and is not looked at) and fails when the layering is broken.
#
# The graph has two kinds of edges, both file-level:
#   - includes: a file's #include "x.h" of a header of src/;
#   - uses: X.c uses Y.c when X.c names a function or variable that a
#     header X.c includes (directly or through another header) declares
#     and that Y.c defines.  A header that declares functions of several
#     files gives an edge only to the files whose symbols X.c really
#     names, so a module header shared by its own files is no cycle by
#     itself; two files that call each other are.
# Callbacks a file registers (function pointers it hands to another file)
# are not uses of the caller by the callee: that is how a lower layer
# calls back without knowing the layer above.
#
# It fails (exit status 1) when
#   - a file of a layer folder includes a header of a higher folder, or
#     names anything a file of a higher folder provides: what its header
#     declares or defines (function, variable, type, tag, enumerator,
#     macro) or a function its .c defines without static (@order below
#     gives the folders, lowest first);
#   - X.c uses Y.c and Y.c uses X.c, or any longer cycle of uses;
#   - headers include each other in a cycle;
#   - a header is included, directly or through another header, by more
#     than half of the extension's .c files (one header that everybody
#     includes is what the module headers replaced), but for pg_compat.h,
#     the differences between PostgreSQL majors;
#   - a .c file includes a header none of whose symbols, types, macros or
#     struct members it names (a file includes what it uses);
#   - a file outside module X includes X's private header X_int.h;
#   - the sandbox (src/sandbox/, built by src/sandbox/Makefile with -I of
#     its own directory) includes a file outside src/sandbox/, or the
#     extension includes one of the sandbox's.
#
# Usage: perl test/include_graph.pl [-q] [TREE]   (-q: print only the
# problems; TREE: the tree to read instead of this one)
# Run from anywhere; test/static_checks.sh runs it.
use strict;
use warnings;
use File::Basename qw(basename dirname);
use Cwd qw(abs_path);

my $quiet = @ARGV && $ARGV[0] eq '-q';
shift @ARGV if $quiet;
# the tree to read: this one, or the one named (test/include_graph_test.sh
# plants a use against the order in a scratch copy)
my $root = abs_path(@ARGV ? $ARGV[0] : dirname(__FILE__) . '/..');
my $src = "$root/src";

# The layer folders, lowest first (docs/architecture.md).  A file may name
# what its own folder or a lower one declares or defines, never what a
# higher one does.
my @order = qw(catalog base json shmem call fdw functions webhook deferred init);
my %rank;
@rank{@order} = (0 .. $#order);

# The extension's files: src/*.[ch] and src/LAYER/*.[ch] (one folder per
# layer, docs/architecture.md), every one named by its base name (names are
# unique; headers are found through -I of every layer folder); %path holds
# each one's place below src/ and %layer its folder ("" at the top).
my (%path, %layer);
for my $d ('', map { basename($_) } grep { -d $_ && basename($_) ne 'sandbox' } glob("$src/*"))
{
	my $dir = $d eq '' ? $src : "$src/$d";
	opendir(my $dh, $dir) or die "include_graph: cannot read $dir: $!\n";
	for my $e (readdir($dh))
	{
		next unless $e =~ /\.[ch]$/ && -f "$dir/$e";
		die "include_graph: two files named $e (src/$path{$e}, src/$d/$e)\n" if exists $path{$e};
		die "include_graph: src/$d/ is not in the order of the layer folders (\@order)\n"
		  unless exists $rank{$d};
		$path{$e} = $d eq '' ? $e : "$d/$e";
		$layer{$e} = $d;
	}
	closedir($dh);
}
my @files = sort keys %path;
my @cfiles = grep { /\.c$/ } @files;
my @hfiles = grep { /\.h$/ } @files;
my %is_header = map { $_ => 1 } @hfiles;

# Source text without comments, string and character literals (so that a
# name in a comment or a message is no use).
sub strip
{
	my ($text) = @_;
	$text =~ s{
		(/\*.*?\*/)                 # block comment
	  | (//[^\n]*)                  # line comment
	  | ("(?:\\.|[^"\\\n])*")       # string literal
	  | ('(?:\\.|[^'\\\n])*')       # character literal
	  | ([^/"']+|.)
	}{
		defined $1 ? "\n" x ($1 =~ tr/\n//)
	  : defined $2 ? ""
	  : defined $3 ? '""'
	  : defined $4 ? "''"
	  : $5
	}gsex;
	return $text;
}

my (%raw, %text, %includes);
for my $f (@files)
{
	open(my $fh, '<', "$src/$path{$f}") or die "include_graph: cannot read src/$path{$f}: $!\n";
	local $/;
	$raw{$f} = <$fh>;
	close($fh);
	$includes{$f} = [];
	while ($raw{$f} =~ /^\s*#\s*include\s+"([^"]+)"/mg)
	{
		my $h = $1;
		push @{ $includes{$f} }, $h if $is_header{$h};
	}
	$text{$f} = strip($raw{$f});
}

# Headers a file includes, directly or through other headers.
my %closure;
sub closure
{
	my ($f, $seen) = @_;
	return $closure{$f} if $closure{$f};
	my %all;
	for my $h (@{ $includes{$f} })
	{
		next if $seen->{$h};
		$all{$h} = 1;
		my %s = (%$seen, $h => 1);
		$all{$_} = 1 for keys %{ closure($h, \%s) };
	}
	return $closure{$f} = \%all;
}

# What each header declares: extern functions and variables, and the
# types and macros it defines (for the check of needless includes).
my (%declares, %provides);
for my $h (@hfiles)
{
	my $t = $text{$h};
	my %d;
	# one declaration at a time: text between semicolons or braces
	for my $decl (split /[;{}]/, $t)
	{
		next unless $decl =~ /\bextern\b/;
		$decl =~ s/^.*\bextern\b//s;
		$decl =~ s/\s+/ /g;
		if ($decl =~ /\b(\w+)\s*\(/)
		{
			my $name = $1;
			# a function pointer variable: extern void (*name) (...)
			$name = $1 if $decl =~ /\(\s*\*\s*(\w+)\s*\)/;
			$d{$name} = 1;
		}
		elsif ($decl =~ /\b(\w+)\s*(?:\[[^\]]*\]\s*)*$/)
		{
			$d{$1} = 1;
		}
	}
	$declares{$h} = \%d;
	my %p = %d;
	$p{$1} = 1 while $t =~ /^\s*#\s*define\s+(\w+)/mg;
	$p{$1} = 1 while $t =~ /\b(?:struct|enum|union)\s+(\w+)\s*\{/g;
	$p{$1} = 1 while $t =~ /\}\s*(\w+)\s*;/g;	# typedef struct {...} Name;
	$p{$1} = 1 while $t =~ /\btypedef\b[^;{}]*?\b(\w+)\s*;/g;
	$p{$1} = 1 while $t =~ /\btypedef\b[^;{}]*\(\s*\*\s*(\w+)\s*\)/g;
	# its static inline functions (pg_compat.h's)
	$p{$1} = 1 while $t =~ /\bstatic\s+inline\s+[^;{}()]*?\b(\w+)\s*\(/g;
	# members of its structs, named after -> or . in a user
	while ($t =~ /\bstruct\b[^{;]*\{([^{}]*)\}/g)
	{
		my $body = $1;
		$p{"->$1"} = 1 while $body =~ /\b(\w+)\s*(?:\[[^\]]*\]\s*)*[;,]/g;
		$p{"->$1"} = 1 while $body =~ /\(\s*\*\s*(\w+)\s*\)/g;
	}
	# enumerators
	while ($t =~ /\benum\b[^{;]*\{([^}]*)\}/g)
	{
		my $body = $1;
		$p{$1} = 1 while $body =~ /(?:^|,)\s*(\w+)/g;
	}
	$provides{$h} = \%p;
}

# Which .c file defines each declared symbol.
my %defined_in;
for my $c (@cfiles)
{
	my $t = $text{$c};
	for my $h (@hfiles)
	{
		for my $name (keys %{ $declares{$h} })
		{
			next if $defined_in{$name};
			if ($t =~ /^\Q$name\E\s*\(/m	# a function: its name starts a line
				|| $t =~ /^(?!\s*(?:extern|static)\b)[A-Za-z_][^;()\n]*\b\Q$name\E\s*(?:\[[^\]]*\]\s*)*(?:=|;)/m)
			{
				$defined_in{$name} = $c;
			}
		}
	}
}

my @problems;
my $nc = scalar @cfiles;

# --- uses ---
my (%uses, %why);
for my $c (@cfiles)
{
	my %seen;
	for my $h (keys %{ closure($c, {}) })
	{
		for my $name (keys %{ $declares{$h} })
		{
			my $d = $defined_in{$name};
			next unless $d && $d ne $c;
			next unless $text{$c} =~ /\b\Q$name\E\b/;
			$uses{$c}{$d} = 1;
			push @{ $why{$c}{$d} }, $name unless $seen{"$d $name"}++;
		}
	}
}

# --- needless includes: a .c file includes a header of which it names
# nothing (neither what the header declares or defines nor what the
# headers it includes do) ---
for my $c (@cfiles)
{
	for my $h (@{ $includes{$c} })
	{
		my %names = %{ $provides{$h} };
		for my $h2 (keys %{ closure($h, { $h => 1 }) })
		{
			%names = (%names, %{ $provides{$h2} });
		}
		my $used = 0;
		# pg_compat.h also completes commands/explain.h from 18 on
		$used = 1 if $h eq 'pg_compat.h' && $raw{$c} =~ /#\s*include\s+"commands\/explain\.h"/;
		for my $n (keys %names)
		{
			my $re = $n =~ /^->(.*)/ ? qr/(?:->|\.)\s*\Q$1\E\b/ : qr/\b\Q$n\E\b/;
			if ($text{$c} =~ $re)
			{
				$used = 1;
				last;
			}
		}
		push @problems, "src/$path{$c} includes $h but uses nothing it declares" unless $used;
	}
}

# --- the sandbox shares no header with the extension ---
{
	my $sb = "$src/sandbox";
	my @sbfiles;
	my @dirs = ($sb);
	while (my $d = shift @dirs)
	{
		opendir(my $sdh, $d) or die "include_graph: cannot read $d: $!\n";
		for my $e (sort readdir($sdh))
		{
			next if $e =~ /^\./;
			if (-d "$d/$e") { push @dirs, "$d/$e"; }
			elsif ($e =~ /\.[ch]$/) { push @sbfiles, "$d/$e"; }
		}
		closedir($sdh);
	}
	for my $f (@sbfiles)
	{
		open(my $fh, '<', $f) or die "include_graph: cannot read $f: $!\n";
		local $/;
		my $t = <$fh>;
		close($fh);
		(my $rel = $f) =~ s{^\Q$root\E/}{};
		while ($t =~ /^\s*#\s*include\s+"([^"]+)"/mg)
		{
			my $inc = $1;
			my $found;
			for my $dir (dirname($f), $sb)
			{
				if (-f "$dir/$inc")
				{
					$found = abs_path("$dir/$inc");
					last;
				}
			}
			if (!defined $found)
			{
				push @problems, "$rel includes \"$inc\", which is not in src/sandbox/";
			}
			elsif (index($found, "$sb/") != 0)
			{
				push @problems, "$rel includes \"$inc\" from outside src/sandbox/";
			}
		}
	}
	for my $f (@files)
	{
		push @problems, "src/$path{$f} includes a file of the sandbox"
		  if $raw{$f} =~ /^\s*#\s*include\s+"[^"]*sandbox\//m;
	}
}

# --- private headers stay in their module ---
# X_int.h declares the private structs of module X: only X's own files
# (X.c, X_*.c, in the folder of the header) may include it, so no module
# reads another module's private struct.  call.c is the public face of the
# HTTP client's module (http_int.h).  The fleet quota is part of the
# rate limiter's module (it shares the limiter's shared-memory state), and
# EXPLAIN of a scan part of the scan's, the listener's files (its
# libmicrohttpd loop and its guard against hostile clients) part of the
# webhook_http module.
{
	my %members = (
		ratelimit => ['quota'],
		http => ['call'],
		fdw_scan => ['fdw_explain'],
		webhook_http => ['webhook_listener', 'webhook_guard'],
	);
	for my $f (@files)
	{
		while ($raw{$f} =~ /^\s*#\s*include\s+"([^"]+)_int\.h"/mg)
		{
			my $mod = $1;
			my $h = "${mod}_int.h";
			next unless exists $path{$h};
			my $ok = 0;
			for my $m ($mod, @{ $members{$mod} // [] })
			{
				$ok = 1 if $f =~ /^\Q$m\E(?:_[a-z_]+)?\.[ch]$/;
			}
			$ok = 0 if $layer{$f} ne $layer{$h};
			push @problems, "src/$path{$f} includes $h, the private header of module $mod (src/$path{$h})"
			  unless $ok;
		}
	}
}

# --- direction: no file includes a header of a higher folder, or names
# anything a header of a higher folder declares or defines (a function, a
# variable, a type, a struct, union or enum tag, an enumerator, a macro):
# a lower folder knows nothing of the folders above it.  A name that a
# header of the file's own folder or of a lower one also provides is not
# counted (it is that header's). ---
{
	# each name provided by a header, with the lowest folder that provides it
	my %low;
	for my $h (@hfiles)
	{
		for my $n (keys %{ $provides{$h} })
		{
			next if $n =~ /^->/;	# struct members are no names of their own
			next if $n =~ /_H$/ && $raw{$h} =~ /#\s*ifndef\s+\Q$n\E\b/;	# include guard
			my $r = $rank{ $layer{$h} };
			$low{$n} = [ $r, $h ] if !$low{$n} || $r < $low{$n}[0];
		}
	}
	# and the functions a .c file defines without static, whether a header
	# declares them or not (_PG_init, a function another file declares
	# extern for itself)
	for my $c (@cfiles)
	{
		while ($text{$c} =~ /^([^\n;{}#]*)\n(\w+)\s*\(/mg)
		{
			my ($type, $n) = ($1, $2);
			next if $type =~ /\bstatic\b/ || $type !~ /\w/ || $type =~ /^\s/;
			my $r = $rank{ $layer{$c} };
			$low{$n} = [ $r, $c ] if !$low{$n} || $r < $low{$n}[0];
		}
	}
	for my $f (@files)
	{
		my $r = $rank{ $layer{$f} };
		for my $h (@{ $includes{$f} })
		{
			push @problems, "src/$path{$f} (folder $layer{$f}) includes $h of the higher folder $layer{$h}"
			  if $rank{ $layer{$h} } > $r;
		}
		my %named;
		$named{$1} = 1 while $text{$f} =~ /\b([A-Za-z_]\w*)\b/g;
		for my $n (sort keys %named)
		{
			my $l = $low{$n} or next;
			next unless $l->[0] > $r;
			push @problems, "src/$path{$f} (folder $layer{$f}) names $n of $l->[1] of the higher folder $layer{ $l->[1] }";
		}
	}
}

# --- cycles (Tarjan's strongly connected components) ---
sub sccs
{
	my ($nodes, $edges) = @_;
	my ($index, @stack, %on, %idx, %low, @out) = (0);
	my $visit;
	$visit = sub {
		my ($v) = @_;
		$idx{$v} = $low{$v} = $index++;
		push @stack, $v;
		$on{$v} = 1;
		for my $w (sort keys %{ $edges->{$v} || {} })
		{
			if (!defined $idx{$w})
			{
				$visit->($w);
				$low{$v} = $low{$w} if $low{$w} < $low{$v};
			}
			elsif ($on{$w})
			{
				$low{$v} = $idx{$w} if $idx{$w} < $low{$v};
			}
		}
		if ($low{$v} == $idx{$v})
		{
			my @c;
			my $w;
			do { $w = pop @stack; $on{$w} = 0; push @c, $w; } while ($w ne $v);
			push @out, [ sort @c ] if @c > 1;
		}
	};
	for my $v (@$nodes)
	{
		$visit->($v) unless defined $idx{$v};
	}
	return @out;
}

for my $comp (sccs(\@cfiles, \%uses))
{
	my %in = map { $_ => 1 } @$comp;
	my @edges;
	for my $a (@$comp)
	{
		for my $b (sort keys %{ $uses{$a} })
		{
			push @edges, "$a -> $b (" . join(', ', sort @{ $why{$a}{$b} }) . ")"
			  if $in{$b};
		}
	}
	push @problems, "cycle of uses among " . join(', ', @$comp) . ":\n    "
	  . join("\n    ", @edges);
}

my %hedges;
for my $h (@hfiles)
{
	$hedges{$h}{$_} = 1 for @{ $includes{$h} };
}
for my $comp (sccs(\@hfiles, \%hedges))
{
	push @problems, "headers include each other: " . join(', ', @$comp);
}

# --- fan-in ---
my %fanin;
for my $c (@cfiles)
{
	push @{ $fanin{$_} }, $c for keys %{ closure($c, {}) };
}
for my $h (@hfiles)
{
	my $n = scalar @{ $fanin{$h} || [] };
	# pg_compat.h is PostgreSQL's own API across majors, as postgres.h is,
	# not a module header: any file may need it
	next if $h eq 'pg_compat.h';
	push @problems, "$h is included by $n of the $nc .c files (at most "
	  . int($nc / 2) . ")"
	  if 2 * $n > $nc;
}

unless ($quiet)
{
	print "== includes (project headers) ==\n";
	for my $f (@files)
	{
		printf "%-24s %s\n", $f, join(' ', @{ $includes{$f} });
	}
	print "\n== headers: the .c files including each (directly or not), of $nc ==\n";
	for my $h (@hfiles)
	{
		my @by = sort @{ $fanin{$h} || [] };
		printf "%-20s %2d  %s\n", $h, scalar @by, join(' ', @by);
	}
	print "\n== uses (X.c -> the files whose functions or variables it names) ==\n";
	for my $c (@cfiles)
	{
		printf "%-24s %s\n", $c, join(' ', sort keys %{ $uses{$c} || {} });
	}
	print "\n";
}

if (@problems)
{
	print STDERR "include_graph: $_\n" for @problems;
	exit 1;
}
print "include_graph: folders in order (@order), no cycle, no header included by more than half of the $nc .c files\n";
exit 0;
