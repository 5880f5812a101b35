/*-------------------------------------------------------------------------
 *
 * functions_content.c
 *		  The SQL functions of the read-mostly services: movie content
 *		  (document 001), the business-question catalog, and thread
 *		  generation with key validation (document 002, A and C).
 *
 * Movies.  Six functions read one object of a movie: the three Markdown
 * texts (returned as text) and the setting, profile and movie detail
 * (returned as jsonb, the "data" of the answer).  The routes are a table,
 * movie_reads[]; each SQL function is one row.  Content a known movie
 * lacks (404 content_not_available, which the document promises) is
 * NULL; an unknown movie (404 movie_not_found) is an error, so a
 * misspelt movie is never mistaken for missing content.
 *
 * Catalog.  The document fixes the start of a question id,
 * BQ-(GF|EK|KA|HR)-..., and leaves the rest to the service; an id without
 * that start is refused before anything is sent.  A blocked question is a
 * normal answer (HTTP 200 with a blocker), returned like any other.
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
 *		  src/functions_content.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"

#include "functions.h"

PG_FUNCTION_INFO_V1(psvc_content_movie_summary);
PG_FUNCTION_INFO_V1(psvc_content_movie_spoiler_free_summary);
PG_FUNCTION_INFO_V1(psvc_content_movie_ending);
PG_FUNCTION_INFO_V1(psvc_content_movie_setting);
PG_FUNCTION_INFO_V1(psvc_content_movie_profile);
PG_FUNCTION_INFO_V1(psvc_content_movie_detail);
PG_FUNCTION_INFO_V1(psvc_content_business_question);
PG_FUNCTION_INFO_V1(psvc_content_business_question_answer);
PG_FUNCTION_INFO_V1(psvc_content_generate);
PG_FUNCTION_INFO_V1(psvc_content_validate_key);

/* The document's limit on {movie}. */
#define MOVIE_REF_MAX		255

/* Longest part of a question id after "BQ-XX-" that we send. */
#define QUESTION_REST_MAX	32

/* One single-object read of a movie. */
typedef struct MovieRead
{
	const char *route;			/* GET route, with {movie} */
	bool		markdown;		/* return data.markdown as text */
	bool		content;		/* content_not_available gives NULL */
} MovieRead;

enum
{
	MOVIE_SUMMARY,
	MOVIE_SPOILER_FREE_SUMMARY,
	MOVIE_ENDING,
	MOVIE_SETTING,
	MOVIE_PROFILE,
	MOVIE_DETAIL
};

static const MovieRead movie_reads[] = {
	[MOVIE_SUMMARY] = {"/v1/movies/{movie}/content/summary", true, true},
	[MOVIE_SPOILER_FREE_SUMMARY] = {"/v1/movies/{movie}/content/spoiler-free-summary", true, true},
	[MOVIE_ENDING] = {"/v1/movies/{movie}/content/ending", true, true},
	[MOVIE_SETTING] = {"/v1/movies/{movie}/content/setting", false, true},
	[MOVIE_PROFILE] = {"/v1/movies/{movie}/content/profile", false, true},
	[MOVIE_DETAIL] = {"/v1/movies/{movie}", false, false},
};

/* Persona codes of question ids. */
static const char *const persona_codes[] = {"GF", "EK", "KA", "HR"};

static Datum movie_read(FunctionCallInfo fcinfo, int which);
static void check_question_id(const char *id);
static Datum question_read(FunctionCallInfo fcinfo, const char *route);

/* A GET of one object; errors come back (return_errors). */
static PsvcHttpRequest *
get_request(PsvcServer *server, const char *route, const char *param,
			const char *value)
{
	PsvcHttpRequest *req = palloc0(sizeof(PsvcHttpRequest));

	req->server = server;
	req->method = "GET";
	req->route = route;
	if (param != NULL)
		req->path_params = list_make1(psvc_kv(param, value));
	req->return_errors = true;
	return req;
}

/*
 * The movie function of row which: (movie text, server name) returning
 * text (the Markdown) or jsonb (the "data" object).  NULL for a NULL
 * movie and for content the movie lacks.
 */
static Datum
movie_read(FunctionCallInfo fcinfo, int which)
{
	const MovieRead *r = &movie_reads[which];
	char	   *movie;
	PsvcHttpRequest *req;
	PsvcHttpResponse *resp;
	Jsonb	   *data;
	char	   *markdown;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	movie = text_to_cstring(PG_GETARG_TEXT_PP(0));
	psvc_fn_check_ref("movie", movie, MOVIE_REF_MAX);
	req = get_request(psvc_fn_server("movies", fcinfo, 1), r->route, "movie", movie);
	resp = psvc_http_request(req);

	if (resp->status == 404 && r->content)
	{
		char	   *code = psvc_fn_error_code(resp);

		if (code != NULL && strcmp(code, "content_not_available") == 0)
			PG_RETURN_NULL();
	}
	if (resp->status < 200 || resp->status > 299)
		psvc_http_raise(req, resp);

	data = psvc_fn_data(req, resp);
	if (!r->markdown)
		PG_RETURN_JSONB_P(data);
	markdown = psvc_fn_member_text(data, "markdown");
	if (markdown == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_ERROR),
				 errmsg("unexpected response shape from GET %s", r->route),
				 errdetail("Expected a string member \"markdown\" in \"data\".")));
	PG_RETURN_TEXT_P(cstring_to_text(markdown));
}

/* movie_summary(movie text, server name DEFAULT NULL) RETURNS text */
Datum
psvc_content_movie_summary(PG_FUNCTION_ARGS)
{
	return movie_read(fcinfo, MOVIE_SUMMARY);
}

/* movie_spoiler_free_summary(movie text, server name DEFAULT NULL) RETURNS text */
Datum
psvc_content_movie_spoiler_free_summary(PG_FUNCTION_ARGS)
{
	return movie_read(fcinfo, MOVIE_SPOILER_FREE_SUMMARY);
}

/* movie_ending(movie text, server name DEFAULT NULL) RETURNS text */
Datum
psvc_content_movie_ending(PG_FUNCTION_ARGS)
{
	return movie_read(fcinfo, MOVIE_ENDING);
}

/* movie_setting(movie text, server name DEFAULT NULL) RETURNS jsonb */
Datum
psvc_content_movie_setting(PG_FUNCTION_ARGS)
{
	return movie_read(fcinfo, MOVIE_SETTING);
}

/* movie_profile(movie text, server name DEFAULT NULL) RETURNS jsonb */
Datum
psvc_content_movie_profile(PG_FUNCTION_ARGS)
{
	return movie_read(fcinfo, MOVIE_PROFILE);
}

/* movie_detail(movie text, server name DEFAULT NULL) RETURNS jsonb */
Datum
psvc_content_movie_detail(PG_FUNCTION_ARGS)
{
	return movie_read(fcinfo, MOVIE_DETAIL);
}

/*
 * Refuses, before anything is sent, a question id that does not start as
 * the document says (BQ-, a persona code, -) or whose rest is empty, over
 * QUESTION_REST_MAX characters or not letters, digits, '-' and '_'.  The
 * service checks the rest further.
 */
static void
check_question_id(const char *id)
{
	bool		ok = false;
	const char *rest;

	if (strncmp(id, "BQ-", 3) == 0 && strlen(id) > 6 && id[5] == '-')
	{
		for (int i = 0; i < lengthof(persona_codes); i++)
			if (strncmp(id + 3, persona_codes[i], 2) == 0)
				ok = true;
	}
	rest = ok ? id + 6 : "";
	if (ok && strlen(rest) > QUESTION_REST_MAX)
		ok = false;
	for (; ok && *rest != '\0'; rest++)
		if (!((*rest >= '0' && *rest <= '9') || (*rest >= 'A' && *rest <= 'Z') ||
			  (*rest >= 'a' && *rest <= 'z') || *rest == '-' || *rest == '_'))
			ok = false;
	if (!ok)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid business question id \"%s\"", id),
				 errdetail("A question id is \"BQ-\", a persona code (GF, EK, KA or HR), \"-\" and the question's number, as in BQ-GF-001.")));
}

/* A question read: (id text, server name) returning the whole answer. */
static Datum
question_read(FunctionCallInfo fcinfo, const char *route)
{
	char	   *id;
	PsvcHttpRequest *req;
	PsvcHttpResponse *resp;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	id = text_to_cstring(PG_GETARG_TEXT_PP(0));
	check_question_id(id);
	req = get_request(psvc_fn_server("catalog", fcinfo, 1), route, "questionId", id);
	resp = psvc_http_request(req);
	if (resp->status < 200 || resp->status > 299)
		psvc_http_raise(req, resp);
	PG_RETURN_JSONB_P(psvc_fn_body(req, resp));
}

/*
 * business_question(id text, server name DEFAULT NULL) RETURNS jsonb
 * GET /v1/business-questions/{questionId}: the whole envelope.
 */
Datum
psvc_content_business_question(PG_FUNCTION_ARGS)
{
	return question_read(fcinfo, "/v1/business-questions/{questionId}");
}

/*
 * business_question_answer(id text, server name DEFAULT NULL) RETURNS jsonb
 * GET /v1/business-questions/{questionId}/answer: figures or a blocker.
 */
Datum
psvc_content_business_question_answer(PG_FUNCTION_ARGS)
{
	return question_read(fcinfo, "/v1/business-questions/{questionId}/answer");
}

/*
 * generate(request jsonb, server name DEFAULT NULL) RETURNS jsonb
 * POST /v1/generate with the request object; the service's answer.
 */
Datum
psvc_content_generate(PG_FUNCTION_ARGS)
{
	Jsonb	   *request;
	PsvcHttpRequest *req;
	PsvcHttpResponse *resp;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	request = PG_GETARG_JSONB_P(0);
	req = get_request(psvc_fn_server("generation", fcinfo, 1), "/v1/generate", NULL, NULL);
	req->method = "POST";
	req->body = psvc_fn_json_text(request, &req->body_len);
	req->content_type = "application/json";
	resp = psvc_http_request(req);
	if (resp->status < 200 || resp->status > 299)
		psvc_http_raise(req, resp);
	PG_RETURN_JSONB_P(psvc_fn_body(req, resp));
}

/*
 * validate_key(server name DEFAULT NULL) RETURNS jsonb
 *
 * GET /v1/key/validate with the caller's key: the service's answer
 * ({"valid": true, ...}), or {"valid": false, "error": <the problem>}
 * when the service refuses the key (401, 403) or none is set.  Other
 * failures raise.
 */
Datum
psvc_content_validate_key(PG_FUNCTION_ARGS)
{
	PsvcHttpRequest *req;
	PsvcHttpResponse *resp;

	req = get_request(psvc_fn_server("generation", fcinfo, 0), "/v1/key/validate", NULL, NULL);
	resp = psvc_http_request(req);
	if (resp->status == 401 || resp->status == 403)
	{
		Jsonb	   *problem = psvc_fn_parse(resp->body, resp->body_len);
		StringInfoData buf;

		initStringInfo(&buf);
		appendStringInfoString(&buf, "{\"valid\": false, \"error\": ");
		if (problem != NULL)
			JsonbToCString(&buf, &problem->root, VARSIZE(problem));
		else
			appendStringInfoString(&buf, "null");
		appendStringInfoChar(&buf, '}');
		PG_RETURN_DATUM(DirectFunctionCall1(jsonb_in, CStringGetDatum(buf.data)));
	}
	if (resp->status < 200 || resp->status > 299)
		psvc_http_raise(req, resp);
	PG_RETURN_JSONB_P(psvc_fn_body(req, resp));
}
