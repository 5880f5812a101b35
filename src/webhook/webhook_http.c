/*-------------------------------------------------------------------------
 *
 * webhook_http.c
 *		  The webhook listener's settings, the checks of the secrets and of
 *		  the body limit, the counters of what it answered, and the error
 *		  bodies of the answers.
 *
 * Design notes:
 *
 * - The listener's settings (the secrets, the body limit, the limits on
 *   hostile clients) are partner_svc.webhook_* and
 *   partner_svc.webhook_secret, read by guc.c into psvc_guc_webhook and
 *   psvc_guc_webhook_secrets.
 * - The largest body read is psvc_wh_http_body_cap(): max_body, or less when the in-flight budget could
 *   not hold such a body (and its NUL) even with nothing else in flight.  A 503 says "retry later", and
 *   a sender would retry for ever a body that can never fit, so such a
 *   body is answered 413 instead; the worker logs a WARNING naming both
 *   settings (psvc_wh_http_check_limits).  A chunked body's buffer never
 *   grows beyond psvc_wh_http_body_cap() + 1, so the same bound holds
 *   for it.
 * - The secrets (partner_svc.webhook_secret: one, or during a rotation
 *   two) are checked against the header X-Partner-Webhook-Secret, all
 *   always, each in time independent of
 *   where the values differ.  Without any secret the listener refuses to
 *   bind an address that is not loopback.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/webhook/webhook_http.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "mb/pg_wchar.h"
#include "utils/guc.h"
#include "utils/json.h"

#include "guc.h"
#include "webhook_http_int.h"

/*
 * What was answered since the worker started (webhook_int.h): the guard
 * and the listener add to it, the store through psvc_wh_http_count_*.
 */
PsvcWhCounters psvc_wh_counters;

/*
 * True when given equals the secret.  Takes the same time whatever the
 * position of the first difference (it walks the whole secret always);
 * only the length of the given value shows.
 */
static bool
secret_matches(const char *given, const char *secret)
{
	size_t		glen = given ? strlen(given) : 0;
	size_t		slen = strlen(secret);
	unsigned int diff = (glen != slen);

	for (size_t i = 0; i < slen; i++)
	{
		unsigned char g = i < glen ? (unsigned char) given[i] : 0;

		diff |= g ^ (unsigned char) secret[i];
	}
	return given != NULL && diff == 0;
}

/* True when a secret (current or previous) is set. */
bool
psvc_wh_http_any_secret(void)
{
	return psvc_guc_webhook_secrets[0] != NULL;
}

/*
 * True when the request may pass: no secret is set, or its header equals
 * one of the set secrets.  Both are always compared (no early exit), so
 * the time does not tell which one matched.
 */
bool
psvc_wh_http_secret_ok(struct MHD_Connection *conn)
{
	const char *given;
	bool		ok = false;

	if (!psvc_wh_http_any_secret())
		return true;
	given = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, PSVC_WH_SECRET_HEADER);
	for (int i = 0; psvc_guc_webhook_secrets[i] != NULL; i++)
		ok |= secret_matches(given, psvc_guc_webhook_secrets[i]);
	return ok;
}

/*
 * The largest body the listener reads: max_body, or
 * the largest body whose reservation (its bytes and the NUL) fits in an
 * empty in-flight budget, whichever is smaller (see the file header).
 */
size_t
psvc_wh_http_body_cap(void)
{
	size_t		fits = (size_t) psvc_guc_webhook.max_body_in_flight - 1;

	return Min((size_t) psvc_guc_webhook.max_body, fits);
}

/*
 * Warns when partner_svc.webhook_max_body_in_flight cannot hold one body
 * of partner_svc.webhook_max_body: the listener then answers 413 above
 * psvc_wh_http_body_cap().  Both are PGC_SIGHUP and a check hook cannot
 * see the other's new value, so the worker calls this when the listener starts and after
 * each reload; a pair of values is reported once per worker.  Runs in the
 * worker, outside any libmicrohttpd callback.
 */
void
psvc_wh_http_check_limits(void)
{
	static int	warned_body = -1;
	static int	warned_in_flight = -1;

	if (psvc_wh_http_body_cap() >= (size_t) psvc_guc_webhook.max_body)
	{
		warned_body = warned_in_flight = -1;
		return;
	}
	if (warned_body == psvc_guc_webhook.max_body && warned_in_flight == psvc_guc_webhook.max_body_in_flight)
		return;
	warned_body = psvc_guc_webhook.max_body;
	warned_in_flight = psvc_guc_webhook.max_body_in_flight;
	ereport(WARNING,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("partner_svc.webhook_max_body_in_flight (%d bytes) cannot hold one body of partner_svc.webhook_max_body (%d bytes)",
					psvc_guc_webhook.max_body_in_flight, psvc_guc_webhook.max_body),
			 errdetail("Webhook bodies larger than %zu bytes are answered 413, since a body also holds one byte more than its length.",
					   psvc_wh_http_body_cap()),
			 errhint("Set partner_svc.webhook_max_body_in_flight to at least %d bytes, or lower partner_svc.webhook_max_body, and reload.",
					 psvc_guc_webhook.max_body + 1)));
}

/* A copy of the counters, for the worker to publish. */
void
psvc_wh_http_counters(PsvcWhCounters *c)
{
	*c = psvc_wh_counters;
}

/* Starts the counters again from zero (a new worker). */
void
psvc_wh_http_reset_counters(void)
{
	memset(&psvc_wh_counters, 0, sizeof(psvc_wh_counters));
}

/* n deliveries were answered 500 or 503: they could not be stored. */
void
psvc_wh_http_count_failed(int n)
{
	psvc_wh_counters.failed += n;
}

/*
 * One batch of n deliveries was stored in one transaction: accepted new
 * events, duplicates of stored ones, and rejects.
 */
void
psvc_wh_http_count_batch(int n, int64 accepted, int64 duplicates, int64 rejected)
{
	psvc_wh_counters.accepted += accepted;
	psvc_wh_counters.duplicates += duplicates;
	psvc_wh_counters.rejected += rejected;
	psvc_wh_counters.batches++;
	if (n > psvc_wh_counters.max_batch)
		psvc_wh_counters.max_batch = n;
}

/*
 * Sets the answer of a delivery to status with {"error": msg}.  Runs in
 * the worker, outside libmicrohttpd (it may palloc); msg is cut to 300
 * bytes and escaped.
 */
void
psvc_wh_http_set_error(PsvcWhDelivery *d, int status, const char *msg)
{
	StringInfoData buf;
	char	   *cut;
	int			len = strlen(msg);

	if (len > 300)
		len = pg_mbcliplen(msg, len, 300);
	cut = pnstrdup(msg, len);
	initStringInfo(&buf);
	appendStringInfoString(&buf, "{\"error\":");
	escape_json(&buf, cut);
	appendStringInfoChar(&buf, '}');
	free(d->answer);
	d->answer = strdup(buf.data);	/* NULL on OOM: the "ok" body, status kept */
	pfree(buf.data);
	pfree(cut);
	d->status = status;
}
