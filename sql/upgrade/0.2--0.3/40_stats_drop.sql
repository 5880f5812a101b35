-- 40_stats_drop.sql (0.2 -> 0.3): partner_svc.stats gains the columns
-- cache_hits and cache_misses.  A function's result columns cannot be
-- changed in place, so the 0.2 view and function go here and
-- 41_stats.sql (a link to sql/install/31_stats.sql) makes them again.

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION partner_svc UPDATE TO '0.3'" to load this file. \quit

DROP VIEW @extschema@.stats;
DROP FUNCTION @extschema@.stats();
