/*-------------------------------------------------------------------------
 * main.c
 *	  partner_svc_sandbox: command line, start-up and shutdown.
 *
 * The command line is a public interface (downstream test suites start
 * the sandbox themselves), so options are only ever added, never renamed.
 * With --port 0 the kernel picks a free port; the first line on standard
 * output always names the address, and --port-file writes the bare port.
 *-------------------------------------------------------------------------
 */
#include "core.h"

#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The Makefile passes EXTVERSION, the extension's version. */
#ifndef SANDBOX_VERSION
#define SANDBOX_VERSION "unknown"
#endif
#define MAX_SETS 64

static void
usage(FILE *out)
{
	fprintf(out,
			"partner_svc_sandbox " SANDBOX_VERSION ": fakes the partner services on 127.0.0.1\n"
			"\n"
			"Usage: partner_svc_sandbox [OPTION]...\n"
			"\n"
			"  --port N              port to listen on (default 8765; 0 picks a free one)\n"
			"  --port-file FILE      write the bound port to FILE once listening\n"
			"  --key KEY[=TIER]      accept KEY as a partner of TIER (standard, premium,\n"
			"                        enterprise; default standard); repeatable; each key is\n"
			"                        its own partner with its own data (default: sandbox-key)\n"
			"  --time-scale S        real ms per sandbox ms (0.001: a minute lasts 60 ms)\n"
			"  --seed N              seed of all generated content and decisions (default 1)\n"
			"  --short-page-rate R   chance 0..1 that a list page is short while has_more\n"
			"  --rl-window-ms N      rate-limit window in sandbox ms (default 60000)\n"
			"  --rl-offset-ms N      alignment of the windows (default derived from the seed)\n"
			"  --no-rate-limits      do not enforce the rate-limit table\n"
			"  --no-retry-after      answer rate-limit 429s without Retry-After\n"
			"  --environment ENV     sandbox or production (which callback URL gets webhooks)\n"
			"  --fault SPEC          ROUTE:KIND[=VALUE][,rate=R][,count=N][,skip=N];\n"
			"                        repeatable;\n"
			"                        kinds: latency, error, 429, malformed, truncate, reset,\n"
			"                        drip, drop_after_apply, corrupt_cursor (see\n"
			"                        docs/sandbox.md)\n"
			"  --set NAME=VALUE      set a knob (VALUE is JSON, else a string); repeatable\n"
			"  --verbose             log every request to standard error\n"
			"  --help                show this help and exit\n"
			"  --version             show the version and exit\n");
}

static bool
add_key(const char *arg)
{
	char	   *copy = strdup(arg);
	char	   *eq = strchr(copy, '=');
	sb_tier		tier = SB_TIER_STANDARD;

	if (eq)
	{
		*eq = '\0';
		if (strcmp(eq + 1, "standard") == 0)
			tier = SB_TIER_STANDARD;
		else if (strcmp(eq + 1, "premium") == 0)
			tier = SB_TIER_PREMIUM;
		else if (strcmp(eq + 1, "enterprise") == 0)
			tier = SB_TIER_ENTERPRISE;
		else
		{
			fprintf(stderr, "partner_svc_sandbox: unknown tier \"%s\"\n", eq + 1);
			free(copy);
			return false;
		}
	}
	if (*copy == '\0' || sb_npartners >= SB_MAX_PARTNERS || sb_partner_by_key(copy))
	{
		fprintf(stderr, "partner_svc_sandbox: key empty, repeated or too many keys\n");
		free(copy);
		return false;
	}
	sb_partners[sb_npartners].index = sb_npartners;
	sb_partners[sb_npartners].key = copy;
	sb_partners[sb_npartners].tier = tier;
	sb_npartners++;
	return true;
}

static bool
apply_set(const char *arg)
{
	char	   *copy = strdup(arg);
	char	   *eq = strchr(copy, '=');
	json_t	   *value;
	int			r;

	if (eq == NULL)
	{
		fprintf(stderr, "partner_svc_sandbox: --set needs NAME=VALUE\n");
		free(copy);
		return false;
	}
	*eq = '\0';
	value = json_loads(eq + 1, JSON_DECODE_ANY, NULL);
	if (value == NULL)
		value = json_string(eq + 1);
	sb_lock();
	r = sb_knob_set(copy, value);
	sb_unlock();
	json_decref(value);
	if (r <= 0)
		fprintf(stderr, "partner_svc_sandbox: %s knob \"%s\"\n",
				r == 0 ? "unknown" : "invalid value for", copy);
	free(copy);
	return r > 0;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"port", required_argument, NULL, 'p'},
		{"port-file", required_argument, NULL, 'P'},
		{"key", required_argument, NULL, 'k'},
		{"time-scale", required_argument, NULL, 't'},
		{"seed", required_argument, NULL, 's'},
		{"short-page-rate", required_argument, NULL, 'r'},
		{"rl-window-ms", required_argument, NULL, 'w'},
		{"rl-offset-ms", required_argument, NULL, 'o'},
		{"no-rate-limits", no_argument, NULL, 'L'},
		{"no-retry-after", no_argument, NULL, 'R'},
		{"environment", required_argument, NULL, 'e'},
		{"fault", required_argument, NULL, 'f'},
		{"set", required_argument, NULL, 'S'},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0}
	};
	const char *sets[MAX_SETS];
	int			nsets = 0;
	const char *port_file = NULL;
	int			c;
	int			port;
	sigset_t	sigs;
	int			sig;
	char		err[256];

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1)
	{
		switch (c)
		{
			case 'p':
				sb_cfg.port = atoi(optarg);
				if (sb_cfg.port < 0 || sb_cfg.port > 65535)
				{
					fprintf(stderr, "partner_svc_sandbox: invalid port \"%s\"\n", optarg);
					return 2;
				}
				break;
			case 'P':
				port_file = optarg;
				break;
			case 'k':
				if (!add_key(optarg))
					return 2;
				break;
			case 't':
				sb_cfg.time_scale = atof(optarg);
				if (sb_cfg.time_scale <= 0)
				{
					fprintf(stderr, "partner_svc_sandbox: --time-scale must be positive\n");
					return 2;
				}
				break;
			case 's':
				sb_cfg.seed = strtoull(optarg, NULL, 10);
				break;
			case 'r':
				sb_cfg.short_page_rate = atof(optarg);
				break;
			case 'w':
				sb_cfg.rl_window_ms = atoll(optarg);
				if (sb_cfg.rl_window_ms < 1)
				{
					fprintf(stderr, "partner_svc_sandbox: --rl-window-ms must be positive\n");
					return 2;
				}
				break;
			case 'o':
				sb_cfg.rl_offset_ms = atoll(optarg);
				break;
			case 'L':
				sb_cfg.rl_enabled = false;
				break;
			case 'R':
				sb_cfg.rl_retry_after = false;
				break;
			case 'e':
				if (strcmp(optarg, "sandbox") != 0 && strcmp(optarg, "production") != 0)
				{
					fprintf(stderr, "partner_svc_sandbox: --environment is sandbox or production\n");
					return 2;
				}
				sb_cfg.environment = optarg;
				break;
			case 'f':
				if (!sb_fault_add_spec(optarg, err, sizeof(err)))
				{
					fprintf(stderr, "partner_svc_sandbox: %s\n", err);
					return 2;
				}
				break;
			case 'S':
				if (nsets >= MAX_SETS)
				{
					fprintf(stderr, "partner_svc_sandbox: too many --set options\n");
					return 2;
				}
				sets[nsets++] = optarg;
				break;
			case 'v':
				sb_cfg.verbose = true;
				break;
			case 'h':
				usage(stdout);
				return 0;
			case 'V':
				printf("partner_svc_sandbox " SANDBOX_VERSION "\n");
				return 0;
			default:
				usage(stderr);
				return 2;
		}
	}
	if (optind < argc)
	{
		fprintf(stderr, "partner_svc_sandbox: unexpected argument \"%s\"\n", argv[optind]);
		return 2;
	}
	if (sb_npartners == 0)
		add_key("sandbox-key=standard");
	if (sb_cfg.rl_offset_ms >= sb_cfg.rl_window_ms)
		sb_cfg.rl_offset_ms %= sb_cfg.rl_window_ms;
	sb_rl_init();
	(void) sb_sandbox_now_ms();	/* sandbox time starts now */

	for (const sb_service *const *s = sb_services(); *s; s++)
		if ((*s)->init)
			(*s)->init();
	for (int i = 0; i < nsets; i++)
		if (!apply_set(sets[i]))
			return 2;

	/* Signals are taken by sigwait below; every thread inherits the mask. */
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);

	sb_timers_start();
	port = sb_server_start();
	if (port < 0)
	{
		fprintf(stderr, "partner_svc_sandbox: could not listen on 127.0.0.1:%d\n", sb_cfg.port);
		return 1;
	}
	sb_cfg.port = port;
	if (port_file)
	{
		FILE	   *f = fopen(port_file, "w");

		if (f == NULL)
		{
			perror(port_file);
			sb_server_stop();
			return 1;
		}
		fprintf(f, "%d\n", port);
		fclose(f);
	}
	printf("partner_svc_sandbox listening on http://127.0.0.1:%d\n", port);
	fflush(stdout);

	sigwait(&sigs, &sig);
	sb_server_stop();
	return 0;
}
