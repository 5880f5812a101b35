/*-------------------------------------------------------------------------
 * oauth.c
 *	  OAuth2 client credentials (RFC 6749 section 4.4) for the routes marked
 *	  SB_AUTH_OAUTH2: the token route POST /oauth/token and the store of
 *	  the access tokens it issued, which server.c asks before such a route
 *	  runs (docs/sandbox-jobs.md).
 *
 * Design notes:
 *
 * - Every partner is also a client: client_id "client-" + its API key,
 *   client_secret the API key itself.  The credentials come in the form
 *   body (client_secret_post) or in an Authorization: Basic header
 *   (client_secret_basic, which RFC 6749 section 2.3.1 makes mandatory for
 *   servers).
 * - A token lives oauth.token_ttl_s sandbox seconds (default 3600), on the
 *   sandbox clock: --time-scale shortens it and POST /_sandbox/clock
 *   expires it at once.  expires_in is given in sandbox seconds, as every
 *   documented duration of the sandbox is.  A new grant does not revoke
 *   older tokens of the client: each lives out its own lifetime.
 * - Tokens are drawn from the seed and a sequence number, so a run with
 *   the same --seed and the same requests hands out the same tokens.
 * - The store has its own mutex: server.c checks a token before it takes
 *   the state lock, as it checks API keys.
 *-------------------------------------------------------------------------
 */
#include "core.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OAUTH_CLIENT_PREFIX "client-"

typedef struct oauth_token
{
	char		token[48];
	int			partner;
	int64_t		expires_ms;		/* sandbox monotonic ms */
	struct oauth_token *next;
} oauth_token;

static pthread_mutex_t oauth_lock = PTHREAD_MUTEX_INITIALIZER;
static oauth_token *tokens = NULL;
static uint64_t next_seq = 1;
static double token_ttl_s = 3600;

/*
 * What server.c needs to know of an access token: unknown, live or
 * expired, and (live or expired) whose it is.
 */
sb_token_state
sb_oauth_token(const char *token, sb_partner **partner)
{
	sb_token_state st = SB_TOKEN_UNKNOWN;

	*partner = NULL;
	if (token == NULL)
		return st;
	pthread_mutex_lock(&oauth_lock);
	for (oauth_token *t = tokens; t; t = t->next)
		if (strcmp(t->token, token) == 0)
		{
			*partner = &sb_partners[t->partner];
			st = sb_sandbox_now_ms() < t->expires_ms ? SB_TOKEN_LIVE : SB_TOKEN_EXPIRED;
			break;
		}
	pthread_mutex_unlock(&oauth_lock);
	return st;
}

static void
oauth_reset(void)
{
	pthread_mutex_lock(&oauth_lock);
	while (tokens)
	{
		oauth_token *t = tokens;

		tokens = t->next;
		free(t);
	}
	pthread_mutex_unlock(&oauth_lock);
}

/* An error of RFC 6749 section 5.2: {"error", "error_description"}. */
static void
oauth_error(sb_response *resp, int status, const char *code, const char *msg)
{
	sb_reply_json(resp, status, json_pack("{s:s, s:s}", "error", code,
										  "error_description", msg));
	sb_add_header(resp, "Cache-Control", "no-store");
	if (status == 401)
		sb_add_header(resp, "WWW-Authenticate", "Basic realm=\"sandbox\"");
}

static int
b64_value(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

/*
 * The id and secret of an Authorization: Basic header, malloc'd; false
 * when the header is not Basic or does not decode to "id:secret".
 */
static bool
basic_credentials(const char *auth, char **id, char **secret)
{
	char		plain[512];
	size_t		o = 0;
	uint32_t	acc = 0;
	int			bits = 0;
	char	   *colon;

	if (auth == NULL || strncasecmp(auth, "Basic ", 6) != 0)
		return false;
	for (const char *p = auth + 6; *p && *p != '='; p++)
	{
		int			v = b64_value((unsigned char) *p);

		if (v < 0 || o + 1 >= sizeof(plain))
			return false;
		acc = (acc << 6) | (uint32_t) v;
		bits += 6;
		if (bits >= 8)
		{
			bits -= 8;
			plain[o++] = (char) ((acc >> bits) & 0xff);
		}
	}
	plain[o] = '\0';
	colon = strchr(plain, ':');
	if (colon == NULL || strlen(plain) != o)
		return false;
	*colon = '\0';
	*id = strdup(plain);
	*secret = strdup(colon + 1);
	return true;
}

/*
 * POST /oauth/token, form grant_type=client_credentials with client_id and
 * client_secret (or Basic): {"access_token", "token_type": "Bearer",
 * "expires_in", "scope"}.
 */
static void
oauth_token_route(sb_request *req, sb_response *resp)
{
	const char *ct = req->content_type;
	char	   *grant = NULL;
	char	   *id = NULL;
	char	   *secret = NULL;
	sb_partner *partner = NULL;
	oauth_token *t;
	uint64_t	seq;

	if (ct == NULL || strncasecmp(ct, "application/x-www-form-urlencoded", 33) != 0)
	{
		oauth_error(resp, 400, "invalid_request",
					"Content-Type must be application/x-www-form-urlencoded");
		return;
	}
	grant = sb_form_value(req, "grant_type");
	if (!basic_credentials(sb_header(req, "Authorization"), &id, &secret))
	{
		id = sb_form_value(req, "client_id");
		secret = sb_form_value(req, "client_secret");
	}
	if (grant == NULL)
		oauth_error(resp, 400, "invalid_request", "grant_type is required");
	else if (strcmp(grant, "client_credentials") != 0)
		oauth_error(resp, 400, "unsupported_grant_type",
					"only grant_type client_credentials is supported");
	else if (id == NULL || secret == NULL)
		oauth_error(resp, 401, "invalid_client",
					"client_id and client_secret are required");
	else if (strncmp(id, OAUTH_CLIENT_PREFIX, strlen(OAUTH_CLIENT_PREFIX)) != 0 ||
			 (partner = sb_partner_by_key(secret)) == NULL ||
			 strcmp(id + strlen(OAUTH_CLIENT_PREFIX), secret) != 0)
		oauth_error(resp, 401, "invalid_client",
					"the client is unknown or its secret is wrong");
	else
	{
		t = calloc(1, sizeof(*t));
		pthread_mutex_lock(&oauth_lock);
		seq = next_seq++;
		snprintf(t->token, sizeof(t->token), "sbat_%016" PRIx64 "%016" PRIx64,
				 sb_hash(seq, 0x0a7ULL + (uint64_t) partner->index),
				 sb_hash(seq ^ 0x70c3ULL, (uint64_t) partner->index));
		t->partner = partner->index;
		req->partner = partner;	/* the request log names the client */
		t->expires_ms = sb_sandbox_now_ms() + (int64_t) (token_ttl_s * 1000.0);
		t->next = tokens;
		tokens = t;
		pthread_mutex_unlock(&oauth_lock);
		sb_reply_json(resp, 200,
					  json_pack("{s:s, s:s, s:I, s:s}", "access_token", t->token,
								"token_type", "Bearer",
								"expires_in", (json_int_t) token_ttl_s,
								"scope", "jobs"));
		sb_add_header(resp, "Cache-Control", "no-store");
		sb_add_header(resp, "Pragma", "no-cache");
	}
	free(grant);
	free(id);
	free(secret);
}

/* Knob oauth.token_ttl_s: a whole number of sandbox seconds, at least 1. */
static int
oauth_set(const char *name, json_t *value)
{
	if (strcmp(name, "oauth.token_ttl_s") != 0)
		return 0;
	if (!json_is_integer(value) || json_integer_value(value) < 1)
		return -1;
	token_ttl_s = (double) json_integer_value(value);
	return 1;
}

static void
oauth_get(json_t *out)
{
	json_object_set_new(out, "oauth.token_ttl_s", json_integer((json_int_t) token_ttl_s));
}

static const sb_route oauth_routes[] = {
	{"POST", "/oauth/token", 0, SB_STYLE_PLAIN, NULL, oauth_token_route},
	{NULL}
};

const sb_service sb_service_oauth = {
	.name = "oauth",
	.routes = oauth_routes,
	.reset = oauth_reset,
	.set = oauth_set,
	.get = oauth_get,
};
