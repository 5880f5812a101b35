/*-------------------------------------------------------------------------
 *
 * catalog.c
 *		  The operation catalogue: every call partner_svc makes to a partner
 *		  service, as one row of data.
 *
 * A row (PsvcOperation) gives the service, the method and route template,
 * the path parameters with what the documents allow in them, whether the
 * call may be repeated without effect (retries), the envelope of the
 * answer, the error codes that mean "nothing here", the row of the
 * partner's rate-limit table it counts against, a description, and how
 * it looks as a SQL function (argument and result).  Everything reads it:
 * the foreign tables (endpoints.c names the operations of each table),
 * the one executor of the SQL functions (functions_exec.c), the URL
 * builder (http_url.c checks path values against the rows' parameters),
 * the rate limiter (ratelimit_rules.c takes the row's limit when the
 * request is built), option validation (service and tier names) and
 * IMPORT FOREIGN SCHEMA (the descriptions).  No other source file of the
 * extension holds a route of a partner service (test/route_strings.sh
 * checks it).
 *
 * How to add an operation:
 *	1. add its id to PsvcOpId (catalog.h), in its service's group;
 *	2. add its row to operations[] below, designated initializers only:
 *	   .service, .method, .route, .params (a PsvcParamDef per {name}: reuse
 *	   one below or add one with its document's rule), .safe for a call
 *	   that changes nothing, .envelope, .empty_codes, .limit (a row of the
 *	   rate-limit table below; add the row if the document has one),
 *	   .description;
 *	3. as a SQL function: set .arg, .arg_name, .result (and .body_member,
 *	   .result_member, .refusal), write the entry point with
 *	   PSVC_OPERATION_FUNCTION in the
 *	   service's functions_*.c, and the SQL wrapper in sql/install/ and
 *	   sql/upgrade/; a function with logic of its own (lost answers, chunked
 *	   uploads) makes its calls with psvc_call_make() from its rows (call.h);
 *	4. as a foreign table: a row of endpoints.c naming the operation(s).
 *
 * Field names and choices where the documents say "not shown" follow the
 * sandbox's documented behaviour (docs/sandbox-*.md).
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/catalog/catalog.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog.h"

/* ---------------------------------------------------------------------
 * Services and tiers
 * ---------------------------------------------------------------------
 */

const PsvcService psvc_services[PSVC_NSERVICES] = {
	/* docs/sandbox-orders.md: the rate-limit table writes paths without /public */
	[PSVC_SVC_ORDERS] = {.name = "orders", .tiers = true, .limits_prefix = "/public"},
	[PSVC_SVC_MOVIES] = {.name = "movies"},
	[PSVC_SVC_CATALOG] = {.name = "catalog"},
	/* docs/sandbox-catalog-todos-generation.md: "No Authorization header is listed for the todo endpoints" */
	[PSVC_SVC_TODOS] = {.name = "todos", .keyless = true},
	[PSVC_SVC_GENERATION] = {.name = "generation"},
	[PSVC_SVC_FILES] = {.name = "files"},
	[PSVC_SVC_SCHEDULER] = {.name = "scheduler"},
	/* docs/declared-endpoints.md: its own base_url and key, no catalogue */
	[PSVC_SVC_CUSTOM] = {.name = "custom"},
};

const char *const *
psvc_service_names(void)
{
	static const char *names[PSVC_NSERVICES + 1];

	if (names[0] == NULL)
		for (int i = 0; i < PSVC_NSERVICES; i++)
			names[i] = psvc_services[i].name;
	return names;
}

/* The orders service's tiers (docs/sandbox-orders.md), in the order of the limit columns below. */
const char *const psvc_tier_names[PSVC_NTIERS + 1] = {
	"standard", "premium", "enterprise", NULL
};

int
psvc_service_find(const char *name)
{
	for (int i = 0; i < PSVC_NSERVICES; i++)
		if (strcmp(psvc_services[i].name, name) == 0)
			return i;
	return -1;
}

int
psvc_tier_index(const char *tier)
{
	for (int i = 0; i < PSVC_NTIERS; i++)
		if (tier != NULL && strcmp(tier, psvc_tier_names[i]) == 0)
			return i;
	return 0;
}

/* ---------------------------------------------------------------------
 * Path parameters: what the documents allow in them
 * ---------------------------------------------------------------------
 */

/* docs/sandbox-movies.md: "{movie} in a path: string, 1 to 255 characters" */
static const PsvcParamDef p_movie = {
	.name = "movie", .kind = PSVC_PARAM_TEXT, .max_chars = 255,
	.doc = "a movie reference of 1 to 255 characters"
};

/* docs/sandbox-orders.md: "Any {id} accepts the service order id or the partner custom_id" */
static const PsvcParamDef p_order_id = {
	.name = "id", .kind = PSVC_PARAM_TEXT, .max_chars = 255,
	.doc = "an order id or custom id of 1 to 255 characters"
};

/*
 * docs/sandbox-orders.md, the other routes of its rate-limit table: only their paths
 * are shown; a user id of GET /public/users, a transaction id, or (for
 * {unique_id}) a transaction id or the id of one of its orders
 */
static const PsvcParamDef p_user_id = {
	.name = "id", .kind = PSVC_PARAM_TEXT, .max_chars = 255,
	.doc = "a user id of 1 to 255 characters"
};
static const PsvcParamDef p_tx_id = {
	.name = "id", .kind = PSVC_PARAM_TEXT, .max_chars = 255,
	.doc = "a transaction id of 1 to 255 characters"
};
static const PsvcParamDef p_tx_unique_id = {
	.name = "unique_id", .kind = PSVC_PARAM_TEXT, .max_chars = 255,
	.doc = "a transaction id or order id of 1 to 255 characters"
};

/*
 * docs/sandbox-movies.md, nested lists: only the paths are shown; like a movie
 * reference, 1 to 255 characters (docs/sandbox-movies.md)
 */
static const PsvcParamDef p_concert = {
	.name = "concert", .kind = PSVC_PARAM_TEXT, .max_chars = 255,
	.doc = "a concert reference of 1 to 255 characters"
};
static const PsvcParamDef p_award = {
	.name = "award", .kind = PSVC_PARAM_TEXT, .max_chars = 255,
	.doc = "an award reference of 1 to 255 characters"
};
static const PsvcParamDef p_book = {
	.name = "book", .kind = PSVC_PARAM_TEXT, .max_chars = 255,
	.doc = "a book reference of 1 to 255 characters"
};
static const PsvcParamDef p_collection_type = {
	.name = "type", .kind = PSVC_PARAM_TEXT, .max_chars = 255,
	.doc = "a collection type of 1 to 255 characters"
};
static const PsvcParamDef p_collection = {
	.name = "collection", .kind = PSVC_PARAM_TEXT, .max_chars = 255,
	.doc = "a collection reference of 1 to 255 characters"
};

/* docs/sandbox-files-scheduler.md: "All jobId and id path parameters are integer int64" */
static const PsvcParamDef p_job_id = {
	.name = "jobId", .kind = PSVC_PARAM_INT64, .doc = "an integer (int64)"
};
static const PsvcParamDef p_sched_id = {
	.name = "id", .kind = PSVC_PARAM_INT64, .doc = "an integer (int64)"
};

/* docs/sandbox-catalog-todos-generation.md: todos "path id integer, required" */
static const PsvcParamDef p_todo_id = {
	.name = "id", .kind = PSVC_PARAM_INT64, .doc = "an integer"
};

/* docs/sandbox-catalog-todos-generation.md: pattern BQ-(GF|EK|KA|HR)-... */
static const PsvcParamDef p_question_id = {
	.name = "questionId", .kind = PSVC_PARAM_QUESTION,
	.doc = "a question id: \"BQ-\", a persona code (GF, EK, KA or HR), \"-\" and the question's number"
};

/* docs/sandbox-files-scheduler.md: files and uploads; only "required" is documented */
static const PsvcParamDef p_file_id = {
	.name = "file_id", .kind = PSVC_PARAM_TEXT, .max_chars = 1024,
	.doc = "a file id of 1 to 1024 characters"
};

/* ---------------------------------------------------------------------
 * The partner's rate-limit table
 *
 * A row names a route as the document's Limits table writes it: method
 * and path without the service's limits_prefix, or a path alone for a row
 * that limits every method ("/mcp").  A row counts per resource id when
 * it has an "{id}" or "{unique_id}" segment.  Rows the document does not
 * have are marked "our choice" (documented = false) and agree with the
 * sandbox (src/sandbox/core/ratelimit.c), which must never allow less.
 * Rows of routes no operation uses yet are kept: they are the contract,
 * and partner_svc.rate_limit_rules() lists them.
 * ---------------------------------------------------------------------
 */

#define LIMIT_ROW(var, svc, r, s, p, e, doc) \
	static const PsvcLimitRow var = {.service = svc, .row = r, .limit = {s, p, e}, .documented = doc}

/* docs/sandbox-orders.md, Limits */
LIMIT_ROW(rl_products, PSVC_SVC_ORDERS, "GET /products", 50, 100, 300, true);
LIMIT_ROW(rl_products_status, PSVC_SVC_ORDERS, "GET /products/status", 25, 100, 300, true);
LIMIT_ROW(rl_users, PSVC_SVC_ORDERS, "GET /users", 100, 500, 1000, true);
LIMIT_ROW(rl_user_orders, PSVC_SVC_ORDERS, "GET /users/{id}/orders", 50, 200, 1000, true);
LIMIT_ROW(rl_user_vehicles, PSVC_SVC_ORDERS, "GET /users/{id}/vehicles", 50, 200, 1000, true);
LIMIT_ROW(rl_order_create, PSVC_SVC_ORDERS, "POST /orders", 200, 1000, 2500, true);
LIMIT_ROW(rl_orders, PSVC_SVC_ORDERS, "GET /orders", 100, 500, 1000, true);
LIMIT_ROW(rl_order, PSVC_SVC_ORDERS, "GET /orders/{id}", 25, 50, 100, true);
LIMIT_ROW(rl_order_status, PSVC_SVC_ORDERS, "GET /orders/{id}/status", 15, 30, 50, true);
LIMIT_ROW(rl_cancel_pending, PSVC_SVC_ORDERS, "POST /orders/{id}/cancel-pending", 25, 100, 250, true);
LIMIT_ROW(rl_cancel_deferred, PSVC_SVC_ORDERS, "POST /orders/{id}/cancel-deferred", 25, 100, 250, true);
LIMIT_ROW(rl_validate_vehicle, PSVC_SVC_ORDERS, "POST /validate-vehicle", 250, 1000, 2500, true);
LIMIT_ROW(rl_transaction_create, PSVC_SVC_ORDERS, "POST /transaction/create", 50, 250, 1000, true);
LIMIT_ROW(rl_transactions, PSVC_SVC_ORDERS, "GET /transactions", 100, 500, 1000, true);
LIMIT_ROW(rl_transaction_status, PSVC_SVC_ORDERS, "GET /transaction/{unique_id}/status", 100, 300, 1000, true);
LIMIT_ROW(rl_transaction_fee, PSVC_SVC_ORDERS, "GET /transaction/{unique_id}/fee", 50, 200, 500, true);
LIMIT_ROW(rl_transaction_data, PSVC_SVC_ORDERS, "GET /transaction/{id}/data", 100, 300, 1000, true);
LIMIT_ROW(rl_transaction_cancel, PSVC_SVC_ORDERS, "POST /transaction/{id}/cancel", 25, 100, 250, true);
LIMIT_ROW(rl_mcp, PSVC_SVC_ORDERS, "/mcp", 100, 300, 1000, true);
/* our choice: "rate limited" in 000 without a row */
LIMIT_ROW(rl_order_validate, PSVC_SVC_ORDERS, "POST /orders/validate", 100, 500, 1000, false);
/* our choice: 001 shows no limits for the nested lists; the sandbox's */
LIMIT_ROW(rl_concert, PSVC_SVC_MOVIES, "GET /concerts/{concert}", 100, 300, 1000, false);
LIMIT_ROW(rl_award, PSVC_SVC_MOVIES, "GET /awards/{award}", 100, 300, 1000, false);
LIMIT_ROW(rl_book, PSVC_SVC_MOVIES, "GET /books/{book}", 100, 300, 1000, false);
LIMIT_ROW(rl_collection, PSVC_SVC_MOVIES, "GET /collections/{type}/{collection}", 100, 300, 1000, false);
/* our choice: 002 does not show them; the sandbox's values */
LIMIT_ROW(rl_generate, PSVC_SVC_GENERATION, "POST /v1/generate", 10, 30, 100, false);
LIMIT_ROW(rl_key_validate, PSVC_SVC_GENERATION, "GET /v1/key/validate", 30, 60, 120, false);

static const PsvcLimitRow *const limit_rows[] = {
	&rl_products, &rl_products_status, &rl_users, &rl_user_orders,
	&rl_user_vehicles, &rl_order_create, &rl_orders, &rl_order,
	&rl_order_status, &rl_cancel_pending, &rl_cancel_deferred,
	&rl_validate_vehicle, &rl_transaction_create, &rl_transactions,
	&rl_transaction_status, &rl_transaction_fee, &rl_transaction_data,
	&rl_transaction_cancel, &rl_mcp, &rl_order_validate,
	&rl_concert, &rl_award, &rl_book, &rl_collection,
	&rl_generate, &rl_key_validate,
};

const PsvcLimitRow *const *
psvc_limit_rows(int *n)
{
	*n = lengthof(limit_rows);
	return limit_rows;
}

/* ---------------------------------------------------------------------
 * The operations
 * ---------------------------------------------------------------------
 */

/* docs/sandbox-movies.md: content a movie lacks; docs/sandbox-catalog-todos-generation.md says nothing alike */
static const char *const content_not_available[] = {"content_not_available", NULL};

/* docs/sandbox-orders.md: no order with that id or custom id (the sandbox's code) */
static const char *const order_not_found[] = {"order_not_found", NULL};

/*
 * A movie's content lists: content the movie lacks, and a movie the
 * service does not know (docs/sandbox-movies.md: the sandbox's code),
 * give no rows for that movie, as a table gives none for a key it does
 * not hold; the scan counts them for EXPLAIN ANALYZE (Partner Not Found).
 * The movie functions keep an unknown movie an error (their own rows).
 */
static const char *const movie_list_empty[] = {"content_not_available", "movie_not_found", NULL};

/* the sandbox's codes for an unknown user and unknown nested-list details */
static const char *const user_not_found[] = {"user_not_found", NULL};
static const char *const concert_not_found[] = {"concert_not_found", NULL};
static const char *const award_not_found[] = {"award_not_found", NULL};
static const char *const book_not_found[] = {"book_not_found", NULL};
static const char *const collection_not_found[] = {"collection_not_found", NULL};

/*
 * The nested lists of docs/sandbox-movies.md (paging rule 4): a detail read whose
 * object holds a paginated list; limit and cursor go to the detail URL.
 * The foreign table names where the list is (endpoints.c, items_key).
 */
#define NESTED_DETAIL(opname, r, p1, p2, codes, lim, desc) \
	{.name = opname, .service = PSVC_SVC_MOVIES, .method = "GET", .route = r, \
	 .params = {p1, p2}, .safe = true, .paging = PSVC_PAGING_CURSOR, \
	 .envelope = "data", .empty_codes = codes, .limit = lim, .description = desc, \
	 .cache_ttl_s = TTL_MOVIE_CONTENT}

/*
 * The scheduler's GETs on a job that act (run, stop, pause, activate,
 * clone, sync-token): repeating one is not harmless (a second run, a
 * second clone), so their rows are not safe: the call module retries
 * them like a POST.
 * Clone and sync-token answer {"newJobId": N}.
 */
#define SCHED_ACTION(opname, r, res, desc) \
	{.name = opname, .service = PSVC_SVC_SCHEDULER, .method = "GET", .route = r, \
	 .params = {&p_job_id}, .safe = false, .description = desc, \
	 .arg = PSVC_ARG_PATH, .arg_name = "job_id", .result = res, \
	 .result_member = "newJobId"}

/*
 * Default TTLs of the response cache (cache.c, docs/cache.md), in seconds:
 * movie content (every read of the movies service, the nested lists
 * included) is explanatory text that does not change while it is read;
 * the product catalogue "changes rarely and is meant to be cached"
 * (docs/sandbox-orders.md), as long as the sandbox's Cache-Control says.
 * Operations without one are not cached unless an option asks.
 */
#define TTL_MOVIE_CONTENT	600
#define TTL_PRODUCTS		3600
#define TTL_PRODUCT_STATUS	60

/* The movie's single-object content reads. */
#define MOVIE_CONTENT(opname, r, res, member, desc) \
	{.name = opname, .service = PSVC_SVC_MOVIES, .method = "GET", .route = r, \
	 .params = {&p_movie}, .safe = true, .envelope = "data", \
	 .empty_codes = content_not_available, .description = desc, \
	 .cache_ttl_s = TTL_MOVIE_CONTENT, \
	 .arg = PSVC_ARG_PATH, .arg_name = "movie", .result = res, \
	 .result_member = member}

/* The movie's paginated content lists (foreign tables). */
#define MOVIE_LIST(opname, r, desc) \
	{.name = opname, .service = PSVC_SVC_MOVIES, .method = "GET", .route = r, \
	 .params = {&p_movie}, .safe = true, .paging = PSVC_PAGING_CURSOR, \
	 .envelope = "data", .empty_codes = movie_list_empty, .description = desc, \
	 .cache_ttl_s = TTL_MOVIE_CONTENT}

const PsvcOperation psvc_operations[PSVC_NOPS] = {
	/* docs/sandbox-orders.md: partner orders */
	[PSVC_OP_ORDERS_LIST] = {
		.name = "orders", .service = PSVC_SVC_ORDERS,
		.method = "GET", .route = "/public/orders", .safe = true,
		.paging = PSVC_PAGING_CURSOR, .envelope = "data", .limit = &rl_orders,
		.description = "list of orders with id, email and created date",
	},
	[PSVC_OP_ORDER_GET] = {
		.name = "order_detail", .service = PSVC_SVC_ORDERS,
		.method = "GET", .route = "/public/orders/{id}", .params = {&p_order_id},
		.safe = true, .envelope = "data", .limit = &rl_order,
		.description = "one order, by its id or custom id",
		.arg = PSVC_ARG_PATH, .arg_name = "id", .result = PSVC_RESULT_JSONB,
	},
	/*
	 * The same read, for finding out whether a create whose answer was lost
	 * made its orders (functions_settle.c): there an unknown custom id is
	 * an answer, "no such order", not an error as for order_detail().
	 */
	[PSVC_OP_ORDER_LOOKUP] = {
		.name = "order_lookup", .service = PSVC_SVC_ORDERS,
		.method = "GET", .route = "/public/orders/{id}", .params = {&p_order_id},
		.safe = true, .envelope = "data", .empty_codes = order_not_found,
		.limit = &rl_order,
		.description = "one order by its custom id, none when unknown",
	},
	[PSVC_OP_ORDER_STATUS] = {
		.name = "order_status", .service = PSVC_SVC_ORDERS,
		.method = "GET", .route = "/public/orders/{id}/status", .params = {&p_order_id},
		.safe = true, .envelope = "data", .limit = &rl_order_status,
		.description = "the status of one order",
		.arg = PSVC_ARG_PATH, .arg_name = "id",
		.result = PSVC_RESULT_TEXT, .result_member = "status",
	},
	[PSVC_OP_ORDER_CREATE] = {
		.name = "create_order", .service = PSVC_SVC_ORDERS,
		.method = "POST", .route = "/public/orders", .safe = false,
		.envelope = "data", .limit = &rl_order_create,
		.description = "creates an order; answers its transaction",
		.arg = PSVC_ARG_BODY, .arg_name = "payload", .result = PSVC_RESULT_JSONB,
	},
	[PSVC_OP_ORDER_VALIDATE] = {
		.name = "validate_order", .service = PSVC_SVC_ORDERS,
		.method = "POST", .route = "/public/orders/validate", .safe = true,
		.envelope = "data", .limit = &rl_order_validate,
		.description = "checks an order payload; stores nothing",
		.arg = PSVC_ARG_BODY, .arg_name = "payload", .result = PSVC_RESULT_JSONB,
		.refusal = PSVC_REFUSAL_PAYLOAD,
	},
	[PSVC_OP_ORDER_CANCEL_PENDING] = {
		.name = "cancel_pending", .service = PSVC_SVC_ORDERS,
		.method = "POST", .route = "/public/orders/{id}/cancel-pending",
		.params = {&p_order_id}, .safe = false, .envelope = "data",
		.limit = &rl_cancel_pending,
		.description = "cancels a PENDING order",
		.arg = PSVC_ARG_PATH, .arg_name = "id", .result = PSVC_RESULT_JSONB,
	},
	[PSVC_OP_ORDER_CANCEL_DEFERRED] = {
		.name = "cancel_deferred", .service = PSVC_SVC_ORDERS,
		.method = "POST", .route = "/public/orders/{id}/cancel-deferred",
		.params = {&p_order_id}, .safe = false, .envelope = "data",
		.limit = &rl_cancel_deferred,
		.description = "cancels a DEFERRED order",
		.arg = PSVC_ARG_PATH, .arg_name = "id", .result = PSVC_RESULT_JSONB,
	},

	/*
	 * docs/sandbox-orders.md, the other routes of its rate-limit table (shapes: the
	 * sandbox's, docs/sandbox-orders.md)
	 */
	[PSVC_OP_PRODUCTS_LIST] = {
		.name = "products", .service = PSVC_SVC_ORDERS,
		.method = "GET", .route = "/public/products", .safe = true,
		.envelope = "data", .limit = &rl_products, .cache_ttl_s = TTL_PRODUCTS,
		.description = "vignette products: countries, periods and prices",
	},
	[PSVC_OP_PRODUCT_STATUS_LIST] = {
		.name = "product_status", .service = PSVC_SVC_ORDERS,
		.method = "GET", .route = "/public/products/status", .safe = true,
		.envelope = "data", .limit = &rl_products_status,
		.cache_ttl_s = TTL_PRODUCT_STATUS,
		.description = "availability of each product",
	},
	[PSVC_OP_USERS_LIST] = {
		.name = "users", .service = PSVC_SVC_ORDERS,
		.method = "GET", .route = "/public/users", .safe = true,
		.paging = PSVC_PAGING_CURSOR, .envelope = "data", .limit = &rl_users,
		.description = "users of the partner's orders",
	},
	[PSVC_OP_USER_ORDERS_LIST] = {
		.name = "user_orders", .service = PSVC_SVC_ORDERS,
		.method = "GET", .route = "/public/users/{id}/orders", .params = {&p_user_id},
		.safe = true, .paging = PSVC_PAGING_CURSOR, .envelope = "data",
		.empty_codes = user_not_found, .limit = &rl_user_orders,
		.description = "orders of a user",
	},
	[PSVC_OP_USER_VEHICLES_LIST] = {
		.name = "user_vehicles", .service = PSVC_SVC_ORDERS,
		.method = "GET", .route = "/public/users/{id}/vehicles", .params = {&p_user_id},
		.safe = true, .envelope = "data",
		.empty_codes = user_not_found, .limit = &rl_user_vehicles,
		.description = "vehicles of a user",
	},
	[PSVC_OP_VALIDATE_VEHICLE] = {
		.name = "validate_vehicle", .service = PSVC_SVC_ORDERS,
		.method = "POST", .route = "/public/validate-vehicle", .safe = true,
		.envelope = "data", .limit = &rl_validate_vehicle,
		.description = "checks a vehicle; stores nothing",
		.arg = PSVC_ARG_BODY_OBJECT, .arg_name = "vehicle",
		.arg_hint = "Pass the vehicle as '{\"plate\": \"LJ AB-123\", \"country\": \"SI\"}'.",
		.result = PSVC_RESULT_JSONB, .refusal = PSVC_REFUSAL_PAYLOAD,
	},
	[PSVC_OP_TRANSACTION_CREATE] = {
		.name = "create_transaction", .service = PSVC_SVC_ORDERS,
		.method = "POST", .route = "/public/transaction/create", .safe = false,
		.envelope = "data", .limit = &rl_transaction_create,
		.description = "creates orders paid through the service's checkout; answers their transaction",
		.arg = PSVC_ARG_BODY, .arg_name = "payload", .result = PSVC_RESULT_JSONB,
	},
	[PSVC_OP_TRANSACTIONS_LIST] = {
		.name = "transactions", .service = PSVC_SVC_ORDERS,
		.method = "GET", .route = "/public/transactions", .safe = true,
		.paging = PSVC_PAGING_CURSOR, .envelope = "data", .limit = &rl_transactions,
		.description = "the partner's transactions",
	},
	[PSVC_OP_TRANSACTION_STATUS] = {
		.name = "transaction_status", .service = PSVC_SVC_ORDERS,
		.method = "GET", .route = "/public/transaction/{unique_id}/status",
		.params = {&p_tx_unique_id}, .safe = true, .envelope = "data",
		.limit = &rl_transaction_status,
		.description = "the checkout status of a transaction",
		.arg = PSVC_ARG_PATH, .arg_name = "id",
		.result = PSVC_RESULT_TEXT, .result_member = "status",
	},
	[PSVC_OP_TRANSACTION_FEE] = {
		.name = "transaction_fee", .service = PSVC_SVC_ORDERS,
		.method = "GET", .route = "/public/transaction/{unique_id}/fee",
		.params = {&p_tx_unique_id}, .safe = true, .envelope = "data",
		.limit = &rl_transaction_fee,
		.description = "amount, fee and total of a transaction",
		.arg = PSVC_ARG_PATH, .arg_name = "id", .result = PSVC_RESULT_JSONB,
	},
	[PSVC_OP_TRANSACTION_DATA] = {
		.name = "transaction_data", .service = PSVC_SVC_ORDERS,
		.method = "GET", .route = "/public/transaction/{id}/data",
		.params = {&p_tx_id}, .safe = true, .envelope = "data",
		.limit = &rl_transaction_data,
		.description = "one transaction",
		.arg = PSVC_ARG_PATH, .arg_name = "id", .result = PSVC_RESULT_JSONB,
	},
	[PSVC_OP_TRANSACTION_CANCEL] = {
		.name = "cancel_transaction", .service = PSVC_SVC_ORDERS,
		.method = "POST", .route = "/public/transaction/{id}/cancel",
		.params = {&p_tx_id}, .safe = false, .envelope = "data",
		.limit = &rl_transaction_cancel,
		.description = "cancels an open checkout",
		.arg = PSVC_ARG_PATH, .arg_name = "id", .result = PSVC_RESULT_JSONB,
	},
	[PSVC_OP_MCP] = {
		.name = "mcp", .service = PSVC_SVC_ORDERS,
		.method = "POST", .route = "/public/mcp", .safe = false,
		.limit = &rl_mcp,
		.description = "one JSON-RPC 2.0 call to the MCP endpoint; answers JSON-RPC",
		.arg = PSVC_ARG_BODY_OBJECT, .arg_name = "request",
		.arg_hint = "Pass a JSON-RPC 2.0 request, e.g. '{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"tools/list\"}'.",
		.result = PSVC_RESULT_JSONB,
	},
	/*
	 * The same route for the JSON-RPC methods that only read (initialize,
	 * tools/list, ping): repeating one changes nothing, so it is retried
	 * like a GET (mcp(), functions_transactions.c, picks the row).
	 */
	[PSVC_OP_MCP_READ] = {
		.name = "mcp_read", .service = PSVC_SVC_ORDERS,
		.method = "POST", .route = "/public/mcp", .safe = true,
		.limit = &rl_mcp,
		.description = "one JSON-RPC 2.0 call that only reads; answers JSON-RPC",
	},

	/* docs/sandbox-movies.md: movie content */
	[PSVC_OP_MOVIES_LIST] = {
		.name = "movies", .service = PSVC_SVC_MOVIES,
		.method = "GET", .route = "/movies", .safe = true,
		.paging = PSVC_PAGING_CURSOR, .envelope = "data",
		.description = "movie search", .cache_ttl_s = TTL_MOVIE_CONTENT,
	},
	[PSVC_OP_MOVIE_GET] = {
		.name = "movie_detail", .service = PSVC_SVC_MOVIES,
		.method = "GET", .route = "/v1/movies/{movie}", .params = {&p_movie},
		.safe = true, .envelope = "data", .cache_ttl_s = TTL_MOVIE_CONTENT,
		.description = "one movie, with the content it has (available_content)",
		.arg = PSVC_ARG_PATH, .arg_name = "movie", .result = PSVC_RESULT_JSONB,
	},
	[PSVC_OP_MOVIE_SUMMARY] = MOVIE_CONTENT("movie_summary",
											"/v1/movies/{movie}/content/summary",
											PSVC_RESULT_TEXT, "markdown",
											"plot summary of a movie (Markdown, with spoilers)"),
	[PSVC_OP_MOVIE_SPOILER_FREE_SUMMARY] = MOVIE_CONTENT("movie_spoiler_free_summary",
														 "/v1/movies/{movie}/content/spoiler-free-summary",
														 PSVC_RESULT_TEXT, "markdown",
														 "premise of a movie without spoilers (Markdown)"),
	[PSVC_OP_MOVIE_ENDING] = MOVIE_CONTENT("movie_ending",
										   "/v1/movies/{movie}/content/ending",
										   PSVC_RESULT_TEXT, "markdown",
										   "ending explained (Markdown, major spoilers)"),
	[PSVC_OP_MOVIE_SETTING] = MOVIE_CONTENT("movie_setting",
											"/v1/movies/{movie}/content/setting",
											PSVC_RESULT_JSONB, NULL,
											"place and time of a movie"),
	[PSVC_OP_MOVIE_PROFILE] = MOVIE_CONTENT("movie_profile",
											"/v1/movies/{movie}/content/profile",
											PSVC_RESULT_JSONB, NULL,
											"mood and content profile of a movie"),
	[PSVC_OP_MOVIE_THEMES] = MOVIE_LIST("movie_themes",
										"/v1/movies/{movie}/content/themes",
										"themes of a movie"),
	[PSVC_OP_MOVIE_TIMELINE] = MOVIE_LIST("movie_timeline",
										  "/v1/movies/{movie}/content/timeline",
										  "story timeline of a movie"),
	[PSVC_OP_MOVIE_CHARACTERS] = MOVIE_LIST("movie_characters",
											"/v1/movies/{movie}/content/characters",
											"characters of a movie"),
	[PSVC_OP_MOVIE_FAQS] = MOVIE_LIST("movie_faqs",
									  "/v1/movies/{movie}/content/faqs",
									  "questions and answers about a movie"),

	[PSVC_OP_CONCERT_GET] = NESTED_DETAIL("concert", "/concerts/{concert}",
										  &p_concert, NULL, concert_not_found, &rl_concert,
										  "a concert with its events (data.events)"),
	[PSVC_OP_AWARD_GET] = NESTED_DETAIL("award", "/awards/{award}",
										&p_award, NULL, award_not_found, &rl_award,
										"an award with its nominations (data.nominations)"),
	[PSVC_OP_BOOK_GET] = NESTED_DETAIL("book", "/books/{book}",
									   &p_book, NULL, book_not_found, &rl_book,
									   "a book with its adaptations (data.adaptations)"),
	[PSVC_OP_COLLECTION_GET] = NESTED_DETAIL("collection", "/collections/{type}/{collection}",
											 &p_collection_type, &p_collection,
											 collection_not_found, &rl_collection,
											 "a collection with its movies (data.movies)"),

	/* docs/sandbox-catalog-todos-generation.md: the business-question catalog */
	[PSVC_OP_QUESTIONS_LIST] = {
		.name = "business_questions", .service = PSVC_SVC_CATALOG,
		.method = "GET", .route = "/v1/business-questions", .safe = true,
		.envelope = "result",
		.description = "business-question catalog",
	},
	[PSVC_OP_QUESTION_GET] = {
		.name = "business_question", .service = PSVC_SVC_CATALOG,
		.method = "GET", .route = "/v1/business-questions/{questionId}",
		.params = {&p_question_id}, .safe = true,
		.description = "one business question with its acceptance criteria",
		.arg = PSVC_ARG_PATH, .arg_name = "id", .result = PSVC_RESULT_JSONB,
	},
	[PSVC_OP_QUESTION_ANSWER] = {
		.name = "business_question_answer", .service = PSVC_SVC_CATALOG,
		.method = "GET", .route = "/v1/business-questions/{questionId}/answer",
		.params = {&p_question_id}, .safe = true,
		.description = "the answer to a business question, or its blocker",
		.arg = PSVC_ARG_PATH, .arg_name = "id", .result = PSVC_RESULT_JSONB,
	},

	/* docs/sandbox-catalog-todos-generation.md: todos */
	[PSVC_OP_TODOS_LIST] = {
		.name = "todos", .service = PSVC_SVC_TODOS,
		.method = "GET", .route = "/todos", .safe = true,
		.description = "all todo items",
	},
	[PSVC_OP_TODO_CREATE] = {
		.name = "todo_create", .service = PSVC_SVC_TODOS,
		.method = "POST", .route = "/todos", .safe = false,
		.description = "creates a todo item",
	},
	[PSVC_OP_TODO_UPDATE] = {
		.name = "todo_update", .service = PSVC_SVC_TODOS,
		.method = "PUT", .route = "/todos/{id}", .params = {&p_todo_id},
		.safe = false,
		.description = "changes a todo item",
	},
	[PSVC_OP_TODO_DELETE] = {
		.name = "todo_delete", .service = PSVC_SVC_TODOS,
		.method = "DELETE", .route = "/todos/{id}", .params = {&p_todo_id},
		.safe = false,
		.description = "deletes a todo item",
	},

	/* docs/sandbox-catalog-todos-generation.md: generation and key validation */
	[PSVC_OP_GENERATE] = {
		.name = "generate", .service = PSVC_SVC_GENERATION,
		.method = "POST", .route = "/v1/generate", .safe = false,
		.limit = &rl_generate,
		.description = "generates threads",
		.arg = PSVC_ARG_BODY, .arg_name = "request", .result = PSVC_RESULT_JSONB,
	},
	[PSVC_OP_KEY_VALIDATE] = {
		.name = "validate_key", .service = PSVC_SVC_GENERATION,
		.method = "GET", .route = "/v1/key/validate", .safe = true,
		.limit = &rl_key_validate,
		.description = "validates the caller's API key",
		.arg = PSVC_ARG_NONE, .result = PSVC_RESULT_JSONB,
		.refusal = PSVC_REFUSAL_KEY,
	},

	/* docs/sandbox-files-scheduler.md: files and uploads */
	[PSVC_OP_UPLOAD_CREATE] = {
		.name = "create_upload", .service = PSVC_SVC_FILES,
		.method = "POST", .route = "/uploads", .safe = false,
		.description = "creates an empty file for a chunked upload",
		.arg = PSVC_ARG_BODY_MEMBER, .arg_name = "file name",
		.body_member = "filename", .result = PSVC_RESULT_JSONB,
	},
	[PSVC_OP_UPLOAD_APPEND] = {
		.name = "append_upload", .service = PSVC_SVC_FILES,
		.method = "PUT", .route = "/uploads/{file_id}", .params = {&p_file_id},
		.safe = false,
		.description = "appends one Base64 chunk to an upload (not idempotent)",
	},
	[PSVC_OP_FILE_GET] = {
		.name = "file_info", .service = PSVC_SVC_FILES,
		.method = "GET", .route = "/files/{file_id}", .params = {&p_file_id},
		.safe = true,
		.description = "the FileInfo of a file",
		.arg = PSVC_ARG_PATH, .arg_name = "file_id", .result = PSVC_RESULT_JSONB,
	},

	/* docs/sandbox-files-scheduler.md: the job scheduler */
	[PSVC_OP_JOBS_LIST] = {
		.name = "user_jobs", .service = PSVC_SVC_SCHEDULER,
		.method = "GET", .route = "/api/user-jobs", .safe = true,
		.description = "scheduled jobs",
	},
	[PSVC_OP_JOB_GET] = {
		.name = "user_job", .service = PSVC_SVC_SCHEDULER,
		.method = "GET", .route = "/api/user-jobs/{id}", .params = {&p_sched_id},
		.safe = true,
		.description = "one scheduled job",
	},
	[PSVC_OP_JOB_SAVE] = {
		.name = "save_job", .service = PSVC_SVC_SCHEDULER,
		.method = "PUT", .route = "/api/user-jobs", .safe = false,
		.description = "creates or replaces a job (deprecated by the service)",
		.arg = PSVC_ARG_BODY_OBJECT, .arg_name = "job",
		.arg_hint = "Pass the UserJob fields, e.g. '{\"name\": ..., \"isActive\": true, \"timeZone\": \"UTC\", \"jobCronExpression\": \"0 0 6 * * *\"}'.",
		.result = PSVC_RESULT_JSONB,
	},
	[PSVC_OP_JOB_DELETE] = {
		.name = "delete_job", .service = PSVC_SVC_SCHEDULER,
		.method = "DELETE", .route = "/api/user-jobs/{id}", .params = {&p_sched_id},
		.safe = false,
		.description = "deletes a job and all its configurations",
		.arg = PSVC_ARG_PATH, .arg_name = "job_id", .result = PSVC_RESULT_VOID,
	},
	[PSVC_OP_JOB_RUN] = SCHED_ACTION("run_job", "/api/user-jobs/run/{jobId}",
									 PSVC_RESULT_JSONB,
									 "starts an execution of a job now"),
	[PSVC_OP_JOB_STOP] = SCHED_ACTION("stop_job", "/api/user-jobs/stop/{jobId}",
									  PSVC_RESULT_VOID,
									  "stops the running executions of a job"),
	[PSVC_OP_JOB_PAUSE] = SCHED_ACTION("pause_job", "/api/user-jobs/pause/{jobId}",
									   PSVC_RESULT_VOID,
									   "stops a job from running on its schedule"),
	[PSVC_OP_JOB_ACTIVATE] = SCHED_ACTION("activate_job", "/api/user-jobs/activate/{jobId}",
										  PSVC_RESULT_VOID,
										  "resumes the schedule of a paused job"),
	[PSVC_OP_JOB_CLONE] = SCHED_ACTION("clone_job", "/api/user-jobs/clone/{jobId}",
									   PSVC_RESULT_INT64,
									   "copies a job under a new id"),
	[PSVC_OP_JOB_SYNC_TOKEN] = SCHED_ACTION("sync_job_token", "/api/user-jobs/sync-token/{jobId}",
											PSVC_RESULT_INT64,
											"copies a job's token to the user's other jobs"),
	[PSVC_OP_JOB_EXECUTIONS] = {
		.name = "job_execution_summary", .service = PSVC_SVC_SCHEDULER,
		.method = "GET", .route = "/api/user-jobs/user-job-executions/{jobId}",
		.params = {&p_job_id}, .safe = true,
		.description = "summary of the last 15 executions of a job",
		.arg = PSVC_ARG_PATH, .arg_name = "job_id", .result = PSVC_RESULT_JSONB,
	},
	[PSVC_OP_EXECUTION_EMAIL] = {
		.name = "send_execution_email", .service = PSVC_SVC_SCHEDULER,
		.method = "GET", .route = "/api/email/jobExecution/{id}", .params = {&p_sched_id},
		.safe = false,
		.description = "sends the email of a job execution",
		.arg = PSVC_ARG_PATH, .arg_name = "execution_id", .result = PSVC_RESULT_VOID,
	},
	[PSVC_OP_NOTIFICATIONS_LIST] = {
		.name = "notifications", .service = PSVC_SVC_SCHEDULER,
		.method = "GET", .route = "/api/notifications", .safe = true,
		.description = "notification addresses",
	},
	[PSVC_OP_NOTIFICATION_ADD] = {
		.name = "notification_add", .service = PSVC_SVC_SCHEDULER,
		.method = "POST", .route = "/api/notifications", .safe = false,
		.description = "adds a notification address",
	},
};

const PsvcParamDef *
psvc_op_param(const PsvcOperation *op, const char *name, size_t namelen)
{
	for (int i = 0; i < PSVC_MAX_PATH_PARAMS && op->params[i]; i++)
	{
		const PsvcParamDef *p = op->params[i];

		if (strlen(p->name) == namelen && strncmp(p->name, name, namelen) == 0)
			return p;
	}
	return NULL;
}

bool
psvc_op_empty_code(const PsvcOperation *op, const char *code)
{
	if (op->empty_codes == NULL || code == NULL)
		return false;
	for (const char *const *c = op->empty_codes; *c; c++)
		if (strcmp(*c, code) == 0)
			return true;
	return false;
}

/* ---------------------------------------------------------------------
 * Routes named by a caller (partner_svc.request(), functions_request.c):
 * which row of the catalogue a method and a concrete path are, and the
 * row of a route the catalogue lacks.
 * ---------------------------------------------------------------------
 */

bool
psvc_route_match(const char *template, int len, const char *const *segs,
				 int nseg, int first, const char **names, int *namelens,
				 const char **values, int *nparams)
{
	const char *t = template;
	const char *end = template + len;
	int			seg = first;

	*nparams = 0;
	while (t < end)
	{
		const char *slash;
		int			slen;

		if (*t != '/' || seg >= nseg)
			return false;
		t++;
		slash = memchr(t, '/', end - t);
		slen = (slash ? slash : end) - t;
		if (slen >= 3 && t[0] == '{' && t[slen - 1] == '}')
		{
			if (*nparams == PSVC_MAX_PATH_PARAMS)
				return false;
			names[*nparams] = t + 1;
			namelens[*nparams] = slen - 2;
			values[*nparams] = segs[seg];
			(*nparams)++;
		}
		else if ((int) strlen(segs[seg]) != slen || strncmp(segs[seg], t, slen) != 0)
			return false;
		t += slen;
		seg++;
	}
	return seg == nseg;
}

const PsvcOperation *
psvc_op_for_path(PsvcServiceId service, const char *method,
				 const char *const *segs, int nseg, const char **values)
{
	const PsvcOperation *found = NULL;

	for (int i = 0; i < PSVC_NOPS; i++)
	{
		const PsvcOperation *op = &psvc_operations[i];
		const char *names[PSVC_MAX_PATH_PARAMS];
		int			namelens[PSVC_MAX_PATH_PARAMS];
		const char *vals[PSVC_MAX_PATH_PARAMS];
		int			n;

		if (op->service != service || strcmp(op->method, method) != 0 ||
			!psvc_route_match(op->route, strlen(op->route), segs, nseg, 0,
							  names, namelens, vals, &n))
			continue;
		/* of two rows of one route, the one not safe to repeat */
		if (found != NULL && !(found->safe && !op->safe))
			continue;
		found = op;
		/* values in the order of op->params, which a call expects */
		for (int j = 0; j < PSVC_MAX_PATH_PARAMS; j++)
			values[j] = NULL;
		for (int k = 0; k < n; k++)
			for (int j = 0; j < PSVC_MAX_PATH_PARAMS && op->params[j]; j++)
				if ((int) strlen(op->params[j]->name) == namelens[k] &&
					strncmp(op->params[j]->name, names[k], namelens[k]) == 0)
					values[j] = vals[k];
	}
	return found;
}

void
psvc_op_init_custom(PsvcOperation *op, PsvcServiceId service,
					const char *method, const char *route)
{
	memset(op, 0, sizeof(*op));
	op->name = "request";
	op->service = service;
	op->method = method;
	op->route = route;
	/* the methods HTTP defines as safe; a write is sent once */
	op->safe = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
	op->paging = PSVC_PAGING_NONE;
	op->description = "partner_svc.request()";
	op->arg = PSVC_ARG_NONE;
	op->result = PSVC_RESULT_JSONB;
}
