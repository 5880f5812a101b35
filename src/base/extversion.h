/*-------------------------------------------------------------------------
 *
 * extversion.h
 *		  Whether the SQL objects of partner_svc in this database are of the
 *		  loaded library's version (extversion.c).
 *
 * Between the restart on a new library and ALTER EXTENSION partner_svc
 * UPDATE, the library runs against the previous version's tables and
 * functions.  What needs nothing new (receiving webhooks, functions, the
 * foreign tables) goes on; the background duties that read or write
 * columns of the new version (the reconciler, the retention, the deferred
 * senders) ask psvc_extv_ready() first and wait while it is false
 * (docs/upgrades.md).  A module whose SQL differs between versions asks
 * psvc_extv_installed() which to send.
 *
 * Memory: nothing kept but a static copy of the last version read.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/base/extversion.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef PSVC_EXTVERSION_H
#define PSVC_EXTVERSION_H

/*
 * The installed extversion of partner_svc in this database into buf ("" when
 * the extension is not installed); in the current transaction, or in one
 * of its own when none is open.
 */
extern void psvc_extv_installed(char *buf, size_t len);

/*
 * True when the extension is installed at the library's version
 * (PSVC_VERSION), or not installed at all (the caller's own checks handle
 * a missing extension).  False while the objects are of another version:
 * who (a process's name, "partner_svc webhook worker") logs once that it
 * waits for ALTER EXTENSION partner_svc UPDATE, and once that it resumes.
 * Reads pg_extension every call (one index probe): called once per turn
 * or claim, so an UPDATE is seen at the next one.
 */
extern bool psvc_extv_ready(const char *who);

/*
 * Whether the last psvc_extv_ready() of this process found another
 * version: a loop that asks it once per turn then waits at most
 * PSVC_EXTV_RECHECK_MS, so that it sees the UPDATE soon without spinning.
 */
#define PSVC_EXTV_RECHECK_MS 1000
extern bool psvc_extv_waiting(void);

#endif							/* PSVC_EXTVERSION_H */
