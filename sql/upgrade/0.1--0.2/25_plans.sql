-- 25_plans.sql: 0.1 -> 0.2 delta of issue 9 points 2-4, 7, 8 (helper "plans").
--
-- Every role may look into the schema; the objects' own grants decide the
-- rest (docs/privileges.md).  rate_limits hides resource ids from roles
-- that are neither superusers nor members of pg_read_all_stats: that is
-- done in the library, the view is unchanged.
GRANT USAGE ON SCHEMA @extschema@ TO PUBLIC;
