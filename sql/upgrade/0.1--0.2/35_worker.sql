-- 35_worker.sql (0.1 -> 0.2): the webhook tables are kept by pg_dump
-- (issue 10, backups).  Same calls as sql/install/40_webhooks.sql;
-- pg_extension_config_dump replaces an existing entry, so running this
-- twice is harmless.

SELECT pg_catalog.pg_extension_config_dump('@extschema@.webhook_events', '');
SELECT pg_catalog.pg_extension_config_dump('@extschema@.order_states', '');
SELECT pg_catalog.pg_extension_config_dump('@extschema@.transactions', '');
SELECT pg_catalog.pg_extension_config_dump('@extschema@.webhook_rejects', '');
SELECT pg_catalog.pg_extension_config_dump(
  pg_catalog.pg_get_serial_sequence('@extschema@.webhook_events', 'id')::pg_catalog.regclass, '');
SELECT pg_catalog.pg_extension_config_dump(
  pg_catalog.pg_get_serial_sequence('@extschema@.webhook_rejects', 'id')::pg_catalog.regclass, '');
