/*-------------------------------------------------------------------------
 *
 * functions_content.c
 *		  The SQL functions of the read-mostly services: movie content
 *		  (docs/sandbox-movies.md), the business-question catalog, and thread
 *		  generation with key validation (docs/sandbox-catalog-todos-generation.md).
 *
 * Each function is one operation of the catalogue (catalog.c), run by the
 * executor (functions_exec.c).
 *
 * Movies.  Six functions read one object of a movie: the three Markdown
 * texts (returned as text, data.markdown) and the setting, profile and
 * movie detail (returned as jsonb, the "data" of the answer).  Content a
 * known movie lacks (404 content_not_available, which the document
 * promises, and which the content rows name as "nothing here") is NULL;
 * an unknown movie (404 movie_not_found) is an error, so a misspelt movie
 * is never mistaken for missing content.
 *
 * Catalog.  The document fixes the start of a question id,
 * BQ-(GF|EK|KA|HR)-..., and leaves the rest to the service; an id without
 * that start is refused by the row's path rule before anything is sent.
 * A blocked question is a normal answer (HTTP 200 with a blocker),
 * returned like any other.
 *
 * Generation.  generate() sends the request object as it is; 429 problem
 * responses are retried by http.c (Retry-After or backoff), then raised
 * with the problem's title and detail.  validate_key() reports a refused
 * key as {"valid": false, ...} instead of raising: checking a key is what
 * it is for.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/functions/functions_content.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"

#include "catalog.h"
#include "functions.h"

/* movie_summary(movie text, server name DEFAULT NULL) RETURNS text */
PSVC_OPERATION_FUNCTION(psvc_content_movie_summary, PSVC_OP_MOVIE_SUMMARY)

/* movie_spoiler_free_summary(movie text, server name DEFAULT NULL) RETURNS text */
PSVC_OPERATION_FUNCTION(psvc_content_movie_spoiler_free_summary, PSVC_OP_MOVIE_SPOILER_FREE_SUMMARY)

/* movie_ending(movie text, server name DEFAULT NULL) RETURNS text */
PSVC_OPERATION_FUNCTION(psvc_content_movie_ending, PSVC_OP_MOVIE_ENDING)

/* movie_setting(movie text, server name DEFAULT NULL) RETURNS jsonb */
PSVC_OPERATION_FUNCTION(psvc_content_movie_setting, PSVC_OP_MOVIE_SETTING)

/* movie_profile(movie text, server name DEFAULT NULL) RETURNS jsonb */
PSVC_OPERATION_FUNCTION(psvc_content_movie_profile, PSVC_OP_MOVIE_PROFILE)

/* movie_detail(movie text, server name DEFAULT NULL) RETURNS jsonb */
PSVC_OPERATION_FUNCTION(psvc_content_movie_detail, PSVC_OP_MOVIE_GET)

/* business_question(id text, server name DEFAULT NULL) RETURNS jsonb: the whole envelope */
PSVC_OPERATION_FUNCTION(psvc_content_business_question, PSVC_OP_QUESTION_GET)

/* business_question_answer(id text, server name DEFAULT NULL) RETURNS jsonb: figures or a blocker */
PSVC_OPERATION_FUNCTION(psvc_content_business_question_answer, PSVC_OP_QUESTION_ANSWER)

/* generate(request jsonb, server name DEFAULT NULL) RETURNS jsonb: the service's answer */
PSVC_OPERATION_FUNCTION(psvc_content_generate, PSVC_OP_GENERATE)

/*
 * validate_key(server name DEFAULT NULL) RETURNS jsonb: the service's
 * answer ({"valid": true, ...}), or {"valid": false, "error": <the
 * problem>} when the service refuses the key (401, 403) or none is set.
 * Other failures raise.
 */
PSVC_OPERATION_FUNCTION(psvc_content_validate_key, PSVC_OP_KEY_VALIDATE)
