/*-------------------------------------------------------------------------
 *
 * estimates_file.c
 *		  The learned estimates kept across a clean restart: the shared
 *		  table written to a file when the server shuts down, and read back
 *		  when it starts, as pg_stat_statements keeps its entries.
 *
 * Life of the file.  The postmaster, which built the table (estimates.c),
 * writes it from an on_shmem_exit callback when the server shut down
 * cleanly, into PSVC_EST_FILE under the data directory, through a
 * temporary file renamed durably into place.  Cleanly means what
 * PostgreSQL means by it: pg_control says "shut down", the shutdown
 * checkpoint of a smart or fast stop was written.  The exit code alone
 * would not tell: after an immediate stop the postmaster exits with 0
 * too (pg_stat_statements writes its file then; we do not, as
 * PostgreSQL's own statistics are discarded after one).  When
 * it next builds the table it reads the file and removes it, so that a
 * crash (an immediate stop, a backend's crash and the restart that
 * follows) starts from an empty table rather than from entries older than
 * what the server learned since: nothing is written after a crash.  No
 * lock is taken: the postmaster reads before any other process exists and
 * writes after all have exited.
 *
 * Format: a header (magic, format version, PostgreSQL major version, size
 * of an entry, number of entries), the entries as they lie in shared
 * memory, and a CRC-32C of all that.  A file of another format, another
 * major version or another entry layout is ignored with a LOG, and so is
 * a file that is short, fails its CRC or holds an entry that is not well
 * formed: the table then starts empty, as it did before 0.3 kept it.
 * PSVC_EST_FILE_VERSION changes whenever PsvcEstEntry does.  Entries
 * beyond partner_svc.max_keys (the setting was lowered) are dropped.
 *
 * partner_svc.estimates_reset() removes the file too, should one be
 * there while the server runs (its removal at start failed); and since
 * the next clean shutdown writes the table as it is then, what a reset
 * forgot stays forgotten across the restart.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/shmem/estimates_file.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>
#include <unistd.h>

#include "access/xlog_internal.h"
#include "catalog/pg_control.h"
#include "pgstat.h"
#include "port/pg_crc32c.h"
#include "storage/fd.h"
#include "utils/memutils.h"

#include "estimates_int.h"

/* the file, relative to the data directory, and its temporary twin */
#define PSVC_EST_FILE		PGSTAT_STAT_PERMANENT_DIRECTORY "/partner_svc_estimates.stat"
#define PSVC_EST_FILE_TMP	PSVC_EST_FILE ".tmp"

#define PSVC_EST_FILE_MAGIC		0x50535645	/* "PSVE" */
#define PSVC_EST_FILE_VERSION	1

typedef struct PsvcEstFileHeader
{
	uint32		magic;
	uint32		version;		/* PSVC_EST_FILE_VERSION */
	uint32		pg_major;		/* PG_VERSION_NUM / 100 */
	uint32		entry_size;		/* sizeof(PsvcEstEntry) */
	int64		count;			/* entries that follow */
} PsvcEstFileHeader;

/* Is the text field of size bytes NUL-terminated? */
static bool
terminated(const char *s, size_t size)
{
	return memchr(s, '\0', size) != NULL;
}

/*
 * Copies a well-formed entry read from the file into *out, its hash key
 * zeroed first (HASH_BLOBS hashes the padding too); false when it is not
 * one the table could have held.
 */
static bool
clean_entry(const PsvcEstEntry *in, PsvcEstEntry *out)
{
	if (!terminated(in->key.route, sizeof(in->key.route)) ||
		!terminated(in->key.key, sizeof(in->key.key)) ||
		!terminated(in->columns, sizeof(in->columns)) ||
		in->scans < 1 || in->last_rows < 0 ||
		isnan(in->rows) || isinf(in->rows) || in->rows < 0)
		return false;
	memset(out, 0, sizeof(*out));
	out->key.dbid = in->key.dbid;
	out->key.serverid = in->key.serverid;
	out->key.average = in->key.average != 0;
	strlcpy(out->key.route, in->key.route, sizeof(out->key.route));
	strlcpy(out->key.key, in->key.key, sizeof(out->key.key));
	strlcpy(out->columns, in->columns, sizeof(out->columns));
	out->rows = in->rows;
	out->scans = in->scans;
	out->last_rows = in->last_rows;
	out->last_scan = in->last_scan;
	return true;
}

/*
 * Fills table (empty, just built by the postmaster) from the file, and
 * removes the file.  Never raises: a file that cannot be used is logged
 * and ignored.  Allocates in CurrentMemoryContext (the postmaster's), the
 * entries read one at a time.
 */
void
psvc_est_file_load(HTAB *table, int max_entries)
{
	FILE	   *f;
	PsvcEstFileHeader h;
	pg_crc32c	crc;
	pg_crc32c	stored;
	PsvcEstEntry *entries = NULL;
	const char *problem = NULL;
	int64		kept = 0;

	f = AllocateFile(PSVC_EST_FILE, PG_BINARY_R);
	if (f == NULL)
	{
		if (errno != ENOENT)
			ereport(LOG,
					(errcode_for_file_access(),
					 errmsg("could not read file \"%s\": %m", PSVC_EST_FILE),
					 errdetail("The learned estimates start empty.")));
		return;
	}

	INIT_CRC32C(crc);
	if (fread(&h, sizeof(h), 1, f) != 1)
		problem = "it is too short";
	else if (h.magic != PSVC_EST_FILE_MAGIC)
		problem = "it is not a file of partner_svc's learned estimates";
	else if (h.version != PSVC_EST_FILE_VERSION || h.pg_major != PG_VERSION_NUM / 100 ||
			 h.entry_size != sizeof(PsvcEstEntry))
		problem = "it was written by another version";
	else if (h.count < 0 || h.count > (int64) (MaxAllocSize / sizeof(PsvcEstEntry)))
		problem = "its count of entries is not possible";
	else
	{
		COMP_CRC32C(crc, &h, sizeof(h));
		if (h.count > 0)
		{
			entries = palloc_extended(h.count * sizeof(PsvcEstEntry), MCXT_ALLOC_NO_OOM);
			if (entries == NULL)
				problem = "it does not fit in memory";
			else if (fread(entries, sizeof(PsvcEstEntry), h.count, f) != (size_t) h.count)
				problem = "it is too short";
			else
				COMP_CRC32C(crc, entries, h.count * sizeof(PsvcEstEntry));
		}
		FIN_CRC32C(crc);
		if (problem == NULL &&
			(fread(&stored, sizeof(stored), 1, f) != 1 || !EQ_CRC32C(stored, crc)))
			problem = "its checksum does not match";
	}
	if (problem == NULL && ferror(f))
		problem = "it could not be read";

	for (int64 i = 0; problem == NULL && i < h.count; i++)
	{
		PsvcEstEntry clean;

		if (!clean_entry(&entries[i], &clean))
			problem = "it holds an entry that is not well formed";
		else
			entries[i] = clean;
	}

	for (int64 i = 0; problem == NULL && i < h.count && kept < max_entries; i++)
	{
		bool		found;
		PsvcEstEntry *e = hash_search(table, &entries[i].key, HASH_ENTER_NULL, &found);

		if (e == NULL)
			break;
		if (!found)
			kept++;
		memcpy(e, &entries[i], sizeof(PsvcEstEntry));
	}

	FreeFile(f);
	if (entries != NULL)
		pfree(entries);
	if (problem != NULL)
		ereport(LOG,
				(errmsg("ignoring file \"%s\": %s", PSVC_EST_FILE, problem),
				 errdetail("The learned estimates start empty.")));
	psvc_est_file_remove();
}

/*
 * Did the server shut down cleanly: does pg_control, read as it is on disk
 * now, say so?  False when it cannot be read or fails its CRC.
 */
static bool
shut_down_cleanly(void)
{
	ControlFileData cf;
	pg_crc32c	crc;
	int			fd;
	bool		read_ok;

	fd = OpenTransientFile(XLOG_CONTROL_FILE, O_RDONLY | PG_BINARY);
	if (fd < 0)
		return false;
	read_ok = read(fd, &cf, sizeof(cf)) == sizeof(cf);
	CloseTransientFile(fd);
	if (!read_ok)
		return false;
	INIT_CRC32C(crc);
	COMP_CRC32C(crc, &cf, offsetof(ControlFileData, crc));
	FIN_CRC32C(crc);
	return EQ_CRC32C(crc, cf.crc) &&
		(cf.state == DB_SHUTDOWNED || cf.state == DB_SHUTDOWNED_IN_RECOVERY);
}

/*
 * on_shmem_exit callback of the postmaster: writes table (its arg) to the
 * file when the server shut down cleanly (shut_down_cleanly), or removes
 * any file when the table is empty.  Nothing after a crash or an
 * immediate stop.  Never raises: a failure is logged and leaves no file.
 */
void
psvc_est_file_save(int code, Datum arg)
{
	HTAB	   *table = (HTAB *) DatumGetPointer(arg);
	FILE	   *f;
	PsvcEstFileHeader h;
	pg_crc32c	crc;
	HASH_SEQ_STATUS seq;
	PsvcEstEntry *e;
	int64		written = 0;

	if (code != 0 || table == NULL || !shut_down_cleanly())
		return;
	memset(&h, 0, sizeof(h));
	h.magic = PSVC_EST_FILE_MAGIC;
	h.version = PSVC_EST_FILE_VERSION;
	h.pg_major = PG_VERSION_NUM / 100;
	h.entry_size = sizeof(PsvcEstEntry);
	h.count = hash_get_num_entries(table);
	if (h.count == 0)
	{
		psvc_est_file_remove();
		return;
	}

	f = AllocateFile(PSVC_EST_FILE_TMP, PG_BINARY_W);
	if (f == NULL)
		goto fail;
	INIT_CRC32C(crc);
	COMP_CRC32C(crc, &h, sizeof(h));
	if (fwrite(&h, sizeof(h), 1, f) != 1)
		goto fail;
	hash_seq_init(&seq, table);
	while ((e = hash_seq_search(&seq)) != NULL)
	{
		COMP_CRC32C(crc, e, sizeof(*e));
		if (fwrite(e, sizeof(*e), 1, f) != 1)
		{
			hash_seq_term(&seq);
			goto fail;
		}
		written++;
	}
	FIN_CRC32C(crc);
	if (written != h.count || fwrite(&crc, sizeof(crc), 1, f) != 1)
		goto fail;
	if (FreeFile(f) != 0)
	{
		f = NULL;
		goto fail;
	}
	/* durable_rename logs its own failure */
	if (durable_rename(PSVC_EST_FILE_TMP, PSVC_EST_FILE, LOG) != 0)
		unlink(PSVC_EST_FILE_TMP);
	return;

fail:
	ereport(LOG,
			(errcode_for_file_access(),
			 errmsg("could not write file \"%s\": %m", PSVC_EST_FILE_TMP),
			 errdetail("The learned estimates are not kept across this restart.")));
	if (f != NULL)
		FreeFile(f);
	unlink(PSVC_EST_FILE_TMP);
}

/* Removes the file, if any; a failure other than its absence is logged. */
void
psvc_est_file_remove(void)
{
	if (unlink(PSVC_EST_FILE) != 0 && errno != ENOENT)
		ereport(LOG,
				(errcode_for_file_access(),
				 errmsg("could not remove file \"%s\": %m", PSVC_EST_FILE)));
}
