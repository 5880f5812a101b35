-- fdw_raw: the column "raw" of a scan is the whole item as jsonb_in makes
-- it of the item's text.  The scan builds it while decoding the page
-- (json_decode.c), so strings with escapes, non-ASCII text and text that
-- looks like JSON are checked against the JSON the service sent, read
-- with jsonb_in, and against raw's own text read again.  Decoder-level
-- cases no service can be made to send (duplicate keys, numbers with
-- exponents, \u0000) were checked by hand against jsonb_in.
SET search_path = public;
CALL sandbox.clear_faults();

INSERT INTO todos (title, user_id) VALUES
  (E'quote " backslash \\ slash / tab \t newline \n return \r', 41),
  (E'controls \x01 \x1f, accents é ü, CJK 中文, astral 😀', 41),
  ('{"looks": ["like", "json"], "n": 1e5}', 41),
  (repeat('long ', 150), 41),
  ('plain', 41);

-- the body of GET /todos, as the service sent it, read by jsonb_in
CREATE TEMP TABLE sent AS
SELECT e AS item
FROM sandbox.call('GET', '/todos', NULL, 'sandbox-key') AS line,
     jsonb_array_elements(line::jsonb) AS e
WHERE (e ->> 'userId')::int = 41;

SELECT count(*) AS items,
       bool_and(t.raw = s.item) AS equal,
       bool_and(t.raw::text = s.item::text) AS same_text,
       bool_and(pg_column_size(t.raw) = pg_column_size(s.item)) AS same_size,
       bool_and(t.raw = (t.raw::text)::jsonb) AS reparse_equal,
       bool_and(t.raw ->> 'title' = t.title) AS title_equal
FROM todos t JOIN sent s ON (s.item ->> 'id')::bigint = t.id;

-- the titles as raw holds them (JSON text, escapes shown), and their length
SELECT left((raw -> 'title')::text, 72) AS title_json,
       length(raw ->> 'title') AS len
FROM todos WHERE user_id = 41 ORDER BY id;

-- raw declared as text or json: the item's text, read by that type
CREATE FOREIGN TABLE todos_raw_text (id bigint, raw text)
  SERVER todos OPTIONS (resource 'todos');
CREATE FOREIGN TABLE todos_raw_json (id bigint, raw json)
  SERVER todos OPTIONS (resource 'todos');
SELECT count(*) AS items,
       bool_and(x.raw::jsonb = s.item) AS text_equal,
       bool_and(j.raw::jsonb = s.item) AS json_equal
FROM sent s
JOIN todos_raw_text x ON x.id = (s.item ->> 'id')::bigint
JOIN todos_raw_json j ON j.id = x.id;

DELETE FROM todos WHERE user_id = 41;
SELECT count(*) FROM todos WHERE user_id = 41;
DROP FOREIGN TABLE todos_raw_text, todos_raw_json;
