/*-------------------------------------------------------------------------
 * server.c
 *	  The HTTP side of the sandbox: libmicrohttpd, request parsing, route
 *	  matching and the pipeline every request goes through.
 *
 * Pipeline: match route (404/405) -> a decoded path that is not UTF-8
 * or holds a NUL byte (400) -> auth (401: a Bearer API key, or on the
 * job routes an OAuth2 access token or a key in the query) -> injected faults that
 * replace the answer (latency, 5xx, 429) -> rate limit (429) -> handler
 * under the state lock -> faults on the wire (drop, malformed, truncate,
 * reset, drip) -> stats.  Control routes (/_sandbox/...) skip faults,
 * rate limits and stats, so a test's own bookkeeping never disturbs what
 * it measures.  Other requests count as in flight for their route from
 * the auth check to the answer made (stats.c, max_in_flight).
 *
 * MHD runs a thread per connection, so a slow or sleeping response holds
 * up nobody else.  The raw request URI comes from MHD's URI log callback,
 * whose return value MHD hands to the access handler as its per-request
 * pointer; we parse the query string ourselves to keep order and repeats.
 *
 * Once a request's headers are in, we ask the kernel to acknowledge them at
 * once (TCP_QUICKACK, see ack_now): clients that write the header and the
 * body separately (Perl's HTTP::Tiny, many others) would otherwise hold the
 * body back under Nagle until our delayed ACK, ~40 ms per POST/PUT.
 *-------------------------------------------------------------------------
 */
#include "core.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_BODY (64 * 1024 * 1024)

typedef struct conn_ctx
{
	char	   *uri;			/* raw request target */
	char	   *body;
	size_t		len;
	size_t		cap;
	bool		too_large;
	bool		seen;			/* the first call of the handler is done */
} conn_ctx;

/* A response body sent piecewise, for the wire faults. */
typedef struct wire
{
	char	   *body;
	size_t		len;
	size_t		stop_at;		/* bytes sent before failing; len = all */
	bool		reset;
	int64_t		drip_ms;
	struct MHD_Connection *conn;
} wire;

static struct MHD_Daemon *daemon_handle = NULL;

static void *
on_uri(void *cls, const char *uri, struct MHD_Connection *conn)
{
	conn_ctx   *ctx = calloc(1, sizeof(conn_ctx));

	ctx->uri = strdup(uri ? uri : "/");
	return ctx;
}

static void
on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	conn_ctx   *ctx = *con_cls;

	if (ctx)
	{
		free(ctx->uri);
		free(ctx->body);
		free(ctx);
		*con_cls = NULL;
	}
}

static int
hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = (char) tolower((unsigned char) c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* Percent-decodes in place; '+' becomes a space in query components. */
static void
url_decode(char *s, bool plus_is_space)
{
	char	   *o = s;

	for (; *s; s++)
	{
		if (*s == '%' && hexval(s[1]) >= 0 && hexval(s[2]) >= 0)
		{
			*o++ = (char) (hexval(s[1]) * 16 + hexval(s[2]));
			s += 2;
		}
		else if (*s == '+' && plus_is_space)
			*o++ = ' ';
		else
			*o++ = *s;
	}
	*o = '\0';
}

static void
parse_query(sb_request *req, const char *raw)
{
	char	   *copy = strdup(raw);
	char	   *save = NULL;

	for (char *part = strtok_r(copy, "&", &save); part; part = strtok_r(NULL, "&", &save))
	{
		char	   *eq = strchr(part, '=');

		if (req->nquery >= SB_MAX_QUERY)
			break;
		if (eq)
			*eq = '\0';
		req->query[req->nquery].key = strdup(part);
		req->query[req->nquery].value = strdup(eq ? eq + 1 : "");
		url_decode(req->query[req->nquery].key, true);
		url_decode(req->query[req->nquery].value, true);
		req->nquery++;
	}
	free(copy);
}

/*
 * Matches path against a template; fills req->params.  Segments are
 * compared raw and decoded afterwards, so an encoded slash stays inside
 * its segment.
 */
static bool
match_template(const char *tmpl, const char *path, sb_request *req)
{
	const char *t = tmpl;
	const char *p = path;
	int			n = 0;

	while (*t && *p)
	{
		const char *te = strchr(t + 1, '/');
		const char *pe = strchr(p + 1, '/');
		size_t		tl,
					pl;

		if (*t != '/' || *p != '/')
			return false;
		t++;
		p++;
		te = te ? te : t + strlen(t);
		pe = pe ? pe : p + strlen(p);
		tl = (size_t) (te - t);
		pl = (size_t) (pe - p);
		if (tl > 2 && t[0] == '{' && t[tl - 1] == '}')
		{
			if (pl == 0 || n >= SB_MAX_PATH_PARAMS)
				return false;
			req->params[n].key = strndup(t + 1, tl - 2);
			req->params[n].value = strndup(p, pl);
			url_decode(req->params[n].value, false);
			n++;
		}
		else if (tl != pl || strncmp(t, p, tl) != 0)
			return false;
		t = te;
		p = pe;
	}
	if (*t || *p)
	{
		for (int i = 0; i < n; i++)
		{
			free(req->params[i].key);
			free(req->params[i].value);
		}
		return false;
	}
	req->nparams = n;
	return true;
}

static void
free_params(sb_request *req)
{
	for (int i = 0; i < req->nparams; i++)
	{
		free(req->params[i].key);
		free(req->params[i].value);
	}
	req->nparams = 0;
}

/*
 * True when s is valid UTF-8 (shortest forms, no surrogates, at most
 * U+10FFFF).  The decoded path is checked with it: text that is not UTF-8
 * cannot go into a JSON answer.
 */
static bool
utf8_valid(const unsigned char *s)
{
	while (*s)
	{
		int			n;
		unsigned int cp;

		if (*s < 0x80)
		{
			s++;
			continue;
		}
		if ((*s & 0xE0) == 0xC0)
			n = 1, cp = *s & 0x1F;
		else if ((*s & 0xF0) == 0xE0)
			n = 2, cp = *s & 0x0F;
		else if ((*s & 0xF8) == 0xF0)
			n = 3, cp = *s & 0x07;
		else
			return false;
		for (int i = 1; i <= n; i++)
		{
			if ((s[i] & 0xC0) != 0x80)
				return false;
			cp = (cp << 6) | (s[i] & 0x3F);
		}
		if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) ||
			cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
			return false;
		s += n + 1;
	}
	return true;
}

/*
 * The path as error messages show it: the decoded path when it is valid
 * UTF-8, else the raw one with every byte outside printable ASCII as %XX.
 * malloc'd.
 */
static char *
shown_path(const char *decoded, const char *raw)
{
	static const char hex[] = "0123456789ABCDEF";
	char	   *out;
	char	   *o;

	if (utf8_valid((const unsigned char *) decoded))
		return strdup(decoded);
	out = malloc(strlen(raw) * 3 + 1);
	if (out == NULL)
		return NULL;
	o = out;
	for (const unsigned char *r = (const unsigned char *) raw; *r; r++)
	{
		if (*r >= 0x21 && *r < 0x7F)
			*o++ = (char) *r;
		else
		{
			*o++ = '%';
			*o++ = hex[*r >> 4];
			*o++ = hex[*r & 0xF];
		}
	}
	*o = '\0';
	return out;
}

/* Finds the route; sets *path_known when only the method differed. */
static const sb_route *
find_route(sb_request *req, const char *raw_path, bool *path_known,
		   char *allow, size_t allowlen)
{
	const sb_service *const *svc = sb_services();

	*path_known = false;
	allow[0] = '\0';
	for (; *svc; svc++)
		for (const sb_route *r = (*svc)->routes; r && r->method; r++)
		{
			if (!match_template(r->path, raw_path, req))
				continue;
			if (strcmp(r->method, req->method) == 0 || strcmp(r->method, "*") == 0)
				return r;
			free_params(req);
			*path_known = true;
			if (strlen(allow) + strlen(r->method) + 3 < allowlen)
			{
				if (allow[0])
					strcat(allow, ", ");
				strcat(allow, r->method);
			}
		}
	return NULL;
}

static ssize_t
wire_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	wire	   *w = cls;
	size_t		n;

	if (pos >= w->stop_at)
	{
		if (w->reset)
		{
			const union MHD_ConnectionInfo *ci =
			MHD_get_connection_info(w->conn, MHD_CONNECTION_INFO_CONNECTION_FD);

			/*
			 * MHD would close with a FIN.  To reset, close the real socket
			 * ourselves with a zero linger (which sends RST) and leave MHD
			 * a dummy socket under the same descriptor number to close.
			 */
			if (ci)
			{
				struct linger lg = {1, 0};
				int			dummy = socket(AF_INET, SOCK_STREAM, 0);

				setsockopt(ci->connect_fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
				if (dummy >= 0)
				{
					dup2(dummy, ci->connect_fd);
					close(dummy);
				}
			}
		}
		return w->stop_at >= w->len ? MHD_CONTENT_READER_END_OF_STREAM
			: MHD_CONTENT_READER_END_WITH_ERROR;
	}
	n = w->stop_at - (size_t) pos;
	if (n > max)
		n = max;
	if (w->drip_ms > 0)
	{
		if (n > 16)
			n = 16;
		usleep((useconds_t) (w->drip_ms * 1000));
	}
	memcpy(buf, w->body + pos, n);
	return (ssize_t) n;
}

static void
wire_free(void *cls)
{
	wire	   *w = cls;

	free(w->body);
	free(w);
}

/* The body a "malformed" fault sends: valid-looking, never parseable. */
static void
make_malformed(sb_response *resp)
{
	size_t		half = resp->len / 2;
	const char *junk = "\x01<<partner_svc_sandbox: malformed>>";
	char	   *b = malloc(half + strlen(junk) + 2);

	b[0] = '{';
	memcpy(b + 1, resp->body ? resp->body : "", half);
	strcpy(b + 1 + half, junk);
	free(resp->body);
	resp->body = b;
	resp->len = strlen(b + 1) + 1;
	resp->status = 200;
	resp->content_type = "application/json";
}

/* Spoils pag.next_cursor if it is a string; true if it did. */
static bool
spoil_next_cursor(json_t *pag)
{
	json_t	   *cur = json_is_object(pag) ? json_object_get(pag, "next_cursor") : NULL;
	char		spoiled[64];

	if (!json_is_string(cur))
		return false;
	snprintf(spoiled, sizeof(spoiled), "%.20sSPOILED", json_string_value(cur));
	json_object_set_new(pag, "next_cursor", json_string(spoiled));
	return true;
}

/*
 * Spoils the page token at the end of a job list's next URL (the member
 * "next", docs/sandbox-jobs.md): the URL stays a URL, its token is
 * refused.  True if it did.
 */
static bool
spoil_next_url(json_t *doc)
{
	json_t	   *next = json_is_object(doc) ? json_object_get(doc, "next") : NULL;
	char	   *spoiled;

	if (!json_is_string(next) || strstr(json_string_value(next), "page_token=") == NULL)
		return false;
	spoiled = malloc(json_string_length(next) + 8);
	sprintf(spoiled, "%sSPOILED", json_string_value(next));
	json_object_set_new(doc, "next", json_string(spoiled));
	free(spoiled);
	return true;
}

/*
 * Spoils the cursor of a Link: <...>; rel="next" header (a job list's,
 * docs/sandbox-jobs.md): "SPOILED" is written at the end of the URL, after
 * the token the URL ends with.
 */
static void
spoil_link(sb_response *resp)
{
	for (int i = 0; i < resp->nheaders; i++)
	{
		char	   *v = resp->headers[i].value;
		char	   *gt = strchr(v, '>');
		char	   *n;

		if (strcasecmp(resp->headers[i].key, "Link") != 0 || v[0] != '<' || gt == NULL)
			continue;
		n = malloc(strlen(v) + 8);
		memcpy(n, v, (size_t) (gt - v));
		sprintf(n + (gt - v), "SPOILED%s", gt);
		free(v);
		resp->headers[i].value = n;
	}
}

/*
 * Spoils the answer's cursors so the next page is refused: the top-level
 * pagination.next_cursor of a list, and the cursor of every nested list of
 * a detail object (data.<list>.pagination.next_cursor, paging rule 4 of
 * docs/sandbox-movies.md), the next URL and the Link header of the job
 * lists.  An answer without a cursor is left as it is.
 */
static void
corrupt_cursor(sb_response *resp)
{
	json_t	   *doc = json_loadb(resp->body ? resp->body : "", resp->len, 0, NULL);
	json_t	   *data = doc ? json_object_get(doc, "data") : NULL;
	bool		spoiled = false;

	spoil_link(resp);
	if (doc)
		spoiled = spoil_next_cursor(json_object_get(doc, "pagination")) ||
			spoil_next_url(doc);
	if (json_is_object(data))
	{
		const char *key;
		json_t	   *member;

		json_object_foreach(data, key, member)
		{
			if (json_is_object(member) && spoil_next_cursor(json_object_get(member, "pagination")))
				spoiled = true;
		}
	}
	if (spoiled)
		sb_reply_json(resp, resp->status, json_incref(doc));
	json_decref(doc);
}

static enum MHD_Result
send_response(struct MHD_Connection *conn, sb_response *resp, const sb_fault_plan *plan)
{
	struct MHD_Response *mr;
	enum MHD_Result ret;

	if (plan && (plan->truncate || plan->reset || plan->drip_ms > 0) && resp->len > 0)
	{
		wire	   *w = calloc(1, sizeof(wire));

		w->body = resp->body;
		w->len = resp->len;
		w->stop_at = (plan->truncate || plan->reset) ? resp->len / 2 : resp->len;
		w->reset = plan->reset;
		w->drip_ms = plan->drip_ms;
		w->conn = conn;
		resp->body = NULL;
		mr = MHD_create_response_from_callback(w->len, 16, wire_read, w, wire_free);
	}
	else
	{
		mr = MHD_create_response_from_buffer(resp->len, resp->body ? resp->body : (char *) "",
											 resp->body ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
		resp->body = NULL;
	}
	if (resp->content_type)
		MHD_add_response_header(mr, "Content-Type", resp->content_type);
	for (int i = 0; i < resp->nheaders; i++)
		MHD_add_response_header(mr, resp->headers[i].key, resp->headers[i].value);
	ret = MHD_queue_response(conn, (unsigned int) resp->status, mr);
	MHD_destroy_response(mr);
	return ret;
}

static void
free_request(sb_request *req, sb_response *resp)
{
	free_params(req);
	for (int i = 0; i < req->nquery; i++)
	{
		free(req->query[i].key);
		free(req->query[i].value);
	}
	for (int i = 0; i < resp->nheaders; i++)
	{
		free(resp->headers[i].key);
		free(resp->headers[i].value);
	}
	free(resp->body);
}

/*
 * Sends the pending ACK for what the client has written so far, now rather
 * than after the delayed-ACK timer.  Linux drops back to delayed ACKs by
 * itself once the connection looks interactive, so a setting made at accept
 * time does not last: this is done for every request.  Best effort.
 * (Measured with HTTP::Tiny over keep-alive: TCP_NODELAY and TCP_QUICKACK
 * set once at connection start leave a POST at 44 ms; this takes it to
 * 0.2 ms.  TCP_NODELAY on our side cannot help: the client's Nagle waits.)
 */
static void
ack_now(struct MHD_Connection *conn)
{
#ifdef TCP_QUICKACK
	const union MHD_ConnectionInfo *ci;
	int			one = 1;

	ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	if (ci)
		(void) setsockopt(ci->connect_fd, IPPROTO_TCP, TCP_QUICKACK, &one, sizeof(one));
#endif
}

typedef struct header_kinds
{
	char	   *buf;
	size_t		len;
} header_kinds;

/*
 * For auth_kinds: a header other than Authorization whose value is a
 * configured API key, alone or after a prefix word ("Token <key>"), is
 * noted as "header:<name>" (the name lower-cased), so that the log shows
 * a key sent in a header of the client's choice (X-API-Key, ...).
 */
static enum MHD_Result
note_key_header(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	header_kinds *hk = cls;
	const char *sp;
	size_t		used = strlen(hk->buf);

	if (key == NULL || value == NULL || strcasecmp(key, "Authorization") == 0)
		return MHD_YES;
	sp = strrchr(value, ' ');
	if (sb_partner_by_key(value) == NULL && (sp == NULL || sb_partner_by_key(sp + 1) == NULL))
		return MHD_YES;
	if (used + strlen(key) + 9 < hk->len)
	{
		char	   *o = hk->buf + used;

		o += sprintf(o, "%sheader:", used ? "," : "");
		for (const char *k = key; *k; k++)
			*o++ = (char) tolower((unsigned char) *k);
		*o = '\0';
	}
	return MHD_YES;
}

/*
 * The credentials a request carried, as the request log shows them
 * (never their values): a comma-separated list of "bearer:key" (a
 * configured API key), "bearer:token" / "bearer:expired" (an access token
 * of POST /oauth/token, live or expired), "bearer:unknown", "basic",
 * "other" (another Authorization scheme), "header:<name>" (another header
 * holding an API key), "query:api_key" (the query parameter api_key), or
 * "none".
 */
static void
auth_kinds(sb_request *req, const char *auth, char *buf, size_t len)
{
	buf[0] = '\0';
	if (auth != NULL)
	{
		if (strncasecmp(auth, "Bearer ", 7) == 0)
		{
			sb_partner *p;
			sb_token_state st;

			if (sb_partner_by_key(auth + 7) != NULL)
				snprintf(buf, len, "bearer:key");
			else if ((st = sb_oauth_token(auth + 7, &p)) == SB_TOKEN_LIVE)
				snprintf(buf, len, "bearer:token");
			else if (st == SB_TOKEN_EXPIRED)
				snprintf(buf, len, "bearer:expired");
			else
				snprintf(buf, len, "bearer:unknown");
		}
		else if (strncasecmp(auth, "Basic ", 6) == 0)
			snprintf(buf, len, "basic");
		else
			snprintf(buf, len, "other");
	}
	if (req->conn != NULL)
	{
		header_kinds hk = {buf, len};

		MHD_get_connection_values((struct MHD_Connection *) req->conn, MHD_HEADER_KIND,
								  note_key_header, &hk);
	}
	if (sb_query(req, "api_key") != NULL)
		snprintf(buf + strlen(buf), len - strlen(buf), "%squery:api_key", buf[0] ? "," : "");
	if (buf[0] == '\0')
		snprintf(buf, len, "none");
}

/*
 * The query string as the request log keeps it: as sent, except that the
 * value of every api_key parameter (the key of the SB_AUTH_QUERY routes,
 * or one sent where it is not taken) is replaced by REDACTED, so that the
 * log, which tests print, never holds a key.  malloc'd.
 */
static char *
logged_query(sb_request *req)
{
	const char *q = req->raw_query;
	char	   *out;
	char	   *o;

	/* each masked value becomes 8 bytes; a pair takes at least 2 */
	out = malloc(strlen(q) * 5 + 9);
	o = out;
	while (*q)
	{
		const char *end = strchr(q, '&');
		size_t		plen = end ? (size_t) (end - q) : strlen(q);
		const char *eq = memchr(q, '=', plen);
		char	   *key = strndup(q, eq ? (size_t) (eq - q) : plen);

		url_decode(key, true);	/* as parse_query reads it: api%5Fkey too */
		if (eq && strcmp(key, "api_key") == 0)
		{
			memcpy(o, q, (size_t) (eq - q) + 1);
			o += eq - q + 1;
			o += sprintf(o, "REDACTED");
		}
		else
		{
			memcpy(o, q, plen);
			o += plen;
		}
		free(key);
		q += plen;
		if (*q == '&')
			*o++ = *q++;
	}
	*o = '\0';
	return out;
}

/*
 * The check of a route marked SB_AUTH_OAUTH2 or SB_AUTH_QUERY: sets
 * req->partner from the access token or the query key (never from an API
 * key in the header) and returns true, or replies 401 and returns false.
 * A token route answers as RFC 6750 says, with WWW-Authenticate.
 */
static bool
route_auth(sb_request *req, sb_response *resp, const char *auth)
{
	req->partner = NULL;
	if (req->route->flags & SB_AUTH_OAUTH2)
	{
		sb_partner *p;
		sb_token_state st;

		if (auth == NULL || strncasecmp(auth, "Bearer ", 7) != 0)
		{
			sb_reply_error(req, resp, 401, "missing_token",
						   "the Authorization header with a Bearer access token of POST /oauth/token is required");
			sb_add_header(resp, "WWW-Authenticate", "Bearer realm=\"jobs\"");
			return false;
		}
		st = sb_oauth_token(auth + 7, &p);
		if (st == SB_TOKEN_LIVE)
		{
			req->partner = p;
			return true;
		}
		if (st == SB_TOKEN_EXPIRED)
		{
			sb_reply_error(req, resp, 401, "token_expired",
						   "the access token has expired; request a new one");
			sb_add_header(resp, "WWW-Authenticate",
						  "Bearer realm=\"jobs\", error=\"invalid_token\", error_description=\"The access token expired\"");
		}
		else
		{
			sb_reply_error(req, resp, 401, "invalid_token", "the access token is not valid");
			sb_add_header(resp, "WWW-Authenticate",
						  "Bearer realm=\"jobs\", error=\"invalid_token\", error_description=\"The access token is not valid\"");
		}
		return false;
	}
	if (req->route->flags & SB_AUTH_QUERY)
	{
		const char *key = sb_query(req, "api_key");

		if (key == NULL)
		{
			sb_reply_error(req, resp, 401, "missing_api_key",
						   "the query parameter api_key is required");
			return false;
		}
		req->partner = sb_partner_by_key(key);
		if (req->partner == NULL)
		{
			sb_reply_error(req, resp, 401, "invalid_api_key", "the API key is not valid");
			return false;
		}
	}
	return true;
}

static enum MHD_Result
on_request(void *cls, struct MHD_Connection *conn, const char *url,
		   const char *method, const char *version, const char *upload_data,
		   size_t *upload_data_size, void **con_cls)
{
	conn_ctx   *ctx = *con_cls;
	sb_request	req;
	sb_response resp;
	sb_fault_plan plan;
	bool		use_plan = false;
	bool		path_known;
	char		allow[128];
	const char *auth;
	const char *qmark;
	char	   *path;
	char	   *shown;
	enum MHD_Result ret;
	bool		admin;
	int			recorded_status;
	int64_t		entered = 0;	/* sb_stats_enter's epoch; 0 = not entered */
	char		kinds[96];
	char	   *lquery;

	if (ctx == NULL)
		return MHD_NO;
	/* The first call only announces the request; the body follows. */
	if (!ctx->seen)
	{
		ctx->seen = true;
		ack_now(conn);
		return MHD_YES;
	}
	if (*upload_data_size > 0)
	{
		if (!ctx->too_large && ctx->len + *upload_data_size <= MAX_BODY)
		{
			if (ctx->len + *upload_data_size + 1 > ctx->cap)
			{
				ctx->cap = (ctx->len + *upload_data_size + 1) * 2;
				if (ctx->cap > MAX_BODY + 1)
					ctx->cap = MAX_BODY + 1;
				ctx->body = realloc(ctx->body, ctx->cap);
			}
			memcpy(ctx->body + ctx->len, upload_data, *upload_data_size);
			ctx->len += *upload_data_size;
		}
		else
			ctx->too_large = true;
		*upload_data_size = 0;
		return MHD_YES;
	}

	memset(&req, 0, sizeof(req));
	memset(&resp, 0, sizeof(resp));
	qmark = strchr(ctx->uri, '?');
	/* raw path, as sent: route matching and the request log use it */
	path = qmark ? strndup(ctx->uri, (size_t) (qmark - ctx->uri)) : strdup(ctx->uri);
	req.method = method;
	req.path = url;
	req.raw_query = qmark ? qmark + 1 : "";
	parse_query(&req, req.raw_query);
	req.content_type = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Type");
	if (ctx->body == NULL)
		ctx->body = calloc(1, 1);
	ctx->body[ctx->len] = '\0';
	req.body = ctx->body;
	req.body_len = ctx->len;
	req.conn = conn;
	auth = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");
	if (auth && strncasecmp(auth, "Bearer ", 7) == 0)
		req.partner = sb_partner_by_key(auth + 7);

	req.route = find_route(&req, path, &path_known, allow, sizeof(allow));
	admin = req.route && (req.route->flags & SB_ADMIN);
	shown = shown_path(req.path, path);
	if (req.route == NULL)
	{
		static const sb_route none = {"", "", 0, SB_STYLE_PLAIN, NULL, NULL};

		req.route = &none;
		if (path_known)
		{
			sb_reply_error(&req, &resp, 405, "method_not_allowed",
						   "method %s is not allowed on %s", method, shown ? shown : "this path");
			sb_add_header(&resp, "Allow", allow);
		}
		else
			sb_reply_error(&req, &resp, 404, "not_found", "no route for %s %s", method,
						   shown ? shown : "this path");
		req.route = NULL;
	}
	else if (!utf8_valid((const unsigned char *) req.path))
		sb_reply_error(&req, &resp, 400, "invalid_path",
					   "a path segment is not valid UTF-8: %s", shown ? shown : "");
	else if (strstr(path, "%00") != NULL)
	{
		/* decoded, %00 would end a parameter early: "1%00x" would be "1" */
		sb_reply_error(&req, &resp, 400, "invalid_path",
					   "a path segment holds a NUL byte (%%00)");
	}
	else if (ctx->too_large)
		sb_reply_error(&req, &resp, 413, "payload_too_large",
					   "request body is larger than %d bytes", MAX_BODY);
	else if ((req.route->flags & SB_AUTH) && req.partner == NULL)
		sb_reply_error(&req, &resp, 401, auth ? "invalid_api_key" : "missing_api_key",
					   auth ? "the API key is not valid" :
					   "the Authorization header with a Bearer API key is required");
	else if ((req.route->flags & (SB_AUTH_OAUTH2 | SB_AUTH_QUERY)) &&
			 !route_auth(&req, &resp, auth))
		;						/* answered 401 */
	else
	{
		sb_rl_verdict v;

		if (!admin)
		{
			entered = sb_stats_enter(method, req.route->path);
			sb_faults_plan(method, req.route->path, &plan);
			use_plan = true;
			if (plan.latency_ms > 0)
				usleep((useconds_t) (plan.latency_ms * 1000));
		}
		if (use_plan && plan.error_status)
			sb_reply_error(&req, &resp, plan.error_status, "injected_fault",
						   "the sandbox injected this error");
		else if (use_plan && plan.inject_429)
		{
			sb_reply_error(&req, &resp, 429, "rate_limited", "rate limit exceeded (injected)");
			if (plan.retry_after >= 0)
			{
				char		ra[32];

				snprintf(ra, sizeof(ra), "%lld", (long long) plan.retry_after);
				sb_add_header(&resp, "Retry-After", ra);
			}
		}
		else
		{
			if (!admin)
				sb_rl_check(&req, &v);
			if (!admin && v.limited)
			{
				sb_reply_error(&req, &resp, 429, "rate_limited",
							   "rate limit of %lld requests per window exceeded for %s",
							   (long long) v.limit, req.route->rl_row);
				if (sb_cfg.rl_retry_after)
				{
					char		ra[32];

					snprintf(ra, sizeof(ra), "%lld", (long long) ((v.reset_in_real_ms + 999) / 1000));
					sb_add_header(&resp, "Retry-After", ra);
				}
			}
			else
			{
				sb_lock();
				req.route->handler(&req, &resp);
				sb_unlock();
				if (resp.status == 0)
					sb_reply_error(&req, &resp, 500, "internal", "the route gave no answer");
			}
		}
	}

	if (entered)
		sb_stats_leave(method, req.route->path, entered);
	auth_kinds(&req, auth, kinds, sizeof(kinds));
	lquery = logged_query(&req);
	if (use_plan && plan.drop_after_apply && resp.applied)
	{
		sb_stats_record(method, req.route->path, path, lquery, kinds, 0,
						req.partner, req.body_len, 0);
		free_request(&req, &resp);
		free(path);
		free(shown);
		free(lquery);
		return MHD_NO;			/* closes the connection, no answer */
	}
	if (use_plan && plan.corrupt_cursor && resp.status >= 200 && resp.status < 300)
		corrupt_cursor(&resp);
	if (use_plan && plan.malformed && resp.status >= 200 && resp.status < 300)
		make_malformed(&resp);

	recorded_status = (use_plan && (plan.truncate || plan.reset) && resp.len > 0) ? 0 : resp.status;
	if (!admin)
		sb_stats_record(method, req.route ? req.route->path : "(unmatched)", path,
						lquery, kinds, recorded_status == 0 ? 0 : resp.status,
						req.partner, req.body_len, resp.len);
	sb_log("%s %s -> %d", method, ctx->uri, resp.status);
	ret = send_response(conn, &resp, use_plan ? &plan : NULL);
	free_request(&req, &resp);
	free(path);
	free(shown);
	free(lquery);
	return ret;
}

int
sb_server_start(void)
{
	struct sockaddr_in addr;
	const union MHD_DaemonInfo *info;

	memset(&addr, 0, sizeof(addr));
	addr.sin_family = AF_INET;
	addr.sin_port = htons((uint16_t) sb_cfg.port);
	inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);

	daemon_handle = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION |
									 MHD_USE_INTERNAL_POLLING_THREAD |
									 MHD_USE_ERROR_LOG,
									 (uint16_t) sb_cfg.port, NULL, NULL,
									 on_request, NULL,
									 MHD_OPTION_SOCK_ADDR, (struct sockaddr *) &addr,
									 MHD_OPTION_URI_LOG_CALLBACK, on_uri, NULL,
									 MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL,
									 MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int) 120,
									 MHD_OPTION_CONNECTION_LIMIT, (unsigned int) 1000,
									 MHD_OPTION_LISTEN_BACKLOG_SIZE, (unsigned int) 512,
									 MHD_OPTION_END);
	if (daemon_handle == NULL)
		return -1;
	info = MHD_get_daemon_info(daemon_handle, MHD_DAEMON_INFO_BIND_PORT);
	return info ? info->port : sb_cfg.port;
}

void
sb_server_stop(void)
{
	if (daemon_handle)
		MHD_stop_daemon(daemon_handle);
	daemon_handle = NULL;
}
