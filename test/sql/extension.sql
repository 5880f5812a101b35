--
-- extension: CREATE EXTENSION in a cluster that preloads partner_svc, the
-- objects it installs, and DROP / CREATE again.
--

-- preloaded: the library is loaded before the extension exists
SHOW shared_preload_libraries;

CREATE EXTENSION partner_svc;

SELECT e.extname, e.extversion, n.nspname AS schema, e.extrelocatable
FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
WHERE e.extname = 'partner_svc';

-- the foreign-data wrapper, with its handler and validator
SELECT fdwname, fdwhandler::regproc, fdwvalidator::regproc, fdwoptions
FROM pg_foreign_data_wrapper WHERE fdwname = 'partner_svc';

-- every object of the extension (but the row types of its tables and
-- views, and their array types, which 17 and later record as members too)
SELECT pg_describe_object(classid, objid, objsubid) AS object
FROM pg_depend d
WHERE refclassid = 'pg_extension'::regclass AND deptype = 'e'
  AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'partner_svc')
  AND NOT EXISTS (SELECT 1 FROM pg_type t
                  LEFT JOIN pg_type elem ON elem.oid = t.typelem
                  WHERE d.classid = 'pg_type'::regclass AND t.oid = d.objid
                    AND (t.typrelid <> 0 OR elem.typrelid <> 0))
ORDER BY 1;

-- the library and the installed SQL agree on the version
SELECT partner_svc.version();
SELECT partner_svc.version() = extversion AS same_version
FROM pg_extension WHERE extname = 'partner_svc';

-- a second CREATE EXTENSION is an error
CREATE EXTENSION partner_svc;

-- drop and create again; servers of the wrapper go with CASCADE
CREATE SERVER ext_probe FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'todos', base_url 'http://127.0.0.1:9');
DROP EXTENSION partner_svc;
DROP EXTENSION partner_svc CASCADE;
SELECT count(*) AS wrappers FROM pg_foreign_data_wrapper WHERE fdwname = 'partner_svc';
SELECT count(*) AS servers FROM pg_foreign_server WHERE srvname = 'ext_probe';

CREATE EXTENSION partner_svc;
SELECT partner_svc.version() = extversion AS same_version
FROM pg_extension WHERE extname = 'partner_svc';

-- the schema is fixed: the extension is not relocatable
CREATE SCHEMA elsewhere;
ALTER EXTENSION partner_svc SET SCHEMA elsewhere;
DROP SCHEMA elsewhere;

-- CREATE EXTENSION made the schema, so DROP EXTENSION leaves it behind;
-- a later CREATE EXTENSION uses it again, or makes it anew
DROP EXTENSION partner_svc;
SELECT nspname FROM pg_namespace WHERE nspname = 'partner_svc';
CREATE EXTENSION partner_svc;
DROP EXTENSION partner_svc;
DROP SCHEMA partner_svc;
CREATE EXTENSION partner_svc;
SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
WHERE e.extname = 'partner_svc';
DROP EXTENSION partner_svc;
DROP SCHEMA partner_svc;
