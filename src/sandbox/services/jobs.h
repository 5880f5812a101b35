/*-------------------------------------------------------------------------
 * jobs.h
 *	  Private declarations of the six document-processing job families
 *	  (docs/sandbox-jobs.md): services/jobs.c (routes, the job store),
 *	  services/jobs_content.c (models, seeded history, results) and
 *	  services/jobs_pages.c (one paging style a family).
 *-------------------------------------------------------------------------
 */
#ifndef SB_JOBS_H
#define SB_JOBS_H

#include "sandbox.h"

/* How a family's lists page (docs/sandbox-jobs.md, "Paging"). */
typedef enum jobs_paging
{
	JOBS_PAGING_CURSOR = 0,		/* pagination.next_cursor in the body */
	JOBS_PAGING_NEXT_URL,		/* "next": an absolute URL in the body */
	JOBS_PAGING_LINK,			/* Link: <...>; rel="next" (RFC 8288) */
	JOBS_PAGING_OFFSET,			/* offset and limit, advanced by the rows */
	JOBS_PAGING_PAGE,			/* page (from 1) and per_page */
	JOBS_PAGING_NONE			/* one answer, the last JOBS_NONE_MAX items */
} jobs_paging;

#define JOBS_SEEDED 45			/* seeded history jobs of every family */
#define JOBS_NONE_MAX 50		/* items of an unpaged list */

typedef struct jobs_family
{
	const char *name;			/* path segment: /jobs/<name>/... */
	jobs_paging paging;
	const char *const *models;	/* NULL-terminated; the first is the default */
} jobs_family;

extern const jobs_family jobs_families[];
extern const int jobs_nfamilies;

/* jobs_content.c */
extern json_t *jobs_models_json(const jobs_family *fam);
extern json_t *jobs_seeded_job(const jobs_family *fam, int i);
extern json_t *jobs_result_json(const jobs_family *fam, const char *job_id,
								json_t *options);

/* jobs_pages.c */

/*
 * Replies 200 with a page of items (an array of the whole list, borrowed)
 * in fam's paging style; member names the list in the styles that wrap it
 * in an object of their own choice ("jobs" or "models" when unpaged).  bind
 * ties cursors to the route, filters and partner.  Replies 400 on a bad
 * limit, cursor, offset or page.
 */
extern void jobs_reply_list(sb_request *req, sb_response *resp,
							const jobs_family *fam, const char *bind,
							json_t *items, const char *member);
/* The query parameters fam's lists take besides the filters. */
extern const char *const *jobs_paging_params(const jobs_family *fam);

#endif
