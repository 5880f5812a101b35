/*-------------------------------------------------------------------------
 * files.c
 *	  Sandbox of docs/sandbox-files-scheduler.md: file storage with chunked
 *	  Base64 upload sessions and direct multipart uploads.
 *
 * Design notes:
 *
 * - Every partner has its own list of files; a file's bytes live in one
 *   growable malloc'd buffer (doubling), so uploads of hundreds of MB in
 *   5 MB chunks cost amortised linear time.  Nothing is written to disk.
 * - PUT /uploads/{file_id} is deliberately not idempotent: the decoded
 *   chunk is appended every time it is received.  resp->applied is set
 *   right after the append, so the core's "apply then drop" fault can
 *   lose the answer of a chunk that was stored, which is the case an
 *   upload client must recover from with GET /files/{file_id}.
 * - Retention is sandbox time (knob files.retention_min); timestamps in
 *   FileInfo are real wall-clock times like everywhere in the sandbox, so
 *   expires_at is the real moment the file goes: with --time-scale 0.001
 *   a 24 h retention gives expires_at = created_at + 86.4 s.
 * - Expiry is lazy: a file whose expires_at has passed is found expired
 *   on its next access, its bytes are freed then, and its record stays as
 *   a tombstone so that later requests answer 404 file_expired rather
 *   than file_not_found.
 * - A chunk may decode to at most 5 MB, read as 5 MiB = 5,242,880 bytes.
 * - Choices the spec leaves open are listed in docs/sandbox-files-scheduler.md.
 *-------------------------------------------------------------------------
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox.h"
#include "files.h"
#include "files_multipart.h"

#define FILES_MAX_CHUNK		(5 * 1024 * 1024)	/* decoded bytes per PUT */
#define FILES_MAX_FILENAME	255
#define FILES_MIN_CAPACITY	(64 * 1024)

typedef struct files_file
{
	char		id[32];			/* "file_" + 16 hex digits */
	char	   *filename;
	unsigned char *data;		/* NULL until the first byte, freed on expiry */
	size_t		size;
	size_t		cap;
	int64_t		created_at;		/* epoch ms, real wall clock */
	int64_t		updated_at;
	int64_t		expires_at;
	int64_t		expires_ms;		/* sandbox monotonic ms */
	bool		expired;
} files_file;

typedef struct files_partner
{
	files_file **files;			/* creation order */
	int			nfiles;
	int			cap;
	uint64_t	next_seq;
} files_partner;

static files_partner files_state[SB_MAX_PARTNERS];
static double files_retention_min = 24 * 60;

static void
files_free(files_file *f)
{
	free(f->filename);
	free(f->data);
	free(f);
}

static void
files_reset(void)
{
	for (int p = 0; p < SB_MAX_PARTNERS; p++)
	{
		files_partner *fp = &files_state[p];

		for (int i = 0; i < fp->nfiles; i++)
			files_free(fp->files[i]);
		free(fp->files);
		memset(fp, 0, sizeof(*fp));
	}
}

/* True if f is still retained; marks it expired and frees its bytes if not. */
static bool
files_live(files_file *f)
{
	if (f->expired)
		return false;
	if (sb_sandbox_now_ms() < f->expires_ms)
		return true;
	f->expired = true;
	free(f->data);
	f->data = NULL;
	f->cap = 0;
	return false;
}

static files_file *
files_lookup(files_partner *fp, const char *id)
{
	for (int i = 0; i < fp->nfiles; i++)
		if (strcmp(fp->files[i]->id, id) == 0)
			return fp->files[i];
	return NULL;
}

/*
 * Start of every handler: rejects query parameters (no route takes one;
 * 400 unknown_parameter as everywhere in the sandbox) and returns the
 * partner's files, or NULL after replying.
 */
static files_partner *
files_begin(sb_request *req, sb_response *resp)
{
	static const char *const no_params[] = {NULL};

	if (!sb_query_check(req, resp, no_params))
		return NULL;
	return &files_state[req->partner->index];
}

/*
 * Finds the partner's file named by the {file_id} path parameter.  Replies
 * 404 (file_not_found, or file_expired for a file past its retention) and
 * returns NULL when it is not available.
 */
static files_file *
files_find_or_404(files_partner *fp, sb_request *req, sb_response *resp)
{
	const char *id = sb_param(req, "file_id");
	files_file *f = files_lookup(fp, id);

	if (f == NULL)
	{
		sb_reply_error(req, resp, 404, "file_not_found", "file %s does not exist", id);
		return NULL;
	}
	if (!files_live(f))
	{
		sb_reply_error(req, resp, 404, "file_expired",
					   "file %s has expired and was deleted", id);
		return NULL;
	}
	return f;
}

/*
 * Creates an empty file of the partner; NULL only when memory runs out.
 * Ids are derived from the seed, the partner and a sequence number, so a
 * run with the same --seed hands out the same ids.
 */
static files_file *
files_create(files_partner *fp, int partner, const char *filename)
{
	files_file *f = calloc(1, sizeof(*f));
	int64_t		wall = sb_wall_ms();
	double		keep = files_retention_min * SB_MINUTE;

	if (f == NULL || (f->filename = strdup(filename)) == NULL)
	{
		free(f);
		return NULL;
	}
	do
	{
		uint64_t	h = sb_hash(((uint64_t) partner << 40) | fp->next_seq++,
								0x66696c6573ULL);

		snprintf(f->id, sizeof(f->id), "file_%016" PRIx64, h);
	} while (files_lookup(fp, f->id) != NULL);
	f->created_at = wall;
	f->updated_at = wall;
	f->expires_at = wall + sb_scaled_ms(keep);
	f->expires_ms = sb_sandbox_now_ms() + (int64_t) keep;
	if (fp->nfiles == fp->cap)
	{
		int			ncap = fp->cap ? fp->cap * 2 : 16;
		files_file **n = realloc(fp->files, ncap * sizeof(*n));

		if (n == NULL)
		{
			files_free(f);
			return NULL;
		}
		fp->files = n;
		fp->cap = ncap;
	}
	fp->files[fp->nfiles++] = f;
	return f;
}

/* Appends len bytes to f; false (nothing changed) when memory runs out. */
static bool
files_append(files_file *f, const unsigned char *buf, size_t len)
{
	if (f->size + len > f->cap)
	{
		size_t		ncap = f->cap ? f->cap : FILES_MIN_CAPACITY;
		unsigned char *n;

		while (ncap < f->size + len)
			ncap *= 2;
		n = realloc(f->data, ncap);
		if (n == NULL)
			return false;
		f->data = n;
		f->cap = ncap;
	}
	if (len > 0)
		memcpy(f->data + f->size, buf, len);
	f->size += len;
	f->updated_at = sb_wall_ms();
	return true;
}

static json_t *
files_info(const files_file *f)
{
	char		created[40];
	char		updated[40];
	char		expires[40];

	sb_iso8601(f->created_at, created, sizeof(created));
	sb_iso8601(f->updated_at, updated, sizeof(updated));
	sb_iso8601(f->expires_at, expires, sizeof(expires));
	return json_pack("{s:s, s:s, s:I, s:s, s:s, s:s}",
					 "file_id", f->id,
					 "filename", f->filename,
					 "size", (json_int_t) f->size,
					 "created_at", created,
					 "updated_at", updated,
					 "expires_at", expires);
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
 * Decodes standard Base64 (RFC 4648 section 4): the '+' '/' alphabet,
 * '=' padding required to a multiple of 4 characters, ASCII whitespace
 * ignored anywhere (MIME encoders break lines).  Returns a malloc'd
 * buffer (len in *outlen) or NULL if the text is not valid Base64 or
 * memory runs out (*oom tells which).
 */
static unsigned char *
b64_decode(const char *in, size_t inlen, size_t *outlen, bool *oom)
{
	unsigned char *out = malloc(inlen / 4 * 3 + 3);
	uint32_t	acc = 0;
	int			bits = 0;
	size_t		nsig = 0;
	size_t		npad = 0;
	size_t		len = 0;

	*oom = (out == NULL);
	if (out == NULL)
		return NULL;
	for (size_t i = 0; i < inlen; i++)
	{
		unsigned char c = (unsigned char) in[i];
		int			v;

		if (c == ' ' || c == '\t' || c == '\r' || c == '\n')
			continue;
		nsig++;
		if (c == '=')
		{
			npad++;
			continue;
		}
		v = b64_value(c);
		if (v < 0 || npad > 0)
			goto invalid;
		acc = ((acc << 6) | (uint32_t) v) & 0xFFFFFF;
		bits += 6;
		if (bits >= 8)
		{
			bits -= 8;
			out[len++] = (unsigned char) (acc >> bits);
		}
	}
	if (nsig % 4 != 0 || npad > 2)
		goto invalid;
	*outlen = len;
	return out;

invalid:
	free(out);
	return NULL;
}

/* POST /uploads {"filename"}: opens an upload session on an empty file. */
static void
files_upload_create(sb_request *req, sb_response *resp)
{
	files_partner *fp = files_begin(req, resp);
	json_t	   *body;
	json_t	   *name;
	files_file *f;

	if (fp == NULL || (body = sb_json_body(req, resp, true)) == NULL)
		return;
	if (!json_is_object(body))
	{
		sb_reply_error(req, resp, 400, "invalid_request",
					   "body must be a JSON object with a filename");
		goto done;
	}
	name = json_object_get(body, "filename");
	if (name == NULL || json_is_null(name))
	{
		sb_reply_error(req, resp, 400, "missing_field", "filename is required");
		goto done;
	}
	if (!json_is_string(name) || json_string_length(name) == 0 ||
		json_string_length(name) > FILES_MAX_FILENAME ||
		strlen(json_string_value(name)) != json_string_length(name))
	{
		sb_reply_error(req, resp, 400, "invalid_field",
					   "filename must be a string of 1 to %d bytes",
					   FILES_MAX_FILENAME);
		goto done;
	}
	f = files_create(fp, req->partner->index, json_string_value(name));
	if (f == NULL)
	{
		sb_reply_error(req, resp, 507, "insufficient_storage", "out of memory");
		goto done;
	}
	resp->applied = true;
	sb_reply_json(resp, 201, files_info(f));
done:
	json_decref(body);
}

/* PUT /uploads/{file_id} {"data": base64}: appends one decoded chunk. */
static void
files_upload_append(sb_request *req, sb_response *resp)
{
	files_partner *fp = files_begin(req, resp);
	files_file *f;
	json_t	   *body;
	json_t	   *data;
	unsigned char *chunk;
	size_t		len = 0;
	bool		oom;

	if (fp == NULL || (f = files_find_or_404(fp, req, resp)) == NULL ||
		(body = sb_json_body(req, resp, true)) == NULL)
		return;
	data = json_is_object(body) ? json_object_get(body, "data") : NULL;
	if (data == NULL || json_is_null(data))
	{
		sb_reply_error(req, resp, 400, "missing_field", "data is required");
		goto done;
	}
	if (!json_is_string(data))
	{
		sb_reply_error(req, resp, 400, "invalid_field",
					   "data must be a Base64 string");
		goto done;
	}
	chunk = b64_decode(json_string_value(data), json_string_length(data),
					   &len, &oom);
	if (chunk == NULL)
	{
		if (oom)
			sb_reply_error(req, resp, 507, "insufficient_storage", "out of memory");
		else
			sb_reply_error(req, resp, 400, "invalid_base64",
						   "data is not valid Base64 (RFC 4648, standard alphabet, padded)");
		goto done;
	}
	if (len > FILES_MAX_CHUNK)
		sb_reply_error(req, resp, 413, "chunk_too_large",
					   "chunk decodes to %zu bytes, at most %d bytes are allowed",
					   len, FILES_MAX_CHUNK);
	else if (!files_append(f, chunk, len))
		sb_reply_error(req, resp, 507, "insufficient_storage", "out of memory");
	else
	{
		resp->applied = true;
		sb_reply_json(resp, 200, files_info(f));
	}
	free(chunk);
done:
	json_decref(body);
}

/* GET /files/{file_id}: FileInfo, to read the size before a retry. */
static void
files_get(sb_request *req, sb_response *resp)
{
	files_partner *fp = files_begin(req, resp);
	files_file *f;

	if (fp != NULL && (f = files_find_or_404(fp, req, resp)) != NULL)
		sb_reply_json(resp, 200, files_info(f));
}

/* GET /files/{file_id}/content: the stored bytes (our choice of path). */
static void
files_content(sb_request *req, sb_response *resp)
{
	files_partner *fp = files_begin(req, resp);
	files_file *f;

	if (fp != NULL && (f = files_find_or_404(fp, req, resp)) != NULL)
		sb_reply_raw(resp, 200, "application/octet-stream",
					 f->size ? (const char *) f->data : "", f->size);
}

/* GET /files: the partner's retained files, oldest first (our choice). */
static void
files_list(sb_request *req, sb_response *resp)
{
	files_partner *fp = files_begin(req, resp);
	json_t	   *arr;

	if (fp == NULL)
		return;
	arr = json_array();
	for (int i = 0; i < fp->nfiles; i++)
		if (files_live(fp->files[i]))
			json_array_append_new(arr, files_info(fp->files[i]));
	sb_reply_json(resp, 200, arr);
}

/* POST /files multipart/form-data, field "file" with a filename. */
static void
files_direct_upload(sb_request *req, sb_response *resp)
{
	files_partner *fp = files_begin(req, resp);
	sb_files_part part;
	files_file *f;

	if (fp == NULL)
		return;
	switch (sb_files_multipart_find(req->content_type, req->body,
									req->body_len, "file", &part))
	{
		case SB_MP_OK:
			break;
		case SB_MP_NOT_MULTIPART:
			sb_reply_error(req, resp, 400, "unsupported_media_type",
						   "Content-Type must be multipart/form-data");
			return;
		case SB_MP_NO_BOUNDARY:
			sb_reply_error(req, resp, 400, "invalid_multipart",
						   "Content-Type has no valid boundary parameter");
			return;
		case SB_MP_MALFORMED:
			sb_reply_error(req, resp, 400, "invalid_multipart",
						   "multipart body is malformed or truncated");
			return;
		case SB_MP_NO_FIELD:
			sb_reply_error(req, resp, 400, "missing_field",
						   "form field \"file\" is required");
			return;
	}
	if (part.filename == NULL || part.filename[0] == '\0' ||
		strlen(part.filename) > FILES_MAX_FILENAME)
	{
		sb_reply_error(req, resp, 400, "missing_filename",
					   "form field \"file\" needs a filename of 1 to %d bytes",
					   FILES_MAX_FILENAME);
		free(part.filename);
		return;
	}
	f = files_create(fp, req->partner->index, part.filename);
	free(part.filename);
	if (f == NULL || !files_append(f, (const unsigned char *) part.data, part.len))
	{
		/* an empty record left behind by a failed append is harmless */
		sb_reply_error(req, resp, 507, "insufficient_storage", "out of memory");
		return;
	}
	resp->applied = true;
	sb_reply_json(resp, 201, files_info(f));
}

/* For the job families: whether partner has file_id, and its size. */
sb_file_state
sb_files_state(int partner, const char *file_id, size_t *size)
{
	files_file *f = files_lookup(&files_state[partner], file_id);

	*size = 0;
	if (f == NULL)
		return SB_FILE_MISSING;
	if (!files_live(f))
		return SB_FILE_EXPIRED;
	*size = f->size;
	return SB_FILE_LIVE;
}

static int
files_set(const char *name, json_t *value)
{
	if (strcmp(name, "files.retention_min") != 0)
		return 0;
	if (!json_is_number(value) || json_number_value(value) <= 0)
		return -1;
	files_retention_min = json_number_value(value);
	return 1;
}

static void
files_get_knobs(json_t *out)
{
	double		v = files_retention_min;

	json_object_set_new(out, "files.retention_min",
						v == (double) (json_int_t) v ?
						json_integer((json_int_t) v) : json_real(v));
}

static const sb_route files_routes[] = {
	{"POST", "/uploads", SB_AUTH, SB_STYLE_PLAIN, NULL, files_upload_create},
	{"PUT", "/uploads/{file_id}", SB_AUTH, SB_STYLE_PLAIN, NULL, files_upload_append},
	{"GET", "/files", SB_AUTH, SB_STYLE_PLAIN, NULL, files_list},
	{"POST", "/files", SB_AUTH, SB_STYLE_PLAIN, NULL, files_direct_upload},
	{"GET", "/files/{file_id}", SB_AUTH, SB_STYLE_PLAIN, NULL, files_get},
	{"GET", "/files/{file_id}/content", SB_AUTH, SB_STYLE_PLAIN, NULL, files_content},
	{NULL}
};

const sb_service sb_service_files = {
	.name = "files",
	.routes = files_routes,
	.reset = files_reset,
	.set = files_set,
	.get = files_get_knobs,
};
