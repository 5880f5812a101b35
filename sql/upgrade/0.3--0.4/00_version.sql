-- 0.3 -> 0.4: what turns the objects of a 0.3 install into those of a fresh
-- 0.4.  Each area adds its own NN_area.sql beside this file; this one only
-- keeps the directory (and so the upgrade script) present while 0.4 has
-- no SQL change of its own yet.
\echo Use "ALTER EXTENSION partner_svc UPDATE TO '0.4'" to load this file. \quit
