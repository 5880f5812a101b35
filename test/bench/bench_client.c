/*-------------------------------------------------------------------------
 *
 * bench_client.c
 *		  The shared part of the benchmark's plain libcurl clients; see
 *		  bench_client.h.
 *
 * IDENTIFICATION
 *		  test/bench/bench_client.c
 *
 *-------------------------------------------------------------------------
 */
#include "bench_client.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const char *bench_program = "bench";

/* Reports a failure on standard error and exits with status 1. */
void
bench_die(const char *fmt,...)
{
	va_list		args;

	fprintf(stderr, "%s: ", bench_program);
	va_start(args, fmt);
	vfprintf(stderr, fmt, args);
	va_end(args);
	fputc('\n', stderr);
	exit(1);
}

/* Appends to the Buffer; never longjmps, reports memory failure by flag. */
size_t
bench_on_body(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	Buffer	   *buf = userdata;
	size_t		n = size * nmemb;

	if (buf->len + n + 1 > buf->cap)
	{
		size_t		cap = buf->cap ? buf->cap : 64 * 1024;
		char	   *data;

		while (cap < buf->len + n + 1)
			cap *= 2;
		data = realloc(buf->data, cap);
		if (data == NULL)
		{
			buf->oom = true;
			return 0;			/* makes curl fail the transfer */
		}
		buf->data = data;
		buf->cap = cap;
	}
	memcpy(buf->data + buf->len, ptr, n);
	buf->len += n;
	buf->data[buf->len] = '\0';
	return n;
}

void
bench_get(CURL *curl, Buffer *buf, const char *url)
{
	CURLcode	rc;
	long		status = 0;

	buf->len = 0;
	if (buf->data)
		buf->data[0] = '\0';
	curl_easy_setopt(curl, CURLOPT_URL, url);
	rc = curl_easy_perform(curl);
	if (buf->oom)
		bench_die("out of memory");
	if (rc != CURLE_OK)
		bench_die("request failed: %s", curl_easy_strerror(rc));
	curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
	if (status != 200)
		bench_die("HTTP %ld from %s: %.300s", status, url, buf->data ? buf->data : "");
}

static double
clock_ms(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec * 1000.0 + ts.tv_nsec / 1e6;
}

double
bench_now_ms(void)
{
	return clock_ms(CLOCK_MONOTONIC);
}

double
bench_cpu_ms(void)
{
	return clock_ms(CLOCK_PROCESS_CPUTIME_ID);
}
