/*-------------------------------------------------------------------------
 * orders_admin.c
 *	  Sandbox-only routes of the partner order service: paying or failing
 *	  a checkout, chargebacks, the transaction list, and the documents the
 *	  sandbox serves in place of the real service's links (the PDF
 *	  confirmation behind pdf_url and the checkout page behind
 *	  payment_link).
 *
 * Design notes:
 *
 * - Pay, fail, chargeback and the transaction list act for one partner
 *   (SB_ADMIN | SB_AUTH); the PDF and checkout links are unauthenticated,
 *   as a link handed to an end user would be, and look the id up across
 *   partners.
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "services/orders.h"

static sb_tx *
tx_arg(sb_request *req, sb_response *resp)
{
	const char *id = sb_param(req, "transaction_id");
	sb_tx	   *t = sb_orders_find_tx(req->partner->index, id);

	if (!t)
		sb_reply_error(req, resp, 404, "transaction_not_found",
					   "no transaction \"%s\"", id);
	else if (t->status != SB_TX_CREATED)
	{
		sb_reply_error(req, resp, 409, "transaction_not_open",
					   "transaction %s is %s; only a CREATED checkout can be paid or failed",
					   t->id, t->paid_by_partner ? "paid by the partner" :
					   sb_orders_tx_status_name(t->status));
		t = NULL;
	}
	return t;
}

static void
reply_tx(sb_request *req, sb_response *resp, sb_tx *t)
{
	sb_reply_json(resp, 200,
				  json_pack("{s:n, s:o}", "error", "data",
							sb_orders_tx_json(req->partner->index, t)));
	resp->applied = true;
}

/* POST /_sandbox/orders/transactions/{transaction_id}/pay */
void
sb_orders_state_route_pay(sb_request *req, sb_response *resp)
{
	sb_tx	   *t = tx_arg(req, resp);

	if (t && sb_orders_pay(req->partner->index, t))
		reply_tx(req, resp, t);
}

/* POST /_sandbox/orders/transactions/{transaction_id}/fail */
void
sb_orders_state_route_fail(sb_request *req, sb_response *resp)
{
	sb_tx	   *t = tx_arg(req, resp);

	if (t && sb_orders_fail(req->partner->index, t))
		reply_tx(req, resp, t);
}

/* POST /_sandbox/orders/chargeback/{id} */
void
sb_orders_state_route_chargeback(sb_request *req, sb_response *resp)
{
	const char *id = sb_param(req, "id");
	sb_order   *o = sb_orders_find(req->partner->index, id);

	if (!o)
	{
		sb_reply_error(req, resp, 404, "order_not_found",
					   "no order with id or custom_id \"%s\"", id);
		return;
	}
	if (!sb_orders_chargeback(req->partner->index, o))
	{
		sb_reply_error(req, resp, 409, "order_not_chargeable",
					   "order %s is %s; a chargeback needs a paid order that is not refunded",
					   o->id, sb_orders_status_name(o->status));
		return;
	}
	sb_reply_json(resp, 200,
				  json_pack("{s:n, s:{s:s, s:s?, s:s}}", "error", "data",
							"id", o->id, "custom_id", o->custom_id,
							"status", sb_orders_status_name(o->status)));
	resp->applied = true;
}

/* GET /_sandbox/orders/transactions */
void
sb_orders_state_route_txs(sb_request *req, sb_response *resp)
{
	sb_opartner *p = &sb_orders_data[req->partner->index];
	json_t	   *a = json_array();

	for (int i = 0; i < p->ntx; i++)
		json_array_append_new(a, sb_orders_tx_json(req->partner->index, &p->txs[i]));
	sb_reply_json(resp, 200, a);
}

/*
 * GET /_sandbox/orders/pdf/{id}[?car=N]: a one-page PDF naming the order
 * (and car); 404 pdf_not_ready before ORDER_CONFIRMATION_RECEIVED.
 */
void
sb_orders_state_route_pdf(sb_request *req, sb_response *resp)
{
	const char *id = sb_param(req, "id");
	const char *car = sb_query(req, "car");
	int			partner;
	sb_order   *o = sb_orders_find_any(id, &partner);
	char		text[200];
	char		stream[300];
	char	   *pdf;
	size_t		len = 0;
	size_t		off[6];
	int64_t		ci = 0;

	if (!o)
	{
		sb_reply_error(req, resp, 404, "order_not_found", "no order \"%s\"", id);
		return;
	}
	if (!o->pdf_ready)
	{
		sb_reply_error(req, resp, 404, "pdf_not_ready",
					   "the confirmation of order %s has not arrived yet", o->id);
		return;
	}
	if (car && (!sb_parse_int64(car, &ci) || ci < 0 || ci >= o->ncars))
	{
		sb_reply_error(req, resp, 404, "car_not_found", "order %s has no car %s", o->id, car);
		return;
	}
	snprintf(text, sizeof(text), "Vignette confirmation %s %s %s %s",
			 o->id, o->name, o->cars[ci].plate, o->cars[ci].country);
	for (char *s = text; *s; s++)
		if (*s == '(' || *s == ')' || *s == '\\')
			*s = ' ';
	snprintf(stream, sizeof(stream), "BT /F1 12 Tf 50 780 Td (%s) Tj ET", text);

	pdf = malloc(2048);
#define PUT(...) (len += snprintf(pdf + len, 2048 - len, __VA_ARGS__))
	PUT("%%PDF-1.4\n");
	off[1] = len;
	PUT("1 0 obj <</Type/Catalog/Pages 2 0 R>> endobj\n");
	off[2] = len;
	PUT("2 0 obj <</Type/Pages/Kids[3 0 R]/Count 1>> endobj\n");
	off[3] = len;
	PUT("3 0 obj <</Type/Page/Parent 2 0 R/MediaBox[0 0 595 842]/Contents 4 0 R"
		"/Resources<</Font<</F1 5 0 R>>>>>> endobj\n");
	off[4] = len;
	PUT("4 0 obj <</Length %zu>> stream\n%s\nendstream endobj\n", strlen(stream), stream);
	off[5] = len;
	PUT("5 0 obj <</Type/Font/Subtype/Type1/BaseFont/Helvetica>> endobj\n");
	{
		size_t		xref = len;

		PUT("xref\n0 6\n0000000000 65535 f \n");
		for (int k = 1; k <= 5; k++)
			PUT("%010zu 00000 n \n", off[k]);
		PUT("trailer <</Size 6/Root 1 0 R>>\nstartxref\n%zu\n%%%%EOF\n", xref);
	}
#undef PUT
	sb_reply_raw(resp, 200, "application/pdf", pdf, len);
	free(pdf);
}

/*
 * GET /_sandbox/orders/checkout/{transaction_id}: the payment page the
 * payment_link points to; shows the transaction, takes no action (pay or
 * fail it with the admin routes).
 */
void
sb_orders_state_route_checkout(sb_request *req, sb_response *resp)
{
	const char *id = sb_param(req, "transaction_id");
	int			partner;
	sb_tx	   *t = sb_orders_find_tx_any(id, &partner);
	char	   *html;
	size_t		len = 0;
	size_t		cap = 4096;
	size_t		i;
	json_t	   *v;

	if (!t)
	{
		sb_reply_error(req, resp, 404, "transaction_not_found", "no transaction \"%s\"", id);
		return;
	}
	html = malloc(cap);
#define PUT(...) (len += snprintf(html + len, len < cap ? cap - len : 0, __VA_ARGS__))
	PUT("<!DOCTYPE html>\n<html><head><title>Sandbox checkout %s</title></head><body>\n"
		"<h1>Sandbox checkout</h1>\n<p>transaction <code>%s</code>: %s</p>\n<ul>\n",
		t->id, t->id, t->paid_by_partner ? "paid by partner" :
		sb_orders_tx_status_name(t->status));
	for (int k = 0; k < t->norders && len < cap; k++)
	{
		sb_order   *o = &sb_orders_data[partner].orders[t->orders[k]];

		char		name[600];
		size_t		n = 0;

		/* names are partner text: escape what HTML would interpret */
		for (const char *c = o->name; *c && n < sizeof(name) - 7; c++)
		{
			if (*c == '<')
				n += snprintf(name + n, sizeof(name) - n, "&lt;");
			else if (*c == '>')
				n += snprintf(name + n, sizeof(name) - n, "&gt;");
			else if (*c == '&')
				n += snprintf(name + n, sizeof(name) - n, "&amp;");
			else if (*c == '"')
				n += snprintf(name + n, sizeof(name) - n, "&quot;");
			else
				name[n++] = *c;
		}
		name[n] = '\0';
		PUT("<li><code>%s</code> %s (%s, from %s)</li>\n", o->id, name,
			o->period, o->start_date);
	}
	PUT("</ul>\n<p>payment providers:");
	json_array_foreach(t->providers, i, v)
		PUT(" %s", json_string_value(v));
	PUT("</p>\n</body></html>\n");
#undef PUT
	if (len >= cap)
		len = cap - 1;
	sb_reply_raw(resp, 200, "text/html; charset=utf-8", html, len);
	free(html);
}
