/*-------------------------------------------------------------------------
 *
 * partner_svc.h
 *		  The one shared header of the partner_svc extension.
 *
 * Everything one source file exports to the others is declared here,
 * grouped under the file that defines it.  Exported C symbols carry the
 * prefix psvc_<module>_; everything else in a file is static.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/partner_svc.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef PARTNER_SVC_H
#define PARTNER_SVC_H

#include "fmgr.h"
#include "access/tupdesc.h"
#include "catalog/pg_attribute.h"
#include "nodes/execnodes.h"
#include "nodes/parsenodes.h"
#include "nodes/pathnodes.h"
#include "nodes/plannodes.h"

/*
 * Version of this build of the library.  The Makefile passes it
 * (-DPSVC_VERSION from EXTVERSION, which also sets default_version of
 * partner_svc.control); partner_svc.version() returns it, so a session can
 * tell when the installed SQL objects and the loaded library disagree.
 * Built outside the Makefile (an analyser), it reads "unknown".
 */
#ifndef PSVC_VERSION
#define PSVC_VERSION "unknown"
#endif

#include "lib/stringinfo.h"
#include "nodes/pg_list.h"
#include "utils/jsonb.h"
#include "utils/palloc.h"

/*
 * A name/value pair: a path parameter, a query parameter, a header.
 * Both strings are plain (not URL-encoded); http.c encodes them.
 */
typedef struct PsvcKV
{
	const char *name;
	const char *value;
} PsvcKV;

/* in server_options.c: reading the options of stored objects */

/*
 * The settings a server option can override: each is also the GUC
 * partner_svc.<name>, which applies when the server does not set it.
 * Read them with psvc_options_setting(); the table of names, bounds and
 * units is in server_options.c (docs/per-server-settings.md).
 */
typedef enum PsvcSettingId
{
	PSVC_SETTING_CONNECT_TIMEOUT,	/* milliseconds */
	PSVC_SETTING_REQUEST_TIMEOUT,	/* milliseconds */
	PSVC_SETTING_MAX_RETRIES,
	PSVC_SETTING_PAGE_SIZE,
	PSVC_SETTING_FANOUT,
	PSVC_SETTING_PREFETCH,		/* boolean: 0 or 1 */
	PSVC_NSETTINGS
} PsvcSettingId;

/* Bounds of the settings, shared by the GUCs and the server options. */
#define PSVC_MAX_CONNECT_TIMEOUT_MS (10 * 60 * 1000)
#define PSVC_MAX_REQUEST_TIMEOUT_MS (60 * 60 * 1000)
#define PSVC_MAX_RETRIES 10
#define PSVC_MAX_PAGE_SIZE 100
#define PSVC_MAX_FANOUT 64

/* What a partner_svc server says about the remote side. */
typedef struct PsvcServer
{
	Oid			serverid;
	const char *servername;
	const char *service;		/* "orders", "movies", ... */
	const char *base_url;		/* without a trailing slash */
	const char *tier;			/* "standard" unless set; orders only */
	const char *rate_limits;	/* option "rate_limits" (per-route limits of
								 * the contract, ratelimit_rules.c), or NULL */
	int			max_response_size;	/* option "max_response_size" in bytes,
									 * or 0 when not set */
	int			settings[PSVC_NSETTINGS];	/* the server's options, -1 where
											 * unset (the GUC applies) */
	/* TLS and proxy (http.c); NULL where unset */
	const char *ssl_ca_file;	/* CA bundle that verifies the service */
	const char *ssl_cert_file;	/* client certificate (PEM) */
	const char *ssl_key_file;	/* its private key (PEM) */
	const char *proxy;			/* proxy URL, or "environment": libcurl's
								 * *_proxy variables; NULL: no proxy */
	int			cache_ttl_ms;	/* option "cache_ttl" in ms (cache.c), -1
								 * where unset */
	Oid			userid;			/* whose user mapping gives the key: the
								 * role a foreign table is checked as (set
								 * by the scan or modify), or InvalidOid =
								 * the current user (functions) */
} PsvcServer;

/* Allocates in CurrentMemoryContext.  Errors if not a partner_svc server. */
extern PsvcServer *psvc_options_server(Oid serverid);
/* A deep copy of s in CurrentMemoryContext (a new field is copied there). */
extern PsvcServer *psvc_options_copy_server(const PsvcServer *s);
/*
 * The api_key of the user mapping of server->userid (the current user when
 * invalid), or PUBLIC's, for the server; NULL when the mapping has none.
 * No mapping at all is an error (42704), except for a service the
 * documents mark keyless (todos).  Allocates in CurrentMemoryContext.  The
 * caller must never print it.
 */
extern char *psvc_options_api_key(const PsvcServer *server);
/* in options.c: bytes of a max_response_size value; 22023 when invalid */
extern int	psvc_options_parse_size(const char *value);
/* The "resource" option of a foreign table; palloc'd in CurrentMemoryContext. */
extern char *psvc_options_resource(Oid relid);
/* The effective value of a setting: the server's option, else the GUC. */
extern int	psvc_options_setting(const PsvcServer *s, PsvcSettingId id);
/* Name, bounds and unit of a setting by option name; NULL if none. */
typedef struct PsvcSettingDef
{
	const char *name;			/* option name; the GUC is partner_svc.<name> */
	PsvcSettingId id;
	int			min;
	int			max;
	int			guc_flags;		/* GUC_UNIT_MS for a time, else 0 */
	bool		is_bool;
} PsvcSettingDef;
extern const PsvcSettingDef *psvc_options_setting_def(const char *name);
/* EXPLAIN VERBOSE of a scan: the effective settings of s (never the key). */
struct ExplainState;
extern void psvc_options_explain(const PsvcServer *s, struct ExplainState *es);

/* in http.c: the HTTP client core */

/*
 * One request.  "route" is the path template ("/v1/movies/{movie}/content/
 * themes"): it names the request in errors, EXPLAIN and stats, and never
 * contains a value.  The path is built by http.c from route and
 * path_params (each value URL-encoded); query parameters are appended in
 * order, URL-encoded.  The key comes from the current user's mapping of
 * serverid; requests of a service without auth (todos) send none.
 */
typedef struct PsvcHttpRequest
{
	const PsvcServer *server;
	const char *method;			/* "GET", "POST", "PUT", "DELETE" */
	const char *route;			/* path template, starting with '/' */
	List	   *path_params;	/* of PsvcKV *, one per {name} of route */
	List	   *query;			/* of PsvcKV *, in order */
	const char *body;			/* NULL: no body */
	size_t		body_len;
	const char *content_type;	/* of the body, e.g. "application/json" */
	bool		retry_unsafe;	/* retry a non-GET on 5xx/network errors too */
	bool		unsafe;			/* a GET or HEAD that changes state (the
								 * scheduler's run, stop, clone...): retried
								 * only where nothing was done (429, no
								 * connection), like a POST; retry_unsafe
								 * overrides it */
	bool		return_errors;	/* give back 4xx/5xx responses (after the
								 * retries) instead of raising */
	bool		return_unknown; /* give back a non-idempotent request whose
								 * outcome is unknown (it timed out or lost
								 * its connection after being sent) as
								 * status 0 with outcome_unknown, instead of
								 * raising; the caller finds out what
								 * happened (functions_orders.c) */
	bool		report_transport_errors;	/* give back a failure without an
											 * HTTP status (after the retries)
											 * as status 0 with "error" set,
											 * instead of raising; a pending
											 * interrupt still raises */
	bool		has_cache_ttl;	/* cache_ttl_ms is set: a foreign table's
								 * option cache_ttl, which overrides the
								 * server's and the default (cache.c) */
	int			cache_ttl_ms;
} PsvcHttpRequest;

/*
 * What came back: always a complete, 2xx body unless return_errors (then
 * any HTTP status) or return_unknown (then status 0 and outcome_unknown).
 */
typedef struct PsvcHttpResponse
{
	long		status;
	bool		outcome_unknown;	/* return_unknown: no answer, the service
									 * may or may not have acted */
	char	   *failure;		/* then: what went wrong, a full sentence */
	char	   *body;			/* NUL-terminated; palloc'd; a 2xx body
								 * (and any body given back by
								 * return_errors) is in the server
								 * encoding, converted by http.c */
	size_t		body_len;
	char	   *content_type;	/* may be NULL */
	int			retries;		/* retries this request took */
	int64		bytes;			/* body bytes received, all attempts */
	double		elapsed_ms;		/* from start to completion */
	double		wait_ms;		/* time spent waiting by the caller */
	double		rl_wait_ms;		/* spent waiting for rate-limit budget, all
								 * attempts (ratelimit.c) */
	char	   *url_for_explain;	/* method + path + query, no key */
	char	   *error;			/* status 0 (report_transport_errors): what
								 * went wrong, a sentence; else NULL */
	int			error_sqlstate; /* status 0: the SQLSTATE it maps to */
	bool		converted;		/* body already in the server encoding */
	bool		from_cache;		/* served by the response cache: nothing
								 * was sent (cache.c) */
	bool		cache_miss;		/* looked up in the cache, not found */
} PsvcHttpResponse;

typedef struct PsvcTransfer PsvcTransfer;

/*
 * Starts a request without waiting; the transfer progresses whenever any
 * psvc_http_* call runs.  The transfer and its response are allocated in
 * cxt; deleting or resetting cxt aborts the transfer and releases its curl
 * handle (a reset callback), so an ERROR anywhere never leaks a handle.
 */
extern PsvcTransfer *psvc_http_start(const PsvcHttpRequest *req, MemoryContext cxt);
/* Lets running transfers progress without blocking (cheap; call per row). */
extern void psvc_http_poll(void);
/*
 * True when psvc_http_finish would not wait.  Only reflects progress made
 * by earlier psvc_http_* calls: poll before asking.
 */
extern bool psvc_http_done(PsvcTransfer *t);
/*
 * Waits for the transfer (interruptibly: Ctrl-C and statement_timeout stop
 * it), retrying as the rules say, and returns the response, allocated in
 * the transfer's cxt.  Raises the mapped ERROR on failure unless
 * return_errors (an HTTP status) or return_unknown (an unknown outcome).
 */
extern PsvcHttpResponse *psvc_http_finish(PsvcTransfer *t);
/* Aborts a transfer that is no longer wanted and releases its handle. */
extern void psvc_http_cancel(PsvcTransfer *t);
/* start + finish; the response is allocated in CurrentMemoryContext. */
extern PsvcHttpResponse *psvc_http_request(const PsvcHttpRequest *req);
/* in http_url.c: the one builder of request paths */

/* "GET /path?query" as it will be sent (values encoded), for EXPLAIN. */
extern char *psvc_http_describe(const PsvcHttpRequest *req);
/*
 * Raises 22023 naming the parameter unless value (server encoding) is what
 * the documents allow for path parameter name of route; psvc_http_start
 * checks every path value this way, callers may check earlier.
 */
extern void psvc_http_check_param(const char *method, const char *route,
								  const char *name, const char *value);
/*
 * Raises the ERROR that a failed response maps to (used by callers that
 * asked for return_errors and decided the status is an error after all,
 * or for report_transport_errors and status 0).
 */
extern void psvc_http_raise(const PsvcHttpRequest *req, const PsvcHttpResponse *resp) pg_attribute_noreturn();

/* What this backend's HTTP client has done and holds (tests, EXPLAIN). */
typedef struct PsvcHttpCounters
{
	int64		attempts;		/* requests sent, retries included */
	int64		connects;		/* connections opened (the rest reused one) */
	int			idle_handles;	/* easy handles in the pool */
	int			busy_handles;	/* easy handles held by transfers */
	int			sockets;		/* sockets libcurl is watching */
	int			transfers;		/* transfers running or waiting to retry */
} PsvcHttpCounters;

extern void psvc_http_counters(PsvcHttpCounters *c);

/* in json_decode.c: list and detail responses into items */

typedef struct PsvcItem
{
	const char *json;			/* the item's JSON text, inside the page's copy
								 * of the body (not NUL-terminated) */
	int			json_len;
	/*
	 * One per requested field: NULL when absent or JSON null; a string's
	 * unescaped text; a number's or boolean's literal text; an object's or
	 * array's JSON text.
	 */
	char	  **values;
	/*
	 * With want_jsonb, the item as jsonb_in would make it of json, built
	 * in the decoding pass; NULL without want_jsonb, or when jsonb_in must
	 * make it (items whose jsonb_in might raise, which then raises there).
	 */
	Jsonb	   *jsonb;
} PsvcItem;

typedef struct PsvcPage
{
	int			nitems;
	PsvcItem   *items;
	bool		has_pagination;	/* the body had a "pagination" object */
	bool		has_more;		/* pagination.has_more */
	char	   *next_cursor;	/* pagination.next_cursor; NULL if null */
} PsvcPage;

/*
 * Decodes one response body.  items_key names the member of the top-level
 * object that holds the items ("data", "result", "executions"), or is NULL
 * when the body itself is the array.  With single, that member (or the
 * body) is one object and gives one item.  fields are member names of each
 * item; "" stands for the item itself (lists of strings).  Only the
 * requested fields are extracted; with want_jsonb, each item's jsonb too
 * (PsvcItem.jsonb).  Allocates in CurrentMemoryContext (the
 * caller's per-page context).  Malformed JSON or another shape raises an
 * ERROR whose message names "what" (method and route template).
 */
extern PsvcPage *psvc_json_decode_page(const char *body, size_t len,
									   const char *items_key, bool single,
									   int nfields, const char *const *fields,
									   bool want_jsonb, const char *what);
/*
 * The same without the page's own copy of the body: the page points into
 * body, which must be NUL-terminated at len and outlive the page.
 */
extern PsvcPage *psvc_json_decode_page_in_place(const char *body, size_t len,
												const char *items_key, bool single,
												int nfields, const char *const *fields,
												bool want_jsonb, const char *what);

/*
 * A guess at pagination.next_cursor read from the end of a body without
 * parsing it, or NULL; the decoded page has the truth.  Allocates in
 * CurrentMemoryContext.
 */
extern char *psvc_json_peek_cursor(const char *body, size_t len);

/* in endpoints.c: the endpoint catalogue, as data */

typedef enum PsvcColKind
{
	PSVC_COL_FIELD,				/* a member of the item */
	PSVC_COL_RAW,				/* the whole item, jsonb */
	PSVC_COL_PATH				/* a path parameter; echoes the query's value */
} PsvcColKind;

typedef struct PsvcColumnDef
{
	const char *name;			/* SQL column name */
	const char *type;			/* SQL type, for IMPORT FOREIGN SCHEMA */
	PsvcColKind kind;
	const char *field;			/* JSON member (FIELD), or NULL */
	const char *param;			/* PATH: the {name} of the route; FIELD: the
								 * query parameter that filters on it, or
								 * NULL when equality is not pushed down */
	bool		required;		/* PATH: a query must give it */
	bool		detail_key;		/* FIELD: equality on it may also be sent as
								 * the key of the detail route (orders'
								 * custom_id; the endpoint's detail_column
								 * always may) */
	const struct PsvcFilterValue *filter_values;	/* FIELD with param: the
													 * column values the
													 * filter selects exactly,
													 * and what to send for
													 * each; NULL = send the
													 * value as it is */
	const char *echo_if_in;		/* FIELD without a member: echo the filter
								 * value only when this array member holds
								 * it (case-insensitively); NULL = always */
} PsvcColumnDef;

/*
 * One value of a filter whose query values differ from the column values
 * they select (the orders status filter "WILL BE ACTIVE" lists DEFERRED
 * orders).  A list ends with a NULL value.
 */
typedef struct PsvcFilterValue
{
	const char *value;			/* the column's value */
	const char *param_value;	/* the query parameter's value selecting it */
} PsvcFilterValue;

typedef enum PsvcPaging
{
	PSVC_PAGING_NONE,			/* one response holds the whole list */
	PSVC_PAGING_CURSOR			/* limit/cursor, "pagination" object */
} PsvcPaging;

/*
 * How a writable endpoint turns INSERT, UPDATE and DELETE into requests
 * (fdw_modify.c).  An operation whose method is NULL is not supported.
 */
typedef struct PsvcRequestDef
{
	const char *method;
	const char *route;			/* UPDATE, DELETE: {name} = the row's key */
} PsvcRequestDef;

typedef enum PsvcBodyStyle
{
	PSVC_BODY_OBJECT,			/* a JSON object of the row's member columns */
	PSVC_BODY_STRING			/* the JSON string of the column of field "" */
} PsvcBodyStyle;

typedef enum PsvcValueCheck
{
	PSVC_CHECK_NONE,
	PSVC_CHECK_EMAIL			/* local@domain, as the scheduler requires */
} PsvcValueCheck;

typedef struct PsvcModifyDef
{
	PsvcRequestDef insert;
	PsvcRequestDef update;		/* sends only the columns the UPDATE sets */
	PsvcRequestDef delete;
	const char *key_field;		/* member that identifies a row; assigned by
								 * the service, never sent in a body */
	PsvcBodyStyle body;
	const char *check_field;	/* member checked before sending, or NULL */
	PsvcValueCheck check;
} PsvcModifyDef;

typedef struct PsvcEndpoint
{
	const char *resource;		/* foreign table name / "resource" option */
	const char *service;		/* the server's "service" */
	const char *route;			/* list route template */
	PsvcPaging	paging;
	const char *items_key;		/* member holding the items, NULL = body */
	const char *detail_route;	/* single-object read by key, or NULL */
	const char *detail_column;	/* the key column for detail_route */
	const char *detail_items_key;	/* member holding the object, NULL = body */
	const char *description;	/* for IMPORT's COMMENT and the docs */
	int			ncolumns;
	const PsvcColumnDef *columns;
	const PsvcModifyDef *modify;	/* writable: how; NULL = read-only */
} PsvcEndpoint;

extern const PsvcEndpoint *psvc_endpoint_find(const char *resource);
/* All endpoints, in catalogue order; *n receives their count. */
extern const PsvcEndpoint *psvc_endpoints(int *n);
extern const PsvcColumnDef *psvc_endpoint_column(const PsvcEndpoint *ep, const char *name);
/* May equality on col be sent as the key of ep's detail route? */
extern bool psvc_endpoint_is_detail_key(const PsvcEndpoint *ep, const PsvcColumnDef *col);
/*
 * What to send as col's filter parameter to select rows whose column
 * equals value, or NULL when no filter value selects exactly those rows
 * (then the scan lists without the filter and checks locally).
 */
extern const char *psvc_endpoint_filter_param(const PsvcColumnDef *col, const char *value);

struct ExplainState;

/* in fdw_modify_xact.c: remote writes that a rollback cannot undo */

/*
 * Names the table or function whose requests follow ("foreign table
 * \"todos\"", "function partner_svc.run_job"), for the WARNING below.
 */
extern void psvc_xact_set_writer(const char *fmt,...) pg_attribute_printf(1, 2);
/* The same for a SQL function, named only if it writes. */
extern void psvc_xact_set_writer_function(Oid fnoid);
/*
 * Counts one state-changing request that succeeded (unknown = false) or
 * whose outcome is unknown; when the (sub)transaction aborts, a WARNING
 * says how many changes of which writer were not undone.  Called by
 * http.c.
 */
extern void psvc_xact_note_write(const char *method, const char *route, bool unknown);

/* in fdw_plan.c */

/* Positions in a ForeignScan's fdw_private list. */
enum PsvcPrivateIndex
{
	PSVC_PRIV_RESOURCE,			/* String: the endpoint's resource */
	PSVC_PRIV_DETAIL,			/* Integer: 1 = read one object by key */
	PSVC_PRIV_LIMIT,			/* Integer: rows the query needs, -1 = all */
	PSVC_PRIV_PUSHED,			/* List of List: (column, index in fdw_exprs,
								 * is_array) per pushed-down equality */
	PSVC_PRIV_ATTRS,			/* IntList: attnums the query needs */
	PSVC_PRIV_MISSING			/* String: a required path column the plan
								 * has no value for (the scan raises the
								 * documented error), or "" */
};

extern void psvc_fdw_get_rel_size(PlannerInfo *root, RelOptInfo *baserel, Oid foreigntableid);
extern void psvc_fdw_get_paths(PlannerInfo *root, RelOptInfo *baserel, Oid foreigntableid);
extern ForeignScan *psvc_fdw_get_plan(PlannerInfo *root, RelOptInfo *baserel,
									  Oid foreigntableid, ForeignPath *best_path,
									  List *tlist, List *scan_clauses, Plan *outer_plan);
/*
 * The catalogue column a table column stands for: by name, or a plain
 * member column when the column has the "field" option.  Allocates in
 * CurrentMemoryContext.  Errors for a column that maps to nothing.
 */
extern const PsvcColumnDef *psvc_fdw_column_def(const PsvcEndpoint *ep, Oid relid,
												 Form_pg_attribute att);
/* Index of a member column in a decode's field list; see fdw_plan.c. */
extern int	psvc_fdw_field_index(const PsvcColumnDef *def, const char **fields, int *nfields);
/* The endpoint of a foreign table, checked against its server's service. */
extern const PsvcEndpoint *psvc_fdw_endpoint(Oid relid, PsvcServer **server);

/* in fdw_scan.c */
extern void psvc_fdw_begin(ForeignScanState *node, int eflags);
extern TupleTableSlot *psvc_fdw_iterate(ForeignScanState *node);
extern void psvc_fdw_rescan(ForeignScanState *node);
extern void psvc_fdw_end(ForeignScanState *node);
extern void psvc_fdw_explain(ForeignScanState *node, struct ExplainState *es);

/* in fdw_import.c */
extern List *psvc_fdw_import(ImportForeignSchemaStmt *stmt, Oid serverOid);

/* in functions.c: shared by the SQL functions */
/*
 * The server a function uses: the one named by argument argno, or the only
 * server of service.  Checks USAGE.  Allocates in CurrentMemoryContext.
 */
extern PsvcServer *psvc_fn_server(const char *service,
								  FunctionCallInfo fcinfo, int argno);
extern PsvcKV *psvc_kv(const char *name, const char *value);
/* jsonb from JSON text, NULL for empty text; CurrentMemoryContext. */
extern Jsonb *psvc_fn_jsonb(const char *text, size_t len);
extern Jsonb *psvc_fn_call(PsvcHttpRequest *req, bool null_on_404);
/*
 * Reading answers (all allocate in CurrentMemoryContext).  psvc_fn_parse
 * never raises for a bad body: NULL when it is not UTF-8 JSON.
 */
extern Jsonb *psvc_fn_parse(const char *text, size_t len);
extern JsonbValue *psvc_fn_member(Jsonb *j, const char *key);
extern char *psvc_fn_member_text(Jsonb *j, const char *key);	/* strings only */
extern Jsonb *psvc_fn_member_jsonb(Jsonb *j, const char *key);	/* NULL for null */
/* error.code or a string error of an error body, else NULL */
extern char *psvc_fn_error_code(const PsvcHttpResponse *resp);
/* the body as jsonb, or its "data" member; raise naming req when absent */
extern Jsonb *psvc_fn_body(const PsvcHttpRequest *req, const PsvcHttpResponse *resp);
extern Jsonb *psvc_fn_data(const PsvcHttpRequest *req, const PsvcHttpResponse *resp);
/* 22023 unless value has 1..maxlen characters; before anything is sent */
extern void psvc_fn_check_ref(const char *argname, const char *value, int maxlen);
/* j as JSON text in UTF-8, for a request body */
extern char *psvc_fn_json_text(Jsonb *j, size_t *len);

/* in functions_orders.c, functions_content.c (movies, catalog, generation),
 * functions_files.c, functions_scheduler.c: the SQL functions themselves
 * (PG_FUNCTION_INFO_V1; nothing else exported) */

/* in fdw_modify.c: INSERT/UPDATE/DELETE on writable foreign tables */
extern void psvc_fdw_add_update_targets(PlannerInfo *root, Index rtindex,
										RangeTblEntry *target_rte,
										Relation target_relation);
extern List *psvc_fdw_plan_modify(PlannerInfo *root, ModifyTable *plan,
								  Index resultRelation, int subplan_index);
extern void psvc_fdw_begin_modify(ModifyTableState *mtstate, ResultRelInfo *rinfo,
								  List *fdw_private, int subplan_index, int eflags);
/* ExecForeignInsert, ExecForeignUpdate and ExecForeignDelete, all three */
extern TupleTableSlot *psvc_fdw_exec_row(EState *estate, ResultRelInfo *rinfo,
										 TupleTableSlot *slot,
										 TupleTableSlot *planSlot);
/* EndForeignModify and EndForeignInsert */
extern void psvc_fdw_end_modify(EState *estate, ResultRelInfo *rinfo);
extern void psvc_fdw_begin_insert(ModifyTableState *mtstate, ResultRelInfo *rinfo);
extern int	psvc_fdw_updatable(Relation rel);
extern void psvc_fdw_explain_modify(ModifyTableState *mtstate, ResultRelInfo *rinfo,
									List *fdw_private, int subplan_index,
									struct ExplainState *es);

/* in ratelimit.c, ratelimit_request.c, ratelimit_views.c: the shared-memory
 * rate limiter and the request stats */
extern void psvc_rl_init(void);	/* from _PG_init: GUCs, shmem hooks */

/*
 * One request's dealings with the limiter and the stats, opaque outside
 * ratelimit.c.  http.c calls, for each request: psvc_rl_prepare once when
 * it starts (the lease lives in the given context); psvc_rl_acquire before
 * every attempt (waits for budget, interruptibly, or raises); then
 * psvc_rl_attempt_done when the attempt ended, or psvc_rl_release from the
 * transfer's cleanup when it was abandoned mid-attempt (never raises).
 */
typedef struct PsvcRlLease PsvcRlLease;

extern PsvcRlLease *psvc_rl_prepare(const PsvcHttpRequest *req, MemoryContext cxt);
extern void psvc_rl_acquire(PsvcRlLease *lease);
/*
 * status: the HTTP status, 0 when no response came.  hold_ms: for a 429,
 * how long the service asked to wait (Retry-After, or the backoff chosen),
 * -1 when unknown.  retrying: another attempt follows.
 */
extern void psvc_rl_attempt_done(PsvcRlLease *lease, long status,
								 size_t bytes_sent, size_t bytes_received,
								 double elapsed_ms, bool retrying, long hold_ms);
extern void psvc_rl_release(PsvcRlLease *lease);
/* Counts a hit or a miss of the response cache in partner_svc.stats. */
extern void psvc_rl_count_cache(Oid serverid, const char *method,
								const char *route, bool hit);
/* Time this request waited for budget so far, in milliseconds. */
extern double psvc_rl_waited_ms(const PsvcRlLease *lease);

/* in ratelimit_rules.c: the table of limits, tiers and per-route overrides */

/* Checks the value of server option "rate_limits"; raises on a bad one. */
extern void psvc_rl_check_overrides(const char *value);

/* in webhook_worker.c: the background worker receiving webhooks */
extern void psvc_worker_init(void);	/* from _PG_init: GUCs, registration */
extern PGDLLEXPORT void psvc_worker_main(Datum arg);
extern Datum psvc_webhook_status(PG_FUNCTION_ARGS);
extern void psvc_worker_set_error(const char *msg);	/* for webhook_status() */
extern void psvc_worker_clear_error(const char *msg);	/* if it is the last */
/* last_error while the extension is missing in partner_svc.webhook_database */
#define PSVC_WH_NO_EXTENSION_MSG \
	"extension \"partner_svc\" is not installed in the webhook database"

/* What the worker has done since it started (its own, published to shmem). */
typedef struct PsvcWhCounters
{
	int64		requests;		/* HTTP requests answered or pending */
	int64		accepted;		/* 200, stored now */
	int64		duplicates;		/* 200, had been stored before */
	int64		rejected;		/* 400, kept in webhook_rejects */
	int64		unauthorized;	/* 401 */
	int64		too_large;		/* 413 */
	int64		not_found;		/* 404 */
	int64		bad_method;		/* 405 */
	int64		failed;			/* 500/503: the batch could not be stored */
	int64		timed_out;		/* connections closed for inactivity */
	int64		batches;		/* transactions committed */
	int			max_batch;		/* largest batch so far */
} PsvcWhCounters;

extern PsvcWhCounters psvc_wh_counters;
extern char *psvc_wh_secret;	/* partner_svc.webhook_secret, "" = none */
extern int	psvc_wh_max_body;	/* bytes */
/* the listener's limits on hostile clients (webhook_http.c reads them) */
extern char *psvc_wh_secret_previous;	/* accepted too, during a rotation */
extern int	psvc_wh_header_timeout;	/* s, for the headers of a request */
extern int	psvc_wh_request_timeout;	/* s, for a whole request */
extern int	psvc_wh_min_rate;	/* body bytes per second, 0 = any */
extern int	psvc_wh_max_per_address;	/* connections, 0 = no cap */
extern int	psvc_wh_max_in_flight;	/* bytes the bodies of all open requests hold */

/*
 * One webhook request, from its first byte to its answer.  Allocated with
 * malloc by webhook_http.c (libmicrohttpd callbacks must not palloc or
 * ereport), freed when libmicrohttpd is done with the connection.
 */
typedef struct PsvcWhDelivery
{
	struct MHD_Connection *conn;
	const char *environment;	/* "sandbox" or "production" */
	char	   *body;			/* malloc'd; NUL-terminated once complete */
	size_t		len;
	size_t		cap;			/* bytes of body, always > len when set */
	bool		too_large;
	bool		no_memory;		/* the body could not be held: answer 503 */
	bool		suspended;		/* waiting in a batch */
	int			status;			/* the answer; 0 while not decided */
	char	   *answer;			/* malloc'd JSON body of the answer, or NULL */
	struct PsvcWhDelivery *next;	/* in the batch */
} PsvcWhDelivery;

/* in webhook_http.c: the listener (libmicrohttpd in external-epoll mode) */
extern bool psvc_wh_http_start(const char *address, int port, int timeout_s,
							   char *err, size_t errlen);
extern void psvc_wh_http_stop(void);
/* The listener must be restarted for the settings to apply. */
extern bool psvc_wh_http_stale(void);
extern bool psvc_wh_http_running(void);
extern int	psvc_wh_http_fd(void);	/* readable when psvc_wh_http_run has work */
extern long psvc_wh_http_timeout(void);	/* ms the wait may last, -1 = any */
extern void psvc_wh_http_run(void);
extern int	psvc_wh_http_pending(void);	/* complete deliveries not taken yet */
/* Deliveries whose bodies are complete, oldest first; the list is emptied. */
extern PsvcWhDelivery *psvc_wh_http_take_batch(int *n);
/* Answers every delivery of the batch with its status (after the commit). */
extern void psvc_wh_http_answer(PsvcWhDelivery *batch);
/* Sets d->status and a JSON answer {"error": msg} (msg escaped). */
extern void psvc_wh_http_set_error(PsvcWhDelivery *d, int status, const char *msg);
/*
 * Answers every delivery still held (taken or pending) that has no status
 * 503 with Retry-After, and the others with theirs; returns how many got
 * 503.  Never raises, never pallocs: safe in error recovery and at exit.
 */
extern int	psvc_wh_http_release_held(void);

/* in webhook_store.c: validation and storage of a batch */
/*
 * Decides and stores a batch in one transaction (or, when that fails, each
 * delivery alone) and sets every delivery's status.  Never raises.
 */
extern void psvc_wh_store_batch(PsvcWhDelivery *batch, int n);
extern void psvc_wh_store_reset(void);	/* forget prepared plans */

/* in partner_svc.c */
extern int	psvc_guc_connect_timeout;	/* milliseconds */
extern int	psvc_guc_request_timeout;	/* milliseconds */
extern int	psvc_guc_max_retries;
extern int	psvc_guc_page_size;			/* items per page asked for */
extern int	psvc_guc_fanout;			/* concurrent first pages */
extern int	psvc_guc_max_response_size;	/* bytes */

/* partner_svc.max_response_size: default, and the most it may be */
#define PSVC_DEFAULT_MAX_RESPONSE_SIZE	(64 * 1024 * 1024)
#define PSVC_MAX_RESPONSE_SIZE_LIMIT	((int) (MaxAllocSize - 1))
extern bool psvc_guc_prefetch;			/* fetch the next page early */
extern Datum psvc_module_version(PG_FUNCTION_ARGS);

/* in options.c */
extern Datum psvc_options_validator(PG_FUNCTION_ARGS);
/* Raises HV00D for an option IMPORT FOREIGN SCHEMA does not take. */
extern void psvc_options_check_import(List *options);

/* in fdw_handler.c */
extern Datum psvc_fdw_handler(PG_FUNCTION_ARGS);

#endif							/* PARTNER_SVC_H */
