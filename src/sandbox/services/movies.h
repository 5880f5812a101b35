/*-------------------------------------------------------------------------
 * movies.h
 *	  Declarations shared by the files of the movie content service of the
 *	  sandbox (docs/sandbox-movies.md): movies.c (routes and handlers),
 *	  movies_catalog.c (the seeded catalogue, lookup, movie detail),
 *	  movies_content.c (the generators of content and the JSON of every
 *	  payload) and movies_inception.c (the hand-written content of
 *	  "inception").
 *
 * Design notes:
 *
 * - The catalogue is read-only after init: it depends on --seed only, so
 *   POST /_sandbox/reset has nothing to forget and handlers need no
 *   per-partner state.
 * - List items (timeline events, themes, characters, faqs) are never
 *   stored: item i of a list is a pure function of (seed, movie, list,
 *   i), so a movie may have a million of them at no cost.
 * - A movie may carry a "script": fixed, hand-written content used in
 *   place of the generated text (inception).
 *-------------------------------------------------------------------------
 */
#ifndef SB_SERVICES_MOVIES_H
#define SB_SERVICES_MOVIES_H

#include "sandbox.h"

/* Content kinds, in the order of the document's endpoint table. */
typedef enum sb_movie_content
{
	SB_MC_SUMMARY = 0,
	SB_MC_SPOILER_FREE,
	SB_MC_ENDING,
	SB_MC_TIMELINE,
	SB_MC_SETTING,
	SB_MC_THEMES,
	SB_MC_CHARACTERS,
	SB_MC_FAQS,
	SB_MC_PROFILE,
	SB_MC_COUNT
} sb_movie_content;

/* FAQ sections; the query values are "summary", "ending", "info". */
typedef enum sb_faq_section
{
	SB_FAQ_SUMMARY = 0,			/* plot */
	SB_FAQ_ENDING,
	SB_FAQ_INFO,				/* background */
	SB_FAQ_NSECTIONS
} sb_faq_section;

#define SB_MOVIE_MAX_GENRES 3
#define SB_MOVIE_MAX_TAGS 4

/* Hand-written list items of a scripted movie. */
typedef struct sb_movie_event
{
	const char *title;
	const char *explanation;
	const char *location;
	const char *time_reference;
} sb_movie_event;

typedef struct sb_movie_theme
{
	const char *title;
	const char *emoji;
	const char *explanation;
} sb_movie_theme;

typedef struct sb_movie_character
{
	const char *name;
	const char *description;
	const char *tags[SB_MOVIE_MAX_TAGS];	/* NULL-terminated */
	int64_t		person_id;		/* 0 means null */
} sb_movie_character;

typedef struct sb_movie_faq
{
	const char *question;
	const char *answer;
	const char *foreshadowing_note; /* may be NULL */
} sb_movie_faq;

typedef struct sb_movie_script
{
	const char *summary;		/* Markdown */
	const char *spoiler_free_summary;
	const char *ending;
	const char *place_name;
	const char *place_description;
	const char *time_period;
	const char *time_description;
	const char *tone;
	const char *pacing;
	const char *intensity;
	const char *complexity;
	const char *emotional_weight;
	const char *ending_feel;
	const char *mood_tags[SB_MOVIE_MAX_TAGS];	/* NULL-terminated */
	const char *topic_tags[SB_MOVIE_MAX_TAGS];
	const char *content_warnings[SB_MOVIE_MAX_TAGS];
	const sb_movie_event *events;
	int			nevents;
	const sb_movie_theme *themes;
	int			nthemes;
	const sb_movie_character *characters;
	int			ncharacters;
	const sb_movie_faq *faqs[SB_FAQ_NSECTIONS];
	int			nfaqs[SB_FAQ_NSECTIONS];
} sb_movie_script;

/* One movie of the catalogue (facts only, no list items). */
typedef struct sb_movie
{
	int64_t		id;
	char		slug[72];
	char		title[72];
	int			year;
	char		release_date[11];	/* "YYYY-MM-DD" or "" (absent) */
	int			runtime_minutes;	/* 0 means null */
	const char *original_language;
	bool		has_poster;
	int			ngenres;
	const char *genres[SB_MOVIE_MAX_GENRES];
	bool		available[SB_MC_COUNT];
	int64_t		ntimeline;
	int64_t		nthemes;
	int64_t		ncharacters;
	int64_t		nfaqs[SB_FAQ_NSECTIONS];
	const sb_movie_script *script;	/* NULL: generated content */
} sb_movie;

/*
 * Deterministic streams.  Every generator starts a private stream from
 * sb_hash(movie, salt, index) and draws from it in program order, so the
 * content is a pure function of the seed and its coordinates.  Draws must
 * be sequenced (one per statement or declaration), never two in the
 * arguments of one call, whose evaluation order C leaves open.
 */
typedef struct sb_mgen
{
	uint64_t	s;
} sb_mgen;

/* Salts, one per generator, so that no two lists share a stream. */
enum
{
	SB_MK_MOVIE = 1, SB_MK_TITLE, SB_MK_CAST, SB_MK_EVENT, SB_MK_THEME,
	SB_MK_THEME_ORDER, SB_MK_CHARACTER, SB_MK_TEXT, SB_MK_SETTING,
	SB_MK_PROFILE, SB_MK_FAQ		/* SB_MK_FAQ + section */
};

static inline sb_mgen
sb_mgen_start(int64_t movie_id, int salt, int64_t index)
{
	sb_mgen		g;

	g.s = sb_hash(sb_hash((uint64_t) movie_id, (uint64_t) salt), (uint64_t) index);
	return g;
}

/* A splitmix64 step over the local state. */
static inline uint64_t
sb_mgen_next(sb_mgen *g)
{
	uint64_t	z = (g->s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* A draw in 0 .. n-1 (n > 0). */
static inline int64_t
sb_mgen_below(sb_mgen *g, int64_t n)
{
	return (int64_t) (sb_mgen_next(g) % (uint64_t) n);
}

#define SB_LENGTHOF(a) (sizeof(a) / sizeof((a)[0]))
#define SB_PICK(g, list) ((list)[sb_mgen_below((g), (int64_t) SB_LENGTHOF(list))])

/* in movies_catalog.c */
extern const char *const sb_movies_content_names[SB_MC_COUNT];
extern const char *const sb_movies_section_names[SB_FAQ_NSECTIONS];
extern void sb_movies_catalog_build(void);
extern int	sb_movies_count(void);
extern const sb_movie *sb_movies_at(int i);
extern const sb_movie *sb_movies_find(const char *ref);
extern json_t *sb_movies_detail_json(const sb_movie *m);

/* in movies_content.c */
extern void sb_movies_title(int64_t id, char *out, size_t len);
extern json_t *sb_movies_text_json(const sb_movie *m, sb_movie_content c);
extern json_t *sb_movies_setting_json(const sb_movie *m);
extern json_t *sb_movies_profile_json(const sb_movie *m);
extern json_t *sb_movies_event_json(const sb_movie *m, int64_t i);
extern json_t *sb_movies_theme_json(const sb_movie *m, int64_t i);
extern json_t *sb_movies_character_json(const sb_movie *m, int64_t i);
extern json_t *sb_movies_faq_json(const sb_movie *m, sb_faq_section s, int64_t i);

/* in movies_inception.c */
extern const sb_movie_script sb_movies_inception;

#endif							/* SB_SERVICES_MOVIES_H */
