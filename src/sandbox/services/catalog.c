/*-------------------------------------------------------------------------
 * catalog.c
 *	  Sandbox of the business-question catalog (docs/sandbox-catalog-todos-generation.md):
 *	  GET /v1/business-questions, /v1/business-questions/{questionId} and
 *	  /v1/business-questions/{questionId}/answer.
 *
 * Design notes:
 *
 * - The catalog is a constant table of exactly 50 questions (data, not
 *   code): 13 geschaeftsfuehrung, 13 einkauf, 12 kalkulation, 12 hr, and
 *   every one of the seven answerability values.  Ids are
 *   BQ-<persona code>-<three digits>, numbered per persona from 001.
 *   Nothing is stored per partner and nothing changes, so the service has
 *   no state, no reset and no knobs.
 * - "Connected" questions are those whose answerability is
 *   available_snapshot or available_limited_scope: their answer is a
 *   minimized projection of an approved snapshot whose figures are derived
 *   from sb_hash() (so they depend on --seed and on nothing else).  Every
 *   other question answers HTTP 200 with a blocker object and
 *   business_answer_included = false, and carries no figures.
 * - Shapes of the envelope objects are our choice (the document does not
 *   show them) and are documented in docs/sandbox-catalog-todos-generation.md;
 *   keep the two in step.
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <string.h>

#include "sandbox.h"

#define CATALOG_SIZE 50
#define CATALOG_VERSION "v1"
#define SNAPSHOT_AS_OF "2025-01-31"

typedef struct persona_def
{
	const char *code;			/* GF, EK, KA, HR */
	const char *name;			/* enum value of the document */
} persona_def;

static const persona_def personas[] = {
	{"GF", "geschaeftsfuehrung"},
	{"EK", "einkauf"},
	{"KA", "kalkulation"},
	{"HR", "hr"},
	{NULL, NULL}
};

/* Answerability values and what a blocked one is blocked by. */
typedef struct answerability_def
{
	const char *name;
	bool		connected;		/* answer carries snapshot figures */
	const char *blocker_code;	/* NULL when connected */
	const char *blocker_reason;
	const char *required_action;
} answerability_def;

static const answerability_def answerabilities[] = {
	{"available_snapshot", true, NULL, NULL, NULL},
	{"available_limited_scope", true, NULL, NULL, NULL},
	{"partial_evidence", false, "evidence_incomplete",
		"Only part of the evidence needed for this question is approved.",
	"Approve the missing evidence in the data product."},
	{"available_with_owner_prioritization", false, "owner_prioritization_pending",
		"The data exists but its owner has not prioritized the release.",
	"Ask the data owner to prioritize the release."},
	{"source_required", false, "source_missing",
		"No source system is connected for this question.",
	"Connect a source system."},
	{"source_and_semantics_required", false, "source_and_semantics_missing",
		"No source system is connected and the business meaning is not defined.",
	"Connect a source system and define the semantics."},
	{"source_and_owner_required", false, "source_and_owner_missing",
		"No source system is connected and no data owner is named.",
	"Connect a source system and name a data owner."},
	{NULL, false, NULL, NULL, NULL}
};

enum
{
	AV_SNAPSHOT, AV_LIMITED, AV_PARTIAL, AV_OWNER_PRIO, AV_SOURCE,
	AV_SOURCE_SEM, AV_SOURCE_OWNER
};

/* One question; persona is an index into personas, av into answerabilities. */
typedef struct question_def
{
	int			persona;
	int			av;
	const char *answer_class;	/* kpi_snapshot, trend, ranking, breakdown, list */
	const char *product_key;
	const char *unit;			/* unit of the snapshot figures */
	const char *question;
} question_def;

static const question_def questions[CATALOG_SIZE] = {
	/* geschaeftsfuehrung: BQ-GF-001 .. BQ-GF-013 */
	{0, AV_SNAPSHOT, "kpi_snapshot", "finance.revenue_monthly", "EUR",
	"What was the consolidated revenue of the last closed month?"},
	{0, AV_SNAPSHOT, "trend", "finance.margin_quarterly", "percent",
	"How did the operating margin develop over the last four quarters?"},
	{0, AV_SNAPSHOT, "kpi_snapshot", "sales.order_backlog", "EUR",
	"How large is the current order backlog?"},
	{0, AV_LIMITED, "ranking", "sales.customer_revenue", "EUR",
	"Which five customers contribute most to revenue this year?"},
	{0, AV_PARTIAL, "kpi_snapshot", "finance.liquidity", "EUR",
	"How high is the liquidity reserve at the end of the month?"},
	{0, AV_SNAPSHOT, "breakdown", "fleet.operating_costs", "EUR",
	"What are the fleet operating costs per vehicle group and month?"},
	{0, AV_LIMITED, "breakdown", "hr.headcount_fte", "FTE",
	"How many full-time equivalents does the company employ per site?"},
	{0, AV_OWNER_PRIO, "list", "controlling.budget_variance", "percent",
	"Which business units miss their budget by more than five percent?"},
	{0, AV_SOURCE, "trend", "facility.energy_costs", "EUR",
	"How do energy costs develop against the previous year?"},
	{0, AV_SOURCE_SEM, "breakdown", "sales.customer_satisfaction", "index",
	"What is the customer satisfaction index per region?"},
	{0, AV_SOURCE_OWNER, "list", "finance.capex_plan", "EUR",
	"Which investments are planned for the next fiscal year?"},
	{0, AV_PARTIAL, "kpi_snapshot", "finance.receivables_aging", "percent",
	"How large is the share of overdue receivables?"},
	{0, AV_SNAPSHOT, "kpi_snapshot", "controlling.cost_per_order", "EUR",
	"What does the transparency cockpit show as cost per order?"},
	/* einkauf: BQ-EK-001 .. BQ-EK-013 */
	{1, AV_SNAPSHOT, "breakdown", "procurement.supplier_volume", "EUR",
	"What was the purchasing volume per supplier group last quarter?"},
	{1, AV_SNAPSHOT, "ranking", "procurement.supplier_volume", "EUR",
	"Which suppliers have the highest spend this year?"},
	{1, AV_LIMITED, "kpi_snapshot", "procurement.delivery_reliability", "percent",
	"How reliably do suppliers keep their delivery dates?"},
	{1, AV_PARTIAL, "trend", "procurement.price_variance", "percent",
	"How did material prices change against the framework contracts?"},
	{1, AV_SNAPSHOT, "list", "procurement.open_orders", "EUR",
	"Which open purchase orders are overdue?"},
	{1, AV_LIMITED, "kpi_snapshot", "procurement.contract_coverage", "percent",
	"What share of the spend is covered by framework contracts?"},
	{1, AV_OWNER_PRIO, "list", "procurement.sourcing_risk", "count",
	"Which materials have a single source only?"},
	{1, AV_SOURCE, "kpi_snapshot", "logistics.inventory", "EUR",
	"How high are the inventory levels of critical parts?"},
	{1, AV_SOURCE_SEM, "breakdown", "procurement.payment_terms", "days",
	"Which payment terms do the main suppliers grant?"},
	{1, AV_SOURCE_OWNER, "kpi_snapshot", "procurement.savings", "EUR",
	"How much was saved through tenders this year?"},
	{1, AV_SOURCE, "list", "procurement.supplier_certificates", "count",
	"Which suppliers hold a valid sustainability certificate?"},
	{1, AV_PARTIAL, "kpi_snapshot", "procurement.order_cycle", "days",
	"How long is the average order cycle from request to receipt?"},
	{1, AV_SNAPSHOT, "trend", "fleet.fuel_prices", "EUR",
	"How does the fuel price paid develop per month?"},
	/* kalkulation: BQ-KA-001 .. BQ-KA-012 */
	{2, AV_SNAPSHOT, "breakdown", "costing.hourly_rates", "EUR",
	"What are the current hourly rates per cost center?"},
	{2, AV_SNAPSHOT, "kpi_snapshot", "costing.overhead_rates", "percent",
	"How high is the overhead surcharge rate this year?"},
	{2, AV_LIMITED, "list", "costing.order_margin", "EUR",
	"Which orders had a negative contribution margin last month?"},
	{2, AV_PARTIAL, "kpi_snapshot", "costing.calculation_accuracy", "percent",
	"How accurate were the pre-calculations against the post-calculations?"},
	{2, AV_SNAPSHOT, "breakdown", "costing.material_share", "percent",
	"What are the material cost shares per product group?"},
	{2, AV_OWNER_PRIO, "breakdown", "costing.machine_rates", "EUR",
	"How do machine hour rates compare between sites?"},
	{2, AV_LIMITED, "kpi_snapshot", "fleet.cost_per_km", "EUR",
	"What is the full cost per transport kilometre?"},
	{2, AV_SOURCE, "list", "costing.batch_surcharges", "percent",
	"Which surcharges apply to small batch orders?"},
	{2, AV_SOURCE_SEM, "breakdown", "production.scrap_costs", "EUR",
	"How do scrap rates affect unit costs?"},
	{2, AV_SOURCE_OWNER, "list", "costing.target_prices", "EUR",
	"Which target prices apply for the next price list?"},
	{2, AV_PARTIAL, "trend", "costing.labor_unit_cost", "EUR",
	"How did labor costs per unit change over the year?"},
	{2, AV_OWNER_PRIO, "list", "costing.schemes", "count",
	"Which calculation schemes are in use per business unit?"},
	/* hr: BQ-HR-001 .. BQ-HR-012 */
	{3, AV_SNAPSHOT, "breakdown", "hr.headcount", "count",
	"What is the headcount per department at month end?"},
	{3, AV_LIMITED, "trend", "hr.absence", "percent",
	"How high is the sick leave rate per quarter?"},
	{3, AV_SNAPSHOT, "kpi_snapshot", "hr.turnover", "percent",
	"What is the staff turnover rate of the last twelve months?"},
	{3, AV_PARTIAL, "breakdown", "hr.overtime", "hours",
	"How many overtime hours were accrued per department?"},
	{3, AV_LIMITED, "list", "hr.vacancies", "days",
	"Which positions are open, and for how long?"},
	{3, AV_OWNER_PRIO, "breakdown", "hr.demographics", "count",
	"What is the age structure of the workforce?"},
	{3, AV_SOURCE, "kpi_snapshot", "hr.training", "hours",
	"How many training hours did each employee receive?"},
	{3, AV_SOURCE_SEM, "trend", "hr.personnel_cost", "EUR",
	"How does personnel cost develop against the budget?"},
	{3, AV_SOURCE_OWNER, "list", "hr.certifications", "count",
	"Which certifications of employees expire in the next 90 days?"},
	{3, AV_SOURCE, "kpi_snapshot", "hr.recruiting", "days",
	"What is the average time to hire?"},
	{3, AV_OWNER_PRIO, "breakdown", "hr.working_time", "count",
	"How many employees work part time per site?"},
	{3, AV_SOURCE_SEM, "kpi_snapshot", "hr.engagement_survey", "index",
	"How satisfied are employees according to the last survey?"},
};

/* Labels of the figures of a connected answer, per answer class. */
typedef struct class_def
{
	const char *answer_class;
	const char *labels[6];		/* NULL-terminated */
} class_def;

static const class_def classes[] = {
	{"kpi_snapshot", {"total", NULL}},
	{"trend", {"period -3", "period -2", "period -1", "period 0", NULL}},
	{"ranking", {"rank 1", "rank 2", "rank 3", "rank 4", "rank 5", NULL}},
	{"breakdown", {"segment A", "segment B", "segment C", "segment D", NULL}},
	{"list", {"item 1", "item 2", "item 3", NULL}},
	{NULL, {NULL}}
};

#define ID_PATTERN "^BQ-(GF|EK|KA|HR)-[0-9]{3}$"

/*
 * Builds the id of question i into buf (at least 10 bytes): the persona
 * code and the 1-based position of the question within its persona.
 */
static void
question_id(int i, char *buf, size_t len)
{
	int			n = 0;

	for (int j = 0; j <= i; j++)
		if (questions[j].persona == questions[i].persona)
			n++;
	snprintf(buf, len, "BQ-%s-%03d", personas[questions[i].persona].code, n);
}

/*
 * Checks the documented pattern BQ-(GF|EK|KA|HR)-NNN.  A string that fails
 * is a client error (400); one that passes but is not in the catalog is
 * a 404.
 */
static bool
valid_question_id(const char *s)
{
	bool		known_code = false;

	if (strlen(s) != 9 || strncmp(s, "BQ-", 3) != 0 || s[5] != '-')
		return false;
	for (int p = 0; personas[p].code; p++)
		if (strncmp(s + 3, personas[p].code, 2) == 0)
			known_code = true;
	if (!known_code)
		return false;
	for (int k = 6; k < 9; k++)
		if (s[k] < '0' || s[k] > '9')
			return false;
	return true;
}

/* Index of the question with this id, or -1. */
static int
find_question(const char *id)
{
	char		buf[16];

	for (int i = 0; i < CATALOG_SIZE; i++)
	{
		question_id(i, buf, sizeof(buf));
		if (strcmp(buf, id) == 0)
			return i;
	}
	return -1;
}

static int
lookup_name(const char *value, bool persona)
{
	if (persona)
	{
		for (int i = 0; personas[i].name; i++)
			if (strcmp(personas[i].name, value) == 0)
				return i;
	}
	else
	{
		for (int i = 0; answerabilities[i].name; i++)
			if (strcmp(answerabilities[i].name, value) == 0)
				return i;
	}
	return -1;
}

static char *
product_route(const question_def *q, char *buf, size_t len)
{
	snprintf(buf, len, "/v1/data-products/%s", q->product_key);
	return buf;
}

/* The BusinessQuestionSummary of question i (new reference). */
static json_t *
question_summary(int i)
{
	const question_def *q = &questions[i];
	char		id[16];
	char		route[128];

	question_id(i, id, sizeof(id));
	return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s}",
					 "id", id,
					 "persona", personas[q->persona].name,
					 "question", q->question,
					 "answerability", answerabilities[q->av].name,
					 "answer_class", q->answer_class,
					 "product_key", q->product_key,
					 "product_route", product_route(q, route, sizeof(route)));
}

static json_t *
contract_object(void)
{
	return json_pack("{s:s, s:s, s:i, s:b, s:b, s:s}",
					 "name", "business-question-catalog",
					 "version", CATALOG_VERSION,
					 "max_items", CATALOG_SIZE,
					 "read_only", 1,
					 "invented_figures", 0,
					 "answer_source", "approved_management_snapshot");
}

static json_t *
blocker_object(const question_def *q)
{
	const answerability_def *a = &answerabilities[q->av];

	return json_pack("{s:s, s:s, s:s, s:s}",
					 "code", a->blocker_code,
					 "answerability", a->name,
					 "reason", a->blocker_reason,
					 "required_action", a->required_action);
}

/*
 * GET /v1/business-questions: the whole catalog or the questions matching
 * the persona and answerability filters, with the envelope members the
 * document requires.  No paging: the list never exceeds 50 items.
 */
static void
list_questions(sb_request *req, sb_response *resp)
{
	static const char *const allowed[] = {"persona", "answerability", NULL};
	const char *persona = sb_query(req, "persona");
	const char *answerability = sb_query(req, "answerability");
	int			pf = -1;
	int			af = -1;
	json_t	   *result;
	json_t	   *out;

	if (!sb_query_check(req, resp, allowed))
		return;
	if (persona && (pf = lookup_name(persona, true)) < 0)
	{
		sb_reply_error(req, resp, 400, "invalid_persona",
					   "persona must be one of geschaeftsfuehrung, einkauf, kalkulation, hr");
		return;
	}
	if (answerability && (af = lookup_name(answerability, false)) < 0)
	{
		sb_reply_error(req, resp, 400, "invalid_answerability",
					   "answerability must be one of the seven documented values");
		return;
	}

	result = json_array();
	for (int i = 0; i < CATALOG_SIZE; i++)
	{
		if (pf >= 0 && questions[i].persona != pf)
			continue;
		if (af >= 0 && questions[i].av != af)
			continue;
		json_array_append_new(result, question_summary(i));
	}

	out = json_object();
	json_object_set_new(out, "count", json_integer(json_array_size(result)));
	json_object_set_new(out, "result", result);
	json_object_set_new(out, "filters",
						json_pack("{s:o, s:o}",
								  "persona", persona ? json_string(persona) : json_null(),
								  "answerability", answerability ? json_string(answerability) : json_null()));
	json_object_set_new(out, "contract", contract_object());
	json_object_set_new(out, "identity_rules",
						json_pack("{s:s, s:{s:s, s:s, s:s, s:s}, s:s, s:b}",
								  "id_pattern", ID_PATTERN,
								  "persona_codes",
								  "GF", "geschaeftsfuehrung", "EK", "einkauf",
								  "KA", "kalkulation", "HR", "hr",
								  "numbering", "per persona, from 001",
								  "stable_ids", 1));
	json_object_set_new(out, "performance_classes",
						json_pack("{s:{s:i, s:s}, s:{s:i, s:s}, s:{s:n, s:s}}",
								  "catalog", "target_ms", 300,
								  "applies_to", "list and detail reads",
								  "snapshot_answer", "target_ms", 1000,
								  "applies_to", "answers of connected questions",
								  "background", "target_ms",
								  "applies_to", "answers that need a fresh computation; see slow_answer_policy"));
	json_object_set_new(out, "catalog_status_only", json_true());
	json_object_set_new(out, "data_notes",
						json_pack("[s, s, s]",
								  "The catalog reports answer status only; it contains no business figures.",
								  "Figures are only returned by the answer endpoint of connected questions (available_snapshot, available_limited_scope).",
								  "Sandbox data: questions are fixed, snapshot figures are derived from the sandbox seed."));
	sb_reply_json(resp, 200, out);
}

/*
 * Reads and checks {questionId}; returns the catalog index, or -1 after
 * replying 400 (pattern) or 404 (unknown).
 */
static int
question_from_path(sb_request *req, sb_response *resp)
{
	static const char *const none[] = {NULL};
	const char *id = sb_param(req, "questionId");
	int			i;

	if (!sb_query_check(req, resp, none))
		return -1;
	if (id == NULL || !valid_question_id(id))
	{
		sb_reply_error(req, resp, 400, "invalid_question_id",
					   "questionId must match %s", ID_PATTERN);
		return -1;
	}
	if ((i = find_question(id)) < 0)
	{
		sb_reply_error(req, resp, 404, "question_not_found",
					   "no business question %s", id);
		return -1;
	}
	return i;
}

/* GET /v1/business-questions/{questionId} */
static void
get_question(sb_request *req, sb_response *resp)
{
	int			i = question_from_path(req, resp);
	const question_def *q;
	const answerability_def *a;
	json_t	   *result;
	json_t	   *out;
	char		route[128];
	char		unit_rule[128];

	if (i < 0)
		return;
	q = &questions[i];
	a = &answerabilities[q->av];

	result = question_summary(i);
	json_object_set_new(result, "status",
						json_pack("{s:s, s:b, s:o}",
								  "answerability", a->name,
								  "connected", a->connected,
								  "blocker", a->connected ? json_null() : blocker_object(q)));
	json_object_set_new(result, "product_mapping",
						json_pack("{s:s, s:s, s:s}",
								  "product_key", q->product_key,
								  "product_route", product_route(q, route, sizeof(route)),
								  "answer_class", q->answer_class));
	snprintf(unit_rule, sizeof(unit_rule),
			 "Figures are given in %s, as a %s.", q->unit, q->answer_class);
	json_object_set_new(result, "specific_acceptance",
						json_pack("[{s:s, s:s}, {s:s, s:s}]",
								  "id", "SA-1",
								  "criterion", "The answer names the approved snapshot it is taken from.",
								  "id", "SA-2",
								  "criterion", unit_rule));

	out = json_object();
	json_object_set_new(out, "result", result);
	json_object_set_new(out, "common_acceptance_criteria",
						json_pack("[{s:s, s:s}, {s:s, s:s}, {s:s, s:s}]",
								  "id", "AC-1",
								  "criterion", "Only approved evidence is used; no figures are invented.",
								  "id", "AC-2",
								  "criterion", "A blocked question returns a blocker and business_answer_included=false.",
								  "id", "AC-3",
								  "criterion", "Personal data is minimized to aggregates."));
	json_object_set_new(out, "slow_answer_policy",
						json_pack("{s:s, s:i, s:s, s:s}",
								  "strategy", "background_snapshot",
								  "synchronous_budget_ms", 1000,
								  "on_timeout", "serve the last approved snapshot and refresh it in the background",
								  "never", "compute figures on the request path"));
	json_object_set_new(out, "contract", contract_object());
	json_object_set_new(out, "authorization",
						json_pack("{s:s, s:s, s:[s], s:b}",
								  "scheme", "bearer",
								  "partner_tier", req->partner ? sb_tier_name(req->partner->tier) : "standard",
								  "scopes", "business-questions:read",
								  "answer_allowed", 1));
	sb_reply_json(resp, 200, out);
}

/*
 * One figure of a connected answer: value derived from the seed, the
 * question and the label, scaled to a plausible range for the unit.
 */
static json_t *
figure(int i, int k, const char *label, const char *unit)
{
	uint64_t	h = sb_hash((uint64_t) i * 131 + 17, (uint64_t) k + 1);
	double		value;

	if (strcmp(unit, "EUR") == 0)
		value = (double) (1000 + h % 9999000);
	else if (strcmp(unit, "percent") == 0 || strcmp(unit, "index") == 0)
		value = (double) (h % 1000) / 10.0;
	else if (strcmp(unit, "FTE") == 0)
		value = (double) (10 + h % 2900) / 10.0;
	else if (strcmp(unit, "days") == 0)
		value = (double) (1 + h % 120);
	else
		value = (double) (1 + h % 500);
	return json_pack("{s:s, s:f, s:s}", "label", label, "value", value,
					 "unit", unit);
}

/*
 * GET /v1/business-questions/{questionId}/answer: a minimized projection
 * of the approved snapshot for a connected question, otherwise a blocker
 * (HTTP 200 in both cases, as the document prescribes).
 */
static void
answer_question(sb_request *req, sb_response *resp)
{
	int			i = question_from_path(req, resp);
	const question_def *q;
	const answerability_def *a;
	json_t	   *out;
	char		id[16];

	if (i < 0)
		return;
	q = &questions[i];
	a = &answerabilities[q->av];
	question_id(i, id, sizeof(id));

	out = json_pack("{s:s, s:s, s:s, s:b}",
					"question_id", id,
					"persona", personas[q->persona].name,
					"answerability", a->name,
					"business_answer_included", a->connected);
	if (a->connected)
	{
		json_t	   *figures = json_array();
		const char *const *labels = classes[0].labels;
		char		snap[96];

		for (int c = 0; classes[c].answer_class; c++)
			if (strcmp(classes[c].answer_class, q->answer_class) == 0)
				labels = classes[c].labels;
		for (int k = 0; labels[k]; k++)
			json_array_append_new(figures, figure(i, k, labels[k], q->unit));
		snprintf(snap, sizeof(snap), "SNAP-%s-%08x", q->product_key,
				 (unsigned) (sb_hash((uint64_t) i, 99) & 0xffffffffu));
		json_object_set_new(out, "snapshot",
							json_pack("{s:s, s:s, s:b, s:s, s:s}",
									  "snapshot_id", snap,
									  "product_key", q->product_key,
									  "approved", 1,
									  "approved_by_role", "management",
									  "as_of", SNAPSHOT_AS_OF));
		json_object_set_new(out, "answer_class", json_string(q->answer_class));
		json_object_set_new(out, "figures", figures);
		json_object_set_new(out, "scope",
							json_pack("{s:b, s:s}",
									  "limited", q->av == AV_LIMITED,
									  "description", q->av == AV_LIMITED
									  ? "pilot sites only; other sites are not yet approved"
									  : "whole company"));
		json_object_set_new(out, "minimized", json_true());
	}
	else
		json_object_set_new(out, "blocker", blocker_object(q));
	sb_reply_json(resp, 200, out);
}

static const sb_route catalog_routes[] = {
	{"GET", "/v1/business-questions", SB_AUTH, SB_STYLE_PLAIN, NULL, list_questions},
	{"GET", "/v1/business-questions/{questionId}", SB_AUTH, SB_STYLE_PLAIN, NULL, get_question},
	{"GET", "/v1/business-questions/{questionId}/answer", SB_AUTH, SB_STYLE_PLAIN, NULL, answer_question},
	{NULL, NULL, 0, 0, NULL, NULL}
};

const sb_service sb_service_catalog = {
	.name = "catalog",
	.routes = catalog_routes,
};
