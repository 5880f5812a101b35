/*-------------------------------------------------------------------------
 * files_multipart.h
 *	  multipart/form-data reader of the files service (POST /files).
 *
 * Only files.c and files_multipart.c include this header.
 *-------------------------------------------------------------------------
 */
#ifndef SB_FILES_MULTIPART_H
#define SB_FILES_MULTIPART_H

#include <stddef.h>

/* One form field found in a multipart body; pointers point into the body. */
typedef struct sb_files_part
{
	const char *data;			/* field content, binary, not terminated */
	size_t		len;
	char	   *filename;		/* malloc'd, or NULL without filename= */
} sb_files_part;

/* Outcome of sb_files_multipart_find. */
typedef enum sb_files_mp_result
{
	SB_MP_OK = 0,
	SB_MP_NOT_MULTIPART,		/* Content-Type is not multipart/form-data */
	SB_MP_NO_BOUNDARY,			/* no usable boundary parameter */
	SB_MP_MALFORMED,			/* delimiters or part headers are broken */
	SB_MP_NO_FIELD				/* well formed, but the field is absent */
} sb_files_mp_result;

/* in files_multipart.c */
extern sb_files_mp_result sb_files_multipart_find(const char *content_type,
												  const char *body,
												  size_t body_len,
												  const char *field,
												  sb_files_part *out);

#endif							/* SB_FILES_MULTIPART_H */
