#!/usr/bin/perl
#
# test/function_length.pl: counts the lines of every function of the
# extension's sources (src/LAYER/*.c; the sandbox, a program of its own,
# aside) and fails when more than two are longer than 120 lines, or when
# a function over 120 lines has no comment right above it that says why
# (a line "Long: ..." in that comment).  A function's lines run from the
# line of its name to its closing brace, PostgreSQL's layout: the return
# type on the line before, the name at the start of a line, the braces
# alone at the start of a line.
#
# Usage: perl test/function_length.pl [-v] [TREE]  (-v: list every function
# over 80 lines; TREE: the tree to read instead of this one).  Run by
# test/static_checks.sh.
use strict;
use warnings;
use File::Basename qw(dirname);
use Cwd qw(abs_path);

my $verbose = @ARGV && $ARGV[0] eq '-v';
shift @ARGV if $verbose;
my $root = abs_path(@ARGV ? $ARGV[0] : dirname(__FILE__) . '/..');
my $limit = 120;
my $allowed = 2;

my (@long, @problems);
for my $f (sort glob("$root/src/*/*.c"))
{
	next if $f =~ m{/src/sandbox/};
	(my $rel = $f) =~ s{^\Q$root\E/}{};
	open(my $fh, '<', $f) or die "function_length: cannot read $rel: $!\n";
	my @lines = <$fh>;
	close($fh);
	for (my $i = 1; $i < @lines; $i++)
	{
		next unless $lines[$i] =~ /^([A-Za-z_]\w*)\s*\(/;
		my $name = $1;
		next unless $lines[ $i - 1 ] =~ /^[A-Za-z_]/;
		# the opening brace at the start of a line before any semicolon
		my $j = $i;
		$j++ while $j < @lines && $lines[$j] !~ /^\{/ && $lines[$j] !~ /;\s*$/;
		next unless $j < @lines && $lines[$j] =~ /^\{/;
		my $k = $j + 1;
		$k++ while $k < @lines && $lines[$k] !~ /^\}/;
		my $n = $k - $i + 1;
		printf "%4d %s %s\n", $n, $rel, $name if $verbose && $n > 80;
		next unless $n > $limit;
		push @long, "$rel: $name ($n lines)";
		# the comment above the return type
		my $c = $i - 2;
		my $comment = '';
		if ($c >= 0 && $lines[$c] =~ m{\*/\s*$})
		{
			$comment = $lines[$c] . $comment, $c-- while $c >= 0 && $lines[$c] !~ m{^/\*};
			$comment = ($c >= 0 ? $lines[$c] : '') . $comment;
		}
		push @problems, "$rel: $name is $n lines long and the comment above it says not why (a line \" * Long: ...\")"
		  unless $comment =~ /^\s*\*\s*Long:/m;
	}
}
push @problems, scalar(@long) . " functions over $limit lines (at most $allowed):\n    " . join("\n    ", @long)
  if @long > $allowed;
if (@problems)
{
	print STDERR "function_length: $_\n" for @problems;
	exit 1;
}
print "function_length: " . scalar(@long) . " functions over $limit lines (at most $allowed), each with its reason\n";
exit 0;
