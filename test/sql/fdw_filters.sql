-- fdw_filters: equalities on the filter columns whose values the documents
-- enumerate, and ORs of equalities.  For movie_faqs.section,
-- business_questions.persona and business_questions.answerability (enums of
-- the documents, compared exactly): a value outside the documented set, in
-- any case, is not sent and gives no row, as PostgreSQL's text equality
-- would; a documented value is sent; = ANY(...) and an OR of equalities fan
-- out over the documented values they name, one request each.
-- orders.status maps its filter values and does not enumerate every status
-- an order can hold: a value its filter does not select exactly is not
-- sent, the list is read whole and checked locally.
-- An OR of equalities on one path or filter column is planned as = ANY.
SET search_path = public;
CALL sandbox.clear_faults();
SET partner_svc.learn_estimates = off;
CREATE SCHEMA filters;
IMPORT FOREIGN SCHEMA movies LIMIT TO (movie_faqs, movie_themes) FROM SERVER movies INTO filters;
IMPORT FOREIGN SCHEMA catalog LIMIT TO (business_questions) FROM SERVER catalog INTO filters;
IMPORT FOREIGN SCHEMA orders LIMIT TO (orders) FROM SERVER orders INTO filters;
SET search_path = filters, public;

--
-- business_questions.persona: geschaeftsfuehrung, einkauf, kalkulation, hr
--
CALL sandbox.reset_stats();
-- outside the set (another case, another word): nothing sent, no row
SELECT count(*) FROM business_questions WHERE persona = 'HR';
SELECT count(*) FROM business_questions WHERE persona = 'nobody';
SELECT count(*) FROM business_questions WHERE persona = 'Einkauf' AND answerability = 'source_required';
SELECT count(*) AS requests FROM sandbox.requests();
-- in the set: sent
SELECT count(*) FROM business_questions WHERE persona = 'hr';
SELECT query, status FROM sandbox.requests() ORDER BY query;
-- an OR of equalities is = ANY: one request per documented value it names,
-- the same for IN, and the others are not sent
CALL sandbox.reset_stats();
SELECT persona, count(*) FROM business_questions WHERE persona = 'hr' OR persona = 'einkauf' GROUP BY 1 ORDER BY 1;
SELECT query, status FROM sandbox.requests() ORDER BY query;
CALL sandbox.reset_stats();
SELECT persona, count(*) FROM business_questions WHERE persona IN ('hr', 'einkauf') GROUP BY 1 ORDER BY 1;
SELECT query, status FROM sandbox.requests() ORDER BY query;
CALL sandbox.reset_stats();
SELECT persona, count(*) FROM business_questions
WHERE persona = 'hr' OR persona IN ('HR', 'nobody', 'einkauf', 'hr') GROUP BY 1 ORDER BY 1;
SELECT query, status FROM sandbox.requests() ORDER BY query;
CALL sandbox.reset_stats();
SELECT count(*) FROM business_questions WHERE persona = 'HR' OR persona = 'Hr';
SELECT count(*) FROM business_questions WHERE persona IN ('HR', NULL);
SELECT count(*) AS requests FROM sandbox.requests();
-- a parameter is checked when the scan starts
PREPARE by_persona(text) AS SELECT count(*) FROM business_questions WHERE persona = $1;
CALL sandbox.reset_stats();
EXECUTE by_persona('HR');
EXECUTE by_persona('kalkulation');
SELECT query, status FROM sandbox.requests() ORDER BY query;
DEALLOCATE by_persona;
PREPARE by_personas(text[]) AS SELECT count(*) FROM business_questions WHERE persona = ANY($1);
CALL sandbox.reset_stats();
EXECUTE by_personas('{HR,Kalkulation}');
EXECUTE by_personas('{HR,kalkulation,hr}');
SELECT query, status FROM sandbox.requests() ORDER BY query;
DEALLOCATE by_personas;
EXPLAIN (COSTS OFF) SELECT * FROM business_questions WHERE persona = 'HR';
EXPLAIN (COSTS OFF) SELECT * FROM business_questions WHERE persona = 'hr' OR persona = 'HR' OR persona = 'einkauf';
EXPLAIN (COSTS OFF) SELECT * FROM business_questions WHERE persona IN ('HR', 'Einkauf');

--
-- business_questions.answerability: seven values
--
CALL sandbox.reset_stats();
SELECT count(*) FROM business_questions WHERE answerability = 'blocked';
SELECT count(*) FROM business_questions WHERE answerability = 'SOURCE_REQUIRED';
SELECT count(*) AS requests FROM sandbox.requests();
SELECT answerability, count(*) FROM business_questions
WHERE answerability IN ('available_snapshot', 'available_limited_scope', 'partial_evidence',
                        'available_with_owner_prioritization', 'source_required',
                        'source_and_semantics_required', 'source_and_owner_required')
GROUP BY 1 ORDER BY 1;
SELECT query, status FROM sandbox.requests() ORDER BY query;
CALL sandbox.reset_stats();
SELECT count(*) FROM business_questions WHERE answerability = 'source_required' OR answerability = 'partial_evidence';
SELECT query, status FROM sandbox.requests() ORDER BY query;
CALL sandbox.reset_stats();
SELECT count(*) FROM business_questions WHERE answerability IN ('source_required', 'partial_evidence');
SELECT query, status FROM sandbox.requests() ORDER BY query;
-- both filters fanned out: one request per pair of documented values
CALL sandbox.reset_stats();
SELECT persona, answerability, count(*) FROM business_questions
WHERE (persona = 'hr' OR persona = 'einkauf' OR persona = 'x')
  AND (answerability = 'source_required' OR answerability = 'partial_evidence')
GROUP BY 1, 2 ORDER BY 1, 2;
SELECT query, status FROM sandbox.requests() ORDER BY query;
EXPLAIN (COSTS OFF) SELECT id FROM business_questions WHERE answerability = 'blocked';

--
-- movie_faqs.section: summary, ending, info
--
CALL sandbox.reset_stats();
SELECT count(*) FROM movie_faqs WHERE movie = 'inception' AND section = 'Ending';
SELECT count(*) FROM movie_faqs WHERE movie = 'inception' AND section = 'plot';
SELECT count(*) FROM movie_faqs WHERE movie IN ('inception', 'frozen-station') AND section = 'background';
SELECT count(*) AS requests FROM sandbox.requests();
SELECT section, count(*) FROM movie_faqs WHERE movie = 'inception' AND section = 'ending' GROUP BY 1;
SELECT path, query, status FROM sandbox.requests() ORDER BY path, query;
CALL sandbox.reset_stats();
SELECT section, count(*) FROM movie_faqs
WHERE movie = 'inception' AND (section = 'summary' OR section = 'info' OR section = 'Info')
GROUP BY 1 ORDER BY 1;
SELECT path, query, status FROM sandbox.requests() ORDER BY path, query;
CALL sandbox.reset_stats();
SELECT section, count(*) FROM movie_faqs
WHERE movie = 'inception' AND section IN ('summary', 'info', 'Info')
GROUP BY 1 ORDER BY 1;
SELECT path, query, status FROM sandbox.requests() ORDER BY path, query;
EXPLAIN (COSTS OFF) SELECT * FROM movie_faqs WHERE movie = 'inception' AND section = 'Ending';
EXPLAIN (COSTS OFF) SELECT * FROM movie_faqs WHERE movie = 'inception' AND section IN ('summary', 'info', 'Info');

--
-- orders.status: its filter maps DEFERRED to WILL BE ACTIVE; a value the
-- filter does not select exactly is not sent, and the list is read whole
--
CALL sandbox.reset_stats();
SELECT count(*) FROM orders WHERE status = 'pending' AND custom_id LIKE 'PL-%';
SELECT count(*) FROM orders WHERE status = 'FOO' AND custom_id LIKE 'PL-%';
SELECT method, route, replace(replace(query, '+', ' '), '%20', ' ') AS query, status
FROM sandbox.requests();
CALL sandbox.reset_stats();
SELECT custom_id, status FROM orders WHERE status = 'PENDING' AND custom_id LIKE 'PL-%';
SELECT method, route, replace(replace(query, '+', ' '), '%20', ' ') AS query, status
FROM sandbox.requests();
-- an OR of equalities reads as IN does: whole, checked locally
CALL sandbox.reset_stats();
SELECT custom_id, status FROM orders
WHERE (status = 'PENDING' OR status = 'DEFERRED') AND custom_id LIKE 'PL-%' ORDER BY 1;
SELECT custom_id, status FROM orders
WHERE status IN ('PENDING', 'DEFERRED') AND custom_id LIKE 'PL-%' ORDER BY 1;
SELECT method, route, replace(replace(query, '+', ' '), '%20', ' ') AS query, status
FROM sandbox.requests();

--
-- an OR of equalities on a path column is = ANY: it gives the required
-- value, one request per distinct value
--
CALL sandbox.reset_stats();
SELECT movie, count(*) FROM movie_themes WHERE movie = 'inception' OR movie = 'frozen-station' GROUP BY 1 ORDER BY 1;
SELECT path, status FROM sandbox.requests() ORDER BY path;
CALL sandbox.reset_stats();
SELECT movie, count(*) FROM movie_themes WHERE movie IN ('inception', 'frozen-station') GROUP BY 1 ORDER BY 1;
SELECT path, status FROM sandbox.requests() ORDER BY path;
CALL sandbox.reset_stats();
SELECT movie, count(*) FROM movie_themes
WHERE movie = 'inception' OR movie IN ('frozen-station', 'inception') OR movie = ANY (NULL::text[])
GROUP BY 1 ORDER BY 1;
SELECT path, status FROM sandbox.requests() ORDER BY path;
EXPLAIN (COSTS OFF) SELECT * FROM movie_themes WHERE movie = 'inception' OR movie = 'frozen-station';
-- with a parameter among the values
PREPARE themes_of(text) AS
  SELECT movie, count(*) FROM movie_themes WHERE movie = 'inception' OR movie = $1 GROUP BY 1 ORDER BY 1;
CALL sandbox.reset_stats();
EXECUTE themes_of('frozen-station');
SELECT path, status FROM sandbox.requests() ORDER BY path;
DEALLOCATE themes_of;
-- an OR across columns is not pushed down: it is checked locally, and the
-- required column still lacks its condition
\set VERBOSITY terse
SELECT count(*) FROM movie_faqs WHERE movie = 'inception' OR section = 'ending';
SELECT count(*) FROM movie_themes WHERE movie = 'inception' OR title = 'x';
\set VERBOSITY default
-- with the required value given apart, such an OR is a local filter
SELECT count(*) FROM movie_faqs
WHERE movie = 'inception' AND (section = 'ending' OR question LIKE 'Is %');

RESET partner_svc.learn_estimates;
SET search_path = public;
DROP SCHEMA filters CASCADE;
