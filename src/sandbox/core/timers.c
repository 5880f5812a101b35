/*-------------------------------------------------------------------------
 * timers.c
 *	  Delayed work on sandbox time: order state changes, job executions,
 *	  anything a document says happens "later".
 *
 * Deadlines are on the sandbox clock (sb_sandbox_now_ms), so that
 * POST /_sandbox/clock advancing it fires every timer it passes at once,
 * and freezing it holds them all.  One thread sleeps on a condition
 * variable until the earliest deadline (converted to real time, or for
 * ever while the clock is frozen; a clock change wakes it), then takes the
 * state lock, takes the earliest timer off the list if it is still due,
 * and runs its callback.  The timer list has
 * its own mutex, always taken after (never while waiting for) the state
 * lock, so handlers may add timers while holding the state lock.
 *-------------------------------------------------------------------------
 */
#include "core.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

typedef struct timer
{
	int64_t		due;			/* sandbox ms */
	uint64_t	seq;			/* ties keep insertion order */
	sb_timer_fn fn;
	void	   *arg;
	uint64_t	generation;		/* timers_generation when added */
	struct timer *next;
} timer;

static pthread_mutex_t tlock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t tcond;
static timer *head = NULL;
static uint64_t next_seq = 0;

/*
 * Bumped by sb_timers_clear under the state lock; a timer of an older
 * generation is dropped even if the timer thread had already taken it off
 * the list, so no callback ever runs on data a reset forgot.
 */
static uint64_t timers_generation = 0;

void
sb_timer_add(double delay_sandbox_ms, sb_timer_fn fn, void *arg)
{
	timer	   *t = malloc(sizeof(timer));
	timer	  **p;

	t->due = sb_sandbox_now_ms() + (int64_t) (delay_sandbox_ms + 0.5);
	t->fn = fn;
	t->arg = arg;
	pthread_mutex_lock(&tlock);
	t->generation = timers_generation;
	t->seq = next_seq++;
	for (p = &head; *p && (*p)->due <= t->due; p = &(*p)->next)
		;
	t->next = *p;
	*p = t;
	pthread_cond_signal(&tcond);
	pthread_mutex_unlock(&tlock);
}

/*
 * Drops every pending timer.  Used by /_sandbox/reset (state lock held),
 * after which the callbacks' arguments belong to forgotten data; they are
 * not freed here, since only their service knows what they are.
 */
void
sb_timers_clear(void)
{
	pthread_mutex_lock(&tlock);
	timers_generation++;
	while (head)
	{
		timer	   *t = head;

		head = t->next;
		free(t);
	}
	pthread_mutex_unlock(&tlock);
}

/* The sandbox clock was advanced, frozen or restarted: recompute the wait. */
void
sb_timers_wake(void)
{
	pthread_mutex_lock(&tlock);
	pthread_cond_signal(&tcond);
	pthread_mutex_unlock(&tlock);
}

/*
 * Runs every timer due on the sandbox clock now, in order, including those
 * the callbacks add and that are due as well.  Called with the state lock
 * held, by POST /_sandbox/clock after an advance, so that the answer comes
 * after everything the advance caused: the timer thread takes a timer off
 * the list only while it holds the state lock too, so a due timer is
 * either run here or was run before.
 */
void
sb_timers_run_due(void)
{
	for (;;)
	{
		int64_t		now = sb_sandbox_now_ms();
		timer	   *t;
		bool		current;

		pthread_mutex_lock(&tlock);
		t = head;
		if (t == NULL || t->due > now)
		{
			pthread_mutex_unlock(&tlock);
			return;
		}
		head = t->next;
		current = t->generation == timers_generation;
		pthread_mutex_unlock(&tlock);
		if (current)
			t->fn(t->arg);
		free(t);
	}
}

static void *
timer_main(void *unused)
{
	pthread_mutex_lock(&tlock);
	for (;;)
	{
		int64_t		now = sb_sandbox_now_ms();

		if (head == NULL || (head->due > now && sb_clock_frozen()))
			pthread_cond_wait(&tcond, &tlock);
		else if (head->due > now)
		{
			struct timespec ts;
			int64_t		wait = sb_scaled_ms((double) (head->due - now));
			int64_t		due;

			/* sandbox time moves in steps of one real ms: never spin */
			due = sb_now_ms() + (wait < 1 ? 1 : wait);

			ts.tv_sec = due / 1000;
			ts.tv_nsec = (due % 1000) * 1000000;
			pthread_cond_timedwait(&tcond, &tlock, &ts);
		}
		else
		{
			timer	   *t;
			bool		current;

			/*
			 * Due: take it off the list only once the state lock is held,
			 * as sb_timers_run_due does, so that a clock advance that
			 * woke this thread runs every timer it made due before it
			 * answers, whichever of the two gets the lock first.
			 */
			pthread_mutex_unlock(&tlock);
			sb_lock();
			pthread_mutex_lock(&tlock);
			t = head;
			if (t == NULL || t->due > sb_sandbox_now_ms())
			{
				/* run by the advance meanwhile, or the clock was frozen */
				pthread_mutex_unlock(&tlock);
				sb_unlock();
				pthread_mutex_lock(&tlock);
				continue;
			}
			head = t->next;
			current = t->generation == timers_generation;
			pthread_mutex_unlock(&tlock);
			if (current)
				t->fn(t->arg);
			sb_unlock();
			free(t);
			pthread_mutex_lock(&tlock);
		}
	}
	return NULL;
}

void
sb_timers_start(void)
{
	pthread_condattr_t attr;
	pthread_t	th;

	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&tcond, &attr);
	pthread_create(&th, NULL, timer_main, NULL);
	pthread_detach(th);
}
