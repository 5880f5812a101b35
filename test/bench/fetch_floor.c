/*-------------------------------------------------------------------------
 *
 * fetch_floor.c
 *		  Baselines for the benchmark of the FDW scan: walk one
 *		  cursor-paginated list of the sandbox without PostgreSQL.
 *
 * A foreign scan of a list cannot be faster than fetching its pages, so
 * this program measures that floor, and what a plain C client pays to
 * parse them:
 *
 *   fetch-only  transfers every page and finds pagination.next_cursor with
 *               a byte search; nothing else of the body is looked at.  The
 *               items are not counted (printed as -1).  This is the
 *               transfer floor.
 *   jansson     parses every page into jansson's DOM and reads every
 *               member of every item (string lengths, numbers, nested
 *               values), counting the items.
 *
 * Both use ONE libcurl easy handle for the whole run, so the connection is
 * kept alive across pages and walks, as the FDW's per-backend handle is.
 * Each walk starts without a cursor and follows next_cursor until it is
 * null, and prints one line:
 *
 *   <mode> <items> <pages> <elapsed ms> <cpu ms>
 *
 * where cpu ms is the CPU time (user + system) this process spent on the
 * walk, so a benchmark can tell the client's own cost from the server's.
 *
 * --repeat N walks the list N times on the same handle (the first walk
 * includes the connection set-up).
 *
 * --save DIR also writes each page's body, byte for byte, to
 * DIR/first.json (the page without a cursor) or DIR/<cursor>.json (the
 * page asked for with that cursor), so that a static file server can
 * serve the same walk (fdw_bench.sh's nginx measure: the cursor of the
 * query string names the file).  Only cursors of letters, digits, '-'
 * and '_' can name a file; any other ends the program with an error.
 *
 * Example, against a sandbox on port 8765:
 *
 *   fetch_floor --url http://127.0.0.1:8765 \
 *       --path /v1/movies/bench-100k/content/themes --limit 100 \
 *       --mode jansson --repeat 5
 *
 * Copyright (c) 2026, The partner_svc Developers
 *
 * IDENTIFICATION
 *		  test/bench/fetch_floor.c
 *
 *-------------------------------------------------------------------------
 */
#define _GNU_SOURCE				/* memmem */

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>

#include "bench_client.h"
#include <jansson.h>

typedef enum Mode
{
	MODE_FETCH_ONLY,
	MODE_JANSSON
} Mode;

/* What one page gave. */
typedef struct Page
{
	long		items;			/* -1: not counted */
	char	   *next_cursor;	/* malloc'd; NULL on the last page */
} Page;

/* Keeps the compiler from dropping the reads of the jansson mode. */
static volatile uint64_t sink;

static void
usage(FILE *out)
{
	fprintf(out,
			"Usage: fetch_floor [OPTION]...\n"
			"Walks a cursor-paginated list of the sandbox with one libcurl handle.\n"
			"\n"
			"  --url BASE       base URL (default http://127.0.0.1:8765)\n"
			"  --path PATH      list route (default /v1/movies/bench-100k/content/themes)\n"
			"  --key KEY        API key, sent as a bearer token (default sandbox-key)\n"
			"  --limit N        page size (default 100)\n"
			"  --mode MODE      fetch-only (default) or jansson\n"
			"  --fetch-only     same as --mode fetch-only\n"
			"  --jansson        same as --mode jansson\n"
			"  --repeat N       walk the list N times (default 1)\n"
			"  --save DIR       write each page to DIR/first.json or DIR/CURSOR.json\n"
			"\n"
			"Prints one line per walk: MODE ITEMS PAGES MS CPU_MS (ITEMS is -1 in\n"
			"fetch-only mode, which does not count them; CPU_MS is this process's CPU\n"
			"time during the walk).\n");
}

static char *
find_cursor(const Buffer *buf)
{
	static const char key[] = "\"next_cursor\"";
	const char *p = memmem(buf->data, buf->len, key, sizeof(key) - 1);
	const char *end = buf->data + buf->len;
	const char *close;
	char	   *cursor;

	if (p == NULL)
		bench_die("no next_cursor in the response: %.200s", buf->data);
	p += sizeof(key) - 1;
	while (p < end && (*p == ' ' || *p == ':' || *p == '\t' || *p == '\n' || *p == '\r'))
		p++;
	if (end - p >= 4 && memcmp(p, "null", 4) == 0)
		return NULL;
	if (p >= end || *p != '"')
		bench_die("next_cursor is neither a string nor null: %.200s", p);
	p++;
	close = memchr(p, '"', end - p);
	if (close == NULL || memchr(p, '\\', close - p) != NULL)
		bench_die("next_cursor is not a plain string: %.200s", p);
	cursor = strndup(p, close - p);
	if (cursor == NULL)
		bench_die("out of memory");
	return cursor;
}

/*
 * Writes the body of the page asked for with cursor (NULL: the first) to
 * dir, under the name a static server maps that cursor to.
 */
static void
save_page(const char *dir, const char *cursor, const Buffer *buf)
{
	char	   *path;
	FILE	   *f;

	if (cursor != NULL && (cursor[0] == '\0' ||
						   strspn(cursor, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
								  "0123456789-_") != strlen(cursor)))
		bench_die("--save: the cursor \"%.100s\" cannot name a file", cursor);
	if (asprintf(&path, "%s/%s.json", dir, cursor ? cursor : "first") < 0)
		bench_die("out of memory");
	f = fopen(path, "wb");
	if (f == NULL || fwrite(buf->data, 1, buf->len, f) != buf->len || fclose(f) != 0)
		bench_die("--save: cannot write %s", path);
	free(path);
}

/* Reads one JSON value completely, as a client mapping it to columns would. */
static void
touch(json_t *value)
{
	switch (json_typeof(value))
	{
		case JSON_STRING:
			sink += json_string_length(value) + (unsigned char) json_string_value(value)[0];
			break;
		case JSON_INTEGER:
			sink += (uint64_t) json_integer_value(value);
			break;
		case JSON_REAL:
			sink += (uint64_t) json_real_value(value);
			break;
		case JSON_TRUE:
			sink += 1;
			break;
		case JSON_FALSE:
		case JSON_NULL:
			break;
		case JSON_ARRAY:
			{
				size_t		i;
				json_t	   *element;

				json_array_foreach(value, i, element)
					touch(element);
				break;
			}
		case JSON_OBJECT:
			{
				const char *name;
				json_t	   *member;

				json_object_foreach(value, name, member)
				{
					sink += (unsigned char) name[0];
					touch(member);
				}
				break;
			}
	}
}

/* Parses a page with jansson, touches every item's members, counts items. */
static Page
parse_jansson(const Buffer *buf)
{
	json_error_t error;
	json_t	   *root = json_loadb(buf->data, buf->len, 0, &error);
	json_t	   *data;
	json_t	   *cursor;
	Page		page = {0, NULL};
	size_t		i;
	json_t	   *item;

	if (root == NULL)
		bench_die("invalid JSON in a response: %s", error.text);
	data = json_object_get(root, "data");
	if (!json_is_array(data))
		bench_die("the response has no \"data\" array");
	json_array_foreach(data, i, item)
	{
		const char *name;
		json_t	   *member;

		if (!json_is_object(item))
			bench_die("an item is not an object");
		json_object_foreach(item, name, member)
			touch(member);
		page.items++;
	}
	cursor = json_object_get(json_object_get(root, "pagination"), "next_cursor");
	if (json_is_string(cursor))
	{
		page.next_cursor = strdup(json_string_value(cursor));
		if (page.next_cursor == NULL)
			bench_die("out of memory");
	}
	else if (cursor != NULL && !json_is_null(cursor))
		bench_die("pagination.next_cursor is neither a string nor null");
	json_decref(root);
	return page;
}

int
main(int argc, char **argv)
{
	const char *base = "http://127.0.0.1:8765";
	const char *path = "/v1/movies/bench-100k/content/themes";
	const char *key = "sandbox-key";
	int			limit = 100;
	int			repeat = 1;
	const char *save_dir = NULL;
	Mode		mode = MODE_FETCH_ONLY;
	CURL	   *curl;
	struct curl_slist *headers;
	char	   *auth;
	Buffer		buf = {NULL, 0, 0, false};
	int			i;

	bench_program = "fetch_floor";
	for (i = 1; i < argc; i++)
	{
		const char *opt = argv[i];
		const char *val = (i + 1 < argc) ? argv[i + 1] : NULL;
		bool		takes_value = true;

		if (strcmp(opt, "--help") == 0)
		{
			usage(stdout);
			return 0;
		}
		else if (strcmp(opt, "--fetch-only") == 0)
		{
			mode = MODE_FETCH_ONLY;
			takes_value = false;
		}
		else if (strcmp(opt, "--jansson") == 0)
		{
			mode = MODE_JANSSON;
			takes_value = false;
		}
		else if (val == NULL)
		{
			fprintf(stderr, "fetch_floor: option \"%s\" is unknown or lacks its value\n", opt);
			usage(stderr);
			return 2;
		}
		else if (strcmp(opt, "--url") == 0)
			base = val;
		else if (strcmp(opt, "--path") == 0)
			path = val;
		else if (strcmp(opt, "--key") == 0)
			key = val;
		else if (strcmp(opt, "--limit") == 0)
			limit = atoi(val);
		else if (strcmp(opt, "--repeat") == 0)
			repeat = atoi(val);
		else if (strcmp(opt, "--save") == 0)
			save_dir = val;
		else if (strcmp(opt, "--mode") == 0)
		{
			if (strcmp(val, "fetch-only") == 0)
				mode = MODE_FETCH_ONLY;
			else if (strcmp(val, "jansson") == 0)
				mode = MODE_JANSSON;
			else
			{
				fprintf(stderr, "fetch_floor: unknown mode \"%s\"\n", val);
				return 2;
			}
		}
		else
		{
			fprintf(stderr, "fetch_floor: unknown option \"%s\"\n", opt);
			usage(stderr);
			return 2;
		}
		if (takes_value)
			i++;
	}
	if (limit < 1 || repeat < 1)
	{
		fprintf(stderr, "fetch_floor: --limit and --repeat must be positive\n");
		return 2;
	}

	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		bench_die("curl_global_init failed");
	curl = curl_easy_init();
	if (curl == NULL)
		bench_die("curl_easy_init failed");
	if (asprintf(&auth, "Authorization: Bearer %s", key) < 0)
		bench_die("out of memory");
	headers = curl_slist_append(NULL, auth);
	headers = curl_slist_append(headers, "Accept: application/json");
	curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, bench_on_body);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, &buf);
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(curl, CURLOPT_TCP_NODELAY, 1L);

	for (i = 0; i < repeat; i++)
	{
		long		items = 0;
		long		pages = 0;
		char	   *cursor = NULL;
		double		start = bench_now_ms();
		double		cpu_start = bench_cpu_ms();

		do
		{
			char	   *url;
			Page		page;
			char	   *asked = cursor;

			if (cursor == NULL)
			{
				if (asprintf(&url, "%s%s?limit=%d", base, path, limit) < 0)
					bench_die("out of memory");
			}
			else
			{
				char	   *escaped = curl_easy_escape(curl, cursor, 0);

				if (escaped == NULL ||
					asprintf(&url, "%s%s?limit=%d&cursor=%s",
							 base, path, limit, escaped) < 0)
					bench_die("out of memory");
				curl_free(escaped);
			}
			bench_get(curl, &buf, url);
			free(url);
			if (save_dir != NULL)
				save_page(save_dir, asked, &buf);
			free(asked);
			pages++;

			if (mode == MODE_JANSSON)
				page = parse_jansson(&buf);
			else
			{
				page.items = -1;
				page.next_cursor = find_cursor(&buf);
			}
			items = (page.items < 0 || items < 0) ? -1 : items + page.items;
			cursor = page.next_cursor;
		} while (cursor != NULL);

		printf("%s %ld %ld %.1f %.1f\n",
			   mode == MODE_JANSSON ? "jansson" : "fetch-only",
			   items, pages, bench_now_ms() - start, bench_cpu_ms() - cpu_start);
		fflush(stdout);
	}

	curl_slist_free_all(headers);
	curl_easy_cleanup(curl);
	curl_global_cleanup();
	free(auth);
	free(buf.data);
	return 0;
}
