-- json_layer: the one text-to-jsonb builder of the extension
-- (psvc_json_to_jsonb), seen through a SQL function.  The generation
-- service echoes the prompt (and quotes it in every thread), so a prompt
-- full of what JSON escapes comes back as a body full of escapes: the
-- function's jsonb must be what jsonb_in makes of the same body, fetched
-- raw with curl (sandbox.call).
\getenv sandbox_url PSVC_SANDBOX_URL
SET search_path = public;
CALL sandbox.clear_faults();
CREATE SERVER json_layer_gen FOREIGN DATA WRAPPER partner_svc
  OPTIONS (service 'generation', base_url :'sandbox_url');
CREATE USER MAPPING FOR PUBLIC SERVER json_layer_gen OPTIONS (api_key 'sandbox-key');

CREATE TEMP TABLE prompts (name text, body jsonb);
INSERT INTO prompts VALUES
  ('plain', '{"prompt": "road trips", "count": 2}'),
  ('escapes', jsonb_build_object('prompt',
     E'say "hi" \\ back/slash\nnew line\ttab \x01\x1f controls', 'count', 3)),
  ('unicode', jsonb_build_object('prompt',
     E'caf\u00e9 \u2603 snow, \U0001F600 face, \u00fc', 'count', 1)),
  ('escaped unicode', jsonb_build_object('prompt',
     E'\\u00e9 is not an escape here: \\"', 'count', 2));

SELECT p.name,
       f = raw AS same_as_jsonb_in,
       f ->> 'prompt' = p.body ->> 'prompt' AS prompt_round_trip,
       jsonb_array_length(f -> 'threads') AS threads,
       position(left(p.body ->> 'prompt', 10) IN f #>> '{threads,0,text}') > 0 AS quoted
FROM prompts p,
     LATERAL partner_svc.generate(p.body, 'json_layer_gen') f,
     LATERAL (SELECT string_agg(l, E'\n')::jsonb AS raw
              FROM sandbox.call('POST', '/v1/generate', p.body::text, 'sandbox-key') l) x
ORDER BY p.name;

DROP SERVER json_layer_gen CASCADE;
