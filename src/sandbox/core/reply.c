/*-------------------------------------------------------------------------
 * reply.c
 *	  Building responses: JSON bodies, errors in each service's style,
 *	  extra headers.
 *
 * Error shapes are our choice where the documents say "not shown"; they
 * are kept in one place so every service answers alike (docs/sandbox.md).
 *-------------------------------------------------------------------------
 */
#include "sandbox.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void
set_body(sb_response *resp, int status, const char *ctype, char *body, size_t len)
{
	free(resp->body);
	resp->status = status;
	resp->content_type = ctype;
	resp->body = body;
	resp->len = len;
}

void
sb_reply_json(sb_response *resp, int status, json_t *obj)
{
	char	   *text = json_dumps(obj, JSON_COMPACT | JSON_ENCODE_ANY);

	json_decref(obj);
	if (text == NULL)
	{
		text = strdup("{\"error\":{\"code\":\"internal\",\"message\":\"could not encode\"}}");
		status = 500;
	}
	set_body(resp, status, "application/json", text, strlen(text));
}

void
sb_reply_raw(sb_response *resp, int status, const char *ctype,
			 const char *body, size_t len)
{
	char	   *copy = malloc(len + 1);

	memcpy(copy, body, len);
	copy[len] = '\0';
	set_body(resp, status, ctype, copy, len);
}

void
sb_reply_empty(sb_response *resp, int status)
{
	set_body(resp, status, NULL, NULL, 0);
}

void
sb_reply_error(sb_request *req, sb_response *resp, int status,
			   const char *code, const char *fmt,...)
{
	char		msg[512];
	va_list		ap;
	sb_style	style = (req && req->route) ? req->route->style : SB_STYLE_PLAIN;
	json_t	   *obj;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);

	if (style == SB_STYLE_PROBLEM)
	{
		char		type[160];

		snprintf(type, sizeof(type), "https://sandbox.invalid/problems/%s", code);
		obj = json_pack("{s:s, s:s, s:i, s:s, s:s}",
						"type", type,
						"title", status == 429 ? "Too Many Requests" : msg,
						"status", status,
						"detail", msg,
						"instance", req ? req->path : "");
		sb_reply_json(resp, status, obj);
		resp->content_type = "application/problem+json";
		return;
	}

	obj = json_pack("{s:{s:s, s:s}}", "error", "code", code, "message", msg);
	if (style == SB_STYLE_ORDERS)
		json_object_set_new(obj, "data", json_null());
	sb_reply_json(resp, status, obj);
}

void
sb_add_header(sb_response *resp, const char *name, const char *value)
{
	if (resp->nheaders >= SB_MAX_HEADERS)
		return;
	resp->headers[resp->nheaders].key = strdup(name);
	resp->headers[resp->nheaders].value = strdup(value);
	resp->nheaders++;
}
