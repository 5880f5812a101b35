--
-- quota: the quota coordinator's function partner_svc.quota_lease and the
-- node's status without a coordinator (docs/scale-out.md).  The fleet
-- itself (two nodes, the worker, the fallback) is tested by
-- test/scenario/60_fleet_quota.t.
--

-- without partner_svc.quota_coordinator the node is local, and says so
SHOW partner_svc.quota_coordinator;
SELECT mode, coordinator_reached, fallback_from, last_error
FROM partner_svc.quota_status();
SELECT count(*) AS leased_keys FROM partner_svc.rate_limits WHERE mode <> 'local';

-- grants never exceed the limit in a window: 10, then the 5 left, then none,
-- with the time when one frees: units are counted from their grant plus
-- hold_ms (30 s here) for a window and a margin
SELECT granted, blocked_ms, retry_ms FROM partner_svc.quota_lease('t|GET /r|a', 60000, 15, 10, hold_ms => 30000);
SELECT granted, blocked_ms, retry_ms FROM partner_svc.quota_lease('t|GET /r|a', 60000, 15, 10, hold_ms => 30000);
SELECT granted, blocked_ms, retry_ms BETWEEN 90000 AND 92000 AS frees_after_hold_and_window
FROM partner_svc.quota_lease('t|GET /r|a', 60000, 15, 1, hold_ms => 30000);

-- units handed back unused free budget; units that ended are counted from
-- now instead (still within the window: no budget freed)
SELECT granted FROM partner_svc.quota_lease('t|GET /r|a', 60000, 15, 10, returned => 3, hold_ms => 30000);
SELECT granted FROM partner_svc.quota_lease('t|GET /r|a', 60000, 15, 10, moved => 5, hold_ms => 30000);
SELECT "limit", granted, counts[1] AS counted_now,
       (SELECT sum(x) FROM unnest(counts) x) AS counted
FROM partner_svc.quota_windows WHERE key = 't|GET /r|a';

-- a unit held for hold_ms is counted ahead, in the bucket of grant + hold
SELECT granted FROM partner_svc.quota_lease('t|GET /r|b', 60000, 15, 1, hold_ms => 30000);
SELECT buckets[1] - (extract(epoch FROM updated_at) * 1000000)::int8 / ((60000000 + 60000 + 59) / 60)
       BETWEEN 29 AND 31 AS thirty_buckets_ahead
FROM partner_svc.quota_windows WHERE key = 't|GET /r|b';

-- each key and each window length counts alone
SELECT granted FROM partner_svc.quota_lease('t|GET /r|c', 60000, 15, 20);
SELECT granted FROM partner_svc.quota_lease('t|GET /r|c', 1000, 15, 20);

-- a 429 reported by one node blocks the key for every node
SELECT granted, blocked_ms BETWEEN 4000 AND 5000 AS blocked
FROM partner_svc.quota_lease('t|GET /r|d', 60000, 15, 1, block_ms => 5000);
SELECT granted, blocked_ms BETWEEN 4000 AND 5000 AS blocked, retry_ms = blocked_ms AS retry_then
FROM partner_svc.quota_lease('t|GET /r|d', 60000, 15, 1);
SELECT blocked_until > now() FROM partner_svc.quota_windows WHERE key = 't|GET /r|d';

-- bad arguments
SELECT * FROM partner_svc.quota_lease('t|GET /r|e', 0, 15, 1);
SELECT * FROM partner_svc.quota_lease('t|GET /r|e', 60000, 15, -1);

-- only the fleet's role may lease
CREATE ROLE quota_nobody;
GRANT USAGE ON SCHEMA partner_svc TO quota_nobody;
SET ROLE quota_nobody;
SELECT * FROM partner_svc.quota_lease('t|GET /r|f', 60000, 15, 1);
SELECT mode FROM partner_svc.quota_status();
RESET ROLE;
REVOKE USAGE ON SCHEMA partner_svc FROM quota_nobody;
DROP ROLE quota_nobody;

-- pruning: at most once a minute, quota_lease deletes the rows that hold
-- nothing any more (every bucket out of the window, no block); a row still
-- blocked stays, and a row that dies after a pruning waits for the next one
INSERT INTO partner_svc.quota_windows (key, window_ms, "limit", buckets, counts, updated_at)
VALUES ('t|GET /r|old', 60000, 15, '{1}', '{3}', now() - interval '1 day'),
       ('t|GET /r|blocked', 60000, 15, '{1}', '{3}', now() - interval '1 day'),
       ('t|GET /r|empty', 60000, 15, '{}', '{}', now() - interval '1 day');
UPDATE partner_svc.quota_windows SET blocked_until = now() + interval '1 hour'
WHERE key = 't|GET /r|blocked';
UPDATE partner_svc.quota_prune SET pruned_at = '-infinity';
SELECT granted FROM partner_svc.quota_lease('t|GET /r|g', 60000, 15, 1);
SELECT key FROM partner_svc.quota_windows
WHERE key IN ('t|GET /r|old', 't|GET /r|blocked', 't|GET /r|empty', 't|GET /r|g') ORDER BY key;
SELECT pruned_at > now() - interval '1 minute' AS pruned_now FROM partner_svc.quota_prune;
INSERT INTO partner_svc.quota_windows (key, window_ms, "limit", buckets, counts)
VALUES ('t|GET /r|old2', 60000, 15, '{1}', '{3}');
SELECT granted FROM partner_svc.quota_lease('t|GET /r|g', 60000, 15, 1);
SELECT count(*) AS not_yet FROM partner_svc.quota_windows WHERE key = 't|GET /r|old2';

DELETE FROM partner_svc.quota_windows WHERE key LIKE 't|%';
