/*-------------------------------------------------------------------------
 * core.h
 *	  Declarations shared by the core files only (services see sandbox.h).
 *-------------------------------------------------------------------------
 */
#ifndef SB_CORE_H
#define SB_CORE_H

#include "sandbox.h"

/* services.c: the table of services (weakly linked) */
extern const sb_service *const *sb_services(void);
extern int	sb_service_set(const char *name, json_t *value);	/* 1/0/-1 */
extern void sb_services_reset(void);

/* timers.c */
extern void sb_timers_start(void);
extern void sb_timers_clear(void);
extern void sb_timers_wake(void);	/* the sandbox clock moved */
extern void sb_timers_run_due(void);	/* state lock held */

/* ratelimit.c */
typedef struct sb_rl_verdict
{
	bool		limited;
	int64_t		reset_in_real_ms;	/* until the current window ends */
	int64_t		limit;
} sb_rl_verdict;
extern void sb_rl_check(sb_request *req, sb_rl_verdict *v);
extern int	sb_rl_set(const char *name, json_t *value);
extern void sb_rl_get(json_t *out);
extern void sb_rl_reset(void);
extern void sb_rl_init(void);

/* faults.c */
typedef struct sb_fault_plan
{
	int64_t		latency_ms;		/* real ms before answering */
	int			error_status;	/* 0 or the 5xx to answer instead */
	bool		inject_429;
	int64_t		retry_after;	/* seconds for Retry-After of the injected
								 * 429; -1 = no header */
	bool		malformed;
	bool		truncate;
	bool		reset;
	int64_t		drip_ms;		/* pause between 16-byte pieces; 0 = off */
	bool		drop_after_apply;
	bool		corrupt_cursor;
} sb_fault_plan;
extern void sb_faults_plan(const char *method, const char *route, sb_fault_plan *plan);
extern bool sb_fault_add_spec(const char *spec, char *err, size_t errlen);
extern bool sb_fault_add_json(json_t *rule, char *err, size_t errlen);
extern void sb_faults_clear(void);
extern json_t *sb_faults_json(void);

/* stats.c */
extern int64_t sb_stats_enter(const char *method, const char *route);
extern void sb_stats_leave(const char *method, const char *route, int64_t entered_epoch);
extern void sb_stats_record(const char *method, const char *route, const char *path,
							const char *query, const char *auth, int status,
							const sb_partner *partner, size_t bytes_in, size_t bytes_out);
extern json_t *sb_stats_json(void);
extern char *sb_requests_tsv(const char *route_filter, bool with_auth, size_t *len);
extern char *sb_stats_tsv(size_t *len);
extern json_t *sb_requests_json(const char *route_filter);
extern void sb_stats_reset(void);

/* oauth.c: access tokens of POST /oauth/token */
typedef enum sb_token_state
{
	SB_TOKEN_UNKNOWN = 0,
	SB_TOKEN_LIVE,
	SB_TOKEN_EXPIRED
} sb_token_state;
extern sb_token_state sb_oauth_token(const char *token, sb_partner **partner);

/* admin.c: knobs of the core, the rate limits and the services */
extern int	sb_knob_set(const char *name, json_t *value);	/* 1 ok, 0 unknown, -1 invalid */

/* server.c */
extern int	sb_server_start(void);	/* returns the bound port, or -1 */
extern void sb_server_stop(void);

#endif
