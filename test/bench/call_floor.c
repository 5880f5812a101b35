/*-------------------------------------------------------------------------
 *
 * call_floor.c
 *		  Baseline for the benchmark of the SQL functions: the same small
 *		  GET, many times, from a plain C client without PostgreSQL.
 *
 * A call of partner_svc.movie_summary() cannot be cheaper than the HTTP
 * request it makes, so this program measures that floor: one libcurl easy
 * handle for the whole run (the connection is kept alive, as the
 * extension's per-backend connection cache keeps it), the same headers the
 * extension sends (Accept, Authorization), the body collected into a
 * buffer and the status checked; nothing else is done with the answer.
 *
 * Each repetition sends --count requests and prints one line:
 *
 *   raw <count> <elapsed ms> <microseconds per request>
 *
 * The first repetition includes the connection set-up.  Any status but
 * 200, or any transport error, ends the program with status 1.
 *
 * Example, against a sandbox on port 8765:
 *
 *   call_floor --url http://127.0.0.1:8765 \
 *       --path /v1/movies/inception/content/summary --count 5000 --repeat 3
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  test/bench/call_floor.c
 *
 *-------------------------------------------------------------------------
 */
#define _GNU_SOURCE				/* asprintf */

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>

/* The body of the last response; reused for every request. */
typedef struct Buffer
{
	char	   *data;
	size_t		len;
	size_t		cap;
	bool		oom;			/* set by the write callback, checked after */
} Buffer;

static void
usage(FILE *out)
{
	fprintf(out,
			"Usage: call_floor [OPTION]...\n"
			"Sends the same GET many times over one libcurl handle.\n"
			"\n"
			"  --url BASE       base URL (default http://127.0.0.1:8765)\n"
			"  --path PATH      route (default /v1/movies/inception/content/summary)\n"
			"  --key KEY        API key, sent as a bearer token (default sandbox-key)\n"
			"  --count N        requests per repetition (default 5000)\n"
			"  --repeat N       repetitions (default 1)\n"
			"\n"
			"Prints one line per repetition: raw COUNT MS US_PER_REQUEST\n");
}

static void die(const char *fmt,...) __attribute__((format(printf, 1, 2), noreturn));

/* Reports a failure on standard error and exits with status 1. */
static void
die(const char *fmt,...)
{
	va_list		args;

	fprintf(stderr, "call_floor: ");
	va_start(args, fmt);
	vfprintf(stderr, fmt, args);
	va_end(args);
	fputc('\n', stderr);
	exit(1);
}

/* libcurl write callback: appends to the Buffer; never longjmps. */
static size_t
on_body(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	Buffer	   *buf = userdata;
	size_t		n = size * nmemb;

	if (buf->len + n + 1 > buf->cap)
	{
		size_t		cap = buf->cap ? buf->cap : 16 * 1024;
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

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000.0 + ts.tv_nsec / 1e6;
}

/* One GET into buf; dies on a transport error or a status other than 200. */
static void
request(CURL *curl, Buffer *buf, const char *url)
{
	CURLcode	rc;
	long		status = 0;

	buf->len = 0;
	if (buf->data)
		buf->data[0] = '\0';
	rc = curl_easy_perform(curl);
	if (buf->oom)
		die("out of memory");
	if (rc != CURLE_OK)
		die("request failed: %s", curl_easy_strerror(rc));
	curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
	if (status != 200)
		die("HTTP %ld from %s: %.300s", status, url, buf->data ? buf->data : "");
}

int
main(int argc, char **argv)
{
	const char *base = "http://127.0.0.1:8765";
	const char *path = "/v1/movies/inception/content/summary";
	const char *key = "sandbox-key";
	int			count = 5000;
	int			repeat = 1;
	CURL	   *curl;
	struct curl_slist *headers;
	char	   *auth;
	char	   *url;
	Buffer		buf = {NULL, 0, 0, false};
	int			i;

	for (i = 1; i < argc; i++)
	{
		const char *opt = argv[i];
		const char *val = (i + 1 < argc) ? argv[i + 1] : NULL;

		if (strcmp(opt, "--help") == 0)
		{
			usage(stdout);
			return 0;
		}
		if (val == NULL)
		{
			fprintf(stderr, "call_floor: option \"%s\" is unknown or lacks its value\n", opt);
			usage(stderr);
			return 2;
		}
		if (strcmp(opt, "--url") == 0)
			base = val;
		else if (strcmp(opt, "--path") == 0)
			path = val;
		else if (strcmp(opt, "--key") == 0)
			key = val;
		else if (strcmp(opt, "--count") == 0)
			count = atoi(val);
		else if (strcmp(opt, "--repeat") == 0)
			repeat = atoi(val);
		else
		{
			fprintf(stderr, "call_floor: unknown option \"%s\"\n", opt);
			usage(stderr);
			return 2;
		}
		i++;
	}
	if (count < 1 || repeat < 1)
	{
		fprintf(stderr, "call_floor: --count and --repeat must be positive\n");
		return 2;
	}

	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		die("curl_global_init failed");
	curl = curl_easy_init();
	if (curl == NULL)
		die("curl_easy_init failed");
	if (asprintf(&auth, "Authorization: Bearer %s", key) < 0 ||
		asprintf(&url, "%s%s", base, path) < 0)
		die("out of memory");
	headers = curl_slist_append(NULL, "Accept: application/json");
	headers = curl_slist_append(headers, auth);
	if (headers == NULL)
		die("out of memory");
	curl_easy_setopt(curl, CURLOPT_URL, url);
	curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, &buf);
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);

	for (i = 0; i < repeat; i++)
	{
		double		start = now_ms();
		double		ms;
		int			n;

		for (n = 0; n < count; n++)
			request(curl, &buf, url);
		ms = now_ms() - start;
		printf("raw %d %.1f %.1f\n", count, ms, ms * 1000.0 / count);
		fflush(stdout);
	}

	curl_easy_cleanup(curl);
	curl_slist_free_all(headers);
	curl_global_cleanup();
	free(auth);
	free(url);
	free(buf.data);
	return 0;
}
