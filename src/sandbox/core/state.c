/*-------------------------------------------------------------------------
 * state.c
 *	  Process-wide state of the sandbox: configuration, partners, the one
 *	  state lock, scaled time and seeded randomness.
 *
 * One lock guards all service data.  The sandbox serves tests, not
 * traffic, so a single mutex keeps every handler simple and every
 * interleaving easy to reason about; handlers are short and never block.
 *-------------------------------------------------------------------------
 */
#include "core.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

sb_config	sb_cfg = {
	.port = 8765,
	.seed = 1,
	.time_scale = 1.0,
	.short_page_rate = 0.0,
	.page_cache_mb = 64,
	.rl_window_ms = 60000,
	.rl_offset_ms = -1,
	.rl_enabled = true,
	.rl_retry_after = true,
	.environment = "sandbox",
};

sb_partner	sb_partners[SB_MAX_PARTNERS];
int			sb_npartners = 0;

static pthread_mutex_t state_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t rand_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t rand_state;
static bool rand_seeded = false;
static int64_t start_ms = -1;

void
sb_lock(void)
{
	pthread_mutex_lock(&state_lock);
}

void
sb_unlock(void)
{
	pthread_mutex_unlock(&state_lock);
}

int64_t
sb_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t
sb_wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t
sb_scaled_ms(double sandbox_ms)
{
	double		real = sandbox_ms * sb_cfg.time_scale;

	return real < 0 ? 0 : (int64_t) (real + 0.5);
}

/*
 * Sandbox time runs 1/time_scale as fast as real time; it starts at zero
 * when the program starts, which is all durations and expiries need.
 * POST /_sandbox/clock moves it forward at once (advance) or stops it
 * (freeze) so that tests of the order state machine, webhook retries,
 * cursor and file expiry or rate-limit windows need no sleeps.  The clock
 * has its own mutex, a leaf: nothing else is taken while it is held.
 */
static pthread_mutex_t clock_lock = PTHREAD_MUTEX_INITIALIZER;
static int64_t clock_advanced_ms = 0;	/* total of every advance */
static bool clock_frozen = false;
static int64_t clock_frozen_at = 0;	/* sandbox ms while frozen */

/* Sandbox ms from the real clock alone; clock_lock held. */
static int64_t
running_now_ms(void)
{
	if (start_ms < 0)
		start_ms = sb_now_ms();
	return (int64_t) ((double) (sb_now_ms() - start_ms) / sb_cfg.time_scale) +
		clock_advanced_ms;
}

int64_t
sb_sandbox_now_ms(void)
{
	int64_t		now;

	pthread_mutex_lock(&clock_lock);
	now = clock_frozen ? clock_frozen_at : running_now_ms();
	pthread_mutex_unlock(&clock_lock);
	return now;
}

void
sb_clock_advance(int64_t sandbox_ms)
{
	pthread_mutex_lock(&clock_lock);
	clock_advanced_ms += sandbox_ms;
	if (clock_frozen)
		clock_frozen_at += sandbox_ms;
	pthread_mutex_unlock(&clock_lock);
	sb_timers_wake();
}

void
sb_clock_freeze(bool freeze)
{
	pthread_mutex_lock(&clock_lock);
	if (freeze && !clock_frozen)
	{
		clock_frozen_at = running_now_ms();
		clock_frozen = true;
	}
	else if (!freeze && clock_frozen)
	{
		/* run on from where it stood: no jump over the frozen span */
		clock_frozen = false;
		clock_advanced_ms += clock_frozen_at - running_now_ms();
	}
	pthread_mutex_unlock(&clock_lock);
	sb_timers_wake();
}

bool
sb_clock_frozen(void)
{
	bool		f;

	pthread_mutex_lock(&clock_lock);
	f = clock_frozen;
	pthread_mutex_unlock(&clock_lock);
	return f;
}

int64_t
sb_clock_advanced_ms(void)
{
	int64_t		a;

	pthread_mutex_lock(&clock_lock);
	a = clock_advanced_ms;
	pthread_mutex_unlock(&clock_lock);
	return a;
}

void
sb_iso8601(int64_t epoch_ms, char *buf, size_t len)
{
	time_t		secs = (time_t) (epoch_ms / 1000);
	struct tm	tm;

	gmtime_r(&secs, &tm);
	snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
			 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
			 tm.tm_hour, tm.tm_min, tm.tm_sec, (int) (epoch_ms % 1000));
}

/* splitmix64 finaliser: a good, cheap mixer for deterministic content. */
static uint64_t
mix64(uint64_t z)
{
	z += 0x9e3779b97f4a7c15ULL;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

uint64_t
sb_hash(uint64_t a, uint64_t b)
{
	return mix64(mix64(sb_cfg.seed ^ mix64(a)) ^ b);
}

uint64_t
sb_hash_str(const char *s, uint64_t b)
{
	uint64_t	h = 1469598103934665603ULL;	/* FNV-1a over the string */

	for (; *s; s++)
		h = (h ^ (unsigned char) *s) * 1099511628211ULL;
	return sb_hash(h, b);
}

double
sb_rand01(void)
{
	uint64_t	v;

	pthread_mutex_lock(&rand_lock);
	if (!rand_seeded)
	{
		rand_state = mix64(sb_cfg.seed ^ 0x5eedULL);
		rand_seeded = true;
	}
	rand_state += 0x9e3779b97f4a7c15ULL;
	v = mix64(rand_state);
	pthread_mutex_unlock(&rand_lock);
	return (double) (v >> 11) / (double) (1ULL << 53);
}

sb_partner *
sb_partner_by_key(const char *key)
{
	size_t		klen;

	if (key == NULL)
		return NULL;
	klen = strlen(key);
	for (int i = 0; i < sb_npartners; i++)
	{
		const char *k = sb_partners[i].key;
		size_t		len = strlen(k);
		unsigned char diff = (unsigned char) (len != klen);

		/* constant time over the configured key, as a real service would */
		for (size_t j = 0; j < len; j++)
			diff |= (unsigned char) (k[j] ^ (j < klen ? key[j] : 0));
		if (diff == 0)
			return &sb_partners[i];
	}
	return NULL;
}

const char *
sb_tier_name(sb_tier t)
{
	switch (t)
	{
		case SB_TIER_PREMIUM:
			return "premium";
		case SB_TIER_ENTERPRISE:
			return "enterprise";
		default:
			return "standard";
	}
}

void
sb_log(const char *fmt,...)
{
	va_list		ap;
	char		ts[40];

	if (!sb_cfg.verbose)
		return;
	sb_iso8601(sb_wall_ms(), ts, sizeof(ts));
	fprintf(stderr, "%s sandbox: ", ts);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}
