/*-------------------------------------------------------------------------
 * movies.c
 *	  Routes of the movie content service of the sandbox (docs/sandbox-movies.md):
 *	  the movie search, the movie detail, the nine content endpoints, and
 *	  two sandbox-only views of the catalogue.
 *
 * Design notes:
 *
 * - Everything here is a read of the seeded catalogue (movies_catalog.c,
 *   movies_content.c); there is no per-partner state, nothing to reset
 *   and no knob.  Rate limits are not shown for this service, so no route
 *   has a rate-limit row.
 * - Checks run in one order on every route: auth (core), query parameter
 *   names (400), parameter values (400), the movie (400 when longer than
 *   255 characters, 404 movie_not_found), the content (404
 *   content_not_available), then the cursor (400, in sb_page).
 * - Cursors are bound to the path with the movie's canonical numeric id,
 *   so a cursor obtained through the slug also works through the id and
 *   the other way round; faqs add the section ("all" when absent) and the
 *   search adds genre and sort.
 *-------------------------------------------------------------------------
 */
#include "movies.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MOVIE_REF_MAX 255
#define GENRE_MAX 64
#define BIND_MAX 192

static const char *const no_params[] = {NULL};
static const char *const page_params[] = {"limit", "cursor", NULL};
static const char *const faq_params[] = {"limit", "cursor", "section", NULL};
static const char *const search_params[] = {"genre", "sort", "limit", "cursor", NULL};

/* Catalogue positions ordered by title (ties by id), for sort=title. */
static int *by_title = NULL;

static int
title_cmp(const void *a, const void *b)
{
	const sb_movie *ma = sb_movies_at(*(const int *) a);
	const sb_movie *mb = sb_movies_at(*(const int *) b);
	int			c = strcmp(ma->title, mb->title);

	if (c != 0)
		return c;
	return ma->id < mb->id ? -1 : ma->id > mb->id;
}

static void
movies_init(void)
{
	int			n;

	sb_movies_catalog_build();
	n = sb_movies_count();
	free(by_title);
	by_title = malloc(sizeof(int) * (size_t) n);
	for (int i = 0; i < n; i++)
		by_title[i] = i;
	qsort(by_title, (size_t) n, sizeof(int), title_cmp);
}

/* ---- shared checks ---- */

/*
 * Resolves the {movie} path parameter; replies 400 or 404 and returns
 * NULL when it names no movie.
 */
static const sb_movie *
movie_arg(sb_request *req, sb_response *resp)
{
	const char *ref = sb_param(req, "movie");
	const sb_movie *m;

	if (by_title == NULL)
		movies_init();
	if (ref == NULL || ref[0] == '\0' || strlen(ref) > MOVIE_REF_MAX)
	{
		sb_reply_error(req, resp, 400, "invalid_parameter",
					   "movie must be a numeric id or a slug of 1 to %d characters",
					   MOVIE_REF_MAX);
		return NULL;
	}
	m = sb_movies_find(ref);
	if (m == NULL)
		sb_reply_error(req, resp, 404, "movie_not_found",
					   "no movie with id or slug \"%.80s\"", ref);
	return m;
}

/* Replies 404 content_not_available unless movie m has content c. */
static bool
content_check(sb_request *req, sb_response *resp, const sb_movie *m,
			  sb_movie_content c)
{
	if (m->available[c])
		return true;
	sb_reply_error(req, resp, 404, "content_not_available",
				   "movie %" PRId64 " has no %s content; see available_content in GET /v1/movies/%" PRId64,
				   m->id, sb_movies_content_names[c], m->id);
	return false;
}

static void
reply_data(sb_response *resp, json_t *obj)
{
	sb_reply_json(resp, 200, json_pack("{s:o}", "data", obj));
}

/* ---- detail and single-object content ---- */

static void
get_detail(sb_request *req, sb_response *resp)
{
	const sb_movie *m;

	if (!sb_query_check(req, resp, no_params) || (m = movie_arg(req, resp)) == NULL)
		return;
	reply_data(resp, sb_movies_detail_json(m));
}

static void
single_content(sb_request *req, sb_response *resp, sb_movie_content c)
{
	const sb_movie *m;
	json_t	   *obj;

	if (!sb_query_check(req, resp, no_params) ||
		(m = movie_arg(req, resp)) == NULL ||
		!content_check(req, resp, m, c))
		return;
	if (c == SB_MC_SETTING)
		obj = sb_movies_setting_json(m);
	else if (c == SB_MC_PROFILE)
		obj = sb_movies_profile_json(m);
	else
		obj = sb_movies_text_json(m, c);
	reply_data(resp, obj);
}

static void
get_summary(sb_request *req, sb_response *resp)
{
	single_content(req, resp, SB_MC_SUMMARY);
}

static void
get_spoiler_free(sb_request *req, sb_response *resp)
{
	single_content(req, resp, SB_MC_SPOILER_FREE);
}

static void
get_ending(sb_request *req, sb_response *resp)
{
	single_content(req, resp, SB_MC_ENDING);
}

static void
get_setting(sb_request *req, sb_response *resp)
{
	single_content(req, resp, SB_MC_SETTING);
}

static void
get_profile(sb_request *req, sb_response *resp)
{
	single_content(req, resp, SB_MC_PROFILE);
}

/* ---- paginated content ---- */

typedef struct list_arg
{
	const sb_movie *m;
	int			section;		/* faqs: a section, or -1 for all */
} list_arg;

static json_t *
event_item(int64_t i, void *arg)
{
	return sb_movies_event_json(((list_arg *) arg)->m, i);
}

static json_t *
theme_item(int64_t i, void *arg)
{
	return sb_movies_theme_json(((list_arg *) arg)->m, i);
}

static json_t *
character_item(int64_t i, void *arg)
{
	return sb_movies_character_json(((list_arg *) arg)->m, i);
}

/* Without a section the list is every summary, then ending, then info faq. */
static json_t *
faq_item(int64_t i, void *arg)
{
	list_arg   *la = arg;
	int			s = 0;

	if (la->section >= 0)
		return sb_movies_faq_json(la->m, (sb_faq_section) la->section, i);
	while (s < SB_FAQ_NSECTIONS - 1 && i >= la->m->nfaqs[s])
		i -= la->m->nfaqs[s++];
	return sb_movies_faq_json(la->m, (sb_faq_section) s, i);
}

static void
list_content(sb_request *req, sb_response *resp, sb_movie_content c)
{
	list_arg	la = {NULL, -1};
	char		bind[BIND_MAX];
	int64_t		total;
	sb_item_fn	fn;

	if (!sb_query_check(req, resp, page_params) ||
		(la.m = movie_arg(req, resp)) == NULL ||
		!content_check(req, resp, la.m, c))
		return;
	if (c == SB_MC_TIMELINE)
	{
		total = la.m->ntimeline;
		fn = event_item;
	}
	else if (c == SB_MC_THEMES)
	{
		total = la.m->nthemes;
		fn = theme_item;
	}
	else
	{
		total = la.m->ncharacters;
		fn = character_item;
	}
	snprintf(bind, sizeof(bind), "/v1/movies/%" PRId64 "/content/%s",
			 la.m->id, sb_movies_content_names[c]);
	sb_page_pure(req, resp, bind, total, fn, &la);
}

static void
get_timeline(sb_request *req, sb_response *resp)
{
	list_content(req, resp, SB_MC_TIMELINE);
}

static void
get_themes(sb_request *req, sb_response *resp)
{
	list_content(req, resp, SB_MC_THEMES);
}

static void
get_characters(sb_request *req, sb_response *resp)
{
	list_content(req, resp, SB_MC_CHARACTERS);
}

/*
 * faqs: section is one of the query values "summary", "ending", "info"
 * (the document's plot, ending, background).  No question at all, for the
 * movie or for the requested section, is 404 content_not_available.
 */
static void
get_faqs(sb_request *req, sb_response *resp)
{
	list_arg	la = {NULL, -1};
	const char *section = sb_query(req, "section");
	char		bind[BIND_MAX];
	int64_t		total = 0;

	if (!sb_query_check(req, resp, faq_params))
		return;
	if (section != NULL)
	{
		for (int s = 0; s < SB_FAQ_NSECTIONS; s++)
			if (strcmp(section, sb_movies_section_names[s]) == 0)
				la.section = s;
		if (la.section < 0)
		{
			sb_reply_error(req, resp, 400, "invalid_parameter",
						   "section must be one of summary, ending, info");
			return;
		}
	}
	if ((la.m = movie_arg(req, resp)) == NULL ||
		!content_check(req, resp, la.m, SB_MC_FAQS))
		return;
	for (int s = 0; s < SB_FAQ_NSECTIONS; s++)
		if (la.section < 0 || la.section == s)
			total += la.m->nfaqs[s];
	if (total == 0)
	{
		sb_reply_error(req, resp, 404, "content_not_available",
					   "movie %" PRId64 " has no faqs in section %s",
					   la.m->id, section ? section : "any");
		return;
	}
	snprintf(bind, sizeof(bind), "/v1/movies/%" PRId64 "/content/faqs?section=%s",
			 la.m->id, section ? section : "all");
	sb_page_pure(req, resp, bind, total, faq_item, &la);
}

/* ---- movie search ---- */

typedef struct search_arg
{
	const int  *pos;			/* catalogue positions of the matches */
} search_arg;

static json_t *
search_item(int64_t i, void *arg)
{
	return sb_movies_detail_json(sb_movies_at(((search_arg *) arg)->pos[i]));
}

static bool
has_genre(const sb_movie *m, const char *genre)
{
	for (int g = 0; g < m->ngenres; g++)
		if (strcasecmp(m->genres[g], genre) == 0)
			return true;
	return false;
}

/*
 * GET /movies: genre (exact, case-insensitive; no match is an empty
 * list), sort "id" (default) or "title", limit, cursor.  Items are the
 * movie detail objects.
 */
static void
get_search(sb_request *req, sb_response *resp)
{
	const char *genre = sb_query(req, "genre");
	const char *sort = sb_query(req, "sort");
	char		lgenre[GENRE_MAX + 1] = "";
	char		bind[BIND_MAX];
	bool		by_id = true;
	int			n,
				nmatch = 0;
	int		   *pos;
	search_arg	sa;

	if (!sb_query_check(req, resp, search_params))
		return;
	if (by_title == NULL)
		movies_init();
	if (genre != NULL)
	{
		size_t		len = strlen(genre);

		if (len < 1 || len > GENRE_MAX)
		{
			sb_reply_error(req, resp, 400, "invalid_parameter",
						   "genre must be 1 to %d characters", GENRE_MAX);
			return;
		}
		for (size_t i = 0; i <= len; i++)
			lgenre[i] = (genre[i] >= 'A' && genre[i] <= 'Z') ?
				(char) (genre[i] - 'A' + 'a') : genre[i];
	}
	if (sort != NULL && strcmp(sort, "title") == 0)
		by_id = false;
	else if (sort != NULL && strcmp(sort, "id") != 0)
	{
		sb_reply_error(req, resp, 400, "invalid_parameter",
					   "sort must be id or title");
		return;
	}

	n = sb_movies_count();
	pos = malloc(sizeof(int) * (size_t) (n > 0 ? n : 1));
	for (int i = 0; i < n; i++)
	{
		int			p = by_id ? i : by_title[i];

		if (genre == NULL || has_genre(sb_movies_at(p), lgenre))
			pos[nmatch++] = p;
	}
	snprintf(bind, sizeof(bind), "/movies?genre=%s&sort=%s",
			 lgenre, by_id ? "id" : "title");
	sa.pos = pos;
	sb_page(req, resp, bind, nmatch, search_item, &sa, NULL);
	free(pos);
}

/* ---- sandbox-only views: the catalogue with its list sizes ---- */

static json_t *
admin_json(const sb_movie *m)
{
	json_t	   *o = sb_movies_detail_json(m);

	json_object_set_new(o, "counts",
						json_pack("{s:I, s:I, s:I, s:{s:I, s:I, s:I}}",
								  "timeline", (json_int_t) m->ntimeline,
								  "themes", (json_int_t) m->nthemes,
								  "characters", (json_int_t) m->ncharacters,
								  "faqs",
								  "summary", (json_int_t) m->nfaqs[SB_FAQ_SUMMARY],
								  "ending", (json_int_t) m->nfaqs[SB_FAQ_ENDING],
								  "info", (json_int_t) m->nfaqs[SB_FAQ_INFO]));
	return o;
}

static void
admin_list(sb_request *req, sb_response *resp)
{
	json_t	   *arr = json_array();

	if (!sb_query_check(req, resp, no_params))
	{
		json_decref(arr);
		return;
	}
	if (by_title == NULL)
		movies_init();
	for (int i = 0; i < sb_movies_count(); i++)
		json_array_append_new(arr, admin_json(sb_movies_at(i)));
	reply_data(resp, arr);
}

static void
admin_one(sb_request *req, sb_response *resp)
{
	const sb_movie *m;

	if (!sb_query_check(req, resp, no_params) || (m = movie_arg(req, resp)) == NULL)
		return;
	reply_data(resp, admin_json(m));
}

#define CONTENT(p) "/v1/movies/{movie}/content/" p

static const sb_route routes[] = {
	{"GET", "/movies", SB_AUTH, SB_STYLE_PLAIN, NULL, get_search},
	{"GET", "/v1/movies/{movie}", SB_AUTH, SB_STYLE_PLAIN, NULL, get_detail},
	{"GET", CONTENT("summary"), SB_AUTH, SB_STYLE_PLAIN, NULL, get_summary},
	{"GET", CONTENT("spoiler-free-summary"), SB_AUTH, SB_STYLE_PLAIN, NULL, get_spoiler_free},
	{"GET", CONTENT("ending"), SB_AUTH, SB_STYLE_PLAIN, NULL, get_ending},
	{"GET", CONTENT("timeline"), SB_AUTH, SB_STYLE_PLAIN, NULL, get_timeline},
	{"GET", CONTENT("setting"), SB_AUTH, SB_STYLE_PLAIN, NULL, get_setting},
	{"GET", CONTENT("themes"), SB_AUTH, SB_STYLE_PLAIN, NULL, get_themes},
	{"GET", CONTENT("characters"), SB_AUTH, SB_STYLE_PLAIN, NULL, get_characters},
	{"GET", CONTENT("faqs"), SB_AUTH, SB_STYLE_PLAIN, NULL, get_faqs},
	{"GET", CONTENT("profile"), SB_AUTH, SB_STYLE_PLAIN, NULL, get_profile},
	{"GET", "/_sandbox/movies", SB_ADMIN, SB_STYLE_PLAIN, NULL, admin_list},
	{"GET", "/_sandbox/movies/{movie}", SB_ADMIN, SB_STYLE_PLAIN, NULL, admin_one},
	{NULL}
};

const sb_service sb_service_movies = {
	.name = "movies",
	.routes = routes,
	.init = movies_init,
};
