/*-------------------------------------------------------------------------
 * generation.c
 *	  Sandbox of thread generation and key validation (docs/sandbox-catalog-todos-generation.md):
 *	  POST /v1/generate and GET /v1/key/validate.
 *
 * Design notes:
 *
 * - Both routes need the Bearer key and answer errors as problem+json
 *   (SB_STYLE_PROBLEM).  Their rate limits are rows "POST /v1/generate"
 *   and "GET /v1/key/validate" of the core's table; the core answers the
 *   429 problem response, this file never sees an over-limit request.
 * - The request body of generation and both success bodies are not shown
 *   in the document; our choice, documented in
 *   docs/sandbox-catalog-todos-generation.md:
 *     request  {"prompt": string (required, 1..4000 bytes),
 *               "count": integer 1..10 (optional, default 3)}
 *     response {"id", "prompt", "count", "threads": [{"id", "text"}...]}
 *   The threads are a pure function of the prompt, the index and --seed,
 *   so the same request gives the same answer on every run.
 * - Nothing is stored, so there is no reset and there are no knobs.
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <string.h>

#include "sandbox.h"

#define PROMPT_MAX 4000			/* bytes */
#define COUNT_DEFAULT 3
#define COUNT_MAX 10

static const char *const openers[] = {
	"Here is a thought on", "A quick take on", "Three things about",
	"Why it matters:", "Unpopular opinion on", "Lessons learned from",
	"A short story about", "What nobody tells you about",
};

static const char *const middles[] = {
	"start small and measure before you scale.",
	"the details decide more than the plan.",
	"consistency beats intensity over a year.",
	"the first draft is for you, the second for the reader.",
	"good defaults save more time than clever options.",
	"write it down, then make it shorter.",
	"the boring solution is usually the one that lasts.",
	"ask the person who does the work every day.",
};

static const char *const closers[] = {
	"What would you add?", "Worth a try this week.", "Agree or disagree?",
	"More in the next thread.", "Save this for later.", "That is all for today.",
};

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/*
 * Thread k of a generation for prompt: an opener, a quote of the prompt's
 * start (at most 60 bytes, cut at a byte boundary that keeps UTF-8 whole)
 * and two phrases picked by sb_hash.
 */
static json_t *
make_thread(const char *prompt, uint64_t ph, int k, int count)
{
	uint64_t	h = sb_hash(ph, (uint64_t) k + 1);
	char		topic[64];
	char		id[32];
	size_t		n = strlen(prompt);
	char		text[512];

	if (n > 60)
	{
		n = 60;
		while (n > 0 && ((unsigned char) prompt[n] & 0xC0) == 0x80)
			n--;
	}
	memcpy(topic, prompt, n);
	topic[n] = '\0';

	snprintf(text, sizeof(text), "%d/%d %s \"%s\": %s %s", k + 1, count,
			 openers[h % NELEM(openers)], topic,
			 middles[(h >> 16) % NELEM(middles)],
			 closers[(h >> 32) % NELEM(closers)]);
	snprintf(id, sizeof(id), "thr_%016llx", (unsigned long long) h);
	return json_pack("{s:s, s:s}", "id", id, "text", text);
}

/* POST /v1/generate */
static void
generate(sb_request *req, sb_response *resp)
{
	static const char *const none[] = {NULL};
	json_t	   *body;
	json_t	   *prompt_v;
	json_t	   *count_v;
	const char *key;
	json_t	   *value;
	const char *prompt;
	int			count = COUNT_DEFAULT;
	uint64_t	ph;
	json_t	   *threads;
	json_t	   *out;
	char		id[32];

	if (!sb_query_check(req, resp, none))
		return;
	if ((body = sb_json_body(req, resp, true)) == NULL)
		return;
	if (!json_is_object(body))
	{
		json_decref(body);
		sb_reply_error(req, resp, 400, "invalid_body",
					   "the body must be a JSON object");
		return;
	}
	json_object_foreach(body, key, value)
	{
		if (strcmp(key, "prompt") != 0 && strcmp(key, "count") != 0)
		{
			sb_reply_error(req, resp, 400, "unknown_field",
						   "unknown member \"%s\"", key);
			json_decref(body);
			return;
		}
	}
	prompt_v = json_object_get(body, "prompt");
	count_v = json_object_get(body, "count");
	if (!json_is_string(prompt_v) || json_string_length(prompt_v) == 0 ||
		json_string_length(prompt_v) > PROMPT_MAX ||
		strlen(json_string_value(prompt_v)) != json_string_length(prompt_v))
	{
		json_decref(body);
		sb_reply_error(req, resp, 400, "invalid_prompt",
					   "prompt is required: a non-empty string of at most %d bytes",
					   PROMPT_MAX);
		return;
	}
	if (count_v != NULL)
	{
		if (!json_is_integer(count_v) || json_integer_value(count_v) < 1 ||
			json_integer_value(count_v) > COUNT_MAX)
		{
			json_decref(body);
			sb_reply_error(req, resp, 400, "invalid_count",
						   "count must be an integer from 1 to %d", COUNT_MAX);
			return;
		}
		count = (int) json_integer_value(count_v);
	}
	prompt = json_string_value(prompt_v);
	ph = sb_hash_str(prompt, 0x67656e);

	threads = json_array();
	for (int k = 0; k < count; k++)
		json_array_append_new(threads, make_thread(prompt, ph, k, count));
	snprintf(id, sizeof(id), "gen_%016llx",
			 (unsigned long long) sb_hash(ph, (uint64_t) count + 1000));
	out = json_pack("{s:s, s:s, s:i, s:o}",
					"id", id,
					"prompt", prompt,
					"count", count,
					"threads", threads);
	json_decref(body);
	sb_reply_json(resp, 200, out);
}

/* GET /v1/key/validate: the key passed the core's check, so it is valid. */
static void
validate_key(sb_request *req, sb_response *resp)
{
	static const char *const none[] = {NULL};

	if (!sb_query_check(req, resp, none))
		return;
	sb_reply_json(resp, 200,
				  json_pack("{s:b, s:s}",
							"valid", 1,
							"partner_tier",
							req->partner ? sb_tier_name(req->partner->tier) : "standard"));
}

static const sb_route generation_routes[] = {
	{"POST", "/v1/generate", SB_AUTH, SB_STYLE_PROBLEM, "POST /v1/generate", generate},
	{"GET", "/v1/key/validate", SB_AUTH, SB_STYLE_PROBLEM, "GET /v1/key/validate", validate_key},
	{NULL, NULL, 0, 0, NULL, NULL}
};

const sb_service sb_service_generation = {
	.name = "generation",
	.routes = generation_routes,
};
