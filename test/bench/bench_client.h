/*-------------------------------------------------------------------------
 *
 * bench_client.h
 *		  What the benchmark's plain libcurl clients (fetch_floor,
 *		  call_floor) share: a reusable body buffer, GET with checks,
 *		  clocks, and dying with a message.
 *
 * These programs are baselines: they must cost as little as a client can,
 * so the helpers do nothing beyond what one request needs.
 *
 * IDENTIFICATION
 *		  test/bench/bench_client.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BENCH_CLIENT_H
#define BENCH_CLIENT_H

#include <stdbool.h>
#include <stddef.h>

#include <curl/curl.h>

/* The body of the last response; reused for every request. */
typedef struct Buffer
{
	char	   *data;
	size_t		len;
	size_t		cap;
	bool		oom;			/* set by the write callback, checked after */
} Buffer;

/* Name printed before every message of bench_die; set by main. */
extern const char *bench_program;

extern void bench_die(const char *fmt,...) __attribute__((format(printf, 1, 2), noreturn));
/* libcurl write callback appending to a Buffer (CURLOPT_WRITEDATA). */
extern size_t bench_on_body(char *ptr, size_t size, size_t nmemb, void *userdata);
/* GETs url into buf; dies on a transport error or a status other than 200. */
extern void bench_get(CURL *curl, Buffer *buf, const char *url);
extern double bench_now_ms(void);	/* monotonic */
extern double bench_cpu_ms(void);	/* CPU time of this process */

#endif
