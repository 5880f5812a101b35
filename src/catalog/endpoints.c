/*-------------------------------------------------------------------------
 *
 * endpoints.c
 *		  The endpoint catalogue: every list endpoint of the partner
 *		  documents as a row of data that one generic planner and scan
 *		  engine read.
 *
 * A row names the operations of catalog.c a table reads and writes: the
 * list read (route, paging and envelope are the operation's), the read of
 * one object by key (the detail operation), and for a writable table the
 * operations its INSERT, UPDATE and DELETE become (PsvcModifyDef, read by
 * fdw_modify.c).  The row itself says how JSON maps to columns.  A column
 * is a member of the item, the whole item ("raw"), or a path parameter of
 * the list's route; a member column may name the query parameter that
 * filters on it, which is how equality on it is pushed down.  Adding a
 * table is adding its operations to catalog.c and a row here.
 *
 * Field names follow the documents; where they are "not shown", the
 * sandbox's documented choices (docs/sandbox-*.md).  Column names are the
 * snake_case form of the field names.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/catalog/endpoints.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog.h"

#define COLS(a) .ncolumns = lengthof(a), .columns = a
#define RAW {"raw", "jsonb", PSVC_COL_RAW, NULL, NULL, false}
#define MOVIE_KEY {"movie", "text", PSVC_COL_PATH, NULL, "movie", true}

/*
 * The status filter of the order list (spec 000: PENDING, WILL BE ACTIVE,
 * ACTIVE, EXPIRED, REFUNDED, DELETED) as the column values it selects: the
 * service lists DEFERRED orders for WILL BE ACTIVE (docs/sandbox-orders.md).
 * So "status = 'DEFERRED'" is sent as WILL BE ACTIVE, and a value no
 * filter selects exactly (CREATED, or 'WILL BE ACTIVE', which no order has
 * as its status) is not sent: the list is read whole and the status
 * checked locally.  Every row is rechecked in any case.
 */
static const PsvcFilterValue order_status_filter[] = {
	{"PENDING", "PENDING"},
	{"DEFERRED", "WILL BE ACTIVE"},
	{"ACTIVE", "ACTIVE"},
	{"EXPIRED", "EXPIRED"},
	{"REFUNDED", "REFUNDED"},
	{"DELETED", "DELETED"},
	{NULL, NULL}
};

/*
 * Filters whose values are a documented enum of the member they filter on,
 * sent as they are: every value the column can hold (filter_closed), so an
 * equality with another value, in any other case too, matches no row and
 * is not sent (the service answers it with a 400).  FAQ sections: document
 * 001's "section (enum summary, ending, info: ...)", read as the sandbox
 * does (docs/sandbox-movies.md, "FAQ sections"); personas and
 * answerability values: docs/sandbox-catalog-todos-generation.md, "Resources".
 */
static const PsvcFilterValue faq_section_filter[] = {
	{"summary"}, {"ending"}, {"info"}, {NULL}
};

static const PsvcFilterValue persona_filter[] = {
	{"geschaeftsfuehrung"}, {"einkauf"}, {"kalkulation"}, {"hr"}, {NULL}
};

static const PsvcFilterValue answerability_filter[] = {
	{"available_snapshot"},
	{"available_limited_scope"},
	{"partial_evidence"},
	{"available_with_owner_prioritization"},
	{"source_required"},
	{"source_and_semantics_required"},
	{"source_and_owner_required"},
	{NULL}
};

/* "Any {id} accepts the service order id or the partner custom_id" (000). */
static const PsvcColumnDef orders_cols[] = {
	{"id", "text", PSVC_COL_FIELD, "id", NULL, false},
	{"custom_id", "text", PSVC_COL_FIELD, "custom_id", NULL, false, .detail_key = true},
	{"email", "text", PSVC_COL_FIELD, "email", NULL, false},
	{"created_date", "numeric", PSVC_COL_FIELD, "created_date", NULL, false},
	{"status", "text", PSVC_COL_FIELD, "status", "status", false,
	.filter_values = order_status_filter},
	{"provider_id", "text", PSVC_COL_FIELD, "provider_id", NULL, false},
	{"cars", "jsonb", PSVC_COL_FIELD, "cars", NULL, false},
	RAW
};

static const PsvcColumnDef movies_cols[] = {
	{"id", "bigint", PSVC_COL_FIELD, "id", NULL, false},
	{"slug", "text", PSVC_COL_FIELD, "slug", NULL, false},
	{"title", "text", PSVC_COL_FIELD, "title", NULL, false},
	{"year", "integer", PSVC_COL_FIELD, "year", NULL, false},
	{"release_date", "date", PSVC_COL_FIELD, "release_date", NULL, false},
	/* matched case-insensitively against genres (docs/sandbox-movies.md) */
	{"genre", "text", PSVC_COL_FIELD, NULL, "genre", false, .echo_if_in = "genres"},
	{"genres", "jsonb", PSVC_COL_FIELD, "genres", NULL, false},
	{"runtime_minutes", "integer", PSVC_COL_FIELD, "runtime_minutes", NULL, false},
	{"original_language", "text", PSVC_COL_FIELD, "original_language", NULL, false},
	{"poster_url", "text", PSVC_COL_FIELD, "poster_url", NULL, false},
	{"available_content", "jsonb", PSVC_COL_FIELD, "available_content", NULL, false},
	RAW
};

static const PsvcColumnDef themes_cols[] = {
	MOVIE_KEY,
	{"position", "integer", PSVC_COL_FIELD, "position", NULL, false},
	{"title", "text", PSVC_COL_FIELD, "title", NULL, false},
	{"emoji", "text", PSVC_COL_FIELD, "emoji", NULL, false},
	{"explanation", "text", PSVC_COL_FIELD, "explanation", NULL, false},
	RAW
};

static const PsvcColumnDef timeline_cols[] = {
	MOVIE_KEY,
	{"position", "integer", PSVC_COL_FIELD, "position", NULL, false},
	{"title", "text", PSVC_COL_FIELD, "title", NULL, false},
	{"explanation", "text", PSVC_COL_FIELD, "explanation", NULL, false},
	{"location", "text", PSVC_COL_FIELD, "location", NULL, false},
	{"time_reference", "text", PSVC_COL_FIELD, "time_reference", NULL, false},
	RAW
};

static const PsvcColumnDef characters_cols[] = {
	MOVIE_KEY,
	{"position", "integer", PSVC_COL_FIELD, "position", NULL, false},
	{"name", "text", PSVC_COL_FIELD, "name", NULL, false},
	{"description", "text", PSVC_COL_FIELD, "description", NULL, false},
	{"tags", "jsonb", PSVC_COL_FIELD, "tags", NULL, false},
	{"person_id", "bigint", PSVC_COL_FIELD, "person_id", NULL, false},
	RAW
};

static const PsvcColumnDef faqs_cols[] = {
	MOVIE_KEY,
	{"position", "integer", PSVC_COL_FIELD, "position", NULL, false},
	{"section", "text", PSVC_COL_FIELD, "section", "section", false,
	.filter_values = faq_section_filter, .filter_closed = true},
	{"question", "text", PSVC_COL_FIELD, "question", NULL, false},
	{"answer", "text", PSVC_COL_FIELD, "answer", NULL, false},
	{"foreshadowing_note", "text", PSVC_COL_FIELD, "foreshadowing_note", NULL, false},
	RAW
};

static const PsvcColumnDef questions_cols[] = {
	{"id", "text", PSVC_COL_FIELD, "id", NULL, false},
	{"persona", "text", PSVC_COL_FIELD, "persona", "persona", false,
	.filter_values = persona_filter, .filter_closed = true},
	{"question", "text", PSVC_COL_FIELD, "question", NULL, false},
	{"answerability", "text", PSVC_COL_FIELD, "answerability", "answerability", false,
	.filter_values = answerability_filter, .filter_closed = true},
	{"answer_class", "text", PSVC_COL_FIELD, "answer_class", NULL, false},
	{"product_key", "text", PSVC_COL_FIELD, "product_key", NULL, false},
	{"product_route", "text", PSVC_COL_FIELD, "product_route", NULL, false},
	RAW
};

static const PsvcColumnDef todos_cols[] = {
	{"id", "bigint", PSVC_COL_FIELD, "id", NULL, false},
	{"title", "text", PSVC_COL_FIELD, "title", NULL, false},
	{"completed", "boolean", PSVC_COL_FIELD, "completed", NULL, false},
	{"user_id", "bigint", PSVC_COL_FIELD, "userId", NULL, false},
	RAW
};

static const PsvcColumnDef user_jobs_cols[] = {
	{"id", "bigint", PSVC_COL_FIELD, "id", NULL, false},
	{"name", "text", PSVC_COL_FIELD, "name", NULL, false},
	{"is_active", "boolean", PSVC_COL_FIELD, "isActive", NULL, false},
	{"time_zone", "text", PSVC_COL_FIELD, "timeZone", NULL, false},
	{"job_cron_expression", "text", PSVC_COL_FIELD, "jobCronExpression", NULL, false},
	{"status", "text", PSVC_COL_FIELD, "status", NULL, false},
	{"last_run", "timestamptz", PSVC_COL_FIELD, "lastRun", NULL, false},
	{"next_run", "timestamptz", PSVC_COL_FIELD, "nextRun", NULL, false},
	{"user_job_start_time", "timestamptz", PSVC_COL_FIELD, "userJobStartTime", NULL, false},
	{"job_duration", "bigint", PSVC_COL_FIELD, "jobDuration", NULL, false},
	{"job_run_frequency", "text", PSVC_COL_FIELD, "jobRunFrequency", NULL, false},
	{"user_id", "bigint", PSVC_COL_FIELD, "userId", NULL, false},
	{"job_status_details", "text", PSVC_COL_FIELD, "jobStatusDetails", NULL, false},
	{"job_error_details", "text", PSVC_COL_FIELD, "jobErrorDetails", NULL, false},
	RAW
};

static const PsvcColumnDef executions_cols[] = {
	{"job_id", "bigint", PSVC_COL_PATH, NULL, "jobId", true},
	{"id", "bigint", PSVC_COL_FIELD, "id", NULL, false},
	{"status", "text", PSVC_COL_FIELD, "status", NULL, false},
	{"start_time", "timestamptz", PSVC_COL_FIELD, "startTime", NULL, false},
	{"end_time", "timestamptz", PSVC_COL_FIELD, "endTime", NULL, false},
	{"duration", "bigint", PSVC_COL_FIELD, "duration", NULL, false},
	{"error_message", "text", PSVC_COL_FIELD, "errorMessage", NULL, false},
	RAW
};

/*
 * The other routes of the orders service's rate-limit table (docs/sandbox-orders.md).  Their shapes are
 * "not shown"; these follow the sandbox (docs/sandbox-orders.md, "Other
 * partner routes of the rate-limit table").  Every answer is the orders
 * envelope {"error", "data"}; the paged lists add "pagination".
 */
static const PsvcColumnDef products_cols[] = {
	{"id", "text", PSVC_COL_FIELD, "id", NULL, false},
	{"country", "text", PSVC_COL_FIELD, "country", NULL, false},
	{"name", "text", PSVC_COL_FIELD, "name", NULL, false},
	{"periods", "jsonb", PSVC_COL_FIELD, "periods", NULL, false},
	{"prices", "jsonb", PSVC_COL_FIELD, "prices", NULL, false},
	{"currency", "text", PSVC_COL_FIELD, "currency", NULL, false},
	RAW
};

static const PsvcColumnDef product_status_cols[] = {
	{"id", "text", PSVC_COL_FIELD, "id", NULL, false},
	{"status", "text", PSVC_COL_FIELD, "status", NULL, false},
	RAW
};

static const PsvcColumnDef users_cols[] = {
	{"id", "text", PSVC_COL_FIELD, "id", NULL, false},
	{"email", "text", PSVC_COL_FIELD, "email", NULL, false},
	{"orders", "integer", PSVC_COL_FIELD, "orders", NULL, false},
	{"created_date", "numeric", PSVC_COL_FIELD, "created_date", NULL, false},
	RAW
};

/* user_id is the route's {id}: a user id of GET /public/users */
#define USER_KEY {"user_id", "text", PSVC_COL_PATH, NULL, "id", true}

static const PsvcColumnDef user_orders_cols[] = {
	USER_KEY,
	{"id", "text", PSVC_COL_FIELD, "id", NULL, false},
	{"custom_id", "text", PSVC_COL_FIELD, "custom_id", NULL, false},
	{"email", "text", PSVC_COL_FIELD, "email", NULL, false},
	{"created_date", "numeric", PSVC_COL_FIELD, "created_date", NULL, false},
	{"status", "text", PSVC_COL_FIELD, "status", NULL, false},
	RAW
};

static const PsvcColumnDef user_vehicles_cols[] = {
	USER_KEY,
	{"id", "text", PSVC_COL_FIELD, "id", NULL, false},
	{"plate", "text", PSVC_COL_FIELD, "plate", NULL, false},
	{"country", "text", PSVC_COL_FIELD, "country", NULL, false},
	RAW
};

/* the transaction object of the create response, list and detail alike */
static const PsvcColumnDef transactions_cols[] = {
	{"transaction_id", "text", PSVC_COL_FIELD, "transaction_id", NULL, false},
	{"order_has_been_paid", "boolean", PSVC_COL_FIELD, "order_has_been_paid", NULL, false},
	{"checkout_status", "text", PSVC_COL_FIELD, "checkout_status", NULL, false},
	{"payment_link", "text", PSVC_COL_FIELD, "payment_link", NULL, false},
	{"send_payment_link", "text", PSVC_COL_FIELD, "send_payment_link", NULL, false},
	{"allowed_payment_providers", "jsonb", PSVC_COL_FIELD, "allowed_payment_providers", NULL, false},
	{"open_order_details_by_default", "boolean", PSVC_COL_FIELD, "open_order_details_by_default", NULL, false},
	{"orders", "jsonb", PSVC_COL_FIELD, "orders", NULL, false},
	RAW
};

/*
 * The nested lists of docs/sandbox-movies.md (paging rule 4): the list lives inside
 * a detail object, so items_key is a path (data.<list>.data) and the
 * cursor, read from data.<list>.pagination, goes back to the same detail
 * URL.  Fields as the sandbox chose them (docs/sandbox-movies.md, "Nested
 * lists"); a path value is text, as the movie reference is.
 */
static const PsvcColumnDef concert_events_cols[] = {
	{"concert", "text", PSVC_COL_PATH, NULL, "concert", true},
	{"position", "integer", PSVC_COL_FIELD, "position", NULL, false},
	{"id", "text", PSVC_COL_FIELD, "id", NULL, false},
	{"title", "text", PSVC_COL_FIELD, "title", NULL, false},
	{"performer", "text", PSVC_COL_FIELD, "performer", NULL, false},
	{"stage", "text", PSVC_COL_FIELD, "stage", NULL, false},
	{"day", "integer", PSVC_COL_FIELD, "day", NULL, false},
	{"start_time", "text", PSVC_COL_FIELD, "start_time", NULL, false},
	RAW
};

static const PsvcColumnDef award_nominations_cols[] = {
	{"award", "text", PSVC_COL_PATH, NULL, "award", true},
	{"position", "integer", PSVC_COL_FIELD, "position", NULL, false},
	{"id", "text", PSVC_COL_FIELD, "id", NULL, false},
	{"category", "text", PSVC_COL_FIELD, "category", NULL, false},
	{"nominee", "text", PSVC_COL_FIELD, "nominee", NULL, false},
	{"won", "boolean", PSVC_COL_FIELD, "won", NULL, false},
	{"movie", "jsonb", PSVC_COL_FIELD, "movie", NULL, false},
	RAW
};

static const PsvcColumnDef book_adaptations_cols[] = {
	{"book", "text", PSVC_COL_PATH, NULL, "book", true},
	{"position", "integer", PSVC_COL_FIELD, "position", NULL, false},
	{"id", "text", PSVC_COL_FIELD, "id", NULL, false},
	{"title", "text", PSVC_COL_FIELD, "title", NULL, false},
	{"medium", "text", PSVC_COL_FIELD, "medium", NULL, false},
	{"year", "integer", PSVC_COL_FIELD, "year", NULL, false},
	{"movie_id", "bigint", PSVC_COL_FIELD, "movie_id", NULL, false},
	RAW
};

static const PsvcColumnDef collection_movies_cols[] = {
	{"type", "text", PSVC_COL_PATH, NULL, "type", true},
	{"collection", "text", PSVC_COL_PATH, NULL, "collection", true},
	{"position", "integer", PSVC_COL_FIELD, "position", NULL, false},
	{"movie_id", "bigint", PSVC_COL_FIELD, "movie_id", NULL, false},
	{"slug", "text", PSVC_COL_FIELD, "slug", NULL, false},
	{"title", "text", PSVC_COL_FIELD, "title", NULL, false},
	{"year", "integer", PSVC_COL_FIELD, "year", NULL, false},
	RAW
};

static const PsvcColumnDef notifications_cols[] = {
	{"email", "text", PSVC_COL_FIELD, "", NULL, false},
};

/*
 * Writable endpoints.  todos: POST /todos with the row's members, PUT
 * with the members an UPDATE sets (the document's UpdateTodo has every
 * member optional), DELETE by id; each answers the todo (DELETE:
 * nothing).  notifications: POST with the address as a JSON string,
 * checked first; it answers the address.  The requests are the
 * operations of catalog.c.
 */
static const PsvcModifyDef todos_modify = {
	.insert = psvc_op(PSVC_OP_TODO_CREATE),
	.update = psvc_op(PSVC_OP_TODO_UPDATE),
	.delete = psvc_op(PSVC_OP_TODO_DELETE),
	.key_field = "id",
	.body = PSVC_BODY_OBJECT,
};

static const PsvcModifyDef notifications_modify = {
	.insert = psvc_op(PSVC_OP_NOTIFICATION_ADD),
	.body = PSVC_BODY_STRING,
	.check_field = "",
	.check = PSVC_CHECK_EMAIL,
};

static const PsvcEndpoint catalogue[] = {
	{.resource = "orders", .list = psvc_op(PSVC_OP_ORDERS_LIST),
		.detail = psvc_op(PSVC_OP_ORDER_GET), .detail_column = "id",
		.description = "Partner orders",
	COLS(orders_cols)},
	{.resource = "products", .list = psvc_op(PSVC_OP_PRODUCTS_LIST),
		.description = "Vignette products: countries, periods and prices",
	COLS(products_cols)},
	{.resource = "product_status", .list = psvc_op(PSVC_OP_PRODUCT_STATUS_LIST),
		.description = "Availability of each product",
	COLS(product_status_cols)},
	{.resource = "users", .list = psvc_op(PSVC_OP_USERS_LIST),
		.description = "Users of the partner's orders",
	COLS(users_cols)},
	{.resource = "user_orders", .list = psvc_op(PSVC_OP_USER_ORDERS_LIST),
		.description = "Orders of a user",
	COLS(user_orders_cols)},
	{.resource = "user_vehicles", .list = psvc_op(PSVC_OP_USER_VEHICLES_LIST),
		.description = "Vehicles of a user",
	COLS(user_vehicles_cols)},
	{.resource = "transactions", .list = psvc_op(PSVC_OP_TRANSACTIONS_LIST),
		.detail = psvc_op(PSVC_OP_TRANSACTION_DATA), .detail_column = "transaction_id",
		.description = "The partner's transactions",
	COLS(transactions_cols)},
	{.resource = "movies", .list = psvc_op(PSVC_OP_MOVIES_LIST),
		.description = "Movie search",
	COLS(movies_cols)},
	{.resource = "movie_themes", .list = psvc_op(PSVC_OP_MOVIE_THEMES),
		.description = "Themes of a movie",
	COLS(themes_cols)},
	{.resource = "movie_timeline", .list = psvc_op(PSVC_OP_MOVIE_TIMELINE),
		.description = "Story timeline of a movie",
	COLS(timeline_cols)},
	{.resource = "movie_characters", .list = psvc_op(PSVC_OP_MOVIE_CHARACTERS),
		.description = "Characters of a movie",
	COLS(characters_cols)},
	{.resource = "movie_faqs", .list = psvc_op(PSVC_OP_MOVIE_FAQS),
		.description = "Questions and answers about a movie",
	COLS(faqs_cols)},
	/* nested lists: the items are in the detail object's list (data.<list>.data) */
	{.resource = "concert_events", .list = psvc_op(PSVC_OP_CONCERT_GET),
		.items_key = "data.events.data",
		.description = "Events of a concert (the list data.events of the concert)",
	COLS(concert_events_cols)},
	{.resource = "award_nominations", .list = psvc_op(PSVC_OP_AWARD_GET),
		.items_key = "data.nominations.data",
		.description = "Nominations of an award (the list data.nominations of the award)",
	COLS(award_nominations_cols)},
	{.resource = "book_adaptations", .list = psvc_op(PSVC_OP_BOOK_GET),
		.items_key = "data.adaptations.data",
		.description = "Adaptations of a book (the list data.adaptations of the book)",
	COLS(book_adaptations_cols)},
	{.resource = "collection_movies", .list = psvc_op(PSVC_OP_COLLECTION_GET),
		.items_key = "data.movies.data",
		.description = "Movies of a collection (the list data.movies of the collection)",
	COLS(collection_movies_cols)},
	{.resource = "business_questions", .list = psvc_op(PSVC_OP_QUESTIONS_LIST),
		.description = "Business-question catalog",
	COLS(questions_cols)},
	{.resource = "todos", .list = psvc_op(PSVC_OP_TODOS_LIST),
		.description = "Todo items",
	COLS(todos_cols), .modify = &todos_modify},
	{.resource = "user_jobs", .list = psvc_op(PSVC_OP_JOBS_LIST),
		.detail = psvc_op(PSVC_OP_JOB_GET), .detail_column = "id",
		.description = "Scheduled jobs",
	COLS(user_jobs_cols)},
	{.resource = "job_executions", .list = psvc_op(PSVC_OP_JOB_EXECUTIONS),
		.items_key = "executions",
		.description = "The last 15 executions of a job",
	COLS(executions_cols)},
	{.resource = "notifications", .list = psvc_op(PSVC_OP_NOTIFICATIONS_LIST),
		.description = "Notification addresses",
	COLS(notifications_cols), .modify = &notifications_modify},
};

const PsvcEndpoint *
psvc_endpoints(int *n)
{
	*n = lengthof(catalogue);
	return catalogue;
}

const PsvcEndpoint *
psvc_endpoint_find(const char *resource)
{
	for (int i = 0; i < lengthof(catalogue); i++)
		if (strcmp(catalogue[i].resource, resource) == 0)
			return &catalogue[i];
	return NULL;
}

const PsvcColumnDef *
psvc_endpoint_column(const PsvcEndpoint *ep, const char *name)
{
	for (int i = 0; i < ep->ncolumns; i++)
		if (strcmp(ep->columns[i].name, name) == 0)
			return &ep->columns[i];
	return NULL;
}

bool
psvc_endpoint_is_detail_key(const PsvcEndpoint *ep, const PsvcColumnDef *col)
{
	if (ep->detail == NULL || col->kind != PSVC_COL_FIELD)
		return false;
	return col->detail_key ||
		(ep->detail_column != NULL && strcmp(col->name, ep->detail_column) == 0);
}

const char *
psvc_endpoint_filter_param(const PsvcColumnDef *col, const char *value)
{
	if (col->filter_values == NULL)
		return value;
	for (const PsvcFilterValue *f = col->filter_values; f->value; f++)
		if (strcmp(f->value, value) == 0)
			return f->param_value ? f->param_value : f->value;
	return NULL;
}

bool
psvc_endpoint_filter_excludes(const PsvcColumnDef *col, const char *value)
{
	if (!col->filter_closed || col->filter_values == NULL)
		return false;
	for (const PsvcFilterValue *f = col->filter_values; f->value; f++)
		if (strcmp(f->value, value) == 0)
			return false;
	return true;
}
