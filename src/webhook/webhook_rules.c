/*-------------------------------------------------------------------------
 *
 * webhook_rules.c
 *		  The rule of statuses: which status of an order or a checkout may
 *		  replace the stored one, and which statuses are final, as data
 *		  that the webhook store and the reconciler both apply.
 *
 * THE RULE OF STATUSES.  The moves the orders document shows (spec 000,
 * "States and transitions", the meanings of CHECKOUT_STATUS_CHANGED, and
 * the statuses of the order list), as data: order_states and transactions
 * store a status only when it can be reached from the stored one by a
 * chain of these moves, whoever tells it (a webhook, webhook_store.c, or
 * a status read, webhook_reconcile.c).
 *
 * - Webhooks may arrive late (the partner retries after 1, 5 and 15
 *   minutes) or never, so a status may follow any chain: an order seen
 *   CREATED moves to ACTIVE when its PENDING was lost.
 * - No move leads back, so a late or replayed event never moves an order
 *   or a checkout to an earlier status (ACTIVE stays ACTIVE when the
 *   PENDING retried 15 minutes late arrives), whether the later status
 *   came from a webhook or from polling.
 * - Statuses that no chain joins do not replace each other: an order is
 *   PENDING or DEFERRED, whichever came first.
 * - REFUNDED (by cancel or chargeback): the document shows no source
 *   states; every status of a live order may be refunded.  EXPIRED, a
 *   status of the order list that no webhook announces, follows ACTIVE
 *   and may still be refunded (a chargeback).
 * - A checkout that FAILED (an error during payment) may still succeed:
 *   the payment is tried again and captured.  SUCCESS (captured) is
 *   final.
 * - A stored status that no move names (the status a create answered
 *   for an order not paid yet, which the documents do not show; the
 *   sandbox says AWAITING_PAYMENT) is replaced by any status.
 *
 * Final statuses are where polling stops (webhook_reconcile.c): an order
 * that is ACTIVE has reached the end of the documented path (its
 * confirmation follows by webhook; a later chargeback too), EXPIRED,
 * REFUNDED and DELETED (a failed checkout's orders) end it; a checkout
 * ends at SUCCESS or FAILED (a FAILED payment tried again is told by its
 * webhook only).
 *
 * partner_svc.webhook_status_rank(text) gives ranks in the same order,
 * for readers of the tables; this table is what the worker applies.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/webhook/webhook_rules.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "webhook_int.h"

typedef struct WhMove
{
	const char *kind;			/* "order" (order_states), "checkout" */
	const char *from;
	const char *to;
} WhMove;

static const WhMove status_moves[] =
{
	{.kind = "order", .from = "CREATED", .to = "PENDING"},
	{.kind = "order", .from = "CREATED", .to = "DEFERRED"},
	{.kind = "order", .from = "PENDING", .to = "ACTIVE"},
	{.kind = "order", .from = "DEFERRED", .to = "ACTIVE"},
	{.kind = "order", .from = "ACTIVE", .to = "EXPIRED"},
	{.kind = "order", .from = "CREATED", .to = "REFUNDED"},
	{.kind = "order", .from = "PENDING", .to = "REFUNDED"},
	{.kind = "order", .from = "DEFERRED", .to = "REFUNDED"},
	{.kind = "order", .from = "ACTIVE", .to = "REFUNDED"},
	{.kind = "order", .from = "EXPIRED", .to = "REFUNDED"},
	{.kind = "checkout", .from = "CREATED", .to = "FAILED"},
	{.kind = "checkout", .from = "CREATED", .to = "SUCCESS"},
	{.kind = "checkout", .from = "FAILED", .to = "SUCCESS"},
};

typedef struct WhFinal
{
	const char *kind;
	const char *status;
} WhFinal;

static const WhFinal final_statuses[] =
{
	{.kind = "order", .status = "ACTIVE"},
	{.kind = "order", .status = "EXPIRED"},
	{.kind = "order", .status = "REFUNDED"},
	{.kind = "order", .status = "DELETED"},
	{.kind = "checkout", .status = "SUCCESS"},
	{.kind = "checkout", .status = "FAILED"},
};

/*
 * Every (kind, from, to) joined by a chain of status_moves (their
 * transitive closure), into the three arrays of PSVC_WH_MAX_CHAINS;
 * returns how many.  A few dozen pairs, recomputed per use; nothing is
 * allocated.
 */
int
psvc_wh_status_chains(const char **kind, const char **from, const char **to)
{
	int			n = 0;
	bool		grew = true;

	for (int i = 0; i < lengthof(status_moves); i++)
	{
		kind[n] = status_moves[i].kind;
		from[n] = status_moves[i].from;
		to[n] = status_moves[i].to;
		n++;
	}
	while (grew)
	{
		grew = false;
		for (int i = 0; i < n; i++)
			for (int j = 0; j < n; j++)
			{
				bool		known = false;

				if (strcmp(kind[i], kind[j]) != 0 || strcmp(to[i], from[j]) != 0)
					continue;
				for (int k = 0; k < n && !known; k++)
					known = strcmp(kind[k], kind[i]) == 0 &&
						strcmp(from[k], from[i]) == 0 && strcmp(to[k], to[j]) == 0;
				if (known)
					continue;
				if (n >= PSVC_WH_MAX_CHAINS)
					elog(ERROR, "too many chains of webhook status moves");
				kind[n] = kind[i];
				from[n] = from[i];
				to[n] = to[j];
				n++;
				grew = true;
			}
	}
	return n;
}

/* The final statuses of kind into out (room for size); returns how many. */
int
psvc_wh_final_statuses(const char *kind, const char **out, int size)
{
	int			n = 0;

	for (int i = 0; i < lengthof(final_statuses); i++)
		if (strcmp(final_statuses[i].kind, kind) == 0 && n < size)
			out[n++] = final_statuses[i].status;
	return n;
}
