/*-------------------------------------------------------------------------
 * movies_catalog.c
 *	  The seeded movie catalogue of the sandbox: which movies exist, their
 *	  facts, lookup by id or slug, and the movie detail object.
 *
 * Design notes:
 *
 * - The catalogue is a small table built once from --seed: 200 ordinary
 *   movies (ids 1..200) and five named ones (ids 1000..1004: inception,
 *   epic-saga, bench-100k, bench-1m, summary-only).  It holds facts only:
 *   title, slug, genres, which content exists and how many items each
 *   list has; the items themselves are made on demand by
 *   movies_content.c.
 * - The named movies are fixed (only their generated text depends on the
 *   seed); ordinary movies' titles, genres, availability and counts are
 *   drawn from the seed, so tests that need "a movie without themes"
 *   look one up (GET /_sandbox/movies) rather than hard-coding an id.
 *-------------------------------------------------------------------------
 */
#include "movies.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define NORDINARY 200
#define MAX_MOVIES (NORDINARY + 8)

const char *const sb_movies_content_names[SB_MC_COUNT] = {
	"summary", "spoiler-free-summary", "ending", "timeline", "setting",
	"themes", "characters", "faqs", "profile"
};

const char *const sb_movies_section_names[SB_FAQ_NSECTIONS] = {
	"summary", "ending", "info"
};

static const char *const genres[] = {
	"action", "adventure", "animation", "comedy", "crime", "documentary",
	"drama", "family", "fantasy", "horror", "mystery", "romance",
	"science-fiction", "thriller", "war", "western"
};

static const char *const languages[] = {
	"en", "en", "en", "en", "fr", "ja", "ko", "es", "de", "it", "hi", "sv"
};

/* The named movies; list counts of a scripted movie come from its script. */
static const struct
{
	int64_t		id;
	const char *slug;
	const char *title;
	int			year;
	const char *release_date;
	int			runtime;
	const char *genres[SB_MOVIE_MAX_GENRES];
	int64_t		ntimeline;
	int64_t		nthemes;
	int64_t		ncharacters;
	int64_t		nfaqs;			/* per section */
	bool		summary_only;
	const sb_movie_script *script;
}			specials[] = {
	{1000, "inception", "Inception", 2010, "2010-07-16", 148,
	{"science-fiction", "thriller", "action"}, 0, 0, 0, 0, false, &sb_movies_inception},
	{1001, "epic-saga", "Epic Saga", 2003, "2003-12-17", 201,
	{"fantasy", "adventure"}, 2500, 10000, 400, 100, false, NULL},
	{1002, "bench-100k", "Benchmark 100k", 2020, "", 90,
	{"documentary"}, 100, 100000, 100, 20, false, NULL},
	{1003, "bench-1m", "Benchmark 1M", 2021, "", 0,
	{"documentary"}, 1000000, 1000000, 1000, 50, false, NULL},
	{1004, "summary-only", "Summary Only", 1999, "1999-03-05", 95,
	{"drama"}, 0, 0, 0, 0, true, NULL},
};

static sb_movie catalogue[MAX_MOVIES];
static int	nmovies = 0;

/* ---- catalogue ---- */

static void
slugify(const char *title, char *out, size_t len)
{
	size_t		o = 0;
	bool		dash = false;

	for (const char *p = title; *p && o + 2 < len; p++)
	{
		char		c = *p;

		if (c >= 'A' && c <= 'Z')
			c = (char) (c - 'A' + 'a');
		if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))
		{
			if (dash && o > 0)
				out[o++] = '-';
			out[o++] = c;
			dash = false;
		}
		else
			dash = true;
	}
	out[o] = '\0';
}

static bool
slug_taken(const char *slug)
{
	for (int i = 0; i < nmovies; i++)
		if (strcmp(catalogue[i].slug, slug) == 0)
			return true;
	for (size_t i = 0; i < SB_LENGTHOF(specials); i++)
		if (strcmp(specials[i].slug, slug) == 0)
			return true;
	return false;
}

static void
build_ordinary(sb_movie *m, int64_t id)
{
	sb_mgen		g = sb_mgen_start(id, SB_MK_MOVIE, 0);

	memset(m, 0, sizeof(*m));
	m->id = id;
	sb_movies_title(id, m->title, sizeof(m->title));
	slugify(m->title, m->slug, sizeof(m->slug));
	if (slug_taken(m->slug))
	{
		char		plain[sizeof(m->slug)];

		memcpy(plain, m->slug, sizeof(plain));
		snprintf(m->slug, sizeof(m->slug), "%.50s-%" PRId64, plain, id);
	}

	m->year = 1950 + (int) sb_mgen_below(&g, 75);
	if (sb_mgen_below(&g, 5) != 0)
	{
		int			month = 1 + (int) sb_mgen_below(&g, 12);
		int			day = 1 + (int) sb_mgen_below(&g, 28);

		snprintf(m->release_date, sizeof(m->release_date), "%04d-%02d-%02d",
				 m->year, month, day);
	}
	m->runtime_minutes = sb_mgen_below(&g, 10) == 0 ? 0 : 80 + (int) sb_mgen_below(&g, 101);
	m->original_language = SB_PICK(&g, languages);
	m->has_poster = sb_mgen_below(&g, 5) < 3;
	m->ngenres = 1 + (int) sb_mgen_below(&g, SB_MOVIE_MAX_GENRES);
	for (int i = 0; i < m->ngenres; i++)
	{
		const char *gname;
		bool		dup;

		do
		{
			gname = SB_PICK(&g, genres);
			dup = false;
			for (int j = 0; j < i; j++)
				dup |= (m->genres[j] == gname);
		} while (dup);
		m->genres[i] = gname;
	}

	/* summary always exists; every other kind is missing for ~15% */
	for (int c = 0; c < SB_MC_COUNT; c++)
		m->available[c] = (c == SB_MC_SUMMARY) || sb_mgen_below(&g, 100) >= 15;
	m->ntimeline = m->available[SB_MC_TIMELINE] ? 1 + sb_mgen_below(&g, 60) : 0;
	m->nthemes = m->available[SB_MC_THEMES] ? 1 + sb_mgen_below(&g, 60) : 0;
	m->ncharacters = m->available[SB_MC_CHARACTERS] ? 1 + sb_mgen_below(&g, 60) : 0;
	if (m->available[SB_MC_FAQS])
	{
		int64_t		total = 0;

		for (int s = 0; s < SB_FAQ_NSECTIONS; s++)
		{
			m->nfaqs[s] = sb_mgen_below(&g, 4) == 0 ? 0 : 1 + sb_mgen_below(&g, 20);
			total += m->nfaqs[s];
		}
		m->available[SB_MC_FAQS] = total > 0;
	}
}

static void
build_special(sb_movie *m, int k)
{
	const sb_movie_script *sc = specials[k].script;

	memset(m, 0, sizeof(*m));
	m->id = specials[k].id;
	snprintf(m->slug, sizeof(m->slug), "%s", specials[k].slug);
	snprintf(m->title, sizeof(m->title), "%s", specials[k].title);
	m->year = specials[k].year;
	snprintf(m->release_date, sizeof(m->release_date), "%s", specials[k].release_date);
	m->runtime_minutes = specials[k].runtime;
	m->original_language = "en";
	m->has_poster = sc != NULL;
	for (int i = 0; i < SB_MOVIE_MAX_GENRES && specials[k].genres[i]; i++)
		m->genres[m->ngenres++] = specials[k].genres[i];
	for (int c = 0; c < SB_MC_COUNT; c++)
		m->available[c] = (c == SB_MC_SUMMARY) || !specials[k].summary_only;
	m->script = sc;
	if (sc)
	{
		m->ntimeline = sc->nevents;
		m->nthemes = sc->nthemes;
		m->ncharacters = sc->ncharacters;
		for (int s = 0; s < SB_FAQ_NSECTIONS; s++)
			m->nfaqs[s] = sc->nfaqs[s];
	}
	else if (!specials[k].summary_only)
	{
		m->ntimeline = specials[k].ntimeline;
		m->nthemes = specials[k].nthemes;
		m->ncharacters = specials[k].ncharacters;
		for (int s = 0; s < SB_FAQ_NSECTIONS; s++)
			m->nfaqs[s] = specials[k].nfaqs;
	}
}

/*
 * Builds the catalogue from the seed, ordered by id.  Idempotent; called
 * from the service's init hook, after --seed is known.
 */
void
sb_movies_catalog_build(void)
{
	nmovies = 0;
	for (int64_t id = 1; id <= NORDINARY; id++)
	{
		build_ordinary(&catalogue[nmovies], id);
		nmovies++;
	}
	for (size_t k = 0; k < SB_LENGTHOF(specials); k++)
	{
		build_special(&catalogue[nmovies], (int) k);
		nmovies++;
	}
}

int
sb_movies_count(void)
{
	return nmovies;
}

const sb_movie *
sb_movies_at(int i)
{
	return (i >= 0 && i < nmovies) ? &catalogue[i] : NULL;
}

/*
 * Resolves a {movie} path value: a canonical decimal id ("12", not "012")
 * or an exact slug.  NULL when no movie matches.
 */
const sb_movie *
sb_movies_find(const char *ref)
{
	bool		digits = ref[0] != '\0';

	for (const char *p = ref; *p; p++)
		digits &= (*p >= '0' && *p <= '9');
	for (int i = 0; i < nmovies; i++)
	{
		if (digits)
		{
			char		idbuf[24];

			snprintf(idbuf, sizeof(idbuf), "%" PRId64, catalogue[i].id);
			if (strcmp(idbuf, ref) == 0)
				return &catalogue[i];
		}
		else if (strcmp(catalogue[i].slug, ref) == 0)
			return &catalogue[i];
	}
	return NULL;
}

/* ---- JSON of single objects ---- */

json_t *
sb_movies_detail_json(const sb_movie *m)
{
	json_t	   *o = json_object();
	json_t	   *g = json_array();
	json_t	   *avail = json_array();

	json_object_set_new(o, "id", json_integer(m->id));
	json_object_set_new(o, "slug", json_string(m->slug));
	json_object_set_new(o, "title", json_string(m->title));
	json_object_set_new(o, "year", json_integer(m->year));
	if (m->release_date[0])
		json_object_set_new(o, "release_date", json_string(m->release_date));
	for (int i = 0; i < m->ngenres; i++)
		json_array_append_new(g, json_string(m->genres[i]));
	json_object_set_new(o, "genres", g);
	json_object_set_new(o, "runtime_minutes", m->runtime_minutes > 0 ?
						json_integer(m->runtime_minutes) : json_null());
	json_object_set_new(o, "original_language", json_string(m->original_language));
	if (m->has_poster)
	{
		char		url[160];

		snprintf(url, sizeof(url), "https://images.sandbox.invalid/posters/%s.jpg", m->slug);
		json_object_set_new(o, "poster_url", json_string(url));
	}
	for (int c = 0; c < SB_MC_COUNT; c++)
		if (m->available[c])
			json_array_append_new(avail, json_string(sb_movies_content_names[c]));
	json_object_set_new(o, "available_content", avail);
	return o;
}
