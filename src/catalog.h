/*-------------------------------------------------------------------------
 *
 * catalog.h
 *		  The endpoint catalogue of partner_svc (endpoints.c): every list
 *		  endpoint of the partner services as a row of data.
 *
 * A row (PsvcEndpoint) gives the resource name of a foreign table, the
 * service and list route, the paging style, the envelope, the detail
 * route, the columns (member, path parameter or raw item; filters) and,
 * for writable tables, how INSERT/UPDATE/DELETE become requests.  The FDW
 * (fdw.h) reads it to plan, scan, modify and import; option validation
 * (options.c) reads it for resource names.  It depends on nothing.
 *
 * Memory: the catalogue is static, constant data; the functions return
 * pointers into it and allocate nothing.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/catalog.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef PSVC_CATALOG_H
#define PSVC_CATALOG_H

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

#endif							/* PSVC_CATALOG_H */
