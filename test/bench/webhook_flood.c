/*
 * webhook_flood.c: a load generator for the webhook worker.
 *
 *   webhook_flood URL [-c CONCURRENCY] [-d SECONDS] [-n TOTAL] [-p PREFIX]
 *                 [-o OKFILE] [-s SECRET]
 *
 * CONCURRENCY senders (default 32), each one libcurl easy handle on a kept-
 * alive connection, all driven by one curl multi handle, POST distinct
 * ORDER_STATUS_CHANGED webhooks (unique_id PREFIX-<n>, status CREATED) to
 * URL, each sender waiting for its answer before sending the next, until
 * SECONDS have passed (default 10) or TOTAL webhooks were sent.  Prints
 * one line:
 *
 *   sent=N ok=N failed=N seconds=S rate=R/s p50_ms=X p99_ms=Y max_ms=Z
 *
 * where rate counts answers 200 per second and the latencies are those of
 * the 200 answers.  With -o, the unique_id of every delivery answered 200
 * is appended to OKFILE as it arrives (the crash test compares it with
 * webhook_events).  Not part of the extension build: make -C test/bench
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

typedef struct sender
{
	CURL	   *h;
	char		body[512];
	char		id[128];
	double		started;
} sender;

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static size_t
discard(char *p, size_t s, size_t n, void *arg)
{
	(void) p;
	(void) arg;
	return s * n;
}

static int
cmp_double(const void *a, const void *b)
{
	double		x = *(const double *) a,
				y = *(const double *) b;

	return x < y ? -1 : x > y;
}

static long next_n = 0;

static void
prepare(sender *s, const char *prefix)
{
	long		n = ++next_n;

	snprintf(s->id, sizeof(s->id), "%s-%ld", prefix, n);
	snprintf(s->body, sizeof(s->body),
			 "{\"event_type\":\"ORDER_STATUS_CHANGED\",\"status\":\"CREATED\","
			 "\"product\":{\"custom_id\":\"C-%ld\",\"unique_id\":\"%s\",\"name\":\"bench\"}}",
			 n, s->id);
	curl_easy_setopt(s->h, CURLOPT_POSTFIELDS, s->body);
	curl_easy_setopt(s->h, CURLOPT_POSTFIELDSIZE, (long) strlen(s->body));
	s->started = now_s();
}

int
main(int argc, char **argv)
{
	const char *url;
	int			conc = 32;
	double		seconds = 10;
	long		total = 0;
	const char *prefix = "bench";
	const char *okpath = NULL;
	const char *secret = NULL;
	FILE	   *okf = NULL;
	int			opt;
	sender	   *ss;
	CURLM	   *m;
	struct curl_slist *hdr = NULL;
	double		t0,
				t_end;
	long		sent = 0,
				ok = 0,
				failed = 0;
	double	   *lat;
	long		nlat = 0,
				maxlat = 1 << 20;
	int			running;
	long		inflight = 0;

	while ((opt = getopt(argc, argv, "c:d:n:p:o:s:")) != -1)
	{
		switch (opt)
		{
			case 'c': conc = atoi(optarg); break;
			case 'd': seconds = atof(optarg); break;
			case 'n': total = atol(optarg); break;
			case 'p': prefix = optarg; break;
			case 'o': okpath = optarg; break;
			case 's': secret = optarg; break;
			default:
				fprintf(stderr, "usage: %s URL [-c N] [-d S] [-n TOTAL] [-p PREFIX] [-o OKFILE] [-s SECRET]\n", argv[0]);
				return 2;
		}
	}
	if (optind >= argc)
	{
		fprintf(stderr, "%s: URL missing\n", argv[0]);
		return 2;
	}
	url = argv[optind];
	if (okpath && !(okf = fopen(okpath, "a")))
	{
		perror(okpath);
		return 1;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	hdr = curl_slist_append(hdr, "Content-Type: application/json");
	hdr = curl_slist_append(hdr, "Expect:");
	if (secret)
	{
		char		line[300];

		snprintf(line, sizeof(line), "X-Partner-Webhook-Secret: %s", secret);
		hdr = curl_slist_append(hdr, line);
	}
	lat = malloc(sizeof(double) * maxlat);
	m = curl_multi_init();
	ss = calloc(conc, sizeof(sender));
	t0 = now_s();
	t_end = t0 + seconds;
	for (int i = 0; i < conc; i++)
	{
		ss[i].h = curl_easy_init();
		curl_easy_setopt(ss[i].h, CURLOPT_URL, url);
		curl_easy_setopt(ss[i].h, CURLOPT_HTTPHEADER, hdr);
		curl_easy_setopt(ss[i].h, CURLOPT_WRITEFUNCTION, discard);
		curl_easy_setopt(ss[i].h, CURLOPT_TIMEOUT_MS, 30000L);
		curl_easy_setopt(ss[i].h, CURLOPT_NOSIGNAL, 1L);
		curl_easy_setopt(ss[i].h, CURLOPT_PRIVATE, &ss[i]);
		if (total == 0 || sent < total)
		{
			prepare(&ss[i], prefix);
			curl_multi_add_handle(m, ss[i].h);
			sent++;
			inflight++;
		}
	}
	do
	{
		CURLMsg    *msg;
		int			left;

		curl_multi_perform(m, &running);
		while ((msg = curl_multi_info_read(m, &left)) != NULL)
		{
			sender	   *s;
			long		code = 0;

			if (msg->msg != CURLMSG_DONE)
				continue;
			curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **) &s);
			if (msg->data.result == CURLE_OK)
				curl_easy_getinfo(s->h, CURLINFO_RESPONSE_CODE, &code);
			if (code == 200)
			{
				ok++;
				if (nlat < maxlat)
					lat[nlat++] = (now_s() - s->started) * 1000;
				if (okf)
				{
					fprintf(okf, "%s\n", s->id);
					fflush(okf);
				}
			}
			else
			{
				failed++;
				usleep(20000);	/* server down: do not spin */
			}
			curl_multi_remove_handle(m, s->h);
			inflight--;
			if (now_s() < t_end && (total == 0 || sent < total))
			{
				prepare(s, prefix);
				curl_multi_add_handle(m, s->h);
				sent++;
				inflight++;
			}
		}
		curl_multi_poll(m, NULL, 0, 100, NULL);
		curl_multi_perform(m, &running);
	} while (inflight > 0);
	{
		double		el = now_s() - t0;

		qsort(lat, nlat, sizeof(double), cmp_double);
		printf("sent=%ld ok=%ld failed=%ld seconds=%.2f rate=%.0f/s p50_ms=%.2f p99_ms=%.2f max_ms=%.2f\n",
			   sent, ok, failed, el, ok / el,
			   nlat ? lat[nlat / 2] : 0, nlat ? lat[(long) (nlat * 0.99)] : 0,
			   nlat ? lat[nlat - 1] : 0);
	}
	if (okf)
		fclose(okf);
	return 0;
}
