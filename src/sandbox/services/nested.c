/*-------------------------------------------------------------------------
 * nested.c
 *	  The nested lists of the movie content service (docs/sandbox-movies.md, paging
 *	  rule 4): four detail routes whose object carries a paginated list,
 *	  /concerts/{concert} (data.events), /awards/{award}
 *	  (data.nominations), /books/{book} (data.adaptations) and
 *	  /collections/{type}/{collection} (data.movies).
 *
 * Design notes:
 *
 * - The document gives only the paths and the list names; every field,
 *   id range and error code here is the sandbox's choice, written down in
 *   docs/sandbox-movies.md ("Nested lists").
 * - Read-only and derived from the seed, like the movie catalogue: a
 *   detail and item i of its list are pure functions of (seed, kind, id,
 *   i), never stored, so there is nothing to reset.  Ids 1 and 2 of every
 *   kind are fixed (a long list and an empty one) so tests need no lookup.
 * - Paging goes through sb_page_nested: limit and cursor are query
 *   parameters of the detail URL, the cursor is bound to the canonical
 *   detail path, and the second page of every walk is short.  The movie
 *   content lists and their page cache are not touched.
 * - Rate limits are not shown in docs/sandbox-movies.md; each route has a row of
 *   our own in the core's table, counted per route.
 *-------------------------------------------------------------------------
 */
#include "movies.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REF_MAX 255
#define NESTED_IDS 40			/* ids 1..40 of every kind (and type) */
#define FIXED_LONG 1			/* id with a long list */
#define FIXED_EMPTY 2			/* id with an empty list */
#define MAX_GENERATED 80		/* other ids: 0..80 items */
#define CATALOGUE_MOVIES 200	/* collection and award items: movies 1..200 */
#define BIND_MAX 96

typedef enum nested_kind
{
	NK_CONCERT = 0,
	NK_AWARD,
	NK_BOOK,
	NK_COLLECTION,
	NK_COUNT
} nested_kind;

typedef struct nested_def
{
	const char *path;			/* prefix of the canonical path */
	const char *list;			/* member of data holding the list */
	const char *not_found;		/* 404 code */
	const char *what;			/* for messages */
	int64_t		long_count;		/* items of id FIXED_LONG */
} nested_def;

static const nested_def defs[NK_COUNT] = {
	{"/concerts", "events", "concert_not_found", "concert", 65},
	{"/awards", "nominations", "award_not_found", "award", 61},
	{"/books", "adaptations", "book_not_found", "book", 70},
	{"/collections", "movies", "collection_not_found", "collection", 64},
};

static const char *const collection_types[] = {"franchise", "director", "curated"};

#define NTYPES ((int) SB_LENGTHOF(collection_types))
#define SALT(kind, type) (0x4e5700 + (kind) * 16 + (type))

static const char *const adjectives[] = {
	"Silver", "Northern", "Hidden", "Electric", "Quiet", "Golden", "Restless",
	"Midnight", "Paper", "Distant", "Crimson", "Open"
};
static const char *const nouns[] = {
	"Harbour", "Orchestra", "Lanterns", "Horizon", "Garden", "Signal",
	"Archive", "Season", "Voyage", "Echoes", "Circle", "Tide"
};
static const char *const cities[] = {
	"Lisbon", "Oslo", "Montreal", "Osaka", "Glasgow", "Valencia", "Kraków", "Austin"
};
static const char *const stages[] = {"Main Stage", "Hall B", "Tent", "Courtyard"};
static const char *const surnames[] = {
	"Okafor", "Lindqvist", "Moreau", "Tanaka", "Brennan", "Castillo", "Novak", "Haddad"
};
static const char *const first_names[] = {
	"Ada", "Bruno", "Chiara", "Dmitri", "Esme", "Femi", "Greta", "Hiro"
};
static const char *const categories[] = {
	"Best Picture", "Best Director", "Best Screenplay", "Best Score",
	"Best Editing", "Best Cinematography"
};
static const char *const media[] = {"film", "series", "stage", "radio", "game"};

/* Strides through movies 1..200 that visit each once: odd, not a multiple of 5. */
static const int strides[] = {1, 3, 7, 9, 11, 13, 17, 19, 21, 23, 27, 29, 31, 33, 37, 39};

/* One resolved detail: its kind, collection type (0 otherwise) and id. */
typedef struct nested_ref
{
	nested_kind kind;
	int			type;
	int64_t		id;
} nested_ref;

static int64_t
item_count(const nested_ref *r)
{
	uint64_t	h;

	if (r->id == FIXED_LONG)
		return defs[r->kind].long_count;
	if (r->id == FIXED_EMPTY)
		return 0;
	h = sb_hash(SALT(r->kind, r->type), (uint64_t) r->id);
	if (h % 5 == 0)
		return 0;
	return (int64_t) ((h >> 8) % MAX_GENERATED) + 1;
}

/* A name like "Silver Harbour" drawn from g. */
static void
two_words(sb_mgen *g, char *out, size_t len)
{
	const char *a = SB_PICK(g, adjectives);
	const char *n = SB_PICK(g, nouns);

	snprintf(out, len, "%s %s", a, n);
}

/* Movie of position i (0-based) of a list: every movie at most once. */
static const sb_movie *
list_movie(const nested_ref *r, int64_t i)
{
	sb_mgen		g = sb_mgen_start(r->id, SALT(r->kind, r->type), -1);
	int64_t		start = sb_mgen_below(&g, CATALOGUE_MOVIES);
	int64_t		stride = strides[sb_mgen_below(&g, (int64_t) SB_LENGTHOF(strides))];
	int			n = sb_movies_count() < CATALOGUE_MOVIES ? sb_movies_count() : CATALOGUE_MOVIES;

	return sb_movies_at((int) ((start + i * stride) % n));
}

static json_t *
movie_ref_json(const sb_movie *m)
{
	return json_pack("{s:I, s:s, s:s, s:i}", "movie_id", (json_int_t) m->id,
					 "slug", m->slug, "title", m->title, "year", m->year);
}

/* ---- list items ---- */

static json_t *
event_item(int64_t i, void *arg)
{
	const nested_ref *r = arg;
	sb_mgen		g = sb_mgen_start(r->id, SALT(r->kind, 0) + 8, i);
	char		id[48];
	char		title[64];
	char		performer[64];
	char		start[8];
	const char *first = SB_PICK(&g, first_names);
	const char *last = SB_PICK(&g, surnames);
	const char *stage = SB_PICK(&g, stages);
	int			minute = 12 * 60 + (int) (i % 16) * 45;

	two_words(&g, title, sizeof(title));
	snprintf(id, sizeof(id), "evt-%" PRId64 "-%" PRId64, r->id, i + 1);
	snprintf(performer, sizeof(performer), "%s %s", first, last);
	snprintf(start, sizeof(start), "%02d:%02d", minute / 60, minute % 60);
	return json_pack("{s:I, s:s, s:s, s:s, s:s, s:i, s:s}",
					 "position", (json_int_t) (i + 1), "id", id, "title", title,
					 "performer", performer, "stage", stage,
					 "day", (int) (i / 16) + 1, "start_time", start);
}

static json_t *
nomination_item(int64_t i, void *arg)
{
	const nested_ref *r = arg;
	sb_mgen		g = sb_mgen_start(r->id, SALT(r->kind, 0) + 8, i);
	const sb_movie *m = list_movie(r, i);
	char		id[48];
	char		nominee[64];
	const char *category = SB_PICK(&g, categories);
	const char *first = SB_PICK(&g, first_names);
	const char *last = SB_PICK(&g, surnames);
	int64_t		won = sb_mgen_below(&g, 5);
	json_t	   *o;

	snprintf(id, sizeof(id), "nom-%" PRId64 "-%" PRId64, r->id, i + 1);
	snprintf(nominee, sizeof(nominee), "%s %s", first, last);
	o = json_pack("{s:I, s:s, s:s, s:s, s:b}", "position", (json_int_t) (i + 1),
				  "id", id, "category", category, "nominee", nominee, "won", won == 0);
	json_object_set_new(o, "movie", movie_ref_json(m));
	return o;
}

static json_t *
adaptation_item(int64_t i, void *arg)
{
	const nested_ref *r = arg;
	sb_mgen		g = sb_mgen_start(r->id, SALT(r->kind, 0) + 8, i);
	char		id[48];
	char		title[64];
	const char *medium = SB_PICK(&g, media);
	int64_t		year = 1950 + sb_mgen_below(&g, 75);
	json_t	   *o;

	two_words(&g, title, sizeof(title));
	snprintf(id, sizeof(id), "adp-%" PRId64 "-%" PRId64, r->id, i + 1);
	o = json_pack("{s:I, s:s, s:s, s:s, s:I}", "position", (json_int_t) (i + 1),
				  "id", id, "title", title, "medium", medium, "year", (json_int_t) year);
	/* a film adaptation points into the movie catalogue, others are null */
	json_object_set_new(o, "movie_id", strcmp(medium, "film") == 0 ?
						json_integer((json_int_t) list_movie(r, i)->id) : json_null());
	return o;
}

static json_t *
collection_movie_item(int64_t i, void *arg)
{
	const sb_movie *m = list_movie(arg, i);

	return json_pack("{s:I, s:I, s:s, s:s, s:i}", "position", (json_int_t) (i + 1),
					 "movie_id", (json_int_t) m->id, "slug", m->slug,
					 "title", m->title, "year", m->year);
}

/* ---- detail objects (without their list) ---- */

static json_t *
detail_json(const nested_ref *r)
{
	sb_mgen		g = sb_mgen_start(r->id, SALT(r->kind, r->type), -2);
	char		name[64];
	char		date[16];
	const char *city;
	const char *first;
	const char *last;
	int64_t		year;

	two_words(&g, name, sizeof(name));
	switch (r->kind)
	{
		case NK_CONCERT:
			city = SB_PICK(&g, cities);
			year = 2015 + sb_mgen_below(&g, 12);
			snprintf(date, sizeof(date), "%04d-%02d-%02d", (int) year,
					 (int) (r->id % 12) + 1, (int) (r->id % 28) + 1);
			return json_pack("{s:I, s:s, s:s, s:s, s:s}", "id", (json_int_t) r->id,
							 "name", name, "venue", "Arena", "city", city, "date", date);
		case NK_AWARD:
			year = 1990 + sb_mgen_below(&g, 36);
			return json_pack("{s:I, s:s, s:I}", "id", (json_int_t) r->id,
							 "name", name, "year", (json_int_t) year);
		case NK_BOOK:
			first = SB_PICK(&g, first_names);
			last = SB_PICK(&g, surnames);
			year = 1850 + sb_mgen_below(&g, 170);
			{
				char		author[64];

				snprintf(author, sizeof(author), "%s %s", first, last);
				return json_pack("{s:I, s:s, s:s, s:I}", "id", (json_int_t) r->id,
								 "title", name, "author", author,
								 "published_year", (json_int_t) year);
			}
		default:
			return json_pack("{s:I, s:s, s:s}", "id", (json_int_t) r->id,
							 "type", collection_types[r->type], "name", name);
	}
}

/* ---- routes ---- */

static const char *const page_params[] = {"limit", "cursor", NULL};

/*
 * Parses a path id: 400 invalid_parameter when empty or over 255
 * characters; false without replying when it is not a canonical decimal
 * id in 1..NESTED_IDS (the caller answers 404).
 */
static bool
id_arg(sb_request *req, sb_response *resp, const char *name, int64_t *id, bool *bad)
{
	const char *s = sb_param(req, name);
	char		canon[24];

	*bad = false;
	if (s == NULL || s[0] == '\0' || strlen(s) > REF_MAX)
	{
		sb_reply_error(req, resp, 400, "invalid_parameter",
					   "%s must be 1 to %d characters", name, REF_MAX);
		*bad = true;
		return false;
	}
	if (!sb_parse_int64(s, id) || *id < 1 || *id > NESTED_IDS)
		return false;
	snprintf(canon, sizeof(canon), "%" PRId64, *id);
	return strcmp(canon, s) == 0;
}

static void
nested_detail(sb_request *req, sb_response *resp, nested_kind kind, const char *param)
{
	static const sb_item_fn items[NK_COUNT] = {
		event_item, nomination_item, adaptation_item, collection_movie_item
	};
	nested_ref	r = {kind, 0, 0};
	char		bind[BIND_MAX];
	bool		bad;
	bool		found;
	json_t	   *list;
	json_t	   *obj;

	if (!sb_query_check(req, resp, page_params))
		return;
	if (kind == NK_COLLECTION)
	{
		const char *type = sb_param(req, "type");

		if (type == NULL || type[0] == '\0' || strlen(type) > REF_MAX)
		{
			sb_reply_error(req, resp, 400, "invalid_parameter",
						   "type must be 1 to %d characters", REF_MAX);
			return;
		}
		r.type = -1;
		for (int t = 0; t < NTYPES; t++)
			if (strcmp(type, collection_types[t]) == 0)
				r.type = t;
	}
	found = id_arg(req, resp, param, &r.id, &bad);
	if (bad)
		return;
	if (!found || r.type < 0)
	{
		sb_reply_error(req, resp, 404, defs[kind].not_found, "no %s at %.300s",
					   defs[kind].what, req->path);
		return;
	}
	if (kind == NK_COLLECTION)
		snprintf(bind, sizeof(bind), "%s/%s/%" PRId64 "#%s", defs[kind].path,
				 collection_types[r.type], r.id, defs[kind].list);
	else
		snprintf(bind, sizeof(bind), "%s/%" PRId64 "#%s", defs[kind].path, r.id,
				 defs[kind].list);
	list = sb_page_nested(req, resp, bind, item_count(&r), items[kind], &r);
	if (list == NULL)
		return;
	obj = detail_json(&r);
	json_object_set_new(obj, defs[kind].list, list);
	sb_reply_json(resp, 200, json_pack("{s:o}", "data", obj));
}

static void
get_concert(sb_request *req, sb_response *resp)
{
	nested_detail(req, resp, NK_CONCERT, "concert");
}

static void
get_award(sb_request *req, sb_response *resp)
{
	nested_detail(req, resp, NK_AWARD, "award");
}

static void
get_book(sb_request *req, sb_response *resp)
{
	nested_detail(req, resp, NK_BOOK, "book");
}

static void
get_collection(sb_request *req, sb_response *resp)
{
	nested_detail(req, resp, NK_COLLECTION, "collection");
}

/* GET /_sandbox/nested: every detail path that has a list, with its size */
static void
admin_nested(sb_request *req, sb_response *resp)
{
	static const char *const none[] = {NULL};
	json_t	   *arr;

	if (!sb_query_check(req, resp, none))
		return;
	arr = json_array();
	for (int k = 0; k < NK_COUNT; k++)
		for (int t = 0; t < (k == NK_COLLECTION ? NTYPES : 1); t++)
			for (int64_t id = 1; id <= NESTED_IDS; id++)
			{
				nested_ref	r = {(nested_kind) k, t, id};
				char		path[96];

				if (k == NK_COLLECTION)
					snprintf(path, sizeof(path), "%s/%s/%" PRId64, defs[k].path,
							 collection_types[t], id);
				else
					snprintf(path, sizeof(path), "%s/%" PRId64, defs[k].path, id);
				json_array_append_new(arr, json_pack("{s:s, s:s, s:I}", "path", path,
													 "list", defs[k].list,
													 "count", (json_int_t) item_count(&r)));
			}
	sb_reply_json(resp, 200, json_pack("{s:o}", "data", arr));
}

#define P SB_STYLE_PLAIN

static const sb_route routes[] = {
	{"GET", "/concerts/{concert}", SB_AUTH, P, "GET /concerts/{concert}", get_concert},
	{"GET", "/awards/{award}", SB_AUTH, P, "GET /awards/{award}", get_award},
	{"GET", "/books/{book}", SB_AUTH, P, "GET /books/{book}", get_book},
	{"GET", "/collections/{type}/{collection}", SB_AUTH, P,
	"GET /collections/{type}/{collection}", get_collection},
	{"GET", "/_sandbox/nested", SB_ADMIN, P, NULL, admin_nested},
	{NULL}
};

const sb_service sb_service_nested = {
	.name = "nested",
	.routes = routes,
};
