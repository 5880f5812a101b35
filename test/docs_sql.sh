#!/bin/bash
#
# test/docs_sql.sh: runs every ```sql block of docs/*.md, so that the
# examples cannot drift from what the extension does.  As root (it starts
# a throw-away cluster and the sandbox with test/lib.sh's start_stack), with
# the extension installed (make install).
#
# A block is one of:
#   - runnable (the default): run by psql -X -v ON_ERROR_STOP=1 in a fresh
#     database made from a template holding the preamble below; it passes
#     when psql exits 0;
#   - marked, on the line just before its fence,
#       <!-- expect error: SQLSTATE -->   it must fail with that SQLSTATE;
#       <!-- run in an empty database --> run, and pass, in a database
#                                         without the preamble (a block
#                                         that starts from scratch);
#       <!-- after the block above -->   run, and pass, after the block
#                                         above it in the same file, in the
#                                         same database (a continuation);
#       <!-- run in the worker's database -->  run, and pass, in the
#                                         partner_svc.worker_database
#                                         (docs_worker, made from the
#                                         template at the start), where the
#                                         deferred senders and the webhook
#                                         worker work (its listener on a
#                                         free port, the sandbox's callback
#                                         orders.callback_sandbox at it);
#                                         such blocks share it, in the
#                                         order of the files;
#       <!-- not run: REASON -->          not run; REASON must not be empty.
# A block in a list item is indented: its fence, marker and lines are read
# without the indentation of its opening fence.
#
# A plain ``` block marked <!-- output of the block above --> on the line
# before its fence shows what the sql block above it prints: each of its
# non-empty lines, without leading and trailing white space, must be a
# line of that block's output, in the same order (other lines may come
# between them).
#
# The preamble is what a reader has after README's quick start and its
# session (docs/testing.md, "The docs' SQL blocks"): the extension, one
# server per service of the sandbox (movies, orders with tier 'standard',
# catalog, scheduler, todos, files, generation) with base_url the
# sandbox's URL, a user mapping for the current user with api_key
# 'sandbox-key' (todos: no key), and the tables of IMPORT FOREIGN SCHEMA
# of each service in public.  In a block, the sandbox's default address
# http://127.0.0.1:8765 (README: where the sandbox listens) is replaced
# by the URL of the sandbox the check started; any other base_url is left
# as written.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
source test/lib.sh

# the webhook listener's port, for the sandbox's callbacks: the worker of
# the cluster listens on it once the cluster restarts (below)
wh_port=$(free_port)
start_stack --key sandbox-key=standard --seed 1 \
	--set "orders.callback_sandbox=http://127.0.0.1:$wh_port/webhooks/sandbox" || exit 1
chmod 755 "$work"

# Extract the blocks: one file per block, and a manifest line
# "N<TAB>FILE:LINE<TAB>KIND<TAB>ARG" (KIND run, error or skip).
mkdir -p "$work/blocks"
perl -e '
	my ($dir, @files) = @ARGV;
	my $n = 0;
	my (@last, $lastkind);
	open(my $man, ">", "$dir/manifest") or die;
	for my $f (@files) {
		open(my $in, "<", $f) or die "$f: $!";
		my @l = <$in>;
		@last = ();
		for (my $i = 0; $i < @l; $i++) {
			if ($l[$i] =~ /^```\s*$/ && $i > 0 && $l[$i - 1] =~ /^<!--\s*output of the block above\s*-->\s*$/) {
				my @want;
				for ($i++; $i < @l && $l[$i] !~ /^```/; $i++) { push @want, $l[$i]; }
				if ($n == 0 || !@last || $lastkind !~ /^(run|empty|worker)$/) {
					$n++;
					open(my $out, ">", "$dir/$n.sql") or die;
					close $out;
					print $man "$n\t$f:" . ($i + 1) . "\tbad\toutput of the block above, but none above is run\n";
				} else {
					open(my $out, ">", "$dir/$n.expect") or die;
					print $out @want;
					close $out;
				}
				next;
			}
			next unless $l[$i] =~ /^([ \t]*)```sql\s*$/;
			my $indent = $1;
			my $start = $i + 1;
			my $prev = $i > 0 ? $l[$i - 1] : "";
			my ($kind, $arg) = ("run", "");
			if ($prev =~ /^\s*<!--\s*not run:(.*?)-->\s*$/) {
				($kind, $arg) = ("skip", $1);
				$arg =~ s/^\s+|\s+$//g;
			} elsif ($prev =~ /^\s*<!--\s*expect error:\s*(\S*)\s*-->\s*$/) {
				($kind, $arg) = ("error", $1);
			} elsif ($prev =~ /^\s*<!--\s*run in an empty database\s*-->\s*$/) {
				($kind, $arg) = ("empty", "");
			} elsif ($prev =~ /^\s*<!--\s*run in the worker\x27s database\s*-->\s*$/) {
				($kind, $arg) = ("worker", "");
			} elsif ($prev =~ /^\s*<!--\s*after the block above\s*-->\s*$/) {
				# it runs where the block above runs; never after one not run
				if (@last && ($lastkind eq "run" || $lastkind eq "empty" || $lastkind eq "worker")) {
					($kind, $arg) = ($lastkind, "");
				} else {
					($kind, $arg) = ("bad", "after the block above, but none above is run");
				}
			} elsif ($prev =~ /^\s*<!--.*(not run|expect error|run in|after the block)/) {
				($kind, $arg) = ("bad", $prev);
				chomp $arg;
			}
			# a continuation in the shared worker database ran its first part already
			my @body = $kind ne "bad" && $kind ne "worker" && $prev =~ /after the block above/ ? @last : ();
			for ($i++; $i < @l && $l[$i] !~ /^\s*```/; $i++) {
				(my $line = $l[$i]) =~ s/^\Q$indent\E//;
				push @body, $line;
			}
			$n++;
			open(my $out, ">", "$dir/$n.sql") or die;
			print $out @body;
			@last = @body;
			$lastkind = $kind;
			close $out;
			print $man "$n\t$f:$start\t$kind\t$arg\n";
		}
	}
' "$work/blocks" docs/*.md || { echo "docs_sql: could not read docs/" >&2; exit 1; }
sed -i "s|http://127\.0\.0\.1:8765|$SANDBOX_URL|g" "$work"/blocks/*.sql
chown -R postgres: "$work/blocks"

psql_as_postgres()
{
	runuser -u postgres -- env PGHOST="$PGHOST" PGPORT="$PGPORT" \
		"$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 "$@"
}

psql_as_postgres -d postgres -c 'CREATE DATABASE docs_template' >/dev/null || exit 1
psql_as_postgres -d docs_template -v sandbox_url="$SANDBOX_URL" >"$work/preamble.log" 2>&1 <<'SQL' ||
CREATE EXTENSION partner_svc;
-- one server per service, named after it, each with the sandbox's key
-- (todos takes none); the orders server on the standard tier
SELECT format('CREATE SERVER %I FOREIGN DATA WRAPPER partner_svc OPTIONS (service %L, base_url %L%s)',
              s, s, :'sandbox_url', CASE s WHEN 'orders' THEN ', tier ''standard''' ELSE '' END),
       format('CREATE USER MAPPING FOR CURRENT_USER SERVER %I%s',
              s, CASE s WHEN 'todos' THEN '' ELSE ' OPTIONS (api_key ''sandbox-key'')' END)
FROM unnest(ARRAY['movies', 'orders', 'catalog', 'scheduler', 'files', 'generation', 'todos']) AS s
\gexec
IMPORT FOREIGN SCHEMA movies FROM SERVER movies INTO public;
IMPORT FOREIGN SCHEMA orders FROM SERVER orders INTO public;
IMPORT FOREIGN SCHEMA catalog FROM SERVER catalog INTO public;
IMPORT FOREIGN SCHEMA scheduler FROM SERVER scheduler INTO public;
IMPORT FOREIGN SCHEMA todos FROM SERVER todos INTO public;
SQL
	{ echo "docs_sql: the preamble failed"; cat "$work/preamble.log"; exit 1; }

# partner_svc.worker_database, for the blocks that need the
# deferred senders or the webhook worker: made before the restart that
# names it, so that they find it at once; the listener on the port the
# sandbox's callbacks name.
psql_as_postgres -d postgres -c 'CREATE DATABASE docs_worker TEMPLATE docs_template' >/dev/null || exit 1
printf '%s\n' "partner_svc.worker_database = 'docs_worker'" \
	"partner_svc.webhook_port = $wh_port" >>"$CLUSTER_DIR/data/postgresql.conf"
runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$CLUSTER_DIR/data" -l "$CLUSTER_DIR/postgres.log" -w restart >/dev/null ||
	{ echo "docs_sql: the cluster did not restart"; tail -n 20 "$CLUSTER_DIR/postgres.log"; exit 1; }

fail=0
ran=0
errors=0
skipped=0
while IFS=$'\t' read -r n where kind arg; do
	case "$kind" in
		skip)
			if [ -z "$arg" ]; then
				echo "FAILED $where: marked not run without a reason"
				fail=1
			else
				echo "not run $where: $arg"
				skipped=$((skipped + 1))
			fi
			continue ;;
		bad)
			echo "FAILED $where: a marker this check does not understand: $arg"
			fail=1
			continue ;;
		error)
			if ! [[ "$arg" =~ ^[0-9A-Z]{5}$ ]]; then
				echo "FAILED $where: expect error needs a SQLSTATE, not '$arg'"
				fail=1
				continue
			fi ;;
	esac
	template=docs_template
	[ "$kind" = empty ] && template=template1
	if [ "$kind" = worker ]; then
		psql_as_postgres -d docs_worker -v VERBOSITY=verbose \
			-f "$work/blocks/$n.sql" >"$work/blocks/$n.out" 2>&1 </dev/null
		rc=$?
	else
		psql_as_postgres -d postgres -c "CREATE DATABASE docs_$n TEMPLATE $template" >/dev/null || { fail=1; continue; }
		psql_as_postgres -d "docs_$n" -v VERBOSITY=verbose \
			-f "$work/blocks/$n.sql" >"$work/blocks/$n.out" 2>&1 </dev/null
		rc=$?
		psql_as_postgres -d postgres -c "DROP DATABASE docs_$n WITH (FORCE)" >/dev/null
	fi
	if [ "$kind" = run ] || [ "$kind" = empty ] || [ "$kind" = worker ]; then
		if [ "$rc" -eq 0 ] && [ -f "$work/blocks/$n.expect" ] &&
			! perl -e '
				open(my $w, "<", $ARGV[0]) or die; open(my $o, "<", $ARGV[1]) or die;
				my @out = map { s/^\s+|\s+$//gr } <$o>;
				my $k = 0;
				for my $line (<$w>) {
					$line =~ s/^\s+|\s+$//g;
					next if $line eq "";
					$k++ while $k < @out && $out[$k] ne $line;
					if ($k >= @out) { print "    not in its output (in this order): $line\n"; exit 1; }
					$k++;
				}' "$work/blocks/$n.expect" "$work/blocks/$n.out"; then
			echo "FAILED $where: its output is not the one shown below it:"
			sed 's/^/    /' "$work/blocks/$n.out" | head -n 20
			fail=1
		elif [ "$rc" -eq 0 ]; then
			ran=$((ran + 1))
			echo "ok $where"
		else
			echo "FAILED $where (psql exit status $rc):"
			sed 's/^/    /' "$work/blocks/$n.out" | head -n 20
			fail=1
		fi
	else
		if [ "$rc" -ne 0 ] && grep -q "ERROR:  $arg:" "$work/blocks/$n.out"; then
			errors=$((errors + 1))
			echo "ok $where (fails with $arg, as marked)"
		else
			echo "FAILED $where: expected an error $arg (psql exit status $rc):"
			sed 's/^/    /' "$work/blocks/$n.out" | head -n 20
			fail=1
		fi
	fi
done <"$work/blocks/manifest"

echo "docs_sql: $ran blocks ran, $errors failed as marked, $skipped marked not run"
[ "$ran" -gt 0 ] || { echo "docs_sql: no sql block ran" >&2; fail=1; }
exit "$fail"
