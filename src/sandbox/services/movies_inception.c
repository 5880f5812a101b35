/*-------------------------------------------------------------------------
 * movies_inception.c
 *	  Hand-written content of the sandbox movie "inception" (id 1000).
 *
 * Design notes:
 *
 * - Every other movie of the catalogue reads as generated filler; this one
 *   reads like a real service's answer, so the demo and the documentation
 *   have something natural to show.  It is data only and does not depend
 *   on --seed.
 * - The text is our own short description of the film's plot, written
 *   for this sandbox.
 * - Keep the counts small (every list fits on one default page) and every
 *   content kind present: tests use it as "the small, complete movie".
 *-------------------------------------------------------------------------
 */
#include "movies.h"

static const sb_movie_event events[] = {
	{"The job inside Saito's dream",
		"Cobb and Arthur try to steal a secret from the businessman Saito inside a dream. "
		"A projection of Cobb's late wife Mal sabotages the attempt.",
	"Saito's castle (dream)", "Opening heist"},
	{"Saito's offer",
		"Saito asks for the opposite of theft: plant an idea in the mind of Robert Fischer, "
		"heir to a rival energy empire. In exchange he will clear the charges that keep Cobb from his children.",
	"Helicopter over Tokyo", "The next morning"},
	{"Recruiting Ariadne",
		"Cobb's father-in-law introduces the architecture student Ariadne, who learns to design "
		"dream spaces and soon discovers what Cobb hides in his own subconscious.",
	"Paris", "Days later"},
	{"Building the team",
		"The forger Eames and the chemist Yusuf join. Yusuf's sedative makes the dream stable, "
		"but anyone who dies inside it falls into limbo instead of waking up.",
	"Mombasa", "A week before the flight"},
	{"The flight to Los Angeles",
		"The team sedates Fischer on a ten-hour flight and brings him into the first dream, "
		"where his trained subconscious attacks them and Saito is wounded.",
	"Sydney to Los Angeles flight", "Flight, first hour"},
	{"Three layers down",
		"A rainy city, a hotel and a mountain fortress: each deeper dream runs slower, and each "
		"layer needs someone to stay behind and deliver the kick.",
	"City, hotel and snow fortress (dreams)", "A week of dream time"},
	{"Limbo",
		"Cobb and Ariadne follow Fischer into limbo. Cobb admits he once planted the idea that "
		"led Mal to doubt reality, and finally lets her projection go.",
	"Limbo", "Decades of dream time"},
	{"The kicks and the homecoming",
		"The synchronised kicks wake the team. Cobb finds an aged Saito in limbo, they wake on the "
		"plane, and Cobb walks through immigration to his children while his top keeps spinning.",
	"Cobb's home, Los Angeles", "Landing"},
};

static const sb_movie_theme themes[] = {
	{"Guilt", "\xF0\x9F\x95\xAF\xEF\xB8\x8F",
	"Cobb's guilt about Mal takes the form of a projection that sabotages every job he runs."},
	{"Dreams and reality", "\xF0\x9F\x8C\x80",
	"Totems exist because the senses cannot tell a dream from waking life; the film keeps the audience just as unsure."},
	{"Letting go", "\xF0\x9F\x95\x8A\xEF\xB8\x8F",
	"Cobb can only go home once he stops keeping Mal alive in his memory."},
	{"The power of an idea", "\xF0\x9F\x92\xA1",
	"An idea is resilient: inception works only if the target believes the idea is his own."},
	{"Fathers and children", "\xF0\x9F\x91\xA8\xE2\x80\x8D\xF0\x9F\x91\xA7",
	"Fischer's peace with his dying father mirrors Cobb's wish to see his children's faces again."},
};

static const sb_movie_character characters[] = {
	{"Dom Cobb",
		"An extractor who steals secrets from dreams and cannot return home to his children.",
	{"protagonist", "extractor", NULL}, 900001},
	{"Arthur",
		"Cobb's point man, meticulous and calm; he researches the target and guards the first layers.",
	{"ally", "point-man", NULL}, 900002},
	{"Ariadne",
		"An architecture student who designs the dream levels and becomes Cobb's conscience.",
	{"ally", "architect", NULL}, 900003},
	{"Eames",
		"A forger who impersonates people inside dreams, including Fischer's godfather.",
	{"ally", "forger", NULL}, 900004},
	{"Saito",
		"The powerful client who hires Cobb and insists on joining the job.",
	{"client", "mentor", NULL}, 900005},
	{"Robert Fischer",
		"The heir to an energy empire and the target of the inception.",
	{"target", "family", NULL}, 900006},
	{"Mal",
		"Cobb's late wife, present only as a projection of his guilt.",
	{"antagonist", "family", NULL}, 0},
};

static const sb_movie_faq faqs_summary[] = {
	{"What is inception?",
		"Planting an idea in someone's mind so that they believe they thought of it. "
		"The team's usual work, extraction, steals an idea instead.",
	NULL},
	{"Why does the team need three dream levels?",
		"The idea must sit deep enough that Fischer reaches it as his own conclusion; "
		"each level moves him further from the obvious message.",
	NULL},
	{"What happens to someone who dies under Yusuf's sedative?",
		"They do not wake up: they fall into limbo, raw dream space where time stretches "
		"and people lose track of what is real.",
	"Yusuf's basement full of daily sleepers in Mombasa shows early how deep sedation can trap people."},
};

static const sb_movie_faq faqs_ending[] = {
	{"Is Cobb still dreaming at the end?",
		"The film leaves it open: the top wobbles, but the cut comes before it falls. "
		"What matters is that Cobb no longer waits to see it.",
	"Early on Cobb explains that a totem only works if nobody else has handled it, and the top was Mal's."},
	{"How does Cobb bring Saito back from limbo?",
		"He finds the aged Saito in his limbo castle and reminds him of their deal; "
		"both leave limbo by dying in the dream and ride the kicks back up.",
	"The opening scene is this same conversation, shown before the audience can understand it."},
	{"Did the inception on Fischer work?",
		"Yes. In the fortress vault Fischer hears his father say he wanted him to be his own man, "
		"and he decides to break up the empire.",
	NULL},
};

static const sb_movie_faq faqs_info[] = {
	{"Which song signals the kick?",
		"A French chanson played through headphones; the score is built from slowed-down fragments of it.",
	NULL},
	{"How long is the film?",
		"About two and a half hours (148 minutes).",
	NULL},
};

#define N(a) ((int) (sizeof(a) / sizeof((a)[0])))

const sb_movie_script sb_movies_inception = {
	.summary =
	"**Inception** (2010) follows Dom Cobb, a thief who steals secrets from people's dreams. "
	"The businessman Saito offers to clear Cobb's criminal record if he performs the reverse: "
	"plant an idea in the mind of Robert Fischer, heir to a rival empire.\n\n"
	"Cobb assembles a team, sedates Fischer on a long flight and leads him through three "
	"nested dreams. Mal, a projection of Cobb's late wife, keeps endangering the job, until "
	"Cobb confronts his guilt in limbo. The idea takes hold, Cobb rescues Saito, and he "
	"finally returns home to his children.\n",
	.spoiler_free_summary =
	"**Inception** (2010) follows Dom Cobb, a thief who steals secrets from people's dreams "
	"and cannot go home to his children. A powerful client offers him a way back, if his "
	"team can do what is said to be impossible: plant an idea instead of stealing one.\n",
	.ending =
	"## What happens\n\n"
	"The kicks wake each dream layer in turn. In limbo Cobb lets go of Mal and finds the aged "
	"Saito; both wake on the plane. Saito makes a phone call, Cobb passes immigration and "
	"reaches his children. His top spins on the table as the film cuts to black.\n\n"
	"## What it means\n\n"
	"The question of whether Cobb is dreaming stays open on purpose. Cobb walks away from the "
	"top before it falls: he has chosen his children over certainty.\n",
	.place_name = "Tokyo, Paris, Mombasa, Los Angeles and layered dream worlds",
	.place_description =
	"The waking story moves between world cities; the dream levels are a rainy city, a hotel "
	"and a snow fortress, with limbo below them.",
	.time_period = "Present day",
	.time_description =
	"The waking story takes a few days; inside the dreams minutes stretch into weeks and decades.",
	.tone = "tense",
	.pacing = "relentless",
	.intensity = "high",
	.complexity = "high",
	.emotional_weight = "moderate",
	.ending_feel = "ambiguous",
	.mood_tags = {"thrilling", "thoughtful", "dreamy", NULL},
	.topic_tags = {"family", "technology", "crime", NULL},
	.content_warnings = {"violence", NULL},
	.events = events,
	.nevents = N(events),
	.themes = themes,
	.nthemes = N(themes),
	.characters = characters,
	.ncharacters = N(characters),
	.faqs = {faqs_summary, faqs_ending, faqs_info},
	.nfaqs = {N(faqs_summary), N(faqs_ending), N(faqs_info)},
};
