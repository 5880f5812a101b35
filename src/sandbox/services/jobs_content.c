/*-------------------------------------------------------------------------
 * jobs_content.c
 *	  What the job families say, drawn from the seed: their models, the
 *	  seeded job history every partner sees, and the result of a job
 *	  (docs/sandbox-jobs.md, "Payloads").
 *
 * Everything here is a pure function of the seed, the family and an index
 * or job id, so a page of history is the same bytes from run to run (the
 * seeded jobs' times are fixed dates in January 2026, not "now").
 *-------------------------------------------------------------------------
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "jobs.h"

/* 2026-01-01T00:00:00Z: the first seeded job of every family */
#define JOBS_SEEDED_EPOCH_MS INT64_C(1767225600000)

static const char *const words[] = {
	"invoice", "contract", "delivery", "vehicle", "permit", "payment",
	"customer", "warranty", "schedule", "account", "report", "route",
	"document", "notice", "receipt", "order", "partner", "term",
};

#define NWORDS (sizeof(words) / sizeof(words[0]))

json_t *
jobs_models_json(const jobs_family *fam)
{
	json_t	   *arr = json_array();

	for (int i = 0; fam->models[i]; i++)
	{
		uint64_t	h = sb_hash_str(fam->models[i], 0x30de1ULL);
		char		version[16];

		snprintf(version, sizeof(version), "2026-%02d", (int) (h % 12) + 1);
		json_array_append_new(arr,
							  json_pack("{s:s, s:s, s:s, s:b}",
										"id", fam->models[i],
										"family", fam->name,
										"version", version,
										"default", i == 0));
	}
	return arr;
}

static int
nmodels(const jobs_family *fam)
{
	int			n = 0;

	while (fam->models[n])
		n++;
	return n;
}

/* Seeded job i (0-based) of fam: the same for every partner. */
json_t *
jobs_seeded_job(const jobs_family *fam, int i)
{
	uint64_t	h = sb_hash(sb_hash_str(fam->name, 0x10b5ULL), (uint64_t) i);
	char		id[48];
	char		file_id[32];
	char		created[40];
	char		finished[40];
	int64_t		at = JOBS_SEEDED_EPOCH_MS + (int64_t) i * 37 * 60000;
	bool		failed = (h >> 8) % 7 == 0;

	snprintf(id, sizeof(id), "%s_%012" PRIx64, fam->name, h & UINT64_C(0xffffffffffff));
	snprintf(file_id, sizeof(file_id), "file_%016" PRIx64, sb_hash(h, 0xf11eULL));
	sb_iso8601(at, created, sizeof(created));
	sb_iso8601(at + 1000 * (int64_t) (5 + (h >> 16) % 600), finished, sizeof(finished));
	return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:o}",
					 "id", id,
					 "model", fam->models[(h >> 24) % (uint64_t) nmodels(fam)],
					 "file_id", file_id,
					 "status", failed ? "failed" : "succeeded",
					 "created_at", created,
					 "finished_at", finished,
					 "error", failed ?
					 json_pack("{s:s, s:s}", "code", "unreadable_file",
							   "message", "the file could not be read") :
					 json_null());
}

/* A sentence of n words drawn from h. */
static json_t *
sentence(uint64_t h, int n)
{
	char		buf[512];
	size_t		o = 0;

	for (int i = 0; i < n && o + 16 < sizeof(buf); i++)
	{
		uint64_t	w = sb_hash(h, (uint64_t) i) % NWORDS;

		o += (size_t) snprintf(buf + o, sizeof(buf) - o, "%s%s", i ? " " : "", words[w]);
	}
	if (o > 0)
		buf[0] = (char) (buf[0] - 'a' + 'A');
	snprintf(buf + o, sizeof(buf) - o, ".");
	return json_string(buf);
}

/*
 * The result of a succeeded job of fam: a shape of the family's own
 * (docs/sandbox-jobs.md).  options is the job's options object (may be
 * NULL); translate reads its target_language.
 */
json_t *
jobs_result_json(const jobs_family *fam, const char *job_id, json_t *options)
{
	uint64_t	h = sb_hash_str(job_id, 0x7e5017ULL);
	json_t	   *out = json_pack("{s:s, s:s}", "job_id", job_id, "family", fam->name);

	if (strcmp(fam->name, "ocr") == 0)
	{
		json_t	   *pages = json_array();
		int			n = 1 + (int) (h % 3);

		for (int p = 1; p <= n; p++)
			json_array_append_new(pages, json_pack("{s:i, s:o}", "page", p,
												   "text", sentence(h + (uint64_t) p, 8)));
		json_object_set_new(out, "pages", pages);
		/* multiples of 1/64, which JSON writes exactly: 0.75 .. 0.984375 */
		json_object_set_new(out, "confidence", json_real(0.75 + (double) (h % 16) / 64.0));
	}
	else if (strcmp(fam->name, "translate") == 0)
	{
		json_t	   *t = options ? json_object_get(options, "target_language") : NULL;

		json_object_set_new(out, "source_language", json_string("de"));
		json_object_set_new(out, "target_language",
							json_string(json_is_string(t) ? json_string_value(t) : "en"));
		json_object_set_new(out, "text", sentence(h, 12));
	}
	else if (strcmp(fam->name, "summarize") == 0)
		json_object_set_new(out, "summary", sentence(h, 15));
	else if (strcmp(fam->name, "classify") == 0)
	{
		json_t	   *labels = json_array();

		for (int i = 0; i < 3; i++)
			json_array_append_new(labels,
								  json_pack("{s:s, s:f}", "label",
											words[sb_hash(h, (uint64_t) i + 100) % NWORDS],
											"score", 0.875 / (double) (1 << i)));
		json_object_set_new(out, "labels", labels);
	}
	else if (strcmp(fam->name, "extract") == 0)
	{
		char		number[32];
		char		total[32];

		snprintf(number, sizeof(number), "INV-%06" PRIu64, h % 1000000);
		snprintf(total, sizeof(total), "%" PRIu64 ".%02" PRIu64, (h >> 20) % 5000, (h >> 8) % 100);
		json_object_set_new(out, "fields",
							json_pack("{s:s, s:s, s:s}", "invoice_number", number,
									  "total", total, "currency", "EUR"));
	}
	else
	{
		json_object_set_new(out, "redactions",
							json_pack("[{s:s, s:i}, {s:s, s:i}]",
									  "kind", "email", "count", (int) (h % 5),
									  "kind", "phone", "count", (int) ((h >> 8) % 3)));
		json_object_set_new(out, "text", sentence(h, 10));
	}
	return out;
}
