/*-------------------------------------------------------------------------
 *
 * functions_files.c
 *		  SQL functions of the file service: upload sessions (create, append,
 *		  the whole upload in one call) and reading a file's FileInfo.
 *
 * An upload session is POST /uploads, which makes an empty file, then
 * PUT /uploads/{file_id} once per chunk with {"data": "<Base64>"}.  The
 * service takes at most PSVC_UPLOAD_CHUNK bytes of decoded data per PUT,
 * so longer data is sent as several appends, in order.
 *
 * An append is not idempotent: the service appends whatever it receives,
 * so a chunk sent twice is stored twice.  Its row of the catalogue is not
 * safe, so the call module never repeats it by itself except where
 * nothing was done (429, no connection).  When
 * the answer to an append is lost (connection closed or reset, timeout) or
 * is a 5xx, which may come from a gateway after the service appended, the
 * outcome is unknown, and we do what the document prescribes: read the
 * file's size with GET /files/{file_id} and compare it with the size
 * before the append.
 *	- size before + chunk: the append happened; go on with the next chunk.
 *	- size before: it did not; send the chunk again (at most
 *	  max_retries times per chunk, after a short backoff).
 *	- anything else: someone else changed the file; stop with an error.
 * Every successful answer is checked the same way (its size must be the
 * size before plus the chunk), so an upload never goes on from a state it
 * does not know.  This requires one writer per upload session, which the
 * documents assume.
 *
 * append_upload reads the size first (one GET), because it cannot know it
 * otherwise; upload_file starts from the 0 of the new file.  When an
 * upload fails anyway, the error's context names the file_id and the
 * number of bytes the file holds, so the caller can resume with
 * append_upload and the rest of the data; once part of the data reached
 * the service, the error's DETAIL starts with the bytes appended and the
 * file's last known size as numbers in a fixed form.  A client resumes
 * from file_info()'s size, which is the truth when an answer was lost
 * (docs/functions-files-scheduler.md).
 *
 * Memory: each append's Base64 body, request and response live in a
 * context reset before the next append, so an upload holds the caller's
 * data plus about two encoded chunks, whatever its length.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/functions/functions_files.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/base64.h"
#include "common/pg_prng.h"
#include "miscadmin.h"
#include "storage/latch.h"
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"
#include "utils/numeric.h"
#include "utils/wait_event.h"

#include "catalog.h"
#include "functions.h"
#include "pg_compat.h"

PG_FUNCTION_INFO_V1(psvc_files_append_upload);
PG_FUNCTION_INFO_V1(psvc_files_upload_file);

/* Most decoded bytes one PUT /uploads/{file_id} may carry (5 MiB). */
#define PSVC_UPLOAD_CHUNK			5242880

/* Backoff before resending a chunk that was not appended. */
#define PSVC_UPLOAD_BACKOFF_MS		100
#define PSVC_UPLOAD_BACKOFF_CAP_MS	2000

/* An upload session as this client knows it. */
typedef struct Upload
{
	PsvcServer *server;
	const char *file_id;
	int64		size;			/* the file's size as last seen */
	Jsonb	   *info;			/* the last FileInfo, in the caller's context */
	int64		total;			/* bytes of this call's data */
	int64		done;			/* of which appended */
} Upload;

/* The "size" member of a FileInfo; errors when it is not an integer. */
static int64
fileinfo_size(Jsonb *info, const char *what)
{
	JsonbValue *v = NULL;

	if (info != NULL && JB_ROOT_IS_OBJECT(info))
		v = getKeyJsonValueFromContainer(&info->root, "size", 4, NULL);
	if (v == NULL || v->type != jbvNumeric)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_ERROR),
				 errmsg("response of %s has no numeric \"size\"", what),
				 errdetail("A FileInfo object with the file's size in bytes was expected.")));
	return DatumGetInt64(DirectFunctionCall1(numeric_int8,
											 NumericGetDatum(v->val.numeric)));
}

/* "METHOD route" of an operation, for messages. */
static const char *
op_text(PsvcOpId id)
{
	return psprintf("%s %s", psvc_op(id)->method, psvc_op(id)->route);
}

/* The file's FileInfo (operation file_info), in CurrentMemoryContext. */
static Jsonb *
get_file_info(PsvcServer *server, const char *file_id)
{
	return psvc_exec_send(psvc_call_make(psvc_op(PSVC_OP_FILE_GET), server,
										 &file_id));
}

/* Sleeps before the n-th resend (n from 0), interruptibly. */
static void
resend_backoff(int n)
{
	long		ceiling = PSVC_UPLOAD_BACKOFF_MS;

	for (int i = 0; i < n && ceiling < PSVC_UPLOAD_BACKOFF_CAP_MS; i++)
		ceiling *= 2;
	ceiling = Min(ceiling, PSVC_UPLOAD_BACKOFF_CAP_MS);
	(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
					 (long) (pg_prng_double(&pg_global_prng_state) * ceiling) + 1,
					 psvc_wait_event(PSVC_WAIT_UPLOAD));
	ResetLatch(MyLatch);
	CHECK_FOR_INTERRUPTS();
}

/* The error for a file whose size is neither before nor after an append. */
static void
report_size_mismatch(Upload *up, const char *what, int64 seen, int64 len)
{
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("file \"%s\" has %lld bytes after %s, expected %lld",
					up->file_id, (long long) seen, what,
					(long long) (up->size + len)),
			 errdetail("The file had %lld bytes before the append of %lld bytes.",
					   (long long) up->size, (long long) len),
			 errhint("Another client may be writing to the same upload session.")));
}

/*
 * Appends one piece of at most PSVC_UPLOAD_CHUNK bytes and makes sure it is
 * in the file exactly once (see the file header).  Updates up->size and
 * up->info; allocates the new FileInfo in up_cxt, everything else in a
 * context of its own that is gone on return.
 */
static void
append_piece(Upload *up, const char *data, int len, MemoryContext up_cxt)
{
	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext,
											  "partner_svc append",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(cxt);
	int			b64len = pg_b64_enc_len(len);
	char	   *body;
	int			n;
	int			resends = 0;
	Jsonb	   *info;
	int64		seen;
	PsvcCall   *call;
	static const char head[] = "{\"data\":\"";
	static const char tail[] = "\"}";

	Assert(len > 0 && len <= PSVC_UPLOAD_CHUNK);

	/* {"data":"<Base64>"}: Base64 needs no JSON escaping */
	body = palloc(sizeof(head) - 1 + b64len + sizeof(tail));
	memcpy(body, head, sizeof(head) - 1);
	n = psvc_b64_encode(data, len, body + sizeof(head) - 1, b64len);
	if (n < 0)
		elog(ERROR, "could not encode %d bytes as Base64", len);
	memcpy(body + sizeof(head) - 1 + n, tail, sizeof(tail));

	call = psvc_call_make(psvc_op(PSVC_OP_UPLOAD_APPEND), up->server, &up->file_id);
	psvc_call_set_body(call, body, sizeof(head) - 1 + n + sizeof(tail) - 1);

	for (;;)
	{
		PsvcResult *res = psvc_call_run(call);

		if (res->kind == PSVC_CALL_OK)
		{
			info = psvc_exec_payload(call, res);
			seen = fileinfo_size(info, op_text(PSVC_OP_UPLOAD_APPEND));
			if (seen != up->size + len)
				report_size_mismatch(up, "an append", seen, len);
			break;
		}
		/* a 4xx (429 after the retries included) is an answer: nothing done */
		if (res->kind == PSVC_CALL_HTTP_ERROR && res->status < 500)
			psvc_call_raise(call, res);

		/* no answer or a 5xx: the size tells whether the append happened */
		info = get_file_info(up->server, up->file_id);
		seen = fileinfo_size(info, op_text(PSVC_OP_FILE_GET));
		if (seen == up->size + len)
			break;
		if (seen != up->size)
			report_size_mismatch(up, "a failed append", seen, len);
		if (resends >= psvc_options_setting(up->server, PSVC_SETTING_MAX_RETRIES))
			psvc_call_raise(call, res);
		resend_backoff(resends++);
	}

	/* the FileInfo the loop ended with outlives this append's context */
	up->info = MemoryContextAlloc(up_cxt, VARSIZE(info));
	memcpy(up->info, info, VARSIZE(info));
	up->size = seen;
	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);
}

/* Error context of an upload: where it stands, so it can be resumed. */
static void
upload_error_callback(void *arg)
{
	Upload	   *up = (Upload *) arg;

	errcontext("upload of %lld bytes to file \"%s\" on server \"%s\": %lld bytes appended, the file has %lld bytes",
			   (long long) up->total, up->file_id, up->server->servername,
			   (long long) up->done, (long long) up->size);
}

/*
 * Rethrows the error being handled with the upload's progress first in its
 * DETAIL, in a fixed form a client may match ("Appended N of M bytes; the
 * file's last known size is K bytes."), and the error's own detail after
 * it.  Called in PG_CATCH once part of the data reached the service; the
 * copy of the error lives in cxt, the caller's context.
 */
static void
rethrow_with_progress(Upload *up, MemoryContext cxt)
{
	ErrorData  *edata;
	char	   *progress;

	MemoryContextSwitchTo(cxt);
	edata = CopyErrorData();
	FlushErrorState();
	progress = psprintf("Appended %lld of %lld bytes; the file's last known size is %lld bytes.",
						(long long) up->done, (long long) up->total,
						(long long) up->size);
	edata->detail = edata->detail == NULL ? progress
		: psprintf("%s %s", progress, edata->detail);
	ReThrowError(edata);
}

/*
 * Appends data to the upload session, in pieces of at most
 * PSVC_UPLOAD_CHUNK bytes.  up->size must be the file's size now.
 * Returns the last FileInfo (up->info when data is empty), in
 * CurrentMemoryContext.
 */
static Jsonb *
append_all(Upload *up, const char *data, int64 len)
{
	ErrorContextCallback errcb;
	MemoryContext cxt = CurrentMemoryContext;

	up->total = len;
	up->done = 0;
	errcb.callback = upload_error_callback;
	errcb.arg = up;
	errcb.previous = error_context_stack;
	error_context_stack = &errcb;

	PG_TRY();
	{
		while (up->done < len)
		{
			int			piece = (int) Min(len - up->done, (int64) PSVC_UPLOAD_CHUNK);

			CHECK_FOR_INTERRUPTS();
			append_piece(up, data + up->done, piece, cxt);
			up->done += piece;
		}
	}
	PG_CATCH();
	{
		if (up->done > 0)
			rethrow_with_progress(up, cxt);
		PG_RE_THROW();
	}
	PG_END_TRY();

	error_context_stack = errcb.previous;
	return up->info;
}

/* A new, empty file (operation create_upload): its FileInfo. */
static Jsonb *
create_upload(PsvcServer *server, const char *filename)
{
	PsvcCall   *call = psvc_call_make(psvc_op(PSVC_OP_UPLOAD_CREATE), server, NULL);

	psvc_exec_set_member_body(call, filename);
	return psvc_exec_send(call);
}

/* The "file_id" member of a FileInfo. */
static char *
fileinfo_id(Jsonb *info, const char *what)
{
	JsonbValue *v = NULL;

	if (info != NULL && JB_ROOT_IS_OBJECT(info))
		v = getKeyJsonValueFromContainer(&info->root, "file_id", 7, NULL);
	if (v == NULL || v->type != jbvString || v->val.string.len == 0)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_ERROR),
				 errmsg("response of %s has no \"file_id\"", what),
				 errdetail("A FileInfo object with the new file's id was expected.")));
	return pnstrdup(v->val.string.val, v->val.string.len);
}

/*
 * create_upload(filename text, server name DEFAULT NULL) RETURNS jsonb
 * POST /uploads: a new, empty file; returns its FileInfo.
 */
PSVC_OPERATION_FUNCTION(psvc_files_create_upload, PSVC_OP_UPLOAD_CREATE)

/*
 * append_upload(file_id text, chunk bytea, server name DEFAULT NULL)
 * RETURNS jsonb
 *
 * Reads the file's size, then appends chunk in pieces of at most 5 MiB,
 * each exactly once; returns the last FileInfo.  An empty chunk sends no
 * append and returns the FileInfo read.
 */
Datum
psvc_files_append_upload(PG_FUNCTION_ARGS)
{
	Upload		up = {0};
	bytea	   *chunk;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		PG_RETURN_NULL();
	up.server = psvc_exec_server(psvc_op(PSVC_OP_UPLOAD_APPEND), fcinfo, 2);
	up.file_id = text_to_cstring(PG_GETARG_TEXT_PP(0));
	chunk = PG_GETARG_BYTEA_PP(1);

	up.info = get_file_info(up.server, up.file_id);
	up.size = fileinfo_size(up.info, op_text(PSVC_OP_FILE_GET));
	PG_RETURN_JSONB_P(append_all(&up, VARDATA_ANY(chunk), VARSIZE_ANY_EXHDR(chunk)));
}

/*
 * upload_file(filename text, data bytea, server name DEFAULT NULL)
 * RETURNS jsonb
 *
 * create_upload, then the appends of data; returns the final FileInfo.
 */
Datum
psvc_files_upload_file(PG_FUNCTION_ARGS)
{
	Upload		up = {0};
	bytea	   *data;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		PG_RETURN_NULL();
	up.server = psvc_exec_server(psvc_op(PSVC_OP_UPLOAD_CREATE), fcinfo, 2);
	data = PG_GETARG_BYTEA_PP(1);

	up.info = create_upload(up.server, text_to_cstring(PG_GETARG_TEXT_PP(0)));
	up.file_id = fileinfo_id(up.info, op_text(PSVC_OP_UPLOAD_CREATE));
	up.size = fileinfo_size(up.info, op_text(PSVC_OP_UPLOAD_CREATE));
	if (up.size != 0)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_ERROR),
				 errmsg("new file \"%s\" has %lld bytes instead of none",
						up.file_id, (long long) up.size)));
	PG_RETURN_JSONB_P(append_all(&up, VARDATA_ANY(data), VARSIZE_ANY_EXHDR(data)));
}

/*
 * file_info(file_id text, server name DEFAULT NULL) RETURNS jsonb
 * GET /files/{file_id}: the file's FileInfo.  An unknown or expired file
 * is an error (P0002) whose detail gives the service's reason.
 */
PSVC_OPERATION_FUNCTION(psvc_files_file_info, PSVC_OP_FILE_GET)
