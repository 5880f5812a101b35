/*-------------------------------------------------------------------------
 *
 * functions.h
 *		  What the SQL functions of partner_svc share: the server a call
 *		  uses (functions.c), answers as jsonb, and the one executor that
 *		  runs an operation of the catalogue as a SQL function
 *		  (functions_exec.c).
 *
 * The functions themselves are in one file per service family:
 * functions_orders.c, functions_transactions.c, functions_content.c
 * (movies, catalog, generation), functions_files.c and
 * functions_scheduler.c; they export nothing but their entry points, each
 * of which names its operation (catalog.h).  They make calls (call.h)
 * and read answers as jsonb; a create or a cancel whose answer was lost
 * is settled by functions_settle.c.
 *
 * Memory: everything returned here is allocated in CurrentMemoryContext,
 * the function call's context.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/functions/functions.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef PSVC_FUNCTIONS_H
#define PSVC_FUNCTIONS_H

#include "fmgr.h"
#include "utils/jsonb.h"

#include "call.h"
#include "options.h"

/*
 * The server a function uses: the one named by argument argno, or the
 * default server of service (decided by superusers and the extension's
 * owner only); service NULL: a server of any service.  Checks USAGE.  Allocates in CurrentMemoryContext.
 */
extern PsvcServer *psvc_fn_server(const char *service,
								  FunctionCallInfo fcinfo, int argno);
/* the server a call that names none would use now, or InvalidOid */
extern Oid psvc_fn_default_server(const char *service);
/*
 * The same for callers that are not SQL functions (the poll worker): the
 * server called name, or the default server of service when name is NULL.
 */
extern PsvcServer *psvc_fn_server_named(const char *service, const char *name);
/*
 * Reading answers (all allocate in CurrentMemoryContext).  psvc_fn_parse
 * never raises for a bad body: NULL when it is not UTF-8 JSON.
 */
extern Jsonb *psvc_fn_parse(const char *text, size_t len);
extern JsonbValue *psvc_fn_member(Jsonb *j, const char *key);
extern char *psvc_fn_member_text(Jsonb *j, const char *key);	/* strings only */
extern Jsonb *psvc_fn_member_jsonb(Jsonb *j, const char *key);	/* NULL for null */
/* j as JSON text in UTF-8, for a request body */
extern char *psvc_fn_json_text(Jsonb *j, size_t *len);

/* ---- functions_exec.c: the one executor of the SQL functions ---- */

/*
 * A SQL function that is one operation of the catalogue: its C entry point
 * names the row, and psvc_exec does the rest (argument, server, call,
 * answer, errors).  Write PSVC_OPERATION_FUNCTION(fn, id) without a
 * semicolon after it.
 */
struct PsvcOperation;			/* catalog.h */
extern Datum psvc_exec(FunctionCallInfo fcinfo, const struct PsvcOperation *op);
#define PSVC_OPERATION_FUNCTION(fn, opid) \
	PG_FUNCTION_INFO_V1(fn); \
	Datum fn(PG_FUNCTION_ARGS) { return psvc_exec(fcinfo, psvc_op(opid)); }
/* The server of op's service: argument argno, or the default one; USAGE. */
extern PsvcServer *psvc_exec_server(const struct PsvcOperation *op,
									FunctionCallInfo fcinfo, int argno);
/*
 * Argument 0 as the value of op's one path parameter, checked against its
 * rule before anything is sent (22023).  CurrentMemoryContext.
 */
extern char *psvc_exec_path_arg(FunctionCallInfo fcinfo,
								const struct PsvcOperation *op);
/* Sets the JSON text of j as the body of call. */
extern void psvc_exec_set_jsonb_body(PsvcCall *call, Jsonb *j);
/* The body {"<body_member>": value} of a PSVC_ARG_BODY_MEMBER operation; 22023 if empty. */
extern void psvc_exec_set_member_body(PsvcCall *call, const char *value);
/* The payload of an answer: its envelope's member, or the body. */
extern Jsonb *psvc_exec_payload(const PsvcCall *call, const PsvcResult *res);
/*
 * Runs call and returns the payload; NULL for a 404 whose code the
 * operation names as "nothing here".  Other results raise.
 */
extern Jsonb *psvc_exec_send(const PsvcCall *call);
/*
 * The string member of the payload of an answer to call; raises naming
 * the call and the row's envelope when it is missing or not a string.
 */
extern char *psvc_exec_text_member(const PsvcCall *call, Jsonb *payload,
								   const char *member);

/* ---- functions_settle.c: finding out what a lost write did ---- */

/*
 * A create whose answer may be lost (create_order, create_transaction),
 * as data: the lost request made objects or not, and the objects are
 * looked for by the keys of the items of the payload.
 */
typedef struct PsvcSettleCreate
{
	const char *function;		/* "create_order", for messages */
	const char *object;			/* "order": what the create makes */
	const struct PsvcOperation *create; /* the operation sent */
	const struct PsvcOperation *lookup; /* reads one found object by its
										 * key; its row's "nothing here"
										 * codes mean none */
	const char *items;			/* the payload's array of items
								 * ("vignettes"), one object each */
	const char *key;			/* each item's member the lookup takes
								 * ("custom_id") */
	const char *const *same;	/* members an object found must share with
								 * its item, NULL-terminated */
	const char *count;			/* a member of the object found, or NULL... */
	const char *payload_count;	/* ...with as many elements as this one of
								 * the payload ("cars", "vehicles") */
	const char *group;			/* a member the objects found share where
								 * they have it ("transaction_id"); may be
								 * absent or null, or NULL: none */
	const char *looking;		/* context of the lookups: "looking the
								 * orders up by custom id" */
	/* sentences of the unknown-outcome error (08006) */
	const char *none_found;		/* nothing found, resends spent */
	const char *some_found;		/* objects for some items only */
	const char *differ;			/* objects that differ from the payload */
	const char *hint_keys;		/* how to check, when every item has a key */
	const char *hint_no_keys;	/* the same, when some item has none */
	/*
	 * What the create answers, made from what was found: the objects (a
	 * List of Jsonb *, one per item) and their group value.  Raises for a
	 * failed call.  CurrentMemoryContext.
	 */
	Jsonb	   *(*answer) (const PsvcServer *server, Jsonb *payload,
						   List *found, const char *group);
	/*
	 * Records what the answer (or the recovered answer) says was created,
	 * or NULL: called once the create is known to be done.  Never raises.
	 */
	void		(*created) (const PsvcServer *server, Jsonb *answer);
} PsvcSettleCreate;

/*
 * The lookup after a lost create of partner orders: by the custom ids of
 * the payload's vignettes.  Only what the orders document shows about an
 * order is relied on (docs/functions.md): an order found by a vignette's
 * custom id must have that custom id (psvc_order_same); its transaction
 * id, which the document does not show, groups the orders when the
 * service gives it and may be null.  create_order and create_transaction
 * both create orders, so both settle this way; each adds its own names,
 * hints and answer.  psvc_order_same is defined in functions_orders.c.
 */
extern const char *const psvc_order_same[];
/*
 * Hands the orders and the checkout of a create's answer to the webhook
 * worker, which records them for status polling (handoff.h); in
 * functions_orders.c.  Never raises.
 */
extern void psvc_orders_created(const PsvcServer *server, Jsonb *answer);
#define PSVC_SETTLE_ORDERS_BY_CUSTOM_ID \
	.created = psvc_orders_created, \
	.lookup = psvc_op(PSVC_OP_ORDER_LOOKUP), \
	.items = "vignettes", \
	.key = "custom_id", \
	.same = psvc_order_same, \
	.count = NULL, \
	.payload_count = NULL, \
	.group = "transaction_id", \
	.looking = "looking the orders up by custom id", \
	.none_found = "No order with the custom ids of the payload existed when they were looked up, but the request may still be carried out.", \
	.some_found = "Orders exist for some of the custom ids of the payload but not for all.", \
	.differ = "Orders with the custom ids of the payload exist, but they belong to different transactions."

/*
 * A caller above the SQL functions that sends a create or cancel again
 * (the deferred senders, src/deferred, which call the SQL function through
 * SPI) says what earlier attempts may have done, and learns how the
 * settle ended, through a PsvcSettleRun of its own: it registers it with
 * psvc_settle_run_begin() around the one SQL call, and only this module
 * reads it while the call runs (no global of another module is written).
 * Without a run (a direct call) nothing earlier is assumed, and a lost
 * answer looked up and not found is sent again up to max_retries times.
 */
typedef enum PsvcSettleMode
{
	PSVC_SETTLE_FIRST,			/* no earlier attempt may have been carried
								 * out */
	PSVC_SETTLE_RESEND,			/* one may have been, and was looked up
								 * since: a refusal of this attempt (any
								 * 4xx but 429) is settled by a lookup */
	PSVC_SETTLE_RESUMED			/* one may have been and was never looked
								 * up (a crash, an answer that may follow
								 * the work, a lookup that failed): look
								 * up before sending */
} PsvcSettleMode;

typedef struct PsvcSettleRun
{
	PsvcSettleMode mode;		/* in: what earlier attempts may have done */
	/* out, valid when the call raised as well as when it returned: */
	PsvcSettleMode next;		/* the mode of the caller's next attempt */
	bool		final;			/* the error is an outcome that trying again
								 * cannot change (objects for some keys only,
								 * no keys, a state neither done nor needed) */
	bool		retry;			/* the error is the call's own, but its
								 * outcome could not be found out (the lookup
								 * failed): try again, whatever the SQLSTATE */
} PsvcSettleRun;

/*
 * Registers run (the caller's memory) for the settles of the SQL call the
 * caller makes next, and resets its outputs; psvc_settle_run_end() when
 * that call returned or raised.  With a run, a create is sent at most once
 * per call (the caller's backoff makes the next attempt).
 */
extern void psvc_settle_run_begin(PsvcSettleRun *run);
extern void psvc_settle_run_end(void);

/*
 * The idempotency key of partner_svc.request() calls a deferred sender
 * makes (src/deferred), the same for every attempt of one deferred call;
 * NULL otherwise, when each call draws a key of its own.  The caller sets
 * it around one call and sets NULL after it (the string is the caller's,
 * kept only until then); used only when the server has the option
 * idempotency_header (functions_request.c).  A function, not a global the
 * caller writes: no global is written outside its module.
 */
extern void psvc_request_key_set(const char *key);

/*
 * Sends the create (body payload) until it has an answer.  A 503 (the
 * service did not process it) is sent again without a lookup, at most
 * max_retries times (with a run: raised).  A lost answer or another 5xx,
 * and a refusal (any 4xx but 429) of a create that may repeat an earlier
 * one, are settled by one lookup of the objects (with a run, a lost
 * answer's or 5xx's lookup is the next attempt's first request): found,
 * they are the answer, marked "recovered"; not a trace, the create is
 * sent again, at most max_retries times, and a refusal is raised; anything
 * in between, 08006 with what was found.  A lookup that fails raises the
 * create's own error.  Every failure raises.  CurrentMemoryContext.
 */
extern Jsonb *psvc_settle_create(const PsvcSettleCreate *def,
								 const PsvcServer *server, Jsonb *payload);

/*
 * A cancel whose answer may be lost (cancel_pending, cancel_transaction),
 * as data: the object's state, read after a lost answer, tells whether
 * the cancel happened; read after a refusal (409), it names the state.
 */
typedef struct PsvcSettleCancel
{
	const char *function;		/* "cancel_pending", for messages */
	const char *object;			/* "order" */
	const struct PsvcOperation *cancel; /* the operation sent */
	const struct PsvcOperation *read;	/* reads the object's state (its
										 * payload is what a settled cancel
										 * returns) */
	const char *state;			/* the payload's member holding the state */
	const char *state_absent;	/* the state when the member is absent, or
								 * NULL: it must be a string */
	const char *done;			/* the state of a cancelled object */
	const char *needed;			/* the state the cancel applies to */
	const char *reading;		/* context: "reading the order's status" */
	const char *now;			/* detail: "The order's status is now", the
								 * state follows */
	const char *hint_unknown;	/* hint of the unknown-outcome error */
	const char *applies;		/* detail of a refusal: "cancel_pending
								 * applies only to PENDING orders." */
	const char *other_state;	/* refusal: a state another function
								 * cancels, or NULL... */
	const char *hint_other;		/* ...and the hint that names it */
	const char *hint_refused;	/* refusal in any other state, or NULL */
} PsvcSettleCancel;

/*
 * Sends the cancel of the object id; a lost answer is settled by reading
 * the state (done: the state's payload is the result; still needed: sent
 * once more; else 08006), a refusal (409) raises 55000 naming the state.
 * Every other failure raises.  CurrentMemoryContext.
 */
extern Jsonb *psvc_settle_cancel(const PsvcSettleCancel *def,
								 const PsvcServer *server, const char *id);

#endif							/* PSVC_FUNCTIONS_H */
