/*-------------------------------------------------------------------------
 * admin.c
 *	  The sandbox's own control routes under /_sandbox/: health, knobs,
 *	  stats and the request log, fault rules, the clock, reset.
 *
 * These routes are not part of any partner document; tests and
 * downstream suites use them to steer the fake and to check what a client
 * sent.  They skip faults, rate limits and stats (see server.c).
 *-------------------------------------------------------------------------
 */
#include "core.h"

#include <stdlib.h>
#include <string.h>

static bool
json_bool_value(json_t *v, bool *out)
{
	if (!json_is_boolean(v))
		return false;
	*out = json_is_true(v);
	return true;
}

int
sb_knob_set(const char *name, json_t *value)
{
	int			r;

	/* a knob may change what a list holds: forget every cached page */
	sb_page_cache_clear();
	if (strcmp(name, "short_page_rate") == 0)
	{
		if (!json_is_number(value) || json_number_value(value) < 0 || json_number_value(value) > 1)
			return -1;
		sb_cfg.short_page_rate = json_number_value(value);
		return 1;
	}
	if (strcmp(name, "page_cache_mb") == 0)
	{
		if (!json_is_integer(value) || json_integer_value(value) < 0 ||
			json_integer_value(value) > 4096)
			return -1;
		sb_cfg.page_cache_mb = (int) json_integer_value(value);
		return 1;
	}
	if (strcmp(name, "rl_window_ms") == 0)
	{
		if (!json_is_integer(value) || json_integer_value(value) < 1)
			return -1;
		sb_cfg.rl_window_ms = json_integer_value(value);
		if (sb_cfg.rl_offset_ms >= sb_cfg.rl_window_ms)
			sb_cfg.rl_offset_ms %= sb_cfg.rl_window_ms;
		return 1;
	}
	if (strcmp(name, "rl_offset_ms") == 0)
	{
		if (!json_is_integer(value) || json_integer_value(value) < 0)
			return -1;
		sb_cfg.rl_offset_ms = json_integer_value(value) % sb_cfg.rl_window_ms;
		return 1;
	}
	if (strcmp(name, "rate_limits") == 0)
		return json_bool_value(value, &sb_cfg.rl_enabled) ? 1 : -1;
	if (strcmp(name, "retry_after") == 0)
		return json_bool_value(value, &sb_cfg.rl_retry_after) ? 1 : -1;
	if (strcmp(name, "environment") == 0)
	{
		const char *e = json_string_value(value);

		if (e == NULL || (strcmp(e, "sandbox") != 0 && strcmp(e, "production") != 0))
			return -1;
		sb_cfg.environment = strcmp(e, "sandbox") == 0 ? "sandbox" : "production";
		return 1;
	}
	r = sb_rl_set(name, value);
	if (r != 0)
		return r;
	return sb_service_set(name, value);
}

static void
health(sb_request *req, sb_response *resp)
{
	sb_reply_json(resp, 200, json_pack("{s:s, s:s}", "status", "ok",
									   "environment", sb_cfg.environment));
}

static void
config_get(sb_request *req, sb_response *resp)
{
	json_t	   *out = json_object();
	json_t	   *partners = json_array();

	for (int i = 0; i < sb_npartners; i++)
		json_array_append_new(partners, json_pack("{s:i, s:s}", "index", i,
												  "tier", sb_tier_name(sb_partners[i].tier)));
	json_object_set_new(out, "seed", json_integer((json_int_t) sb_cfg.seed));
	json_object_set_new(out, "time_scale", json_real(sb_cfg.time_scale));
	json_object_set_new(out, "short_page_rate", json_real(sb_cfg.short_page_rate));
	json_object_set_new(out, "page_cache_mb", json_integer(sb_cfg.page_cache_mb));
	json_object_set_new(out, "page_cache", sb_page_cache_json());
	json_object_set_new(out, "rl_window_ms", json_integer(sb_cfg.rl_window_ms));
	json_object_set_new(out, "rl_offset_ms", json_integer(sb_cfg.rl_offset_ms));
	json_object_set_new(out, "rate_limits_enabled", json_boolean(sb_cfg.rl_enabled));
	json_object_set_new(out, "retry_after", json_boolean(sb_cfg.rl_retry_after));
	json_object_set_new(out, "environment", json_string(sb_cfg.environment));
	json_object_set_new(out, "partners", partners);
	sb_rl_get(out);
	for (const sb_service *const *s = sb_services(); *s; s++)
		if ((*s)->get)
			(*s)->get(out);
	sb_reply_json(resp, 200, out);
}

static void
config_post(sb_request *req, sb_response *resp)
{
	json_t	   *body = sb_json_body(req, resp, false);
	const char *name;
	json_t	   *value;

	if (body == NULL)
		return;
	if (!json_is_object(body))
	{
		json_decref(body);
		sb_reply_error(req, resp, 400, "invalid_config", "the body must be a JSON object of knobs");
		return;
	}
	json_object_foreach(body, name, value)
	{
		int			r = sb_knob_set(name, value);

		if (r <= 0)
		{
			sb_reply_error(req, resp, 400, r == 0 ? "unknown_knob" : "invalid_knob_value",
						   r == 0 ? "unknown knob \"%s\"" : "invalid value for knob \"%s\"", name);
			json_decref(body);
			return;
		}
	}
	json_decref(body);
	config_get(req, resp);
}

static void
stats_get(sb_request *req, sb_response *resp)
{
	sb_reply_json(resp, 200, sb_stats_json());
}

static void
stats_tsv(sb_request *req, sb_response *resp)
{
	size_t		len;
	char	   *b = sb_stats_tsv(&len);

	sb_reply_raw(resp, 200, "text/tab-separated-values", b, len);
	free(b);
}

static void
requests_get(sb_request *req, sb_response *resp)
{
	sb_reply_json(resp, 200, sb_requests_json(sb_query(req, "route")));
}

static void
requests_tsv(sb_request *req, sb_response *resp)
{
	size_t		len;
	const char *with = sb_query(req, "with");
	char	   *b = sb_requests_tsv(sb_query(req, "route"),
									with != NULL && strcmp(with, "auth") == 0, &len);

	sb_reply_raw(resp, 200, "text/tab-separated-values", b, len);
	free(b);
}

static void
stats_reset(sb_request *req, sb_response *resp)
{
	sb_stats_reset();
	sb_reply_json(resp, 200, json_pack("{s:b}", "reset", 1));
}

static void
faults_get(sb_request *req, sb_response *resp)
{
	sb_reply_json(resp, 200, json_pack("{s:o}", "faults", sb_faults_json()));
}

static void
faults_post(sb_request *req, sb_response *resp)
{
	json_t	   *body = sb_json_body(req, resp, false);
	json_t	   *rules;
	char		err[256];
	size_t		i;
	json_t	   *rule;

	if (body == NULL)
		return;
	rules = json_is_array(body) ? json_incref(body) : json_pack("[O]", body);
	json_array_foreach(rules, i, rule)
	{
		if (!sb_fault_add_json(rule, err, sizeof(err)))
		{
			sb_reply_error(req, resp, 400, "invalid_fault", "%s", err);
			json_decref(rules);
			json_decref(body);
			return;
		}
	}
	json_decref(rules);
	json_decref(body);
	faults_get(req, resp);
}

static void
faults_delete(sb_request *req, sb_response *resp)
{
	sb_faults_clear();
	faults_get(req, resp);
}

static void
rl_reset(sb_request *req, sb_response *resp)
{
	sb_rl_reset();
	sb_reply_json(resp, 200, json_pack("{s:b}", "reset", 1));
}

static void
clock_get(sb_request *req, sb_response *resp)
{
	sb_reply_json(resp, 200, json_pack("{s:I, s:b, s:I}",
									   "now_ms", (json_int_t) sb_sandbox_now_ms(),
									   "frozen", sb_clock_frozen(),
									   "advanced_ms", (json_int_t) sb_clock_advanced_ms()));
}

/*
 * {"advance_ms": N} moves sandbox time N ms forward at once; every timer
 * it passes fires, in order, before the answer (webhooks they queue are
 * still sent by the delivery thread, as always); {"freeze": true} stops it, {"freeze": false}
 * lets it run on from where it stood.  Both may be given: the freeze is
 * applied first.  Time never goes back, so N must not be negative.
 */
static void
clock_post(sb_request *req, sb_response *resp)
{
	json_t	   *body = sb_json_body(req, resp, false);
	const char *name;
	json_t	   *value;
	json_t	   *advance = NULL;
	json_t	   *freeze = NULL;

	if (body == NULL)
		return;
	if (!json_is_object(body))
	{
		json_decref(body);
		sb_reply_error(req, resp, 400, "invalid_clock", "the body must be a JSON object");
		return;
	}
	json_object_foreach(body, name, value)
	{
		if (strcmp(name, "advance_ms") == 0 && json_is_integer(value) &&
			json_integer_value(value) >= 0)
			advance = value;
		else if (strcmp(name, "freeze") == 0 && json_is_boolean(value))
			freeze = value;
		else
		{
			sb_reply_error(req, resp, 400, "invalid_clock",
						   "\"%s\" is not a valid clock field: use \"advance_ms\" (an integer >= 0) or \"freeze\" (a boolean)",
						   name);
			json_decref(body);
			return;
		}
	}
	if (freeze)
		sb_clock_freeze(json_is_true(freeze));
	if (advance)
	{
		sb_clock_advance((int64_t) json_integer_value(advance));
		sb_timers_run_due();
	}
	json_decref(body);
	clock_get(req, resp);
}

/*
 * Forgets everything: data of every service, timers, faults, stats; a
 * frozen clock runs again (sandbox time itself never goes back).
 */
static void
reset_all(sb_request *req, sb_response *resp)
{
	sb_timers_clear();
	sb_clock_freeze(false);
	sb_faults_clear();
	sb_stats_reset();
	sb_rl_reset();
	sb_services_reset();
	sb_page_cache_clear();
	sb_reply_json(resp, 200, json_pack("{s:b}", "reset", 1));
}

static const sb_route admin_routes[] = {
	{"GET", "/_sandbox/health", SB_ADMIN, SB_STYLE_PLAIN, NULL, health},
	{"GET", "/_sandbox/config", SB_ADMIN, SB_STYLE_PLAIN, NULL, config_get},
	{"POST", "/_sandbox/config", SB_ADMIN, SB_STYLE_PLAIN, NULL, config_post},
	{"GET", "/_sandbox/stats", SB_ADMIN, SB_STYLE_PLAIN, NULL, stats_get},
	{"GET", "/_sandbox/stats.tsv", SB_ADMIN, SB_STYLE_PLAIN, NULL, stats_tsv},
	{"POST", "/_sandbox/stats/reset", SB_ADMIN, SB_STYLE_PLAIN, NULL, stats_reset},
	{"GET", "/_sandbox/requests", SB_ADMIN, SB_STYLE_PLAIN, NULL, requests_get},
	{"GET", "/_sandbox/requests.tsv", SB_ADMIN, SB_STYLE_PLAIN, NULL, requests_tsv},
	{"GET", "/_sandbox/faults", SB_ADMIN, SB_STYLE_PLAIN, NULL, faults_get},
	{"POST", "/_sandbox/faults", SB_ADMIN, SB_STYLE_PLAIN, NULL, faults_post},
	{"DELETE", "/_sandbox/faults", SB_ADMIN, SB_STYLE_PLAIN, NULL, faults_delete},
	{"POST", "/_sandbox/rate-limits/reset", SB_ADMIN, SB_STYLE_PLAIN, NULL, rl_reset},
	{"GET", "/_sandbox/clock", SB_ADMIN, SB_STYLE_PLAIN, NULL, clock_get},
	{"POST", "/_sandbox/clock", SB_ADMIN, SB_STYLE_PLAIN, NULL, clock_post},
	{"POST", "/_sandbox/reset", SB_ADMIN, SB_STYLE_PLAIN, NULL, reset_all},
	{NULL}
};

const sb_service sb_service_admin = {"admin", admin_routes};
