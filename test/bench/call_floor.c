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

#include "bench_client.h"

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

	bench_program = "call_floor";
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
		bench_die("curl_global_init failed");
	curl = curl_easy_init();
	if (curl == NULL)
		bench_die("curl_easy_init failed");
	if (asprintf(&auth, "Authorization: Bearer %s", key) < 0 ||
		asprintf(&url, "%s%s", base, path) < 0)
		bench_die("out of memory");
	headers = curl_slist_append(NULL, "Accept: application/json");
	headers = curl_slist_append(headers, auth);
	if (headers == NULL)
		bench_die("out of memory");
	curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, bench_on_body);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, &buf);
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);

	for (i = 0; i < repeat; i++)
	{
		double		start = bench_now_ms();
		double		ms;
		int			n;

		for (n = 0; n < count; n++)
			bench_get(curl, &buf, url);
		ms = bench_now_ms() - start;
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
