/*-------------------------------------------------------------------------
 * request.c
 *	  Reading requests: path and query parameters, strict query checking,
 *	  JSON bodies.
 *
 * The movie document says an unknown parameter or one sent twice is a
 * 400; we apply the same strictness to every service, which is what a
 * client's tests want from a fake.
 *-------------------------------------------------------------------------
 */
#include "sandbox.h"

#include <ctype.h>
#include <errno.h>
#include <microhttpd.h>
#include <stdlib.h>
#include <string.h>

const char *
sb_param(sb_request *req, const char *name)
{
	for (int i = 0; i < req->nparams; i++)
		if (strcmp(req->params[i].key, name) == 0)
			return req->params[i].value;
	return NULL;
}

const char *
sb_header(sb_request *req, const char *name)
{
	if (req->conn == NULL)
		return NULL;
	return MHD_lookup_connection_value((struct MHD_Connection *) req->conn,
									   MHD_HEADER_KIND, name);
}

const char *
sb_query(sb_request *req, const char *name)
{
	for (int i = 0; i < req->nquery; i++)
		if (strcmp(req->query[i].key, name) == 0)
			return req->query[i].value;
	return NULL;
}

bool
sb_query_check(sb_request *req, sb_response *resp, const char *const *allowed)
{
	for (int i = 0; i < req->nquery; i++)
	{
		bool		known = false;

		for (int a = 0; allowed && allowed[a]; a++)
			if (strcmp(allowed[a], req->query[i].key) == 0)
				known = true;
		if (!known)
		{
			sb_reply_error(req, resp, 400, "unknown_parameter",
						   "unknown query parameter \"%s\"", req->query[i].key);
			return false;
		}
		for (int j = 0; j < i; j++)
			if (strcmp(req->query[j].key, req->query[i].key) == 0)
			{
				sb_reply_error(req, resp, 400, "repeated_parameter",
							   "query parameter \"%s\" is sent more than once",
							   req->query[i].key);
				return false;
			}
	}
	return true;
}

json_t *
sb_json_body(sb_request *req, sb_response *resp, bool require_ctype)
{
	json_t	   *doc;
	json_error_t err;

	if (require_ctype)
	{
		const char *ct = req->content_type;

		if (ct == NULL || strncasecmp(ct, "application/json", 16) != 0 ||
			(ct[16] != '\0' && ct[16] != ';' && ct[16] != ' '))
		{
			sb_reply_error(req, resp, 400, "unsupported_media_type",
						   "Content-Type must be application/json");
			return NULL;
		}
	}
	doc = json_loadb(req->body, req->body_len, JSON_DECODE_ANY, &err);
	if (doc == NULL)
	{
		sb_reply_error(req, resp, 400, "invalid_json",
					   "request body is not valid JSON: %s", err.text);
		return NULL;
	}
	return doc;
}

static int
hexdigit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * The first field called name of a form body (application/x-www-form-
 * urlencoded, as the OAuth2 token route takes it), decoded; malloc'd, or
 * NULL when the body has no such field.  The body is not checked further.
 */
char *
sb_form_value(sb_request *req, const char *name)
{
	const char *p = req->body ? req->body : "";
	size_t		nlen = strlen(name);

	while (*p)
	{
		const char *end = strchr(p, '&');
		const char *eq;
		size_t		len = end ? (size_t) (end - p) : strlen(p);

		eq = memchr(p, '=', len);
		if (eq && (size_t) (eq - p) == nlen && strncmp(p, name, nlen) == 0)
		{
			const char *v = eq + 1;
			size_t		vlen = len - nlen - 1;
			char	   *out = malloc(vlen + 1);
			size_t		o = 0;

			for (size_t i = 0; i < vlen; i++)
			{
				if (v[i] == '%' && i + 2 < vlen &&
					hexdigit(v[i + 1]) >= 0 && hexdigit(v[i + 2]) >= 0)
				{
					out[o++] = (char) (hexdigit(v[i + 1]) * 16 + hexdigit(v[i + 2]));
					i += 2;
				}
				else
					out[o++] = v[i] == '+' ? ' ' : v[i];
			}
			out[o] = '\0';
			return out;
		}
		if (end == NULL)
			break;
		p = end + 1;
	}
	return NULL;
}

bool
sb_parse_int64(const char *s, int64_t *out)
{
	char	   *end;
	long long	v;

	if (s == NULL || *s == '\0' || isspace((unsigned char) *s))
		return false;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno != 0 || *end != '\0')
		return false;
	*out = (int64_t) v;
	return true;
}
