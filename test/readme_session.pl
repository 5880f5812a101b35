#!/usr/bin/perl
#
# test/readme_session.pl: README.md's session excerpt is what test/demo.sh
# prints.
#
#   perl test/readme_session.pl README.md DEMO_OUTPUT
#
# The excerpt is the first ``` block after "## What a session looks like".
# It is a list of statements, each starting on a line "=# STATEMENT";
# the lines after it that start with three spaces continue the statement
# until one ends with ";", and the lines up to the next blank line are
# its output.  Each statement with its output, with the "=# " and the
# three spaces taken off, must appear as consecutive lines of the demo's
# output (psql -e echoes the statements), in the README's order.
#
# Normalised on both sides, and nothing else, since it varies from run to
# run or is invisible: trailing white space of a line (psql pads its
# aligned output), and psql's "psql:FILE:LINE: " prefix of an error, which
# names the path of the checkout; and, on the demo's side, the two
# decimals PostgreSQL 18 prints of a plan node's rows ("rows=5.00", where
# 15, which the README shows, prints "rows=5").  Exits 0 when every statement is found,
# 1 otherwise (printing what was not found), 2 when the excerpt is missing.
use strict;
use warnings;

die "usage: readme_session.pl README.md DEMO_OUTPUT\n" unless @ARGV == 2;
my ($readme, $demo) = @ARGV;

sub lines_of
{
	my ($f) = @_;
	open(my $h, '<:encoding(UTF-8)', $f) or die "readme_session: $f: $!\n";
	my @l = map { s/\s+$//r } <$h>;
	close $h;
	return @l;
}

binmode $_, ":encoding(UTF-8)" for (\*STDOUT, \*STDERR);
my @readme = lines_of($readme);
my @out = map { s/^psql:[^:]*:\d+: //r =~ s/\b(rows=\d+)\.00\b/$1/gr } lines_of($demo);

# the excerpt
my ($i, @block) = (0);
$i++ while $i < @readme && $readme[$i] !~ /^## What a session looks like/;
$i++ while $i < @readme && $readme[$i] !~ /^```/;
for ($i++; $i < @readme && $readme[$i] !~ /^```/; $i++)
{
	push @block, $readme[$i];
}
if (!@block)
{
	print STDERR "readme_session: no session excerpt in $readme\n";
	exit 2;
}

# its statements, each with its output
my @chunks;
for (my $j = 0; $j < @block; $j++)
{
	next unless $block[$j] =~ /^=# (.*)$/;
	my @c = ($1);
	my $open = $1 !~ /;$/;
	for ($j++; $j < @block && $block[$j] ne '' && $block[$j] !~ /^=# /; $j++)
	{
		if ($open && $block[$j] =~ /^   (.*)$/)
		{
			push @c, $1;
			$open = $1 !~ /;$/;
		}
		else
		{
			$open = 0;
			push @c, $block[$j];
		}
	}
	$j-- if $j < @block && $block[$j] =~ /^=# /;
	push @chunks, \@c;
}
if (!@chunks)
{
	print STDERR "readme_session: no \"=# \" statement in the excerpt of $readme\n";
	exit 2;
}

# each in the demo's output, in order
my ($from, $fail) = (0, 0);
CHUNK: for my $c (@chunks)
{
	for my $k ($from .. @out - @$c)
	{
		next if grep { $out[$k + $_] ne $c->[$_] } 0 .. $#$c;
		$from = $k + @$c;
		next CHUNK;
	}
	$fail = 1;
	print STDERR "readme_session: not in the demo's output (after line $from), as README shows it:\n";
	print STDERR "    $_\n" for @$c;
	# what the demo printed after the same statement, if it did
	for my $k (0 .. $#out)
	{
		next unless $out[$k] eq $c->[0];
		print STDERR "  the demo printed:\n";
		print STDERR "    $out[$_]\n" for $k .. ($k + @$c + 2 > $#out ? $#out : $k + @$c + 2);
		last;
	}
}

printf "readme_session: %d statements of README's session excerpt are what test/demo.sh prints\n",
  scalar @chunks unless $fail;
exit $fail;
