# 60_upgrade.t: the upgrade path of the SQL surface.
#
# One cluster that preloads the current library, three databases:
#   upgraded: CREATE EXTENSION partner_svc VERSION '0.1' (the frozen script
#             of the first release), used a little with the new library
#             while its SQL objects are still 0.1, then ALTER EXTENSION
#             partner_svc UPDATE (0.1 -> 0.2 -> current, chained);
#   from02:   CREATE EXTENSION partner_svc VERSION '0.2' (frozen), then
#             ALTER EXTENSION partner_svc UPDATE (0.2 -> 0.3 -> current);
#   from03:   CREATE EXTENSION partner_svc VERSION '0.3' (frozen), then
#             ALTER EXTENSION partner_svc UPDATE (0.3 -> current);
#   fresh:    CREATE EXTENSION partner_svc (the current version).
# The catalog of each updated database is then described as text, line by
# line, and must be the same as the fresh one's: every member object of the extension (pg_depend), functions
# with their full definition and attributes, relations, columns, defaults,
# constraints, indexes, views and their definitions, triggers, policies,
# sequences, types, the foreign-data wrapper, comments, grants (ACLs and
# pg_init_privs), and pg_extension's extconfig / extcondition.  Any
# difference fails the test and is printed.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/../sandbox/lib";

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Sandbox;
use Test::More;

$ENV{SANDBOX_BIN} ||= (grep { -x } map { "$_/partner_svc_sandbox" } split /:/, $ENV{PATH})[0];
my $sb = Sandbox->start(keys => ['sandbox-key=standard'], args => ['--seed', '1']);
my $url = $sb->url;

my $node = PostgreSQL::Test::Cluster->new('upgrade');
$node->init;
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'partner_svc'\n");
$node->start;

$node->safe_psql('postgres', 'CREATE DATABASE upgraded');
$node->safe_psql('postgres', 'CREATE DATABASE fresh');
$node->safe_psql('postgres', 'CREATE DATABASE from02');
$node->safe_psql('postgres', 'CREATE DATABASE from03');

# The current version is the one of the built control file.
my $current = $node->safe_psql('postgres',
	q{SELECT default_version FROM pg_available_extensions WHERE name = 'partner_svc'});

# --- the versions and the path between them ---
is($node->safe_psql('postgres', q{
	SELECT string_agg(version, ',' ORDER BY version) FROM pg_available_extension_versions
	WHERE name = 'partner_svc'}), '0.1,0.2,0.3,0.4', 'versions 0.1 to 0.4 are available');
is($current, '0.4', 'default_version is 0.4');
is($node->safe_psql('postgres', q{
	SELECT path FROM pg_extension_update_paths('partner_svc') WHERE source = '0.1' AND target = '0.2'}),
	'0.1--0.2', 'a direct update path 0.1 -> 0.2');
is($node->safe_psql('postgres', q{
	SELECT path FROM pg_extension_update_paths('partner_svc') WHERE source = '0.2' AND target = '0.3'}),
	'0.2--0.3', 'a direct update path 0.2 -> 0.3');
is($node->safe_psql('postgres', q{
	SELECT path FROM pg_extension_update_paths('partner_svc') WHERE source = '0.1' AND target = '0.3'}),
	'0.1--0.2--0.3', '0.1 reaches 0.3 through 0.2');
is($node->safe_psql('postgres', q{
	SELECT path FROM pg_extension_update_paths('partner_svc') WHERE source = '0.3' AND target = '0.4'}),
	'0.3--0.4', 'a direct update path 0.3 -> 0.4');
is($node->safe_psql('postgres', q{
	SELECT path FROM pg_extension_update_paths('partner_svc') WHERE source = '0.1' AND target = '0.4'}),
	'0.1--0.2--0.3--0.4', '0.1 reaches 0.4 through 0.2 and 0.3');

# --- 0.1 SQL objects with the new library ---
$node->safe_psql('upgraded', q{CREATE EXTENSION partner_svc VERSION '0.1'});
is($node->safe_psql('upgraded', q{SELECT extversion FROM pg_extension WHERE extname = 'partner_svc'}),
	'0.1', 'installed as 0.1');
is($node->safe_psql('upgraded', 'SELECT partner_svc.version()'), $current,
	'0.1 objects: version() reports the loaded library');
$node->safe_psql('upgraded', qq{
CREATE SERVER movies FOREIGN DATA WRAPPER partner_svc OPTIONS (service 'movies', base_url '$url');
CREATE USER MAPPING FOR CURRENT_USER SERVER movies OPTIONS (api_key 'sandbox-key');
IMPORT FOREIGN SCHEMA movies FROM SERVER movies INTO public;
});
is($node->safe_psql('upgraded',
	q{SELECT count(*) FROM (SELECT title FROM movie_themes WHERE movie = 'inception' LIMIT 3) s}),
	'3', '0.1 objects: a foreign-table scan works with the current library');
like($node->safe_psql('upgraded', q{SELECT partner_svc.movie_summary('inception', 'movies')::text}),
	qr/\S/, '0.1 objects: a function works with the current library');
is($node->safe_psql('upgraded', q{SELECT count(*) > 0 FROM partner_svc.stats}), 't',
	'0.1 objects: partner_svc.stats works with the current library');
my ($rc, $out, $err) = $node->psql('upgraded',
	q{CREATE SERVER bad FOREIGN DATA WRAPPER partner_svc OPTIONS (service 'movies', base_url 'nope')});
isnt($rc, 0, '0.1 objects: the validator still refuses a bad option');
$node->safe_psql('upgraded', 'DROP SERVER movies CASCADE');

# --- update, and a fresh install ---
$node->safe_psql('upgraded', q{ALTER EXTENSION partner_svc UPDATE});
$node->safe_psql('from02', q{CREATE EXTENSION partner_svc VERSION '0.2'});
is($node->safe_psql('from02', q{SELECT extversion FROM pg_extension WHERE extname = 'partner_svc'}),
	'0.2', 'installed as 0.2');
$node->safe_psql('from02', q{ALTER EXTENSION partner_svc UPDATE});
$node->safe_psql('from03', q{CREATE EXTENSION partner_svc VERSION '0.3'});
is($node->safe_psql('from03', q{SELECT extversion FROM pg_extension WHERE extname = 'partner_svc'}),
	'0.3', 'installed as 0.3');
$node->safe_psql('from03', q{ALTER EXTENSION partner_svc UPDATE});
$node->safe_psql('fresh', 'CREATE EXTENSION partner_svc');
for my $db ('upgraded', 'from02', 'from03', 'fresh')
{
	is($node->safe_psql($db, q{SELECT extversion FROM pg_extension WHERE extname = 'partner_svc'}),
		$current, "$db: extversion $current");
}

# Every line describes one catalog fact; object identities are by name,
# never by OID, so the two databases are comparable.
my $describe = <<'SQL';
WITH ext AS (SELECT e.oid, e.extnamespace AS ns FROM pg_extension e WHERE e.extname = 'partner_svc'),
members AS (
  SELECT d.classid, d.objid FROM pg_depend d, ext
  WHERE d.refclassid = 'pg_extension'::regclass AND d.refobjid = ext.oid AND d.deptype = 'e'),
rels AS (SELECT c.* FROM pg_class c, ext WHERE c.relnamespace = ext.ns),
facts(line) AS (
  SELECT 'extension: ' || e.extname || ' schema=' || e.extnamespace::regnamespace
         || ' relocatable=' || e.extrelocatable
         || ' config=' || coalesce((SELECT string_agg(c::regclass::text, ',' ORDER BY c::regclass::text)
                                    FROM unnest(e.extconfig) c), '')
         || ' conditions=' || coalesce((SELECT string_agg(x.c::regclass::text || ':' || x.cond, ',' ORDER BY x.c::regclass::text)
                                        FROM unnest(e.extconfig, e.extcondition) AS x(c, cond)), '')
  FROM pg_extension e WHERE e.extname = 'partner_svc'
  UNION ALL
  SELECT 'member: ' || pg_describe_object(m.classid, m.objid, 0) FROM members m
  UNION ALL
  SELECT 'schema object not a member: ' || pg_describe_object('pg_class'::regclass, r.oid, 0)
  FROM rels r WHERE r.relkind NOT IN ('i', 't', 'c')
    AND NOT EXISTS (SELECT 1 FROM members m WHERE m.classid = 'pg_class'::regclass AND m.objid = r.oid)
    AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_class'::regclass AND d.objid = r.oid
                      AND d.deptype IN ('a', 'i'))
  UNION ALL
  SELECT 'schema: ' || n.nspname || ' owner=' || pg_get_userbyid(n.nspowner) || ' acl=' || coalesce(n.nspacl::text, '-')
  FROM pg_namespace n, ext WHERE n.oid = ext.ns
  UNION ALL
  SELECT 'function ' || p.oid::regprocedure || ' owner=' || pg_get_userbyid(p.proowner)
         || ' acl=' || coalesce(p.proacl::text, '-') || E'\n'
         || CASE WHEN p.prokind = 'a' THEN 'aggregate' ELSE pg_get_functiondef(p.oid) END
  FROM pg_proc p, ext WHERE p.pronamespace = ext.ns
  UNION ALL
  SELECT 'relation ' || r.oid::regclass || ' kind=' || r.relkind::text || ' persistence=' || r.relpersistence::text
         || ' owner=' || pg_get_userbyid(r.relowner) || ' acl=' || coalesce(r.relacl::text, '-')
         || ' options=' || coalesce(r.reloptions::text, '-') || ' rls=' || r.relrowsecurity
         || ' replident=' || r.relreplident::text
  FROM rels r WHERE r.relkind NOT IN ('t')
  UNION ALL
  SELECT 'column ' || r.oid::regclass || ' #' || row_number() OVER (PARTITION BY r.oid ORDER BY a.attnum)
         || ' ' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod)
         || ' notnull=' || a.attnotnull || ' identity=' || a.attidentity::text || ' generated=' || a.attgenerated::text
         || ' default=' || coalesce(pg_get_expr(ad.adbin, ad.adrelid), '-')
         || ' collation=' || coalesce(NULLIF(a.attcollation, 0)::regcollation::text, '-')
         || ' acl=' || coalesce(a.attacl::text, '-')
         || ' fdwoptions=' || coalesce(a.attfdwoptions::text, '-')
  FROM rels r JOIN pg_attribute a ON a.attrelid = r.oid
  LEFT JOIN pg_attrdef ad ON ad.adrelid = a.attrelid AND ad.adnum = a.attnum
  WHERE a.attnum > 0 AND NOT a.attisdropped AND r.relkind NOT IN ('t')
  UNION ALL
  SELECT 'constraint ' || co.conname || ' on ' || coalesce(NULLIF(co.conrelid, 0)::regclass::text, co.contypid::regtype::text)
         || ': ' || pg_get_constraintdef(co.oid) || ' deferrable=' || co.condeferrable
  FROM pg_constraint co, ext WHERE co.connamespace = ext.ns
  UNION ALL
  SELECT 'index: ' || pg_get_indexdef(i.indexrelid)
  FROM pg_index i JOIN rels r ON r.oid = i.indrelid
  UNION ALL
  SELECT 'view ' || r.oid::regclass || ': ' || pg_get_viewdef(r.oid)
  FROM rels r WHERE r.relkind IN ('v', 'm')
  UNION ALL
  SELECT 'trigger: ' || pg_get_triggerdef(t.oid) || ' enabled=' || t.tgenabled::text
  FROM pg_trigger t JOIN rels r ON r.oid = t.tgrelid WHERE NOT t.tgisinternal
  UNION ALL
  SELECT 'policy ' || p.polname || ' on ' || p.polrelid::regclass || ' cmd=' || p.polcmd::text
         || ' permissive=' || p.polpermissive || ' roles=' || p.polroles::regrole[]::text
         || ' using=' || coalesce(pg_get_expr(p.polqual, p.polrelid), '-')
         || ' check=' || coalesce(pg_get_expr(p.polwithcheck, p.polrelid), '-')
  FROM pg_policy p JOIN rels r ON r.oid = p.polrelid
  UNION ALL
  SELECT 'rule ' || ru.rulename || ' on ' || ru.ev_class::regclass || ': ' || pg_get_ruledef(ru.oid)
  FROM pg_rewrite ru JOIN rels r ON r.oid = ru.ev_class WHERE r.relkind NOT IN ('v', 'm')
  UNION ALL
  SELECT 'sequence ' || s.seqrelid::regclass || ' ' || s.seqtypid::regtype || ' start=' || s.seqstart
         || ' inc=' || s.seqincrement || ' min=' || s.seqmin || ' max=' || s.seqmax
         || ' cache=' || s.seqcache || ' cycle=' || s.seqcycle
  FROM pg_sequence s JOIN rels r ON r.oid = s.seqrelid
  UNION ALL
  SELECT 'type ' || t.oid::regtype || ' type=' || t.typtype::text || ' owner=' || pg_get_userbyid(t.typowner)
         || ' acl=' || coalesce(t.typacl::text, '-')
         || ' base=' || coalesce(NULLIF(t.typbasetype, 0)::regtype::text, '-')
         || ' notnull=' || t.typnotnull || ' default=' || coalesce(t.typdefault, '-')
         || ' labels=' || coalesce((SELECT string_agg(en.enumlabel, ',' ORDER BY en.enumsortorder)
                                    FROM pg_enum en WHERE en.enumtypid = t.oid), '-')
  FROM pg_type t, ext WHERE t.typnamespace = ext.ns AND t.typtype <> 'c' AND t.typelem = 0
  UNION ALL
  SELECT 'foreign-data wrapper ' || w.fdwname || ' handler=' || w.fdwhandler::regproc
         || ' validator=' || w.fdwvalidator::regproc || ' owner=' || pg_get_userbyid(w.fdwowner)
         || ' acl=' || coalesce(w.fdwacl::text, '-') || ' options=' || coalesce(w.fdwoptions::text, '-')
  FROM pg_foreign_data_wrapper w JOIN members m
    ON m.classid = 'pg_foreign_data_wrapper'::regclass AND m.objid = w.oid
  UNION ALL
  SELECT 'comment on ' || pg_describe_object(d.classoid, d.objoid, d.objsubid) || ': ' || d.description
  FROM pg_description d
  WHERE EXISTS (SELECT 1 FROM members m WHERE m.classid = d.classoid AND m.objid = d.objoid)
     OR (d.classoid = 'pg_namespace'::regclass AND d.objoid = (SELECT ns FROM ext))
     OR (d.classoid IN ('pg_constraint'::regclass, 'pg_trigger'::regclass, 'pg_policy'::regclass)
         AND pg_describe_object(d.classoid, d.objoid, 0) LIKE '% on table partner_svc.%')
  UNION ALL
  SELECT 'initial privileges of ' || pg_describe_object(ip.classoid, ip.objoid, ip.objsubid)
         || ' (' || ip.privtype::text || '): ' || ip.initprivs::text
  FROM pg_init_privs ip
  WHERE EXISTS (SELECT 1 FROM members m WHERE m.classid = ip.classoid AND m.objid = ip.objoid)
)
SELECT l FROM (SELECT replace(line, chr(10), ' | ') AS l FROM facts) s ORDER BY l COLLATE "C";
SQL

my @fresh = split /\n/, $node->safe_psql('fresh', $describe);
cmp_ok(scalar @fresh, '>', 100, 'the description of a fresh install is not empty (' . scalar(@fresh) . ' facts)');
ok((grep { /^function partner_svc\.version\(\)/ } @fresh), 'functions are described');
ok((grep { /^column partner_svc\./ } @fresh), 'columns are described');
ok((grep { /^extension: partner_svc .* config=/ } @fresh), 'extension config is described')
  or diag(join("\n", grep { /^extension/ } @fresh));

my %in_fresh = map { $_ => 1 } @fresh;
for my $db ('upgraded', 'from02', 'from03')
{
	my @upgraded = split /\n/, $node->safe_psql($db, $describe);
	my %in_upgraded = map { $_ => 1 } @upgraded;
	my @only_upgraded = grep { !$in_fresh{$_} } @upgraded;
	my @only_fresh = grep { !$in_upgraded{$_} } @fresh;
	ok(!@only_upgraded && !@only_fresh, "$db: updated, it has exactly the catalog of a fresh $current")
	  or diag(join("\n", (map { "only after the update:  $_" } @only_upgraded),
						(map { "only in a fresh $current:    $_" } @only_fresh)));
}

$node->stop;
done_testing();
