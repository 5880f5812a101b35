-- 0.2 -> 0.3: what turns the objects of a 0.2 install into those of a fresh
-- 0.3.  Each area adds its own NN_area.sql beside this file; this one only
-- keeps the directory (and so the upgrade script) present while 0.3 has
-- no SQL change of its own yet.
\echo Use "ALTER EXTENSION partner_svc UPDATE TO '0.3'" to load this file. \quit
