/*-------------------------------------------------------------------------
 * scheduler_int.h
 *	  State and helpers shared by the scheduler sandbox's files:
 *	  scheduler.c (state, JSON, knobs, route table), scheduler_jobs.c (job
 *	  CRUD, pause/activate, clone, sync-token) and scheduler_runs.c
 *	  (executions, notifications, emails).
 *
 * Everything here runs with the sandbox's global lock held (handlers and
 * timers); nothing locks.
 *-------------------------------------------------------------------------
 */
#ifndef SB_SCHEDULER_INT_H
#define SB_SCHEDULER_INT_H

#include "sandbox.h"

#define SB_SCHED_SUMMARY_MAX	15	/* "last 15 executions" */

typedef enum sb_sched_status
{
	SB_SCHED_READY = 0,
	SB_SCHED_RUNNING,
	SB_SCHED_SUCCESS,
	SB_SCHED_FAILED
} sb_sched_status;

typedef struct sb_sched_job
{
	int64_t		id;
	char	   *name;
	bool		active;
	char	   *tz;
	char	   *cron;
	const char *freq;			/* HOURLY, DAILY, WEEKLY, MONTHLY or NULL */
	char	   *start_time;		/* userJobStartTime as given, or NULL */
	sb_sched_status status;
	int64_t		last_run_at;	/* epoch ms (wall), -1 = never */
	int64_t		duration_ms;	/* sandbox ms of the last ended run, -1 */
	char	   *status_details;
	char	   *error_details;
	char		token[24];		/* copied by sync-token; admin route shows it */
} sb_sched_job;

typedef struct sb_sched_exec
{
	int64_t		id;
	int64_t		job_id;
	sb_sched_status status;
	int64_t		start_ms;		/* sandbox ms, for the duration */
	int64_t		end_ms;			/* -1 while running */
	int64_t		start_at;		/* epoch ms (wall) */
	int64_t		end_at;			/* -1 while running */
	char	   *error;
} sb_sched_exec;

/* A growable array of pointers. */
typedef struct sb_sched_vec
{
	void	  **v;
	int			n;
	int			cap;
} sb_sched_vec;

/* One partner's scheduler data. */
typedef struct sb_sched_partner
{
	int			index;			/* partner index */
	bool		seeded;
	sb_sched_vec jobs;			/* sb_sched_job *, creation order */
	sb_sched_vec execs;			/* sb_sched_exec *, start order */
	sb_sched_vec notif;			/* char *, insertion order */
	json_t	   *emails;			/* array of recorded emails */
	int64_t		next_job;
	int64_t		next_exec;
} sb_sched_partner;

/* in scheduler.c */
extern sb_sched_partner sb_sched_state[SB_MAX_PARTNERS];
extern uint64_t sb_sched_generation;
extern double sb_sched_run_duration_min;
extern double sb_sched_fail_rate;
extern const char *const sb_sched_frequencies[];

extern bool sb_sched_vec_push(sb_sched_vec *vec, void *item);
extern char *sb_sched_strdup(const char *s);
extern void sb_sched_set_text(char **field, const char *fmt,...)
			__attribute__((format(printf, 2, 3)));
extern json_t *sb_sched_time_json(int64_t epoch_ms);
extern sb_sched_partner *sb_sched_begin(sb_request *req, sb_response *resp);
extern bool sb_sched_id_param(sb_request *req, sb_response *resp,
							  const char *name, int64_t *out);
extern sb_sched_job *sb_sched_job_or_404(sb_sched_partner *sp, sb_request *req,
										 sb_response *resp, const char *name);
extern sb_sched_job *sb_sched_job_new(sb_sched_partner *sp, const char *name,
									  bool active, const char *tz,
									  const char *cron, const char *freq,
									  const char *start_time);
extern void sb_sched_job_free(sb_sched_job *j);
extern void sb_sched_exec_free(sb_sched_exec *e);
extern sb_sched_job *sb_sched_job_lookup(sb_sched_partner *sp, int64_t id);
extern sb_sched_exec *sb_sched_exec_lookup(sb_sched_partner *sp, int64_t id);
extern json_t *sb_sched_job_json(const sb_sched_job *j, int partner);
extern json_t *sb_sched_exec_json(const sb_sched_exec *e);
extern const char *sb_sched_status_name(sb_sched_status s);

/* in scheduler_jobs.c */
extern void sb_sched_jobs_list(sb_request *req, sb_response *resp);
extern void sb_sched_jobs_save(sb_request *req, sb_response *resp);
extern void sb_sched_job_get(sb_request *req, sb_response *resp);
extern void sb_sched_job_delete(sb_request *req, sb_response *resp);
extern void sb_sched_job_pause(sb_request *req, sb_response *resp);
extern void sb_sched_job_activate(sb_request *req, sb_response *resp);
extern void sb_sched_job_sync_token(sb_request *req, sb_response *resp);
extern void sb_sched_job_clone(sb_request *req, sb_response *resp);

/* in scheduler_runs.c */
extern void sb_sched_job_run(sb_request *req, sb_response *resp);
extern void sb_sched_job_stop(sb_request *req, sb_response *resp);
extern void sb_sched_job_summary(sb_request *req, sb_response *resp);
extern void sb_sched_notif_list(sb_request *req, sb_response *resp);
extern void sb_sched_notif_add(sb_request *req, sb_response *resp);
extern void sb_sched_email_execution(sb_request *req, sb_response *resp);
extern void sb_sched_admin_emails(sb_request *req, sb_response *resp);
extern void sb_sched_admin_tokens(sb_request *req, sb_response *resp);

#endif							/* SB_SCHEDULER_INT_H */
