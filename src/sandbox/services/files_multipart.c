/*-------------------------------------------------------------------------
 * files_multipart.c
 *	  Reads one field out of a multipart/form-data body (RFC 7578, RFC
 *	  2046 section 5.1) for the direct upload POST /files.
 *
 * Design notes:
 *
 * - The body is binary: file content may hold NULs and CR/LF, so every
 *   search works on (pointer, length) with memmem, never on C strings.
 * - Only what a form upload needs is understood: the boundary parameter
 *   of the request's Content-Type, each part's Content-Disposition with
 *   its name= and filename= parameters (quoted or token values, backslash
 *   escapes in quotes).  Part Content-Type and filename* are ignored.
 * - The whole body is checked, up to the close delimiter "--boundary--",
 *   even after the wanted field was found: a truncated body is a client
 *   bug the sandbox should report (400), not an upload to accept.
 * - Line breaks must be CRLF, as the RFC says and every real client sends.
 *-------------------------------------------------------------------------
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "files_multipart.h"

#define MP_MAX_BOUNDARY 70		/* RFC 2046: 1 to 70 characters */

/* True if [p, end) starts with the n bytes of s. */
static bool
has_prefix(const char *p, const char *end, const char *s, size_t n)
{
	return (size_t) (end - p) >= n && memcmp(p, s, n) == 0;
}

/* True if [p, end) starts with the n bytes of s, ignoring ASCII case. */
static bool
has_prefix_ci(const char *p, const char *end, const char *s, size_t n)
{
	return (size_t) (end - p) >= n && strncasecmp(p, s, n) == 0;
}

/*
 * Returns the malloc'd value of parameter name in a header value such as
 * `form-data; name="file"; filename="a.bin"` ([v, end)), or NULL when the
 * parameter is absent.  Names compare case-insensitively and exactly, so
 * "filename*" never answers for "filename".
 */
static char *
header_param(const char *v, const char *end, const char *name)
{
	const char *p = memchr(v, ';', end - v);
	size_t		nlen = strlen(name);

	while (p != NULL && p < end)
	{
		const char *nstart;
		const char *nend;
		char	   *val;
		size_t		vlen = 0;
		bool		match;

		while (p < end && (*p == ';' || *p == ' ' || *p == '\t'))
			p++;
		nstart = p;
		while (p < end && *p != '=' && *p != ';')
			p++;
		nend = p;
		while (nend > nstart && (nend[-1] == ' ' || nend[-1] == '\t'))
			nend--;
		if (p >= end || *p == ';')
			continue;			/* parameter without a value */
		p++;
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		match = ((size_t) (nend - nstart) == nlen &&
				 strncasecmp(nstart, name, nlen) == 0);
		val = malloc(end - p + 1);
		if (val == NULL)
			return NULL;
		if (p < end && *p == '"')
		{
			p++;
			while (p < end && *p != '"')
			{
				if (*p == '\\' && p + 1 < end)
					p++;
				val[vlen++] = *p++;
			}
			if (p < end)
				p++;			/* closing quote */
		}
		else
		{
			while (p < end && *p != ';' && *p != ' ' && *p != '\t')
				val[vlen++] = *p++;
		}
		val[vlen] = '\0';
		if (match)
			return val;
		free(val);
		p = memchr(p, ';', end - p);
	}
	return NULL;
}

/*
 * Finds the Content-Disposition header among the part headers [h, end)
 * (CRLF separated) and returns its name= and filename= parameters
 * (malloc'd or NULL).  Returns false if the header is missing or its
 * disposition type is not form-data.
 */
static bool
part_disposition(const char *h, const char *end, char **name, char **filename)
{
	static const char hdr[] = "content-disposition";

	*name = NULL;
	*filename = NULL;
	while (h < end)
	{
		const char *eol = memmem(h, end - h, "\r\n", 2);
		const char *colon;

		if (eol == NULL)
			eol = end;
		colon = memchr(h, ':', eol - h);
		if (colon != NULL && (size_t) (colon - h) == sizeof(hdr) - 1 &&
			strncasecmp(h, hdr, sizeof(hdr) - 1) == 0)
		{
			const char *v = colon + 1;

			while (v < eol && (*v == ' ' || *v == '\t'))
				v++;
			if (!has_prefix_ci(v, eol, "form-data", 9))
				return false;
			*name = header_param(v, eol, "name");
			*filename = header_param(v, eol, "filename");
			return true;
		}
		h = eol + 2;
	}
	return false;
}

/*
 * Finds the next delimiter line in [p, end): CRLF "--" boundary followed by
 * "--" (close) or optional blanks and CRLF.  A match followed by anything
 * else (content that merely starts like the boundary) is skipped.
 */
static const char *
next_delimiter(const char *p, const char *end, const char *delim, size_t dlen)
{
	while (p < end)
	{
		const char *d = memmem(p, end - p, delim, dlen);
		const char *q;

		if (d == NULL)
			return NULL;
		q = d + dlen;
		if (has_prefix(q, end, "--", 2))
			return d;
		while (q < end && (*q == ' ' || *q == '\t'))
			q++;
		if (has_prefix(q, end, "\r\n", 2))
			return d;
		p = d + 1;
	}
	return NULL;
}

/*
 * Looks for the form field `field` in a multipart/form-data body.  On
 * SB_MP_OK, out->data/len point into body and out->filename is malloc'd
 * (caller frees) or NULL.  The first part with that name wins.
 */
sb_files_mp_result
sb_files_multipart_find(const char *content_type, const char *body,
						size_t body_len, const char *field,
						sb_files_part *out)
{
	const char *ct_end;
	char	   *boundary;
	char		delim[MP_MAX_BOUNDARY + 5];
	size_t		dlen;
	const char *end = body + body_len;
	const char *p;
	bool		found = false;

	memset(out, 0, sizeof(*out));
	if (content_type == NULL || strncasecmp(content_type, "multipart/form-data", 19) != 0 ||
		(content_type[19] != '\0' && content_type[19] != ';' &&
		 content_type[19] != ' '))
		return SB_MP_NOT_MULTIPART;
	ct_end = content_type + strlen(content_type);
	boundary = header_param(content_type, ct_end, "boundary");
	if (boundary == NULL || boundary[0] == '\0' || strlen(boundary) > MP_MAX_BOUNDARY)
	{
		free(boundary);
		return SB_MP_NO_BOUNDARY;
	}
	/* delim is CRLF "--" boundary; the very first one may lack the CRLF */
	dlen = (size_t) snprintf(delim, sizeof(delim), "\r\n--%s", boundary);
	free(boundary);

	if (has_prefix(body, end, delim + 2, dlen - 2))
		p = body + dlen - 2;
	else
	{
		p = next_delimiter(body, end, delim, dlen);
		if (p == NULL)
			return SB_MP_MALFORMED;
		p += dlen;
	}

	for (;;)
	{
		const char *content;
		const char *next;
		char	   *name;
		char	   *filename;

		if (has_prefix(p, end, "--", 2))
			break;				/* close delimiter: the epilogue is ignored */
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if (!has_prefix(p, end, "\r\n", 2))
			goto malformed;
		p += 2;
		if (has_prefix(p, end, "\r\n", 2))
			content = p + 2;	/* part without headers */
		else
		{
			const char *hend = memmem(p, end - p, "\r\n\r\n", 4);

			if (hend == NULL)
				goto malformed;
			content = hend + 4;
		}
		next = next_delimiter(content, end, delim, dlen);
		if (next == NULL)
			goto malformed;
		if (!part_disposition(p, content, &name, &filename))
			goto malformed;
		if (!found && name != NULL && strcmp(name, field) == 0)
		{
			found = true;
			out->data = content;
			out->len = (size_t) (next - content);
			out->filename = filename;
			filename = NULL;
		}
		free(name);
		free(filename);
		p = next + dlen;
	}
	return found ? SB_MP_OK : SB_MP_NO_FIELD;

malformed:
	free(out->filename);
	memset(out, 0, sizeof(*out));
	return SB_MP_MALFORMED;
}
