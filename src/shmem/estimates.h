/*-------------------------------------------------------------------------
 *
 * estimates.h
 *		  Row estimates learned from complete scans (estimates.c): what the
 *		  planner (fdw_plan.c) asks and what the scan (fdw_scan.c) reports.
 *
 * An entry is found by server, list route template and key.  The key of
 * one scan is the text of the values it sent, column by column in name
 * order ("movie='52'", "movie='7', section='plot'", "" for a plain list);
 * the average entry of a route is found by the names of those columns
 * alone ("movie", "movie, section").  psvc_est_key makes both.
 *
 * The module is estimates.c (the shared table, recording, lookups, the
 * policy of psvc_est_rows) and estimates_views.c (the view and the reset
 * function); their shared internals are in estimates_int.h.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/shmem/estimates.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef PSVC_ESTIMATES_H
#define PSVC_ESTIMATES_H

#include "fmgr.h"

/* From _PG_init: the settings, and when preloading, the shared memory. */
struct PsvcSegment;				/* segments.h */
/* The learned estimates in shared memory, loaded from their file. */
extern const struct PsvcSegment psvc_est_segment;

/* Is learning on and the shared table there?  Else nothing is learned. */
extern bool psvc_est_active(void);

/*
 * The key of n pushed columns (names and values as sent), or with values
 * NULL the names alone (an average's key).  Sorted by name, so the order
 * of the WHERE clause does not matter.  Allocates in CurrentMemoryContext.
 */
extern char *psvc_est_key(int n, const char *const *names, const char *const *values);

/*
 * The learned rows of an entry, and from how many scans; false when there
 * is none (or learning is off).  average chooses the average entry, whose
 * key is the column names.
 */
extern bool psvc_est_lookup(Oid serverid, const char *route, const char *key,
							bool average, double *rows, int64 *scans);

/*
 * Records one complete scan of a key: rows kept by it.  Also updates the
 * average entry named by columns, unless columns is "" (a plain list).
 * Does nothing when learning is off; never raises.
 */
extern void psvc_est_record(Oid serverid, const char *route, const char *key,
							const char *columns, int64 rows);

/*
 * One pushed-down column of a planned list scan, as its estimate sees it:
 * the text of a constant value; for col = ANY(constant array) the distinct
 * texts of the elements; neither when the value is known only at run time
 * (a join's, a parameter's).
 */
typedef struct PsvcEstColumn
{
	const char *name;
	const char *value;			/* a constant's text, or NULL */
	bool		is_array;		/* col = ANY(...) */
	char	  **elems;			/* is_array: the distinct texts, or NULL
								 * when the array is known only at run
								 * time */
	int			nelems;
} PsvcEstColumn;

/*
 * The rows a list scan with these pushed columns is expected to keep,
 * before local filters, and in *desc the line EXPLAIN VERBOSE shows about
 * it (docs/estimates.md); dflt when nothing applies.  *learned tells
 * whether the number was learned.  Allocates in CurrentMemoryContext.
 */
extern double psvc_est_rows(Oid serverid, const char *route, int n,
							const PsvcEstColumn *cols, double dflt,
							char **desc, bool *learned);

/* SQL: partner_svc.estimates() and partner_svc.estimates_reset() */
extern Datum psvc_est_entries(PG_FUNCTION_ARGS);
extern Datum psvc_est_reset(PG_FUNCTION_ARGS);

#endif							/* PSVC_ESTIMATES_H */
