/*-------------------------------------------------------------------------
 * files.h
 *	  What other services may ask of the file store (services/files.c):
 *	  the job families (services/jobs.c) take a file_id of an upload.
 *-------------------------------------------------------------------------
 */
#ifndef SB_FILES_H
#define SB_FILES_H

#include <stddef.h>

typedef enum sb_file_state
{
	SB_FILE_MISSING = 0,
	SB_FILE_EXPIRED,
	SB_FILE_LIVE
} sb_file_state;

/* Whether partner has file_id, and (live) its size; state lock held. */
extern sb_file_state sb_files_state(int partner, const char *file_id, size_t *size);

#endif
