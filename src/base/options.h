/*-------------------------------------------------------------------------
 *
 * options.h
 *		  The options of partner_svc's stored objects: reading a server,
 *		  its settings and its user mappings (server_options.c), and
 *		  validating options as they are written is the FDW's (fdw_options.c).
 *
 * A PsvcServer is a snapshot of one foreign server's options, allocated
 * in the caller's CurrentMemoryContext by psvc_options_server (a scan
 * keeps it in its per-scan context, a function in its call's).  Parsed
 * servers are kept per backend until any server or user mapping changes
 * (the options epoch); callers always get copies.  The settings a
 * server option overrides (PsvcSettingId) are rows of guc.c's table,
 * which gives their names, bounds and units.
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  src/base/options.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef PSVC_OPTIONS_H
#define PSVC_OPTIONS_H

#include "fmgr.h"
#include "nodes/pg_list.h"

/* in server_options.c: reading the options of stored objects */

/*
 * The settings a server option can override: each is also the GUC
 * partner_svc.<name>, which applies when the server does not set it.
 * Read them with psvc_options_setting(); each is a row of guc.c's table,
 * which gives its name, bounds and unit (docs/per-server-settings.md).
 */
typedef enum PsvcSettingId
{
	PSVC_SETTING_CONNECT_TIMEOUT,	/* milliseconds */
	PSVC_SETTING_REQUEST_TIMEOUT,	/* milliseconds */
	PSVC_SETTING_MAX_RETRIES,
	PSVC_SETTING_PAGE_SIZE,
	PSVC_SETTING_FANOUT,
	PSVC_SETTING_PREFETCH,		/* boolean: 0 or 1 */
	PSVC_NSETTINGS
} PsvcSettingId;

/*
 * How a server's requests carry the partner's credentials (server option
 * "auth", docs/authentication.md).
 */
typedef enum PsvcAuth
{
	PSVC_AUTH_BEARER,			/* Authorization: Bearer <api_key> */
	PSVC_AUTH_HEADER,			/* <auth_header>: [<auth_prefix> ]<api_key> */
	PSVC_AUTH_QUERY,			/* ?<auth_param>=<api_key> */
	PSVC_AUTH_OAUTH2			/* Bearer token of the client-credentials
								 * grant at token_url (http_token.c) */
} PsvcAuth;

/* What a partner_svc server says about the remote side. */
typedef struct PsvcServer
{
	Oid			serverid;
	const char *servername;
	const char *service;		/* "orders", "movies", ... */
	const char *base_url;		/* without a trailing slash */
	const char *tier;			/* "standard" unless set; orders only */
	const char *rate_limits;	/* option "rate_limits" (per-route limits of
								 * the contract, ratelimit_rules.c), or NULL */
	int			max_response_size;	/* option "max_response_size" in bytes,
									 * or 0 when not set */
	int			settings[PSVC_NSETTINGS];	/* the server's options, -1 where
											 * unset (the GUC applies) */
	/* TLS and proxy (http.c); NULL where unset */
	const char *ssl_ca_file;	/* CA bundle that verifies the service */
	const char *ssl_cert_file;	/* client certificate (PEM) */
	const char *ssl_key_file;	/* its private key (PEM) */
	const char *proxy;			/* proxy URL, or "environment": libcurl's
								 * *_proxy variables; NULL: no proxy */
	int			cache_ttl_ms;	/* option "cache_ttl" in ms (cache.c), -1
								 * where unset */
	bool		async_capable;	/* option "async_capable": its foreign
								 * scans may run asynchronously under an
								 * Append (fdw_scan.c); false where unset */
	PsvcAuth	auth;			/* option "auth"; bearer where unset */
	const char *auth_header;	/* auth header: the header's name */
	const char *auth_prefix;	/* auth header: a word before the key, or
								 * NULL */
	const char *auth_param;		/* auth query: the parameter's name */
	const char *token_url;		/* auth oauth2: the token endpoint */
	const char *scopes;			/* auth oauth2: the scope sent, or NULL */
	const char *idempotency_header; /* the header of an idempotency key the
									 * partner honours, or NULL */
	Oid			userid;			/* whose user mapping gives the key: the
								 * role a foreign table is checked as (set
								 * by the scan or modify), or InvalidOid =
								 * the current user (functions) */
} PsvcServer;

/*
 * Who calls what, as the layers below a call (the rate limiter, the
 * response cache) know it: the partner account (the server, and the API
 * key of the user mapping it names; account is their digest, what the
 * limiter and the fleet quota budget by), the operation of the
 * catalogue, and the resource (the path values, one per op->params, and
 * the full URL).  Built by the call module (call.h); pointers only,
 * nothing owned.
 */
struct PsvcOperation;			/* catalog.h */
struct PsvcServerAccess;		/* below */
typedef struct PsvcCallKey
{
	const PsvcServer *server;
	const struct PsvcServerAccess *access;	/* who the call is made as */
	const struct PsvcOperation *op;
	const char *const *path;	/* one value per op->params, in order */
	const char *url;			/* base URL, path and query */
	int			share;			/* percent of the route's budget the call
								 * may use, without waiting (PsvcCall's
								 * budget_share); 100: all, waiting */
} PsvcCallKey;

/* Allocates in CurrentMemoryContext.  Errors if not a partner_svc server. */
extern PsvcServer *psvc_options_server(Oid serverid);
/*
 * A counter that moves whenever any foreign server or user mapping of the
 * database changes (a syscache callback): what was derived from options
 * under one epoch (an API key's digest, cache.c) holds until it moves.
 */
extern uint64 psvc_options_epoch(void);
/* A deep copy of s in CurrentMemoryContext (a new field is copied there). */
extern PsvcServer *psvc_options_copy_server(const PsvcServer *s);
/*
 * The credential of the user mapping of server->userid (the current user
 * when invalid), or PUBLIC's, for the server: its api_key, or for a server
 * of auth oauth2 its client_id and client_secret joined by a newline
 * (which neither may hold: options.c); NULL when the mapping has none.
 * No mapping at all is an error (42704), except for a service the
 * documents mark keyless (todos).  Allocates in CurrentMemoryContext.  The
 * caller must never print it.
 */
extern char *psvc_options_api_key(const PsvcServer *server);
/* in server_account.c: the partner account */

/* Hex characters of an account digest (128 bits). */
#define PSVC_ACCOUNT_LEN		32
/*
 * The partner account server's calls are made as, into out (room for
 * PSVC_ACCOUNT_LEN + 1): the hex digest of its normalised base URL and
 * the API key of its user mapping (psvc_options_api_key, whose errors it
 * raises).  Never the key, never a server name: two servers with one key
 * at one service have one account, in any database or cluster.  Kept per
 * backend while the options epoch holds.
 */
extern void psvc_options_account(const PsvcServer *server, char *out);

/* Bytes of the digest of an API key (SHA-256). */
#define PSVC_KEY_DIGEST_LEN		32
/*
 * Who a call is made as, resolved once per call from its server and the
 * user mapping (http.c hands it down to the response cache and the rate
 * limiter): the partner account, a digest of the API key (the cache keys
 * answers by it, never by the key), and the key itself when this
 * resolution had to read it.  The digests are kept per backend while the
 * options epoch holds, so a call answered by the cache reads no mapping.
 */
typedef struct PsvcServerAccess
{
	char		account[PSVC_ACCOUNT_LEN + 1];
	uint8		key_digest[PSVC_KEY_DIGEST_LEN];	/* of no key: all zero */
	bool		has_key;
	char	   *api_key;		/* NULL unless read by this resolution */
} PsvcServerAccess;

/* Fills *out; may read the API key (CurrentMemoryContext). */
extern void psvc_options_access(const PsvcServer *server, PsvcServerAccess *out);
/*
 * The API key of a, read now if the resolution did not (NULL when the
 * mapping has none).  Owned by a: psvc_options_access_clear wipes it.
 */
extern const char *psvc_options_access_key(const PsvcServer *server,
											PsvcServerAccess *a);
/* Wipes and frees the key a holds, if any; never raises. */
extern void psvc_options_access_clear(PsvcServerAccess *a);

/*
 * The option name in options (a list of DefElem, an object's options or
 * a validator's), or NULL; psvc_options_text: its value as text, or NULL.
 * The one lookup of an option by name (server_options.c).
 */
struct DefElem;
extern struct DefElem *psvc_options_find(List *options, const char *name);
extern const char *psvc_options_text(List *options, const char *name);
/* Bytes of a max_response_size value; 22023 when invalid. */
extern int	psvc_options_parse_size(const char *value);
/* The most a cache_ttl option may say: paging cursors live 24 hours. */
#define PSVC_MAX_CACHE_TTL_MS	(24 * 3600 * 1000)
/* Milliseconds of a cache_ttl value (a time, 0 to 24 h); 22023 otherwise. */
extern int	psvc_options_parse_ttl(const char *value);
/*
 * Options of a foreign table, from what GetForeignTable gave (one read of
 * the catalogue serves both): its cache_ttl in ms, -1 when it has none;
 * its "resource", palloc'd in CurrentMemoryContext.
 */
struct ForeignTable;
extern int	psvc_options_table_cache_ttl(const struct ForeignTable *ft);
extern char *psvc_options_resource(const struct ForeignTable *ft);
/*
 * Whether scans of the table may run asynchronously: its option
 * async_capable, else its server's s (the table's server).
 */
extern bool psvc_options_table_async(const struct ForeignTable *ft,
									 const PsvcServer *s);
/* The effective value of a setting: the server's option, else the GUC. */
extern int	psvc_options_setting(const PsvcServer *s, PsvcSettingId id);
/* EXPLAIN VERBOSE of a scan: the effective settings of s (never the key). */
struct ExplainState;
extern void psvc_options_explain(const PsvcServer *s, struct ExplainState *es);

/*
 * Whether roleid decides which server of a service the functions use when
 * none is named: a superuser, or a role with the privileges of the
 * extension's owner.  Only such a role may set the server option
 * "default", and only the servers such a role owns are candidates.
 */
extern bool psvc_options_decides_default(Oid roleid);

#endif							/* PSVC_OPTIONS_H */
