/*-------------------------------------------------------------------------
 * orders_validate.c
 *	  The rules of a create-order and a validate-order request of the
 *	  sandbox's partner order service, each answered with its own code.
 *
 * Design notes:
 *
 * - The list of codes is in docs/sandbox-orders.md and must stay in step
 *   with this file.
 * - Validation reports the first broken rule, checking members in a fixed
 *   order, so a request always gets the same code.
 * - Validate applies the same rules as create to the members present; it
 *   only requires less (no terms, payment flag or vignette custom_id).
 *-------------------------------------------------------------------------
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "services/orders.h"

#define MAX_VEHICLES 10
#define MAX_VIGNETTES 10

typedef sb_orders_verr verr;

static bool
fail(verr *e, int status, const char *code, const char *fmt, const char *arg)
{
	e->status = status;
	e->code = code;
	snprintf(e->msg, sizeof(e->msg), fmt, arg ? arg : "");
	return false;
}

static const char *const periods[] = {"1_day", "10_days", "1_month", "1_year", NULL};
static const char *const providers[] = {"provider_a", "provider_b", "provider_c", NULL};

static bool
in_list(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (strcmp(s, *list) == 0)
			return true;
	return false;
}

/* True if s is a real calendar date written YYYY-MM-DD. */
static bool
valid_date(const char *s)
{
	static const int mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	int			y,
				m,
				d;

	if (strlen(s) != 10 || s[4] != '-' || s[7] != '-')
		return false;
	for (int i = 0; i < 10; i++)
		if (i != 4 && i != 7 && !isdigit((unsigned char) s[i]))
			return false;
	y = atoi(s);
	m = atoi(s + 5);
	d = atoi(s + 8);
	if (y < 2000 || m < 1 || m > 12 || d < 1 || d > mdays[m - 1])
		return false;
	if (m == 2 && d == 29 && !((y % 4 == 0 && y % 100 != 0) || y % 400 == 0))
		return false;
	return true;
}

/* Plates: 2..15 characters, letters, digits, space and dash. */
static bool
valid_plate(const char *s)
{
	size_t		n = strlen(s);

	if (n < 2 || n > 15)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char) *s) && *s != ' ' && *s != '-')
			return false;
	return true;
}

static bool
only_members(json_t *obj, const char *const *allowed, const char **bad)
{
	const char *k;
	json_t	   *v;

	json_object_foreach(obj, k, v)
	{
		if (!in_list(k, allowed))
		{
			*bad = k;
			return false;
		}
	}
	return true;
}

static bool
check_vehicles(json_t *body, bool create, verr *e)
{
	static const char *const members[] = {"plate", "country", NULL};
	json_t	   *a = json_object_get(body, "vehicles");
	size_t		i,
				j;
	json_t	   *v;
	const char *bad;

	if (!a)
		return fail(e, 400, "vehicles_required", "vehicles is required%s", NULL);
	if (!json_is_array(a))
		return fail(e, 400, "vehicles_invalid", "vehicles must be an array%s", NULL);
	if (json_array_size(a) == 0)
		return fail(e, 400, "vehicles_empty", "vehicles must not be empty%s", NULL);
	if (json_array_size(a) > MAX_VEHICLES)
		return fail(e, 400, "vehicles_too_many", "at most 10 vehicles per order%s", NULL);
	json_array_foreach(a, i, v)
	{
		json_t	   *p,
				   *c;
		const char *cs;

		if (!json_is_object(v))
			return fail(e, 400, "vehicle_invalid", "vehicles entries must be objects%s", NULL);
		if (!only_members(v, members, &bad))
			return fail(e, 400, "vehicle_invalid", "unknown vehicle member \"%s\"", bad);
		p = json_object_get(v, "plate");
		if (!json_is_string(p) || !valid_plate(json_string_value(p)))
			return fail(e, 400, "vehicle_plate_invalid",
						"vehicle plate must be 2 to 15 letters, digits, spaces or dashes%s", NULL);
		c = json_object_get(v, "country");
		cs = json_string_value(c);
		if (!cs || strlen(cs) != 2 || !isupper((unsigned char) cs[0]) ||
			!isupper((unsigned char) cs[1]))
			return fail(e, 400, "vehicle_country_invalid",
						"vehicle country must be an ISO 3166-1 alpha-2 code such as \"SI\"%s", NULL);
		for (j = 0; j < i; j++)
		{
			json_t	   *w = json_array_get(a, j);

			if (strcasecmp(json_string_value(json_object_get(w, "plate")),
						   json_string_value(p)) == 0 &&
				strcmp(json_string_value(json_object_get(w, "country")), cs) == 0)
				return fail(e, 400, "vehicles_duplicate",
							"vehicle \"%s\" is listed twice", json_string_value(p));
		}
	}
	(void) create;
	return true;
}

static bool
check_vignettes(json_t *body, bool create, int partner, verr *e)
{
	static const char *const members[] =
	{"custom_id", "name", "period", "start_date", "flex", NULL};
	json_t	   *a = json_object_get(body, "vignettes");
	size_t		i,
				j;
	json_t	   *v;
	const char *bad;

	if (!a)
		return fail(e, 400, "vignettes_required", "vignettes is required%s", NULL);
	if (!json_is_array(a))
		return fail(e, 400, "vignettes_invalid", "vignettes must be an array%s", NULL);
	if (json_array_size(a) == 0)
		return fail(e, 400, "vignettes_empty", "vignettes must not be empty%s", NULL);
	if (json_array_size(a) > MAX_VIGNETTES)
		return fail(e, 400, "vignettes_too_many", "at most 10 vignettes per order%s", NULL);
	json_array_foreach(a, i, v)
	{
		json_t	   *cid,
				   *m;
		const char *s;

		if (!json_is_object(v))
			return fail(e, 400, "vignette_invalid", "vignettes entries must be objects%s", NULL);
		if (!only_members(v, members, &bad))
			return fail(e, 400, "vignette_invalid", "unknown vignette member \"%s\"", bad);
		cid = json_object_get(v, "custom_id");
		if (cid || create)
		{
			s = json_string_value(cid);
			if (!s || strlen(s) < 1 || strlen(s) > 64)
				return fail(e, 400, "vignette_custom_id_invalid",
							"vignette custom_id must be a string of 1 to 64 characters%s", NULL);
		}
		s = json_string_value(json_object_get(v, "name"));
		if (!s || strlen(s) < 1 || strlen(s) > 100)
			return fail(e, 400, "vignette_name_invalid",
						"vignette name must be a string of 1 to 100 characters%s", NULL);
		s = json_string_value(json_object_get(v, "period"));
		if (!s || !in_list(s, periods))
			return fail(e, 400, "vignette_period_invalid",
						"vignette period must be one of 1_day, 10_days, 1_month, 1_year%s", NULL);
		s = json_string_value(json_object_get(v, "start_date"));
		if (!s || !valid_date(s))
			return fail(e, 400, "vignette_start_date_invalid",
						"vignette start_date must be a date YYYY-MM-DD%s", NULL);
		m = json_object_get(v, "flex");
		if (m && !json_is_boolean(m))
			return fail(e, 400, "vignette_flex_invalid", "vignette flex must be a boolean%s", NULL);
		if (!cid)
			continue;
		for (j = 0; j < i; j++)
		{
			json_t	   *w = json_object_get(json_array_get(a, j), "custom_id");

			if (w && strcmp(json_string_value(w), json_string_value(cid)) == 0)
				return fail(e, 400, "vignettes_duplicate_custom_id",
							"custom_id \"%s\" is used twice in this request",
							json_string_value(cid));
		}
		if (sb_orders_find(partner, json_string_value(cid)))
			return fail(e, 409, "custom_id_exists",
						"an order with custom_id \"%s\" already exists",
						json_string_value(cid));
	}
	return true;
}

static bool
check_payment(json_t *body, verr *e)
{
	json_t	   *paid = json_object_get(body, "order_has_been_paid");
	bool		is_paid = json_is_true(paid);
	json_t	   *m;
	size_t		i,
				j;
	json_t	   *v;

	m = json_object_get(body, "send_payment_link");
	if (m)
	{
		if (is_paid)
			return fail(e, 400, "send_payment_link_not_allowed",
						"send_payment_link is only allowed when order_has_been_paid is false%s", NULL);
		if (!json_is_string(m) ||
			(strcmp(json_string_value(m), "email") != 0 &&
			 strcmp(json_string_value(m), "sms") != 0))
			return fail(e, 400, "send_payment_link_invalid",
						"send_payment_link must be \"email\" or \"sms\"%s", NULL);
	}
	m = json_object_get(body, "allowed_payment_providers");
	if (m)
	{
		if (is_paid)
			return fail(e, 400, "allowed_payment_providers_not_allowed",
						"allowed_payment_providers is only allowed when order_has_been_paid is false%s", NULL);
		if (!json_is_array(m))
			return fail(e, 400, "allowed_payment_providers_invalid",
						"allowed_payment_providers must be an array of strings%s", NULL);
		if (json_array_size(m) == 0)
			return fail(e, 400, "allowed_payment_providers_empty",
						"allowed_payment_providers needs at least one item%s", NULL);
		json_array_foreach(m, i, v)
		{
			if (!json_is_string(v))
				return fail(e, 400, "allowed_payment_providers_invalid",
							"allowed_payment_providers must be an array of strings%s", NULL);
			if (!in_list(json_string_value(v), providers))
				return fail(e, 400, "allowed_payment_provider_unknown",
							"unknown payment provider \"%s\" (provider_a, provider_b, provider_c)",
							json_string_value(v));
			for (j = 0; j < i; j++)
				if (strcmp(json_string_value(json_array_get(m, j)),
						   json_string_value(v)) == 0)
					return fail(e, 400, "allowed_payment_providers_not_unique",
								"payment provider \"%s\" is listed twice",
								json_string_value(v));
		}
	}
	m = json_object_get(body, "open_order_details_by_default");
	if (m)
	{
		if (is_paid)
			return fail(e, 400, "open_order_details_by_default_not_allowed",
						"open_order_details_by_default is only allowed when order_has_been_paid is false%s", NULL);
		if (!json_is_boolean(m))
			return fail(e, 400, "open_order_details_by_default_invalid",
						"open_order_details_by_default must be a boolean%s", NULL);
	}
	return true;
}

static bool
check_user(json_t *body, verr *e)
{
	json_t	   *u = json_object_get(body, "user");
	json_t	   *m;
	const char *s;
	const char *link;

	if (u)
	{
		if (!json_is_object(u))
			return fail(e, 400, "user_invalid", "user must be an object%s", NULL);
		m = json_object_get(u, "email");
		if (m)
		{
			s = json_string_value(m);
			if (!s || !strchr(s, '@') || strlen(s) > 254 || s[0] == '@')
				return fail(e, 400, "user_email_invalid", "user.email must be an email address%s", NULL);
		}
		m = json_object_get(u, "phone");
		if (m)
		{
			s = json_string_value(m);
			if (!s || s[0] != '+' || strlen(s) < 5 || strlen(s) > 16 ||
				strspn(s + 1, "0123456789") != strlen(s) - 1)
				return fail(e, 400, "user_phone_invalid",
							"user.phone must be an E.164 number such as \"+38640123456\"%s", NULL);
		}
		for (int i = 0; i < 3; i++)
		{
			static const char *const names[] = {"first_name", "last_name", "language"};

			m = json_object_get(u, names[i]);
			if (m && !json_is_string(m))
				return fail(e, 400, "user_invalid", "user.%s must be a string", names[i]);
		}
	}
	m = json_object_get(body, "subaccount");
	if (m && (!json_is_string(m) || strlen(json_string_value(m)) < 1 ||
			  strlen(json_string_value(m)) > 64))
		return fail(e, 400, "subaccount_invalid",
					"subaccount must be a string of 1 to 64 characters%s", NULL);
	m = json_object_get(body, "extra");
	if (m && !json_is_object(m))
		return fail(e, 400, "extra_invalid", "extra must be an object%s", NULL);

	link = json_string_value(json_object_get(body, "send_payment_link"));
	if (link && strcmp(link, "email") == 0 && !json_object_get(u, "email"))
		return fail(e, 400, "user_email_required",
					"send_payment_link \"email\" needs user.email%s", NULL);
	if (link && strcmp(link, "sms") == 0 && !json_object_get(u, "phone"))
		return fail(e, 400, "user_phone_required",
					"send_payment_link \"sms\" needs user.phone%s", NULL);
	return true;
}

/*
 * Checks a create (create = true) or validate request body against every
 * rule; on the first broken one fills e and returns false.  Validate
 * applies the same rules to the members present but requires only
 * vehicles and vignettes (and no vignette custom_id).
 */
bool
sb_orders_validate(json_t *body, bool create, int partner, verr *e)
{
	static const char *const members[] = {
		"terms_and_privacy_accepted", "order_has_been_paid", "vehicles",
		"vignettes", "send_payment_link", "allowed_payment_providers",
		"open_order_details_by_default", "user", "subaccount", "extra", NULL
	};
	const char *bad;
	json_t	   *m;

	if (!json_is_object(body))
		return fail(e, 400, "body_not_object", "the body must be a JSON object%s", NULL);
	if (!only_members(body, members, &bad))
		return fail(e, 400, "unknown_field", "unknown member \"%s\"", bad);

	m = json_object_get(body, "terms_and_privacy_accepted");
	if (!m && create)
		return fail(e, 400, "terms_and_privacy_accepted_required",
					"terms_and_privacy_accepted is required%s", NULL);
	if (m && !json_is_boolean(m))
		return fail(e, 400, "terms_and_privacy_accepted_invalid",
					"terms_and_privacy_accepted must be a boolean%s", NULL);
	if (m && !json_is_true(m))
		return fail(e, 400, "terms_not_accepted",
					"terms_and_privacy_accepted must be true%s", NULL);

	m = json_object_get(body, "order_has_been_paid");
	if (!m && create)
		return fail(e, 400, "order_has_been_paid_required",
					"order_has_been_paid is required%s", NULL);
	if (m && !json_is_boolean(m))
		return fail(e, 400, "order_has_been_paid_invalid",
					"order_has_been_paid must be a boolean%s", NULL);

	return check_vehicles(body, create, e) &&
		check_vignettes(body, create, partner, e) &&
		check_payment(body, e) &&
		check_user(body, e);
}
