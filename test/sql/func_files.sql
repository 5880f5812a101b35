-- func_files: the file functions.  Upload sessions whose appends are sent
-- exactly once, also when the service drops the answer after appending
-- (the size read with GET /files/{file_id} decides), resent when they
-- were not applied, split at 5 MiB; and a 50 MiB upload under 30 % lost
-- answers whose bytes come back intact.
\getenv sandbox_url PSVC_SANDBOX_URL
SET search_path = public;
CALL sandbox.clear_faults();
CREATE SERVER files FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'files', base_url :'sandbox_url');
CREATE USER MAPPING FOR PUBLIC SERVER files OPTIONS (api_key 'sandbox-key');

-- sha256 of a file's bytes as the sandbox serves them (GET .../content)
CREATE FUNCTION pg_temp.content_sha256(file_id text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  cmd text := format('curl -s -S -f -H %s %s | sha256sum',
                     sandbox.sh('Authorization: Bearer sandbox-key'),
                     sandbox.sh((SELECT url FROM sandbox.config) || '/files/' || file_id || '/content'));
BEGIN
  IF to_regclass('pg_temp.digest_out') IS NULL THEN
    CREATE TEMP TABLE digest_out (line text);
  END IF;
  TRUNCATE digest_out;
  EXECUTE format('COPY digest_out FROM PROGRAM %L', cmd);
  RETURN (SELECT split_part(line, ' ', 1) FROM digest_out);
END $$;

-- the error of an upload: SQLSTATE, message, detail, and the context line
-- that says where the upload stands (the file id masked)
CREATE FUNCTION pg_temp.upload_error(stmt text) RETURNS TABLE (sqlstate text, message text, detail text, context text)
LANGUAGE plpgsql AS $$
DECLARE
  st text; msg text; det text; ctx text;
BEGIN
  EXECUTE stmt;
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL,
                          ctx = PG_EXCEPTION_CONTEXT;
  RETURN QUERY
    SELECT st, msg, det, regexp_replace(l, 'file_[0-9a-f]{16}', 'file_<id>')
    FROM regexp_split_to_table(ctx, E'\n') AS l WHERE l LIKE 'upload of %';
END $$;

--
-- create_upload, append_upload, file_info
--
CALL sandbox.reset_stats();
SELECT partner_svc.create_upload('notes.txt') AS info \gset
SELECT (:'info'::jsonb) ->> 'filename' AS filename, (:'info'::jsonb) -> 'size' AS size,
       (:'info'::jsonb) ->> 'file_id' ~ '^file_[0-9a-f]{16}$' AS has_id,
       (:'info'::jsonb) ?& ARRAY['created_at', 'updated_at', 'expires_at'] AS has_times;
SELECT (:'info'::jsonb) ->> 'file_id' AS file_id \gset
SELECT a -> 'size' AS size, a ->> 'file_id' = :'file_id' AS same_file
FROM partner_svc.append_upload(:'file_id', 'hello, '::bytea) AS a;
SELECT a -> 'size' AS size FROM partner_svc.append_upload(:'file_id', 'world'::bytea) AS a;
-- an empty chunk appends nothing and sends no PUT
SELECT a -> 'size' AS size FROM partner_svc.append_upload(:'file_id', ''::bytea) AS a;
SELECT i -> 'size' AS size, i ->> 'filename' AS filename
FROM partner_svc.file_info(:'file_id', 'files') AS i;
SELECT pg_temp.content_sha256(:'file_id') = encode(sha256('hello, world'::bytea), 'hex') AS content_ok;
-- append_upload reads the size first: it decides about a resend
SELECT method, route, status FROM sandbox.requests();

-- NULL arguments give NULL and send nothing
CALL sandbox.reset_stats();
SELECT partner_svc.create_upload(NULL) IS NULL AS c, partner_svc.upload_file('x', NULL) IS NULL AS u,
       partner_svc.append_upload(NULL, 'x') IS NULL AS a, partner_svc.file_info(NULL) IS NULL AS i;
SELECT count(*) AS requests FROM sandbox.requests();

-- errors: unknown file (nothing is appended), empty name (nothing is sent)
SELECT partner_svc.file_info('file_0000000000000000');
SELECT partner_svc.append_upload('file_0000000000000000', 'abc');
SELECT partner_svc.upload_file('', 'abc');
SELECT partner_svc.create_upload('x', 'movies');

--
-- an append whose answer is lost after the service applied it: the size
-- says it happened, so it is not sent again
--
CALL sandbox.reset_stats();
CALL sandbox.fault('{"route": "PUT /uploads/{file_id}", "kind": "drop_after_apply", "count": 1}');
SELECT u -> 'size' AS size FROM partner_svc.upload_file('dropped.txt', 'abcdef') AS u;
SELECT method, route, status FROM sandbox.requests();

-- the same with a body cut short (the answer is read half)
CALL sandbox.reset_stats();
CALL sandbox.fault('{"route": "PUT /uploads/{file_id}", "kind": "truncate", "count": 1}');
SELECT u -> 'size' AS size FROM partner_svc.upload_file('cut.txt', 'abcdef') AS u;
SELECT method, route, status FROM sandbox.requests();

--
-- an append answered 503 before the service did anything: the size says
-- it did not happen, so it is sent again
--
CALL sandbox.reset_stats();
CALL sandbox.fault('{"route": "PUT /uploads/{file_id}", "kind": "error", "value": 503, "count": 1}');
SELECT u -> 'size' AS size, pg_temp.content_sha256(u ->> 'file_id') = encode(sha256('abcdef'::bytea), 'hex') AS content_ok
FROM partner_svc.upload_file('resent.txt', 'abcdef') AS u;
SELECT method, route, status FROM sandbox.requests();

-- a 429 is retried by the HTTP client itself: the service did nothing
CALL sandbox.reset_stats();
CALL sandbox.fault('{"route": "PUT /uploads/{file_id}", "kind": "429", "count": 1}');
SELECT u -> 'size' AS size FROM partner_svc.upload_file('limited.txt', 'abcdef') AS u;
SELECT method, route, status FROM sandbox.requests();

-- resends are bounded by partner_svc.max_retries; the error says where
-- the upload stands, so it can be resumed with append_upload
CALL sandbox.reset_stats();
SET partner_svc.max_retries = 1;
CALL sandbox.fault('{"route": "PUT /uploads/{file_id}", "kind": "error", "value": 503, "count": 2, "skip": 1}');
\x on
SELECT * FROM pg_temp.upload_error($$SELECT partner_svc.upload_file('stuck.bin', decode(repeat('ab', 5242880 + 10), 'hex'))$$);
\x off
RESET partner_svc.max_retries;
SELECT method, route, status FROM sandbox.requests();
CALL sandbox.clear_faults();
SELECT f ->> 'file_id' AS stuck_id
FROM jsonb_array_elements((SELECT string_agg(l, '') FROM sandbox.call('GET', '/files', NULL, 'sandbox-key') AS l)::jsonb) AS f
WHERE f ->> 'filename' = 'stuck.bin' \gset
SELECT partner_svc.append_upload(:'stuck_id', substring(decode(repeat('ab', 5242880 + 10), 'hex') FROM 5242880 + 1)) -> 'size' AS resumed_size;

-- the connection dropped in the middle of an append, and the size cannot
-- be read after it: the DETAIL gives the progress as numbers, in a fixed
-- form, and the resume loop of docs/functions-files-scheduler.md goes on
-- from file_info()'s size, which knows that the dropped append happened
CALL sandbox.reset_stats();
SET partner_svc.max_retries = 0;
CALL sandbox.fault('{"route": "PUT /uploads/{file_id}", "kind": "drop_after_apply", "count": 1, "skip": 1}');
CALL sandbox.fault('{"route": "GET /files/{file_id}", "kind": "error", "value": 503, "count": 1}');
CREATE TEMP TABLE dropped_err AS
SELECT * FROM pg_temp.upload_error($$SELECT partner_svc.upload_file('dropped.bin', decode(repeat('ef', 2 * 5242880 + 10), 'hex'))$$);
RESET partner_svc.max_retries;
CALL sandbox.clear_faults();
\x on
SELECT * FROM dropped_err;
\x off
SELECT method, route, status FROM sandbox.requests();
SELECT (regexp_match(detail, '^Appended ([0-9]+) of ([0-9]+) bytes; the file''s last known size is ([0-9]+) bytes\.'))::int8[] AS progress
FROM dropped_err;
SELECT f ->> 'file_id' AS dropped_id
FROM jsonb_array_elements((SELECT string_agg(l, '') FROM sandbox.call('GET', '/files', NULL, 'sandbox-key') AS l)::jsonb) AS f
WHERE f ->> 'filename' = 'dropped.bin' \gset
SET psvc.dropped_id = :'dropped_id';
DO $$
DECLARE
  data bytea := decode(repeat('ef', 2 * 5242880 + 10), 'hex');
  file_id text := current_setting('psvc.dropped_id');
  size int8;
  rounds int := 0;
BEGIN
  LOOP
    size := (partner_svc.file_info(file_id) ->> 'size')::int8;
    EXIT WHEN size >= length(data) OR rounds >= 5;
    rounds := rounds + 1;
    PERFORM partner_svc.append_upload(file_id, substring(data FROM (size + 1)::int4));
  END LOOP;
  RAISE NOTICE 'size % after % resume(s)', size, rounds;
END $$;
SELECT pg_temp.content_sha256(:'dropped_id') = encode(sha256(decode(repeat('ef', 2 * 5242880 + 10), 'hex')), 'hex') AS content_ok;
RESET psvc.dropped_id;

--
-- a chunk over 5 MiB is sent as several appends of at most 5,242,880 bytes
--
CALL sandbox.reset_stats();
SELECT a -> 'size' AS size
FROM partner_svc.append_upload(:'file_id', decode(repeat('cd', 5242880 + 1), 'hex')) AS a;
SELECT method, route, status FROM sandbox.requests();

--
-- 50 MiB of random bytes while 30 % of the appends lose their answer
-- after the service applied them (and one surely does): the file comes
-- back byte for byte, every chunk was appended exactly once
--
CREATE TEMP TABLE blob AS
SELECT string_agg(sha256(int8send(i) || int8send((random() * 1e15)::int8)), ''::bytea ORDER BY i) AS data
FROM generate_series(1, 52428800 / 32) AS i;
SELECT length(data) AS input_bytes FROM blob;
CALL sandbox.reset_stats();
CALL sandbox.fault('{"route": "PUT /uploads/{file_id}", "kind": "drop_after_apply", "count": 1, "skip": 2}');
CALL sandbox.fault('{"route": "PUT /uploads/{file_id}", "kind": "drop_after_apply", "rate": 0.3}');
CREATE TEMP TABLE big AS SELECT partner_svc.upload_file('big.bin', data) AS info FROM blob;
CALL sandbox.clear_faults();
-- every PUT was applied (answered, or dropped after the append): 10 of
-- them, one per 5 MiB; each dropped answer cost one GET of the size and
-- no resend
SELECT count(*) FILTER (WHERE method = 'PUT') AS appends,
       count(*) FILTER (WHERE method = 'PUT' AND status = 0) > 0 AS some_dropped,
       count(*) FILTER (WHERE method = 'PUT' AND status = 0) =
         count(*) FILTER (WHERE method = 'GET' AND route = '/files/{file_id}') AS one_check_per_drop,
       count(*) FILTER (WHERE method = 'PUT' AND status NOT IN (0, 200)) AS failed,
       count(*) FILTER (WHERE method = 'POST') AS creates
FROM sandbox.requests();
SELECT (info -> 'size')::bigint = (SELECT length(data) FROM blob) AS size_ok,
       (partner_svc.file_info(info ->> 'file_id') -> 'size')::bigint AS size_read
FROM big;
SELECT pg_temp.content_sha256(info ->> 'file_id') = (SELECT encode(sha256(data), 'hex') FROM blob) AS content_ok
FROM big;
