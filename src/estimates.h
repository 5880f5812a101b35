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
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/estimates.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef PSVC_ESTIMATES_H
#define PSVC_ESTIMATES_H

#include "fmgr.h"

/* partner_svc.learn_estimates: record complete scans and use what they saw */
extern bool psvc_est_learn;

/* From _PG_init: the settings, and when preloading, the shared memory. */
extern void psvc_est_init(void);

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

/* SQL: partner_svc.estimates() and partner_svc.estimates_reset() */
extern Datum psvc_est_entries(PG_FUNCTION_ARGS);
extern Datum psvc_est_reset(PG_FUNCTION_ARGS);

#endif							/* PSVC_ESTIMATES_H */
