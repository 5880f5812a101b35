/*-------------------------------------------------------------------------
 *
 * catalog.h
 *		  The catalogue of partner_svc, as data: every call the extension
 *		  makes to a partner service (catalog.c, the operations), and every
 *		  foreign table as the operations it reads and writes (endpoints.c).
 *
 * An operation (PsvcOperation) gives the service, method, route template,
 * path parameters with their rules, safety for retries, the envelope, the
 * error codes that mean "nothing here", its row of the rate-limit table,
 * a description, and its shape as a SQL function.  The services and tiers
 * are declared here once.  The call module (call.h), the rate limiter
 * (ratelimit.h), the executor of the SQL functions (functions.h), option
 * validation and the FDW read it.
 *
 * An endpoint (PsvcEndpoint) gives the resource name of a foreign table,
 * its list and detail operations, the columns (member, path parameter or
 * raw item; filters) and, for writable tables, the operations that
 * INSERT/UPDATE/DELETE become.  The FDW (fdw.h) reads it to plan, scan,
 * modify and import; option validation (fdw_options.c) reads it for resource
 * names.  It depends on nothing.
 *
 * Memory: the catalogue is static, constant data; the functions return
 * pointers into it and allocate nothing.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/catalog/catalog.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef PSVC_CATALOG_H
#define PSVC_CATALOG_H

/* ---- catalog.c: the operation catalogue ---- */

/*
 * The services, declared once: their names are the values of the server
 * option "service", IMPORT's remote schemas and what the functions look
 * their server up by.
 */
typedef enum PsvcServiceId
{
	PSVC_SVC_ORDERS,
	PSVC_SVC_MOVIES,
	PSVC_SVC_CATALOG,
	PSVC_SVC_TODOS,
	PSVC_SVC_GENERATION,
	PSVC_SVC_FILES,
	PSVC_SVC_SCHEDULER,
	PSVC_SVC_CUSTOM,			/* a partner of the user's: no catalogue,
								 * routes declared in SQL (declared.c) */
	PSVC_NSERVICES
} PsvcServiceId;

typedef struct PsvcService
{
	const char *name;			/* the option value "orders", "movies"... */
	bool		keyless;		/* the documents describe no authentication */
	bool		tiers;			/* takes option "tier" */
	const char *limits_prefix;	/* path prefix the document's rate-limit
								 * table leaves out ("/public"), or NULL */
} PsvcService;

extern const PsvcService psvc_services[PSVC_NSERVICES];
/* The names of the services, NULL-terminated, in PsvcServiceId order. */
extern const char *const *psvc_service_names(void);
/* The names of the tiers, NULL-terminated, in the order of the limits. */
#define PSVC_NTIERS 3
extern const char *const psvc_tier_names[PSVC_NTIERS + 1];
/* The service called name, or -1. */
extern int	psvc_service_find(const char *name);
/* The index of a tier name in psvc_tier_names; 0 (standard) for NULL. */
extern int	psvc_tier_index(const char *tier);

/* What the documents say a path parameter holds. */
typedef enum PsvcParamKind
{
	PSVC_PARAM_TEXT,			/* 1 to max_chars characters */
	PSVC_PARAM_INT64,			/* an integer in the int64 range */
	PSVC_PARAM_QUESTION			/* BQ-(GF|EK|KA|HR)-, then 1 to 32 of
								 * [A-Za-z0-9_-] */
} PsvcParamKind;

typedef struct PsvcParamDef
{
	const char *name;			/* the {name} of the route */
	PsvcParamKind kind;
	int			max_chars;		/* PSVC_PARAM_TEXT */
	const char *doc;			/* the rule as a sentence's end, for errdetail */
} PsvcParamDef;

/* A row of the partner's table of rate limits (ratelimit_rules.c reads it). */
typedef struct PsvcLimitRow
{
	PsvcServiceId service;
	const char *row;			/* "[METHOD ]/path" as the document writes it */
	int			limit[PSVC_NTIERS]; /* per window, per tier */
	bool		documented;		/* false: our choice, the document has none */
} PsvcLimitRow;

/* All rows, in table order; *n receives their count. */
extern const PsvcLimitRow *const *psvc_limit_rows(int *n);

typedef enum PsvcPaging
{
	PSVC_PAGING_NONE,			/* one response holds the whole list */
	PSVC_PAGING_CURSOR,			/* limit/cursor, "pagination" object (or
								 * the pager's cursor_path) */
	PSVC_PAGING_NEXT_URL,		/* the next page's URL in the body */
	PSVC_PAGING_LINK,			/* the Link header's rel="next" (RFC 8288) */
	PSVC_PAGING_OFFSET,			/* offset advanced by the items received */
	PSVC_PAGING_PAGE			/* page number from 1 */
} PsvcPaging;

/*
 * The parameters of a paging style, for a route declared in SQL (the
 * options of a foreign table, docs/declared-endpoints.md).  A row of the
 * catalogue has none (NULL): limit and cursor, pagination.next_cursor.
 */
typedef struct PsvcPager
{
	const char *limit_param;	/* the page size's query parameter, or NULL */
	int			page_size;		/* items asked for a page; 0: the setting */
	const char *cursor_path;	/* CURSOR: dotted member of the next cursor */
	const char *cursor_param;	/* CURSOR: the query parameter it is sent as */
	const char *next_path;		/* NEXT_URL: dotted member of the next URL */
	const char *offset_param;	/* OFFSET */
	const char *page_param;		/* PAGE */
} PsvcPager;

/* What argument 0 of an operation's SQL function becomes (functions_exec.c). */
typedef enum PsvcFnArg
{
	PSVC_ARG_NONE,				/* no argument but the server */
	PSVC_ARG_PATH,				/* the value of the one path parameter: text,
								 * or bigint for a PSVC_PARAM_INT64 */
	PSVC_ARG_BODY,				/* jsonb sent as the body */
	PSVC_ARG_BODY_OBJECT,		/* the same, and it must be an object */
	PSVC_ARG_BODY_MEMBER		/* text sent as {"<arg_name>": text} */
} PsvcFnArg;

/* What the SQL function returns of the answer's payload. */
typedef enum PsvcFnResult
{
	PSVC_RESULT_JSONB,			/* the payload */
	PSVC_RESULT_TEXT,			/* its string member result_member */
	PSVC_RESULT_INT64,			/* its numeric member result_member */
	PSVC_RESULT_VOID			/* nothing */
} PsvcFnResult;

/* Refusals a validating operation returns as {"valid": false, "error": ...}. */
typedef enum PsvcRefusal
{
	PSVC_REFUSAL_NONE,
	PSVC_REFUSAL_KEY,			/* 401, 403: "error" is the body, or null */
	PSVC_REFUSAL_PAYLOAD		/* 400, 409, 422 with a member "error": it */
} PsvcRefusal;

#define PSVC_MAX_PATH_PARAMS 3

/*
 * One call the extension makes to a partner service.  See catalog.c for
 * how to add one.
 */
typedef struct PsvcOperation
{
	const char *name;			/* unique; the SQL function's name, where
								 * one is the operation */
	PsvcServiceId service;
	const char *method;			/* "GET", "POST", "PUT", "DELETE" */
	const char *route;			/* path template, starting with '/' */
	const PsvcParamDef *params[PSVC_MAX_PATH_PARAMS];	/* one per {name} of
														 * route, NULL after */
	bool		safe;			/* repeating it has no effect: retried after
								 * 5xx, timeouts and lost connections (a
								 * GET, or a POST that only checks); false:
								 * only where nothing was done (429, no
								 * connection) */
	PsvcPaging	paging;
	const PsvcPager *pager;		/* the paging's parameters; NULL: the
								 * catalogue's (limit, cursor) */
	const char *envelope;		/* member of the answer holding the payload
								 * ("data", "result"), NULL = the body */
	const char *const *empty_codes; /* error codes of a 404 that mean
									 * "nothing here": no rows, NULL;
									 * NULL-terminated, or NULL */
	const PsvcLimitRow *limit;	/* its row of the rate-limit table, or NULL */
	const char *description;	/* for COMMENTs and the docs */
	int			cache_ttl_s;	/* a GET: how long the response cache
								 * keeps its answer by default, seconds;
								 * 0: not cached unless an option says
								 * (cache.c, docs/cache.md) */
	/* as a SQL function (functions_exec.c) */
	PsvcFnArg	arg;
	const char *arg_name;		/* the argument, for messages */
	const char *body_member;	/* BODY_MEMBER: the member it is sent as */
	const char *arg_hint;		/* errhint for a bad argument, or NULL */
	PsvcFnResult result;
	const char *result_member;	/* TEXT, INT64 */
	PsvcRefusal refusal;
} PsvcOperation;

typedef enum PsvcOpId
{
	PSVC_OP_ORDERS_LIST,
	PSVC_OP_ORDER_GET,
	PSVC_OP_ORDER_LOOKUP,
	PSVC_OP_ORDER_STATUS,
	PSVC_OP_ORDER_CREATE,
	PSVC_OP_ORDER_VALIDATE,
	PSVC_OP_ORDER_CANCEL_PENDING,
	PSVC_OP_ORDER_CANCEL_DEFERRED,
	PSVC_OP_PRODUCTS_LIST,
	PSVC_OP_PRODUCT_STATUS_LIST,
	PSVC_OP_USERS_LIST,
	PSVC_OP_USER_ORDERS_LIST,
	PSVC_OP_USER_VEHICLES_LIST,
	PSVC_OP_VALIDATE_VEHICLE,
	PSVC_OP_TRANSACTION_CREATE,
	PSVC_OP_TRANSACTIONS_LIST,
	PSVC_OP_TRANSACTION_STATUS,
	PSVC_OP_TRANSACTION_FEE,
	PSVC_OP_TRANSACTION_DATA,
	PSVC_OP_TRANSACTION_CANCEL,
	PSVC_OP_MCP,
	PSVC_OP_MCP_READ,
	PSVC_OP_MOVIES_LIST,
	PSVC_OP_MOVIE_GET,
	PSVC_OP_MOVIE_SUMMARY,
	PSVC_OP_MOVIE_SPOILER_FREE_SUMMARY,
	PSVC_OP_MOVIE_ENDING,
	PSVC_OP_MOVIE_SETTING,
	PSVC_OP_MOVIE_PROFILE,
	PSVC_OP_MOVIE_THEMES,
	PSVC_OP_MOVIE_TIMELINE,
	PSVC_OP_MOVIE_CHARACTERS,
	PSVC_OP_MOVIE_FAQS,
	PSVC_OP_CONCERT_GET,
	PSVC_OP_AWARD_GET,
	PSVC_OP_BOOK_GET,
	PSVC_OP_COLLECTION_GET,
	PSVC_OP_QUESTIONS_LIST,
	PSVC_OP_QUESTION_GET,
	PSVC_OP_QUESTION_ANSWER,
	PSVC_OP_TODOS_LIST,
	PSVC_OP_TODO_CREATE,
	PSVC_OP_TODO_UPDATE,
	PSVC_OP_TODO_DELETE,
	PSVC_OP_GENERATE,
	PSVC_OP_KEY_VALIDATE,
	PSVC_OP_UPLOAD_CREATE,
	PSVC_OP_UPLOAD_APPEND,
	PSVC_OP_FILE_GET,
	PSVC_OP_JOBS_LIST,
	PSVC_OP_JOB_GET,
	PSVC_OP_JOB_SAVE,
	PSVC_OP_JOB_DELETE,
	PSVC_OP_JOB_RUN,
	PSVC_OP_JOB_STOP,
	PSVC_OP_JOB_PAUSE,
	PSVC_OP_JOB_ACTIVATE,
	PSVC_OP_JOB_CLONE,
	PSVC_OP_JOB_SYNC_TOKEN,
	PSVC_OP_JOB_EXECUTIONS,
	PSVC_OP_EXECUTION_EMAIL,
	PSVC_OP_NOTIFICATIONS_LIST,
	PSVC_OP_NOTIFICATION_ADD,
	PSVC_NOPS
} PsvcOpId;

extern const PsvcOperation psvc_operations[PSVC_NOPS];
#define psvc_op(id) (&psvc_operations[(id)])
/* The definition of path parameter name (namelen bytes) of op, or NULL. */
extern const PsvcParamDef *psvc_op_param(const PsvcOperation *op,
										 const char *name, size_t namelen);
/* The rows are checked when the extension is built: test/catalog/catalog_check.c. */
/* Whether a 404 with this error code (may be NULL) means "nothing here". */
extern bool psvc_op_empty_code(const PsvcOperation *op, const char *code);

/*
 * Routes named by a caller (partner_svc.request()).  A concrete path is
 * given as its segments (segs[0 .. nseg-1], without slashes).
 *
 * psvc_route_match: whether template (len bytes, "/a/{b}/c") matches the
 * segments from first on, a {name} any segment; names/namelens (pointers
 * into template) and values (segments) receive the parameters, *nparams
 * their count (at most PSVC_MAX_PATH_PARAMS).
 */
extern bool psvc_route_match(const char *template, int len,
							 const char *const *segs, int nseg, int first,
							 const char **names, int *namelens,
							 const char **values, int *nparams);
/*
 * The row of service with method whose route matches the path (of two,
 * the one not safe to repeat), or NULL; values receives its path values
 * in the order of op->params.
 */
extern const PsvcOperation *psvc_op_for_path(PsvcServiceId service,
											 const char *method,
											 const char *const *segs, int nseg,
											 const char **values);
/*
 * Fills *op as the row of a route the catalogue lacks: safe to repeat
 * exactly when method is GET or HEAD, no envelope, no limit row (the
 * caller may set one), no path parameters (the caller may add them).
 */
extern void psvc_op_init_custom(PsvcOperation *op, PsvcServiceId service,
								const char *method, const char *route);

/* ---- endpoints.c: the foreign tables ---- */

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
	bool		filter_closed;	/* FIELD with filter_values: they are every
								 * value the column can hold (an enum of
								 * the documents), so an equality with any
								 * other value matches no row and is not
								 * sent, and = ANY(...) fans out over the
								 * documented values it names */
	const char *echo_if_in;		/* FIELD without a member: echo the filter
								 * value only when this array member holds
								 * it (case-insensitively); NULL = always */
} PsvcColumnDef;

/*
 * One value of a filter: a column value and the query value that selects
 * it, where they differ (the orders status filter "WILL BE ACTIVE" lists
 * DEFERRED orders).  A list ends with a NULL value.
 */
typedef struct PsvcFilterValue
{
	const char *value;			/* the column's value */
	const char *param_value;	/* the query parameter's value selecting it;
								 * NULL = the column's value itself */
} PsvcFilterValue;


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

/*
 * How a writable endpoint turns INSERT, UPDATE and DELETE into requests
 * (fdw_modify.c): an operation each, NULL where not supported.  UPDATE and
 * DELETE put the row's key into the operation's one path parameter.
 */
typedef struct PsvcModifyDef
{
	const PsvcOperation *insert;
	const PsvcOperation *update;	/* sends only the columns the UPDATE sets */
	const PsvcOperation *delete;
	const char *key_field;		/* member that identifies a row; assigned by
								 * the service, never sent in a body */
	PsvcBodyStyle body;
	const char *check_field;	/* member checked before sending, or NULL */
	PsvcValueCheck check;
} PsvcModifyDef;

typedef struct PsvcEndpoint
{
	const char *resource;		/* foreign table name / "resource" option */
	const PsvcOperation *list;	/* the list read (its service, route,
								 * paging) */
	const char *items_key;		/* member of the list's answer holding the
								 * items; NULL = the list's envelope.  A
								 * nested list names the path to it,
								 * "data.events.data": its pagination
								 * object is the sibling of its last name
								 * (psvc_json_decode_page) */
	const PsvcOperation *detail;	/* single-object read by key, or NULL;
									 * the object is its envelope */
	const char *detail_column;	/* the key column for the detail read */
	const char *description;	/* for IMPORT's COMMENT and the docs */
	int			ncolumns;
	const PsvcColumnDef *columns;
	const PsvcModifyDef *modify;	/* writable: how; NULL = read-only */
	bool		declared;		/* built from a table's options (option
								 * "endpoint"), not a row of endpoints.c */
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
/*
 * Whether no row can hold value in col: col's filter values are closed
 * (a documented enum) and value, compared exactly, is none of them.
 */
extern bool psvc_endpoint_filter_excludes(const PsvcColumnDef *col, const char *value);

/* ---- declared.c: routes declared in SQL (docs/declared-endpoints.md) ---- */

/* The names of the paging styles, NULL-terminated, in PsvcPaging order. */
extern const char *const psvc_paging_names[];
/* The paging style called name, or -1. */
extern int	psvc_paging_find(const char *name);

/*
 * A route as a table option writes it, "GET /jobs/{family}/history":
 * its method (upper case, one of methods, a NULL-terminated list), its
 * route template and the names of its {name}s (at most
 * PSVC_MAX_PATH_PARAMS).  NULL when spec parses, else why not (a static
 * text, the end of a sentence).  Allocates in CurrentMemoryContext.
 */
extern const char *psvc_declared_parse_route(const char *spec,
											 const char *const *methods,
											 char **method, char **route,
											 char **names, int *nnames);

#endif							/* PSVC_CATALOG_H */
