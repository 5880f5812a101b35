/*-------------------------------------------------------------------------
 *
 * fdw_modify_int.h
 *		  Internals shared by fdw_modify.c and fdw_modify_row.c, and by no
 *		  other file.
 *
 * The modification callbacks (fdw_modify.c) keep a PsvcModifyState per
 * table; fdw_modify_row.c turns a row of it into a request body and an
 * answer back into a row.  The FDW's public side is in fdw.h.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/fdw/fdw_modify_int.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef PSVC_FDW_MODIFY_INT_H
#define PSVC_FDW_MODIFY_INT_H

#include "executor/tuptable.h"
#include "fmgr.h"
#include "nodes/nodes.h"
#include "utils/rel.h"

#include "fdw.h"
#include "call.h"

/* A column of the table and how it maps. */
typedef struct ModifyColumn
{
	AttrNumber	attno;
	const char *name;
	const PsvcColumnDef *def;
	Oid			typid;
	char		typcategory;
	FmgrInfo	out;
	FmgrInfo	in;
	Oid			ioparam;
	int32		typmod;
	int			field;			/* index in fields[] of the answer, or -1 */
} ModifyColumn;

typedef struct PsvcModifyState
{
	Relation	rel;
	const PsvcEndpoint *ep;
	const PsvcModifyDef *md;
	struct PsvcServer *server;
	CmdType		op;
	const PsvcOperation *rd;	/* the operation of op (catalog.c) */
	const char *route_param;	/* its one path parameter, or NULL */
	int			ncols;
	ModifyColumn *cols;			/* every column that is not dropped */
	List	   *target_attrs;	/* attnums whose values are sent */
	ModifyColumn *key;			/* the key column, or NULL */
	AttrNumber	key_junk;		/* in the subplan's output, or 0 */
	AttrNumber	wholerow_junk;	/* in the subplan's output, or 0 */
	int			nfields;
	const char **fields;		/* members read from an answer */
	MemoryContext row_cxt;
} PsvcModifyState;

/* ---- fdw_modify_row.c ---- */

/* The column of attno, or NULL. */
extern ModifyColumn *psvc_fdw_modify_column(PsvcModifyState *st, AttrNumber attno);

/* Raises unless the row's value of c may be sent. */
extern void psvc_fdw_modify_check_writable(PsvcModifyState *st, ModifyColumn *c);

/*
 * The body of a request for the row in slot, or NULL when the operation
 * sends none.  CurrentMemoryContext.
 */
extern StringInfo psvc_fdw_modify_body(PsvcModifyState *st, TupleTableSlot *slot);

/* Replaces the row in slot by the service's answer, if it has one. */
extern void psvc_fdw_modify_store_answer(PsvcModifyState *st, TupleTableSlot *slot,
										 PsvcResult *res);

#endif							/* PSVC_FDW_MODIFY_INT_H */
