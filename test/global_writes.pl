#!/usr/bin/perl
#
# test/global_writes.pl: fails when a global variable of the extension is
# written outside the module that defines it (docs/architecture.md, "What
# the checks enforce").  A module is a row of the table "## Modules" of
# docs/architecture.md: its headers (first column) and the files of its
# second column (globs such as `src/json/json_*.c` and the private headers
# named in parentheses included); a file of src/ that no row names is a
# module of its own.  The sandbox (src/sandbox/) is not looked at.
#
# A global is a variable that some file of src/ declares `extern` (in a
# header or by hand in a .c file) and that a .c file defines at file scope
# without static: only those can be reached from another file.  A write is
# read from the C text (comments and literals stripped):
#   - an assignment to it, to an element of it or to a member reached with
#     `.` (`x = ...`, `x[i] += ...`, `x.count = ...`), ++ or -- on it;
#   - its address given as the first argument of memset, memcpy, memmove,
#     MemSet, strlcpy, strcpy or snprintf (`memset(&x, ...)`).
# A write through a pointer the global holds (`x->count = ...`) writes the
# memory it points to (shared memory, usually), not the global, and is not
# counted; nor is a pointer to it handed to a function of another module,
# and settings written by PostgreSQL's GUC machinery are no C assignment.
#
# Usage: perl test/global_writes.pl [TREE]   (TREE: the tree to read
# instead of this one; test/global_writes_test.sh plants a write in a
# scratch copy).  Run by test/static_checks.sh.
use strict;
use warnings;
use File::Basename qw(basename dirname);
use Cwd qw(abs_path);

my $root = abs_path(@ARGV ? $ARGV[0] : dirname(__FILE__) . '/..');
my $src = "$root/src";

# the extension's files, by path below src/
my @files;
for my $dir ($src, grep { -d $_ && basename($_) ne 'sandbox' } glob("$src/*"))
{
	for my $f (glob("$dir/*.[ch]"))
	{
		(my $rel = $f) =~ s{^\Q$src\E/}{};
		push @files, $rel;
	}
}
@files = sort @files;
my %is_file = map { $_ => 1 } @files;

# --- modules: the rows of the table of docs/architecture.md ---
my %module;		# file (below src/) -> its module's name
{
	my $doc = "$root/docs/architecture.md";
	open(my $fh, '<', $doc) or die "global_writes: cannot read $doc: $!\n";
	my $in = 0;
	my $rows = 0;
	while (my $line = <$fh>)
	{
		if ($line =~ /^## /) { $in = $line =~ /^## Modules\s*$/; next; }
		next unless $in && $line =~ /^\|\s*`src/;
		my (undef, $heads, $members) = split /\|/, $line;
		my @h = $heads =~ /`src\/([^`]+)`/g;
		my $name = $h[0];
		my @m = $members =~ /`src\/([^`]+)`/g;
		# private headers are named by base name, in the module's folder
		my $folder = dirname($h[0]);
		if ($members =~ /\(private:([^)]*)\)/)
		{
			push @m, map { "$folder/$_" } $1 =~ /`(\w+\.h)`/g;
		}
		for my $pat (@h, @m)
		{
			my @matched = grep { -f $_ } glob("$src/$pat");
			die "global_writes: docs/architecture.md names src/$pat, which matches no file\n"
			  unless @matched;
			for my $f (@matched)
			{
				(my $rel = $f) =~ s{^\Q$src\E/}{};
				next unless $is_file{$rel};
				die "global_writes: src/$rel is in two modules of docs/architecture.md ($module{$rel}, $name)\n"
				  if $module{$rel} && $module{$rel} ne $name;
				$module{$rel} = $name;
			}
		}
		$rows++;
	}
	close($fh);
	die "global_writes: no table \"## Modules\" in docs/architecture.md\n" unless $rows;
	$module{$_} //= $_ for @files;
}

# Source text without comments, string and character literals.
sub strip
{
	my ($text) = @_;
	$text =~ s{
		(/\*.*?\*/)
	  | (//[^\n]*)
	  | ("(?:\\.|[^"\\\n])*")
	  | ('(?:\\.|[^'\\\n])*')
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

my %text;
for my $f (@files)
{
	open(my $fh, '<', "$src/$f") or die "global_writes: cannot read src/$f: $!\n";
	local $/;
	$text{$f} = strip(<$fh>);
	close($fh);
}

# --- the globals: declared extern somewhere, defined without static ---
my %extern;
for my $f (@files)
{
	for my $decl (split /[;{}]/, $text{$f})
	{
		next unless $decl =~ /\bextern\b/;
		$decl =~ s/^.*\bextern\b//s;
		$decl =~ s/\s+/ /g;
		if ($decl =~ /\(\s*\*\s*(\w+)\s*\)\s*\(/)	# a function pointer variable
		{
			$extern{$1} = 1;
		}
		elsif ($decl !~ /\(/ && $decl =~ /\b(\w+)\s*(?:\[[^\]]*\]\s*)*$/)
		{
			$extern{$1} = 1;
		}
	}
}
my %defined_in;
for my $c (grep { /\.c$/ } @files)
{
	for my $name (keys %extern)
	{
		if ($text{$c} =~ /^(?!\s*(?:extern|static|typedef)\b)[A-Za-z_][^;()\n]*\b\Q$name\E\s*(?:\[[^\]]*\]\s*)*(?:=|;)/m
			|| $text{$c} =~ /^(?!\s*(?:extern|static|typedef)\b)[A-Za-z_][^;\n]*\(\s*\*\s*\Q$name\E\s*\)\s*\(/m)
		{
			$defined_in{$name} = $c;
		}
	}
}

# --- writes outside the defining module ---
my @problems;
my $suffix = qr/(?:\s*(?:\[[^\]]*\]|\.\s*\w+))*/;
for my $f (@files)
{
	my @lines = split /\n/, $text{$f}, -1;
	for my $name (sort keys %defined_in)
	{
		my $home = $defined_in{$name};
		next if $module{$f} eq $module{$home};
		next unless $text{$f} =~ /\b\Q$name\E\b/;
		for my $i (0 .. $#lines)
		{
			my $l = $lines[$i];
			next unless $l =~ /\b\Q$name\E\b/;
			my $write =
			  $l =~ /(?<![\w.>])\Q$name\E\b$suffix\s*(?:[-+*\/%&|^]|<<|>>)?=(?!=)/
			  || $l =~ /(?<![\w.>])\Q$name\E\b$suffix\s*(?:\+\+|--)/
			  || $l =~ /(?:\+\+|--)\s*\Q$name\E\b/
			  || $l =~ /\b(?:memset|memcpy|memmove|MemSet|strlcpy|strcpy|snprintf)\s*\(\s*&?\s*\Q$name\E\b/;
			push @problems, sprintf("src/%s:%d writes %s, a global of module %s (defined in src/%s)",
				$f, $i + 1, $name, $module{$home}, $home)
			  if $write;
		}
	}
}

if (@problems)
{
	print STDERR "global_writes: $_\n" for @problems;
	exit 1;
}
printf "global_writes: %d globals, each written only by its own module\n", scalar keys %defined_in;
exit 0;
