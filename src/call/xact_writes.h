/*-------------------------------------------------------------------------
 *
 * xact_writes.h
 *		  Remote writes that a rollback cannot undo (xact_writes.c).
 *
 * The HTTP client counts every state-changing request it completes; the
 * FDW's modify callbacks and the SQL functions name the writer whose
 * requests follow; when the (sub)transaction aborts, one WARNING says
 * how many changes of which writer stayed done at the service.  This is
 * the lowest layer above PostgreSQL: it calls no other module.
 *
 * Memory: the counts live in TopMemoryContext (a short list per backend,
 * freed at the end of each transaction), the writer's name in a buffer of
 * xact_writes.c; callers pass plain strings, which are copied.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/call/xact_writes.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef PSVC_XACT_WRITES_H
#define PSVC_XACT_WRITES_H

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
/*
 * Raises 25006, as PostgreSQL refuses an INSERT, when a request that
 * changes state at a service (operation opname) would be sent from a
 * read-only transaction or during recovery (a hot standby).  Names the
 * SQL function that sends it when one was named, else opname.  Called by
 * call.c before anything of the request is sent.
 */
extern void psvc_xact_check_writable(const char *opname);

#endif							/* PSVC_XACT_WRITES_H */
