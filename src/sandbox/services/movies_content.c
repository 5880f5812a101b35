/*-------------------------------------------------------------------------
 * movies_content.c
 *	  Content of the sandbox movies: generated titles and texts, and the
 *	  JSON of every content payload and list item (scripted or generated).
 *
 * Design notes:
 *
 * - Generated text is assembled from the word lists below.  Each payload
 *   or item draws from its own stream, sb_mgen_start(movie, salt, index),
 *   so item i of a list is the same on every request and in any walk
 *   order, and bench-1m's million themes cost nothing until a page of
 *   them is built.
 * - Names in texts come from the movie's cast (cast_name), so timeline
 *   events and faqs mention the people of the character list.
 * - A movie with a script (inception) takes its text from the script;
 *   both paths end in the same json_pack formats, so shapes never differ.
 * - position is 1-based within the list (within the section for faqs).
 *-------------------------------------------------------------------------
 */
#include "movies.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define TEXT_MAX 1024

static const char *const adjectives[] = {
	"silent", "broken", "hidden", "last", "crimson", "frozen", "distant",
	"golden", "hollow", "burning", "quiet", "restless", "forgotten",
	"electric", "wandering", "paper", "iron", "midnight", "northern",
	"glass", "velvet", "lonely", "bright", "falling"
};

static const char *const nouns[] = {
	"harbor", "garden", "signal", "empire", "river", "promise", "machine",
	"winter", "city", "letter", "mirror", "orchard", "station", "kingdom",
	"lighthouse", "frontier", "archive", "carnival", "bridge", "echo",
	"compass", "circus", "island", "orbit"
};

static const char *const places[] = {
	"a fishing town in Norway", "a hotel in Tokyo", "a desert outpost",
	"an apartment in Paris", "an orbital station", "a mountain monastery",
	"a Chicago police precinct", "a border town", "a country estate",
	"a submarine", "a market in Marrakesh", "an Antarctic research base",
	"a Brooklyn diner", "a royal palace", "an abandoned mine",
	"a coastal village"
};

static const char *const first_names[] = {
	"Ada", "Bruno", "Clara", "Dev", "Elena", "Farid", "Greta", "Hugo",
	"Ines", "Jonas", "Kira", "Leo", "Maya", "Nico", "Olga", "Pavel",
	"Quinn", "Rosa", "Sami", "Tess", "Umar", "Vera", "Wen", "Yusuf", "Zoe"
};

static const char *const last_names[] = {
	"Hart", "Moreau", "Okafor", "Lind", "Castillo", "Brandt", "Sato",
	"Novak", "Reyes", "Quist", "Adler", "Varga", "Mendes", "Kowal",
	"Ferro", "Ibsen"
};

static const char *const roles[] = {
	"detective", "pilot", "teacher", "smuggler", "archivist", "doctor",
	"engineer", "musician", "soldier", "journalist", "heir", "mechanic"
};

static const char *const verbs[] = {
	"discovers", "confronts", "protects", "betrays", "searches for",
	"escapes", "rebuilds", "hides", "follows", "questions", "repairs",
	"steals"
};

static const char *const actions[] = {
	"keeps watch", "waits for news", "hides", "argues with the police",
	"packs to leave", "makes a deal", "tells a lie", "plans the next step"
};

static const char *const goals[] = {
	"get home", "clear their name", "keep the family together",
	"finish one last job", "find the truth", "pay an old debt",
	"win back a friend", "leave the past behind"
};

static const char *const fates[] = {
	"is revealed as the one behind everything", "leaves the city for good",
	"gives up everything to save the others", "is arrested",
	"finally tells the truth", "disappears without a word",
	"takes over the family business", "forgives the betrayal"
};

static const char *const consequences[] = {
	"sets up the final act", "changes what we know about the past",
	"returns in the ending", "puts the whole plan at risk",
	"reveals who really holds power", "costs the group its safest option",
	"turns an ally into a suspect", "is the film's first clear clue"
};

static const char *const meanings[] = {
	"a choice rather than a fate", "the price of the plan",
	"something the family finally shares", "a loss the hero accepts",
	"an open question", "a second chance"
};

static const char *const closings[] = {
	"The film never fully resolves it.", "The ending answers it directly.",
	"It grows quieter as the plot speeds up.",
	"Side characters mirror it in smaller ways.",
	"The score returns to it in every key scene.",
	"It is stated once, in the first scene, and then only shown."
};

static const char *const character_notes[] = {
	"Their choices drive the second act.", "They know more than they admit.",
	"They are not who they claim to be.", "They are the film's moral centre.",
	"They change sides twice.", "They carry the film's only jokes."
};

static const char *const character_tags[] = {
	"antagonist", "mentor", "ally", "rival", "love-interest",
	"comic-relief", "mastermind", "witness", "family", "survivor",
	"informant"
};

static const struct
{
	const char *title;
	const char *emoji;
}			theme_bases[] = {
	{"Memory", "\xF0\x9F\xA7\xA0"}, {"Grief", "\xF0\x9F\x92\x94"},
	{"Identity", "\xF0\x9F\xAA\x9E"}, {"Power", "\xF0\x9F\x91\x91"},
	{"Loyalty", "\xF0\x9F\xA4\x9D"}, {"Freedom", "\xF0\x9F\x95\x8A\xEF\xB8\x8F"},
	{"Guilt", "\xE2\x9A\x96\xEF\xB8\x8F"}, {"Redemption", "\xF0\x9F\x8C\x85"},
	{"Ambition", "\xF0\x9F\x9A\x80"}, {"Family", "\xF0\x9F\x91\xAA"},
	{"Time", "\xE2\x8F\xB3"}, {"Isolation", "\xF0\x9F\x8F\x9D\xEF\xB8\x8F"},
	{"Trust", "\xF0\x9F\x94\x90"}, {"Sacrifice", "\xF0\x9F\x95\xAF\xEF\xB8\x8F"},
	{"Obsession", "\xF0\x9F\x8C\x80"}, {"Home", "\xF0\x9F\x8F\xA0"},
	{"Justice", "\xF0\x9F\x94\xA8"}, {"Fate", "\xF0\x9F\x8E\xB2"},
	{"Revenge", "\xF0\x9F\x97\xA1\xEF\xB8\x8F"}, {"Hope", "\xF0\x9F\x8C\xB1"}
};

static const int theme_steps[] = {1, 3, 7, 9, 11, 13, 17, 19};

static const char *const periods[] = {
	"The 1880s", "The 1920s", "The 1940s", "The late 1960s", "1987",
	"A winter in 1999", "The early 2000s", "Present day", "The near future",
	"The 2080s"
};

static const char *const day_parts[] = {"morning", "afternoon", "evening", "night"};
static const char *const tones[] = {
	"dark", "hopeful", "playful", "tense", "melancholic", "whimsical",
	"gritty", "uplifting"
};
static const char *const pacings[] = {"slow", "measured", "brisk", "relentless"};
static const char *const levels[] = {"low", "medium", "high"};
static const char *const weights[] = {"light", "moderate", "heavy"};
static const char *const ending_feels[] = {
	"happy", "bittersweet", "ambiguous", "tragic", "open"
};
static const char *const mood_tags[] = {
	"cozy", "eerie", "romantic", "suspenseful", "thoughtful", "thrilling",
	"nostalgic", "bleak", "funny", "dreamy"
};
static const char *const topic_tags[] = {
	"family", "war", "technology", "crime", "love", "politics", "nature",
	"art", "sports", "space", "faith", "money"
};
static const char *const warnings[] = {
	"violence", "strong-language", "substance-use", "sexual-content",
	"self-harm", "animal-harm", "flashing-lights", "gore"
};

/* Picks up to k distinct entries of list into a new JSON array. */
static json_t *
pick_distinct(sb_mgen *g, const char *const *list, int n, int k)
{
	json_t	   *arr = json_array();
	bool		used[32] = {false};

	for (int tries = 0; (int) json_array_size(arr) < k && tries < 64; tries++)
	{
		int			j = (int) sb_mgen_below(g, n);

		if (!used[j])
		{
			used[j] = true;
			json_array_append_new(arr, json_string(list[j]));
		}
	}
	return arr;
}

static json_t *
string_list(const char *const *list)
{
	json_t	   *arr = json_array();

	for (int i = 0; i < SB_MOVIE_MAX_TAGS && list[i]; i++)
		json_array_append_new(arr, json_string(list[i]));
	return arr;
}

/* Appends printf output to the NUL-terminated buf of size cap, truncating. */
static void
appendf(char *buf, size_t cap, const char *fmt,...)
{
	size_t		len = strlen(buf);
	va_list		ap;

	if (len + 1 >= cap)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + len, cap - len, fmt, ap);
	va_end(ap);
}

static void
capitalize(char *s)
{
	if (s[0] >= 'a' && s[0] <= 'z')
		s[0] = (char) (s[0] - 'a' + 'A');
}

/*
 * Name of cast member k of movie m ("First Last"), and its first name.
 * Characters, timeline events and faqs all use this, so the names a
 * movie's texts mention are those of its character list.
 */
static void
cast_name(const sb_movie *m, int64_t k, char *full, size_t len, const char **first)
{
	sb_mgen		g = sb_mgen_start(m->id, SB_MK_CAST, k);
	const char *f = SB_PICK(&g, first_names);

	snprintf(full, len, "%s %s", f, SB_PICK(&g, last_names));
	if (first)
		*first = f;
}

/* A lead character's index: the first few cast members carry the plot. */
static int64_t
lead(const sb_movie *m, sb_mgen *g)
{
	int64_t		n = m->ncharacters > 0 && m->ncharacters < 6 ? m->ncharacters : 6;

	return sb_mgen_below(g, n);
}

/*
 * Title of ordinary movie id ("The Hollow Harbor", "Echo over the River",
 * "A Promise for Clara"); the catalogue derives the slug from it.
 */
void
sb_movies_title(int64_t id, char *out, size_t len)
{
	sb_mgen		g = sb_mgen_start(id, SB_MK_TITLE, 0);
	char		a[24],
				b[24],
				n2[24];
	int			form;

	snprintf(a, sizeof(a), "%s", SB_PICK(&g, adjectives));
	snprintf(b, sizeof(b), "%s", SB_PICK(&g, nouns));
	snprintf(n2, sizeof(n2), "%s", SB_PICK(&g, nouns));
	capitalize(a);
	capitalize(b);
	capitalize(n2);
	form = (int) sb_mgen_below(&g, 4);
	if (form == 0)
		snprintf(out, len, "The %s %s", a, b);
	else if (form == 1)
		snprintf(out, len, "%s over the %s", b, n2);
	else if (form == 2)
		snprintf(out, len, "%s %s", a, b);
	else
		snprintf(out, len, "A %s for %s", b, SB_PICK(&g, first_names));
}

/* Markdown of summary, spoiler-free summary or ending of a generated movie. */
static void
generated_text(const sb_movie *m, sb_movie_content c, char *buf, size_t cap)
{
	sb_mgen		g = sb_mgen_start(m->id, SB_MK_TEXT, 0);
	char		hero[40],
				other[40];
	const char *hero_first,
			   *other_first;
	const char *role = SB_PICK(&g, roles);
	const char *place = SB_PICK(&g, places);
	const char *verb1 = SB_PICK(&g, verbs);
	const char *adj1 = SB_PICK(&g, adjectives);
	const char *noun1 = SB_PICK(&g, nouns);
	const char *verb2 = SB_PICK(&g, verbs);
	const char *adj2 = SB_PICK(&g, adjectives);
	const char *noun2 = SB_PICK(&g, nouns);
	const char *goal = SB_PICK(&g, goals);
	const char *verb3 = SB_PICK(&g, verbs);
	const char *fate = SB_PICK(&g, fates);
	const char *meaning = SB_PICK(&g, meanings);
	const char *closing = SB_PICK(&g, closings);

	cast_name(m, 0, hero, sizeof(hero), &hero_first);
	cast_name(m, 1, other, sizeof(other), &other_first);
	buf[0] = '\0';
	if (c == SB_MC_ENDING)
	{
		appendf(buf, cap, "## What happens\n\n%s %s the %s %s in %s, and %s %s.\n\n",
				hero_first, verb3, adj1, noun1, place, other_first, fate);
		appendf(buf, cap, "## What it means\n\nThe ending frames the %s as %s. %s\n",
				noun1, meaning, closing);
		return;
	}
	appendf(buf, cap, "**%s** (%d) follows %s, a %s in %s who %s the %s %s. "
			"When %s %s the %s %s, %s has to %s.\n",
			m->title, m->year, hero, role, place, verb1, adj1, noun1,
			other, verb2, adj2, noun2, hero_first, goal);
	if (c == SB_MC_SUMMARY)
		appendf(buf, cap, "\nBy the end, %s %s the %s, and %s %s.\n",
				hero_first, verb3, noun1, other_first, fate);
}

json_t *
sb_movies_text_json(const sb_movie *m, sb_movie_content c)
{
	char		buf[TEXT_MAX];
	const char *text = buf;

	if (m->script)
		text = c == SB_MC_SUMMARY ? m->script->summary :
			c == SB_MC_ENDING ? m->script->ending : m->script->spoiler_free_summary;
	else
		generated_text(m, c, buf, sizeof(buf));
	return json_pack("{s:I, s:s}", "movie_id", (json_int_t) m->id, "markdown", text);
}

json_t *
sb_movies_setting_json(const sb_movie *m)
{
	const sb_movie_script *sc = m->script;
	char		place[64],
				pdesc[256],
				tdesc[256];
	const char *period;

	if (sc)
		return json_pack("{s:I, s:{s:s, s:s}, s:{s:s, s:s}}",
						 "movie_id", (json_int_t) m->id,
						 "place", "name", sc->place_name, "description", sc->place_description,
						 "time", "period", sc->time_period, "description", sc->time_description);
	{
		sb_mgen		g = sb_mgen_start(m->id, SB_MK_SETTING, 0);
		static const char *const flashbacks[] = {"no", "a few", "frequent"};
		const char *p = SB_PICK(&g, places);
		const char *adj1 = SB_PICK(&g, adjectives);
		const char *noun1 = SB_PICK(&g, nouns);
		const char *adj2 = SB_PICK(&g, adjectives);
		const char *noun2 = SB_PICK(&g, nouns);
		int			days = 2 + (int) sb_mgen_below(&g, 60);
		const char *fb = SB_PICK(&g, flashbacks);

		period = SB_PICK(&g, periods);
		snprintf(place, sizeof(place), "%s", p);
		capitalize(place);
		snprintf(pdesc, sizeof(pdesc), "Most of the film takes place in %s, among %s %ss and %s %ss.",
				 p, adj1, noun1, adj2, noun2);
		snprintf(tdesc, sizeof(tdesc), "The story covers %d days, told mostly in order with %s flashbacks.",
				 days, fb);
	}
	return json_pack("{s:I, s:{s:s, s:s}, s:{s:s, s:s}}",
					 "movie_id", (json_int_t) m->id,
					 "place", "name", place, "description", pdesc,
					 "time", "period", period, "description", tdesc);
}

json_t *
sb_movies_profile_json(const sb_movie *m)
{
	const sb_movie_script *sc = m->script;
	sb_mgen		g = sb_mgen_start(m->id, SB_MK_PROFILE, 0);
	const char *tone,
			   *pacing,
			   *intensity,
			   *complexity,
			   *weight,
			   *feel;
	json_t	   *moods,
			   *topics,
			   *warns;
	int			nmoods,
				ntopics,
				nwarns;

	if (sc)
		return json_pack("{s:I, s:s, s:s, s:s, s:s, s:s, s:s, s:o, s:o, s:o}",
						 "movie_id", (json_int_t) m->id,
						 "tone", sc->tone, "pacing", sc->pacing,
						 "intensity", sc->intensity, "complexity", sc->complexity,
						 "emotional_weight", sc->emotional_weight,
						 "ending_feel", sc->ending_feel,
						 "mood_tags", string_list(sc->mood_tags),
						 "topic_tags", string_list(sc->topic_tags),
						 "content_warnings", string_list(sc->content_warnings));
	tone = SB_PICK(&g, tones);
	pacing = SB_PICK(&g, pacings);
	intensity = SB_PICK(&g, levels);
	complexity = SB_PICK(&g, levels);
	weight = SB_PICK(&g, weights);
	feel = SB_PICK(&g, ending_feels);
	nmoods = 2 + (int) sb_mgen_below(&g, 2);
	moods = pick_distinct(&g, mood_tags, SB_LENGTHOF(mood_tags), nmoods);
	ntopics = 1 + (int) sb_mgen_below(&g, 3);
	topics = pick_distinct(&g, topic_tags, SB_LENGTHOF(topic_tags), ntopics);
	nwarns = (int) sb_mgen_below(&g, 4);
	warns = pick_distinct(&g, warnings, SB_LENGTHOF(warnings), nwarns);
	return json_pack("{s:I, s:s, s:s, s:s, s:s, s:s, s:s, s:o, s:o, s:o}",
					 "movie_id", (json_int_t) m->id,
					 "tone", tone, "pacing", pacing,
					 "intensity", intensity, "complexity", complexity,
					 "emotional_weight", weight, "ending_feel", feel,
					 "mood_tags", moods, "topic_tags", topics,
					 "content_warnings", warns);
}

/* ---- list items: position is 1-based within the list (or section) ---- */

json_t *
sb_movies_event_json(const sb_movie *m, int64_t i)
{
	char		title[128],
				expl[TEXT_MAX],
				loc[64],
				when[48];
	char		hero[40],
				other[40];
	const char *hero_first,
			   *other_first;

	if (m->script)
	{
		const sb_movie_event *e = &m->script->events[i];

		return json_pack("{s:I, s:s, s:s, s:s, s:s}", "position", (json_int_t) (i + 1),
						 "title", e->title, "explanation", e->explanation,
						 "location", e->location, "time_reference", e->time_reference);
	}
	{
		sb_mgen		g = sb_mgen_start(m->id, SB_MK_EVENT, i);
		const char *verb = SB_PICK(&g, verbs);
		const char *adj = SB_PICK(&g, adjectives);
		const char *noun = SB_PICK(&g, nouns);
		const char *place = SB_PICK(&g, places);

		const char *action = SB_PICK(&g, actions);
		const char *consequence = SB_PICK(&g, consequences);

		cast_name(m, lead(m, &g), hero, sizeof(hero), &hero_first);
		cast_name(m, lead(m, &g), other, sizeof(other), &other_first);
		snprintf(title, sizeof(title), "%s %s the %s %s", hero_first, verb, adj, noun);
		snprintf(expl, sizeof(expl), "%s %s the %s %s while %s %s in %s. The moment %s.",
				 hero, verb, adj, noun, other_first, action, place, consequence);
		snprintf(loc, sizeof(loc), "%s", place);
		capitalize(loc);
		snprintf(when, sizeof(when), "Day %" PRId64 ", %s", i / 4 + 1, day_parts[i % 4]);
	}
	return json_pack("{s:I, s:s, s:s, s:s, s:s}", "position", (json_int_t) (i + 1),
					 "title", title, "explanation", expl,
					 "location", loc, "time_reference", when);
}

json_t *
sb_movies_theme_json(const sb_movie *m, int64_t i)
{
	char		title[96],
				expl[TEXT_MAX],
				hero[40],
				a[24],
				n[24];
	int			base;

	if (m->script)
	{
		const sb_movie_theme *t = &m->script->themes[i];

		return json_pack("{s:I, s:s, s:s, s:s}", "position", (json_int_t) (i + 1),
						 "title", t->title, "emoji", t->emoji, "explanation", t->explanation);
	}
	{
		/* the first 20 themes are a seeded permutation of the base list */
		sb_mgen		order = sb_mgen_start(m->id, SB_MK_THEME_ORDER, 0);
		int64_t		start = sb_mgen_below(&order, (int64_t) SB_LENGTHOF(theme_bases));
		int64_t		step = SB_PICK(&order, theme_steps);
		sb_mgen		g = sb_mgen_start(m->id, SB_MK_THEME, i);
		const char *verb = SB_PICK(&g, verbs);
		const char *adj = SB_PICK(&g, adjectives);
		const char *noun = SB_PICK(&g, nouns);
		const char *closing = SB_PICK(&g, closings);

		base = (int) ((start + (i % 20) * step) % (int64_t) SB_LENGTHOF(theme_bases));
		snprintf(a, sizeof(a), "%s", SB_PICK(&g, adjectives));
		snprintf(n, sizeof(n), "%s", SB_PICK(&g, nouns));
		cast_name(m, lead(m, &g), hero, sizeof(hero), NULL);
		if (i < 20)
			snprintf(title, sizeof(title), "%s", theme_bases[base].title);
		else
		{
			capitalize(a);
			capitalize(n);
			snprintf(title, sizeof(title), "%s and the %s %s", theme_bases[base].title, a, n);
		}
		snprintf(expl, sizeof(expl), "%s is carried by %s, who %s the %s %s. %s",
				 theme_bases[base].title, hero, verb, adj, noun, closing);
	}
	return json_pack("{s:I, s:s, s:s, s:s}", "position", (json_int_t) (i + 1),
					 "title", title, "emoji", theme_bases[base].emoji, "explanation", expl);
}

json_t *
sb_movies_character_json(const sb_movie *m, int64_t i)
{
	char		name[40],
				desc[TEXT_MAX];
	json_t	   *tags;
	int64_t		person_id;

	if (m->script)
	{
		const sb_movie_character *c = &m->script->characters[i];

		return json_pack("{s:I, s:s, s:s, s:o, s:o}", "position", (json_int_t) (i + 1),
						 "name", c->name, "description", c->description,
						 "tags", string_list(c->tags),
						 "person_id", c->person_id ? json_integer(c->person_id) : json_null());
	}
	{
		sb_mgen		g = sb_mgen_start(m->id, SB_MK_CHARACTER, i);
		const char *adj = SB_PICK(&g, adjectives);
		const char *role = SB_PICK(&g, roles);
		const char *verb = SB_PICK(&g, verbs);
		const char *adj2 = SB_PICK(&g, adjectives);
		const char *noun = SB_PICK(&g, nouns);
		const char *note = SB_PICK(&g, character_notes);
		int			ntags = 1 + (int) sb_mgen_below(&g, 2);

		cast_name(m, i, name, sizeof(name), NULL);
		snprintf(desc, sizeof(desc), "%s, a %s %s, %s the %s %s. %s",
				 name, adj, role, verb, adj2, noun, note);
		tags = pick_distinct(&g, character_tags, SB_LENGTHOF(character_tags), ntags);
		if (i == 0)
			json_array_insert_new(tags, 0, json_string("protagonist"));
		person_id = sb_mgen_below(&g, 4) == 0 ? 0 : 100000 + sb_mgen_below(&g, 900000);
	}
	return json_pack("{s:I, s:s, s:s, s:o, s:o}", "position", (json_int_t) (i + 1),
					 "name", name, "description", desc, "tags", tags,
					 "person_id", person_id ? json_integer(person_id) : json_null());
}

/* Question and answer i of section s of a generated movie. */
static void
generated_faq(const sb_movie *m, sb_faq_section s, int64_t i,
			  char *q, char *a, char *note, size_t cap)
{
	sb_mgen		g = sb_mgen_start(m->id, SB_MK_FAQ + (int) s, i);
	char		hero[40];
	const char *first;
	const char *verb = SB_PICK(&g, verbs);
	const char *adj = SB_PICK(&g, adjectives);
	const char *noun = SB_PICK(&g, nouns);
	const char *place = SB_PICK(&g, places);
	int			t = (int) sb_mgen_below(&g, 3);

	cast_name(m, lead(m, &g), hero, sizeof(hero), &first);
	note[0] = '\0';
	if (s == SB_FAQ_SUMMARY)
	{
		if (t == 0)
		{
			snprintf(q, cap, "Why does %s %s the %s %s?", first, verb, adj, noun);
			snprintf(a, cap, "Because %s believes it is the only way to %s.", first, SB_PICK(&g, goals));
		}
		else if (t == 1)
		{
			snprintf(q, cap, "What does %s want from the %s %s?", hero, adj, noun);
			snprintf(a, cap, "%s wants to %s, and the %s stands in the way.", first, SB_PICK(&g, goals), noun);
		}
		else
		{
			snprintf(q, cap, "Who sends %s to %s?", first, place);
			snprintf(a, cap, "An old friend who %s; %s only learns this in the second act.", SB_PICK(&g, fates), first);
		}
	}
	else if (s == SB_FAQ_ENDING)
	{
		if (t == 0)
		{
			snprintf(q, cap, "What does the final shot of the %s %s mean?", adj, noun);
			snprintf(a, cap, "It shows the ending as %s: %s no longer needs the %s.", SB_PICK(&g, meanings), first, noun);
		}
		else if (t == 1)
		{
			snprintf(q, cap, "Does %s survive the ending?", hero);
			snprintf(a, cap, "Yes, but %s %s.", first, SB_PICK(&g, fates));
		}
		else
		{
			snprintf(q, cap, "Why does the ending return to %s?", place);
			snprintf(a, cap, "Because the story began there: %s finally %s the %s.", first, verb, noun);
		}
	}
	else
	{
		if (t == 0)
		{
			snprintf(q, cap, "Where was the scene in %s filmed?", place);
			snprintf(a, cap, "On a set built to look like %s; only the exterior shots are on location.", place);
		}
		else if (t == 1)
		{
			snprintf(q, cap, "Is %s based on a true story?", m->title);
			snprintf(a, cap, "No. The script borrows details from the lives of real %ss, but every character is invented.", SB_PICK(&g, roles));
		}
		else
		{
			snprintf(q, cap, "How long did the %s sequence take to shoot?", noun);
			snprintf(a, cap, "About %d days, most of them at night.", 3 + (int) sb_mgen_below(&g, 40));
		}
	}
	if (s != SB_FAQ_INFO && sb_mgen_below(&g, 10) < 4)
		snprintf(note, cap, "The %s %s in the opening scene foreshadows this.", adj, noun);
}

json_t *
sb_movies_faq_json(const sb_movie *m, sb_faq_section s, int64_t i)
{
	char		q[512],
				a[512],
				note[512];
	const char *qp = q,
			   *ap = a,
			   *np = note;

	if (m->script)
	{
		const sb_movie_faq *f = &m->script->faqs[s][i];

		qp = f->question;
		ap = f->answer;
		np = f->foreshadowing_note;
	}
	else
	{
		generated_faq(m, s, i, q, a, note, sizeof(q));
		if (note[0] == '\0')
			np = NULL;
	}
	return json_pack("{s:I, s:s, s:s, s:s, s:o}", "position", (json_int_t) (i + 1),
					 "section", sb_movies_section_names[s],
					 "question", qp, "answer", ap,
					 "foreshadowing_note", np ? json_string(np) : json_null());
}
