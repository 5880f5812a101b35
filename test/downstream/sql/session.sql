-- session: what pg_regress imposes on every test's session, and what it
-- means for values sent to the partner (docs/testing-with-the-sandbox.md,
-- "What pg_regress sets").
SELECT name, setting FROM pg_settings
 WHERE name IN ('DateStyle', 'TimeZone', 'IntervalStyle', 'lc_messages', 'lc_monetary',
                'lc_numeric', 'lc_time', 'bytea_output', 'timezone_abbreviations')
 ORDER BY lower(name);

-- DateStyle 'Postgres, MDY': a date as text is MM-DD-YYYY here (and
-- YYYY-MM-DD in most other sessions)
SELECT date '2026-11-26'::text AS date_as_text;
-- so the partner refuses a start date sent as date::text inside the suite
SELECT shop.place_order('LJ GH-012', 'S-1', (date '2026-11-26')::text);
-- to_char() (or SET DateStyle = ISO) sends what the partner reads
SELECT shop.place_order('LJ GH-012', 'S-2', to_char(date '2026-11-26', 'YYYY-MM-DD')) IS NOT NULL
       AS booked_with_to_char;
-- json and jsonb write dates in ISO whatever DateStyle says
SELECT jsonb_build_object('start_date', date '2026-11-26') AS in_jsonb;
SET DateStyle = ISO;
SELECT date '2026-11-26'::text AS date_as_text_iso;
RESET DateStyle;
