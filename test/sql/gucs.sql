--
-- gucs: the configuration parameters of partner_svc, their defaults, units
-- and bounds, and the reserved prefix.  The library is preloaded, so they
-- exist without CREATE EXTENSION.
--

SELECT name, setting, unit, context, vartype, boot_val, min_val, max_val
FROM pg_settings WHERE name LIKE 'partner_svc.%' ORDER BY name;

SHOW partner_svc.connect_timeout;
SHOW partner_svc.request_timeout;
SHOW partner_svc.max_retries;

-- units: milliseconds by default, any time unit accepted
SET partner_svc.connect_timeout = 250;
SHOW partner_svc.connect_timeout;
SET partner_svc.request_timeout = '2min';
SHOW partner_svc.request_timeout;
SET partner_svc.max_retries = 0;
SHOW partner_svc.max_retries;
RESET partner_svc.connect_timeout;
RESET partner_svc.request_timeout;
RESET partner_svc.max_retries;

-- bounds (the two settings with units as SQLSTATEs only: from 16 the
-- message prints the range with its unit, "(1 ms .. 600000 ms)"; the
-- bounds themselves are pg_settings' min_val and max_val above)
\set VERBOSITY sqlstate
SET partner_svc.connect_timeout = 0;
SET partner_svc.request_timeout = '2h';
\set VERBOSITY default
SET partner_svc.max_retries = 11;
SET partner_svc.max_retries = -1;

-- the prefix is reserved: a misspelt parameter is an error, not a placeholder
SET partner_svc.no_such = 1;
SET partner_svc.connect_timout = 100;

-- the partners' clock is the configuration's, the same for every session
SET partner_svc.time_scale = 0.5;

-- every tunable is a setting of its own, described (docs/reference.md
-- groups them); the three "key=value" strings of 0.3 are not shown
SELECT count(*) AS undescribed FROM pg_settings
WHERE name LIKE 'partner_svc.%' AND coalesce(short_desc, '') = '';
SELECT name FROM pg_settings
WHERE name IN ('partner_svc.webhook_listener', 'partner_svc.worker', 'partner_svc.worker_tasks');

-- a time is a time, in any unit, within the bounds of pg_settings above
-- (as SQLSTATE: from 16 the message prints the bounds with their unit)
ALTER SYSTEM SET partner_svc.webhook_header_timeout = '2min';
\set VERBOSITY sqlstate
ALTER SYSTEM SET partner_svc.webhook_header_timeout = '2h';
\set VERBOSITY default
ALTER SYSTEM SET partner_svc.poll_share = 101;
ALTER SYSTEM SET partner_svc.worker_database = '';
ALTER SYSTEM RESET partner_svc.webhook_header_timeout;

-- a 0.3 string is never silently ignored: ALTER SYSTEM (and the server, at
-- start and at each reload, into its log) names the settings to use
ALTER SYSTEM SET partner_svc.worker_tasks = 'senders=4, poll_after="25min" keep_events=0';
ALTER SYSTEM SET partner_svc.webhook_listener = 'port=8443 max_bdy=1MB';
ALTER SYSTEM SET partner_svc.worker = 'database=app role=hooks';
ALTER SYSTEM SET partner_svc.worker_tasks = 'not a list';
ALTER SYSTEM RESET partner_svc.worker_tasks;
ALTER SYSTEM RESET partner_svc.webhook_listener;
ALTER SYSTEM RESET partner_svc.worker;
