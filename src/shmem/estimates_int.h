/*-------------------------------------------------------------------------
 *
 * estimates_int.h
 *		  Internals shared by estimates.c, estimates_views.c and
 *		  estimates_file.c, and by no other file: the layout of the shared
 *		  table of learned estimates, and its file.
 *
 * The public side of the module is estimates.h; the locking rules are in
 * the header of estimates.c.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/shmem/estimates_int.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef PSVC_ESTIMATES_INT_H
#define PSVC_ESTIMATES_INT_H

#include "storage/lwlock.h"
#include "utils/hsearch.h"
#include "utils/timestamp.h"

/* Sizes of the text parts of a key, with their NULs. */
#define PSVC_EST_ROUTE_LEN		128
#define PSVC_EST_KEY_LEN		256
#define PSVC_EST_COLUMNS_LEN	64

/* The hash key of an entry. */
typedef struct PsvcEstKey
{
	Oid			dbid;
	Oid			serverid;
	bool		average;		/* false: one key; true: the average */
	char		route[PSVC_EST_ROUTE_LEN];
	char		key[PSVC_EST_KEY_LEN];	/* the values; of an average, the
										 * column names */
} PsvcEstKey;

typedef struct PsvcEstEntry
{
	PsvcEstKey	key;			/* hash key: first */
	char		columns[PSVC_EST_COLUMNS_LEN];	/* the pushed columns */
	double		rows;			/* running mean */
	int64		scans;
	int64		last_rows;
	TimestampTz last_scan;
} PsvcEstEntry;

typedef struct PsvcEstShared
{
	LWLock	   *lock;			/* the table and all its entries */
} PsvcEstShared;

/* NULL unless preloaded */
extern PsvcEstShared *psvc_est_shared;
extern HTAB *psvc_est_table;

/* in estimates_file.c: the table kept across a clean restart */
extern void psvc_est_file_load(HTAB *table, int max_entries);
extern void psvc_est_file_save(int code, Datum arg);
extern void psvc_est_file_remove(void);

#endif							/* PSVC_ESTIMATES_INT_H */
