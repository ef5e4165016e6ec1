/* SPDX-License-Identifier: BSD-3-Clause */
#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fw_auth.h"
#include "fw_buf.h"
#include "fw_ctl.h"
#include "fw_form.h"
#include "fw_html.h"
#include "fw_http.h"
#include "fw_metrics.h"
#include "fw_req.h"

#include "fc_secret.h"

/* one request's own: the raw URI (from the log callback) and its body */
struct req {
	char *uri;
	char *body;
	size_t len;
	int too_big;
	int looked;		/* the soft limit looked at (its first call) */
};

enum kind { HTML, TEXT, JSON, METRICS };

static const char *const types[] = {
	[HTML] = "text/html; charset=utf-8",
	[TEXT] = "text/plain; charset=utf-8",
	[JSON] = "application/json",
	[METRICS] = "text/plain; version=0.0.4; charset=utf-8",
};

static enum MHD_Result
send_text(struct MHD_Connection *c, unsigned int code, enum kind k, char *text, size_t len,
	  const char *hdr, const char *val)
{
	struct MHD_Response *r;
	enum MHD_Result rc;

	if (text == NULL)
		return MHD_NO;
	r = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
	if (r == NULL) {
		free(text);
		return MHD_NO;
	}
	MHD_add_response_header(r, "Content-Type", types[k]);
	MHD_add_response_header(r, "Cache-Control", "no-store");
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(r, "Content-Security-Policy",
				"default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; "
				"img-src 'self'; form-action 'self'; frame-ancestors 'none'");
	if (hdr != NULL)
		MHD_add_response_header(r, hdr, val);
	if (code == 503)	/* busy: closed after it (a connection kept would be busy for ever) */
		MHD_add_response_header(r, "Connection", "close");
	rc = MHD_queue_response(c, code, r);
	MHD_destroy_response(r);
	return rc;
}

static enum MHD_Result
send_buf(struct MHD_Connection *c, unsigned int code, enum kind k, struct fw_buf *b)
{
	size_t len = b->len;

	return send_text(c, code, k, fw_buf_take(b), len, NULL, NULL);
}

/* an error page (HTML) or, under /api/, {"error": what} */
static enum MHD_Result
fail(struct MHD_Connection *c, const char *path, unsigned int code, const char *what,
     const char *hdr, const char *val)
{
	struct fw_buf b = {0};
	size_t len;

	if (strncmp(path, "/api/", 5) == 0) {
		json_t *j = json_pack("{s:s, s:i}", "error", what, "code", code);
		char *s = j ? json_dumps(j, 0) : NULL;

		json_decref(j);
		if (s == NULL)
			return MHD_NO;
		return send_text(c, code, JSON, s, strlen(s), hdr, val);
	}
	fw_html_error(&b, code, what);
	len = b.len;
	return send_text(c, code, HTML, fw_buf_take(&b), len, hdr, val);
}

static enum MHD_Result
send_json(struct MHD_Connection *c, json_t *j)
{
	char *s = j ? json_dumps(j, JSON_INDENT(1)) : NULL;

	json_decref(j);
	if (s == NULL)
		return MHD_NO;
	return send_text(c, 200, JSON, s, strlen(s), NULL, NULL);
}

static const char *
hdr(struct MHD_Connection *c, const char *name)
{
	return MHD_lookup_connection_value(c, MHD_HEADER_KIND, name);
}

/* c's guard entry, or NULL */
static struct fw_guard_conn *
guarded(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *i = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return i != NULL ? i->socket_context : NULL;
}

/* ---- the reads ---- */

/*
 * 401 and the challenge: a request without its credential, or with one
 * refused; why (flowcutd's reason, as long as it is: a fixed buffer would
 * cut a longer one short), then what it asks for
 */
static enum MHD_Result
challenge(struct MHD_Connection *c, const char *path, const char *why, const char *asks)
{
	char *what = NULL;
	enum MHD_Result rc;

	if (asprintf(&what, "%s: %s", why, asks) < 0)
		what = NULL;
	rc = fail(c, path, 401, what ? what : why, "WWW-Authenticate", FW_AUTH_CHALLENGE);
	free(what);
	return rc;
}

#define READS_ASK "reads ask for the read credential (/etc/flowcut/read.secret) or the " \
		  "operator's secret, as the password of HTTP Basic authentication, any user name"
#define CHANGES_ASK "changes ask for the operator's secret (the password of HTTP Basic " \
		    "authentication, any user name; /etc/flowcut/web.secret)"

/*
 * A read's right, from its Authorization header: 0 and *operator false
 * (the read credential, judged here), 0 and *operator true (another
 * password, secret holding it: only flowcutd can say whether it is the
 * operator's, so it goes with the read), or -EACCES with why (none, or not
 * Basic).  A refused file of the read credential is said once on stderr.
 */
static int
read_right(struct fw_http *h, struct MHD_Connection *c, char *secret, size_t len, bool *operator,
	   const char **why)
{
	char said[256] = "";

	if (fw_auth_basic(hdr(c, "Authorization"), secret, len, why) != 0) {
		if (*why == NULL)
			*why = "no Authorization";
		return -EACCES;
	}
	switch (fc_secret_check_reader(h->read_secret, secret, strlen(secret), said,
				       sizeof(said))) {
	case FC_SECRET_RIGHT:
		explicit_bzero(secret, len);
		*operator = false;
		return 0;
	case FC_SECRET_REFUSED:
		if (__atomic_exchange_n(&h->read_said, 1, __ATOMIC_RELAXED) == 0)
			fprintf(stderr, "flowcut-web: the read credential: %s: only the operator's "
				"secret opens reads until it is fixed\n", said);
		break;
	default:
		break;
	}
	*operator = true;
	return 0;
}

/*
 * A page drawn from the sampler, asked on a password not the read
 * credential: flowcutd judges it, on a `status`.  0, or the answer sent
 * (401, 502) in *rc.
 */
static int
operator_ok(struct fw_http *h, struct MHD_Connection *c, const char *path, const char *secret,
	    enum MHD_Result *rc)
{
	char err[512] = "";
	json_t *doc = NULL;
	int e = fw_ctl_ask(h->ctl_path, secret, "status\n", &doc, err, sizeof(err));

	json_decref(doc);
	if (e == 0)
		return 0;
	*rc = e == -EPROTO && strncmp(err, "refused", 7) == 0 ? challenge(c, path, err, READS_ASK) :
	      fail(c, path, 502, err, NULL, NULL);
	return -1;
}

/* /health: open to all, and says nothing but whether flowcutd answers */
static enum MHD_Result
health(struct fw_http *h, struct MHD_Connection *c)
{
	json_t *last, *prev;
	char *text;
	int up;

	fw_sample_get(h->sample, &last, &prev, NULL, NULL, 0);
	up = last != NULL;
	json_decref(last);
	json_decref(prev);
	text = strdup(up ? "ok\n" : "flowcutd does not answer\n");	/* send_text frees it */
	return send_text(c, up ? 200 : 503, TEXT, text, text ? strlen(text) : 0, NULL, NULL);
}

static enum MHD_Result
page_status(struct fw_http *h, struct MHD_Connection *c, int api, const char *csrf)
{
	struct fw_point *p = malloc(sizeof(struct fw_point) * FW_SAMPLE_N);
	json_t *last, *prev;
	char err[256];
	unsigned int n;
	struct fw_buf b = {0};
	enum MHD_Result rc;

	if (p == NULL)
		return MHD_NO;
	n = fw_sample_get(h->sample, &last, &prev, p, err, sizeof(err));
	if (api) {
		json_t *j = json_object();

		struct fw_guard_stats st;

		fw_guard_stats(h->guard, &st);
		json_object_set_new(j, "flowcutd_error", err[0] ? json_string(err) : json_null());
		json_object_set_new(j, "web", json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
			"connections", (json_int_t)st.opened, "let_go_deadline", (json_int_t)st.let_go_deadline,
			"let_go_client", (json_int_t)st.let_go_client, "let_go_open", (json_int_t)st.let_go_open,
			"busy", (json_int_t)st.over, "reads_refused", (json_int_t)st.costly_refused,
			"uid_unknown", (json_int_t)st.uid_unknown));
		if (last != NULL) {
			static const char *const keys[] = {"gate", "ips_switch", "boot_id", "uptime_s",
							   "connections", "time_ms"};

			for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
				json_t *v = json_object_get(last, keys[i]);

				if (v != NULL)
					json_object_set(j, keys[i], v);
			}
		}
		rc = send_json(c, j);
	} else {
		fw_html_status(&b, last, prev, p, n, last == NULL && !err[0] ? "no answer yet" : err, csrf);
		rc = send_buf(c, 200, HTML, &b);
	}
	json_decref(last);
	json_decref(prev);
	free(p);
	return rc;
}

static enum MHD_Result
api_counters(struct fw_http *h, struct MHD_Connection *c)
{
	struct fw_point *p = malloc(sizeof(struct fw_point) * FW_SAMPLE_N);
	json_t *last, *prev, *j, *rates, *series;
	static const char *const sections[] = {"fastpath", "flowcutd", "link"};
	unsigned int n;
	char err[256];

	if (p == NULL)
		return MHD_NO;
	n = fw_sample_get(h->sample, &last, &prev, p, err, sizeof(err));
	if (last == NULL) {
		json_decref(prev);
		free(p);
		return fail(c, "/api/", 502, err[0] ? err : "flowcutd has not answered yet", NULL, NULL);
	}
	rates = json_object();
	for (size_t s = 0; s < 3; s++) {
		json_t *r = json_object(), *v;
		const char *key;

		json_object_foreach(json_object_get(last, sections[s]), key, v) {
			double x;

			if (prev != NULL && fw_sample_rate(prev, last, sections[s], key, &x) == 0)
				json_object_set_new(r, key, json_real(x));
		}
		json_object_set_new(rates, sections[s], r);
	}
	series = json_array();
	for (unsigned int i = 0; i < n; i++)
		json_array_append_new(series, p[i].ok ?
			json_pack("{s:I, s:f, s:f, s:f}", "time_ms", (json_int_t)p[i].t_ms, "to_wire",
				  p[i].wire, "to_host", p[i].host, "dropped", p[i].dropped) :
			json_pack("{s:I, s:n}", "time_ms", (json_int_t)p[i].t_ms, "rate"));
	j = json_pack("{s:O, s:o, s:o}", "counters", last, "rates", rates, "series", series);
	json_decref(last);
	json_decref(prev);
	free(p);
	return send_json(c, j);
}

/* flowcut-web's own: what its guard let go and refused (fw_guard.h) */
static void
guard_metrics(struct fw_http *h, struct fw_buf *b)
{
	struct fw_guard_stats st;

	fw_guard_stats(h->guard, &st);
	fw_buf_printf(b, "# HELP flowcut_web_connections_total Connections flowcut-web opened.\n"
		      "# TYPE flowcut_web_connections_total counter\n"
		      "flowcut_web_connections_total %llu\n"
		      "# HELP flowcut_web_connections_let_go_total Connections flowcut-web let go "
		      "before their request was whole, by why.\n"
		      "# TYPE flowcut_web_connections_let_go_total counter\n"
		      "flowcut_web_connections_let_go_total{why=\"deadline\"} %llu\n"
		      "flowcut_web_connections_let_go_total{why=\"client\"} %llu\n"
		      "flowcut_web_connections_let_go_total{why=\"open\"} %llu\n"
		      "# HELP flowcut_web_requests_refused_total Requests flowcut-web refused for its "
		      "bounds: busy (503), reads asking flowcutd past a client's rate (429).\n"
		      "# TYPE flowcut_web_requests_refused_total counter\n"
		      "flowcut_web_requests_refused_total{why=\"busy\"} %llu\n"
		      "flowcut_web_requests_refused_total{why=\"reads\"} %llu\n",
		      (unsigned long long)st.opened, (unsigned long long)st.let_go_deadline,
		      (unsigned long long)st.let_go_client, (unsigned long long)st.let_go_open,
		      (unsigned long long)st.over, (unsigned long long)st.costly_refused);
}

static enum MHD_Result
metrics(struct fw_http *h, struct MHD_Connection *c)
{
	json_t *last, *prev, *trig = fw_sample_triggers_get(h->sample);
	struct fw_buf b = {0};

	fw_sample_get(h->sample, &last, &prev, NULL, NULL, 0);
	fw_metrics_render(&b, last, trig);
	guard_metrics(h, &b);
	json_decref(last);
	json_decref(prev);
	json_decref(trig);
	return send_buf(c, 200, METRICS, &b);
}

static unsigned int
code_of(int e, const char *err)
{
	if (e == -EPROTO)
		return strncmp(err, "refused", 7) == 0 ? 403 : 400;
	return 502;
}

/*
 * a read: its page or its JSON; note (a change's outcome, NULL: none) shown
 * on the page, beside note_key's field when refused
 */
static enum MHD_Result
page_read(struct fw_http *h, struct MHD_Connection *c, const char *path, const struct fw_form *q,
	  const char *secret, const char *note_key, const char *note, int refused)
{
	const char *csrf = h->auth.csrf;
	char req[FW_CTL_REQ_MAX], err[512] = "";
	int api = strncmp(path, "/api/", 5) == 0;
	const char *what = path + (api ? 4 : 0);
	struct fw_buf b = {0};
	json_t *doc = NULL;
	int e;

	if (strcmp(what, "/conns") == 0) {
		if (fw_req_conns(q, req, sizeof(req), err, sizeof(err)) != 0)
			return fail(c, path, 400, err, NULL, NULL);
	} else if (strcmp(what, "/cuts") == 0) {
		const char *n = fw_form_get(q, "n");

		if (n != NULL && (strspn(n, "0123456789") != strlen(n) || strlen(n) > 3 || !n[0] ||
				  atoi(n) > 100 || atoi(n) < 1))
			return fail(c, path, 400, "n: not a count from 1 to 100", NULL, NULL);
		snprintf(req, sizeof(req), "cuts %s\n", n ? n : "50");
	} else {
		snprintf(req, sizeof(req), "settings\n");
	}
	e = fw_ctl_ask(h->ctl_path, secret, req, &doc, err, sizeof(err));
	if (secret != NULL && e == -EPROTO && strncmp(err, "refused", 7) == 0)
		return challenge(c, path, err, READS_ASK);
	if (api) {
		if (e != 0)
			return fail(c, path, code_of(e, err), err, NULL, NULL);
		if (strcmp(what, "/cuts") == 0) {
			json_t *t = fw_sample_triggers_get(h->sample);

			json_object_set(doc, "sources", t ? json_object_get(t, "sources") : json_null());
			json_decref(t);
		}
		return send_json(c, doc);
	}
	if (strcmp(what, "/conns") == 0) {
		fw_html_conns(&b, doc, e ? err : NULL, q, csrf, note);
	} else if (strcmp(what, "/cuts") == 0) {
		json_t *t = fw_sample_triggers_get(h->sample);

		fw_html_cuts(&b, doc, t, e ? err : NULL, (int64_t)time(NULL));
		json_decref(t);
	} else {
		fw_html_settings(&b, doc, e ? err : NULL, csrf, note && refused ? note_key : NULL,
				 note ? note : "", note && !refused ? note_key : NULL);
	}
	json_decref(doc);
	return send_buf(c, e ? code_of(e, err) : note && refused ? 400 : 200, HTML, &b);
}

/* ---- the changes ---- */

/*
 * a change: the form checked, the secret out of the Authorization header
 * and into flowcutd's request, wiped once asked.  Done, the answer is 303
 * to the page that shows it (/settings?saved=KEY, /conns?cut=ID: a reload
 * asks again, it does not change again); refused, the page itself with
 * flowcutd's reason beside the field (400, the form to mend)
 */
static enum MHD_Result
change(struct fw_http *h, struct MHD_Connection *c, const char *path, const struct fw_form *f)
{
	char req[FW_CTL_REQ_MAX], err[512] = "", secret[FW_AUTH_SECRET_MAX + 1], note[512];
	const char *key = fw_form_get(f, "key"), *why;
	int cut = strcmp(path, "/conns/cut") == 0;
	struct fw_form none = {0};
	json_t *doc = NULL;
	enum MHD_Result rc;
	int e;

	if (!fw_auth_csrf_ok(&h->auth, fw_form_get(f, "csrf")))
		return fail(c, path, 403, "csrf: the form's token is not this server's (reload the page)",
			    NULL, NULL);
	if (cut)
		e = fw_req_cut(fw_form_get(f, "id"), req, sizeof(req), err, sizeof(err));
	else
		e = fw_req_set(key, fw_form_get(f, "value"), fw_form_get(f, "list") != NULL, req,
			       sizeof(req), err, sizeof(err));
	if (e != 0)
		return fail(c, path, 400, err, NULL, NULL);
	if (fw_auth_basic(hdr(c, "Authorization"), secret, sizeof(secret), &why) != 0)
		return challenge(c, path, why, CHANGES_ASK);
	e = fw_ctl_ask(h->ctl_path, secret, req, &doc, err, sizeof(err));
	explicit_bzero(secret, sizeof(secret));
	explicit_bzero(req, sizeof(req));
	if (e != 0 && e != -EPROTO)
		return fail(c, path, 502, err, NULL, NULL);
	if (e == -EPROTO && strncmp(err, "refused", 7) == 0)
		return challenge(c, path, err, CHANGES_ASK);
	json_decref(doc);
	if (e == 0) {
		/* the key and the id are checked already: [a-z0-9_], decimal */
		char to[96], *body;

		snprintf(to, sizeof(to), cut ? "/conns?cut=%s" : "/settings?saved=%s",
			 cut ? fw_form_get(f, "id") : key);
		if (asprintf(&body, "done: %s\n", to) < 0)
			return MHD_NO;
		return send_text(c, 303, TEXT, body, strlen(body), "Location", to);
	}
	{
		/* "KEY: REASON": the reason beside the field */
		size_t kl = key ? strlen(key) : 0;
		const char *r = !cut && kl && strncmp(err, key, kl) == 0 && err[kl] == ':' ?
				err + kl + 1 + (err[kl + 1] == ' ') : err;

		snprintf(note, sizeof(note), "%s%.480s", cut ? "not cut: " : "", r);
	}
	rc = page_read(h, c, cut ? "/conns" : "/settings", &none, NULL, cut ? "" : key, note, 1);
	return rc;
}

/*
 * the note of a change done, from the page's query (the 303 above): "cut
 * connection ID" on /conns, "saved" beside KEY's field on /settings; none
 * for anything else (a value not of that shape is not shown)
 */
static void
done_note(const char *path, const struct fw_form *q, char *note, size_t cap, const char **key)
{
	const char *id = fw_form_get(q, "cut"), *saved = fw_form_get(q, "saved");

	note[0] = '\0';
	*key = NULL;
	if (strcmp(path, "/conns") == 0 && id != NULL && id[0] && strlen(id) <= 20 &&
	    strspn(id, "0123456789") == strlen(id)) {
		snprintf(note, cap, "cut connection %s", id);
	} else if (strcmp(path, "/settings") == 0 && saved != NULL && saved[0] && strlen(saved) <= 64 &&
		   strspn(saved, "abcdefghijklmnopqrstuvwxyz0123456789_") == strlen(saved)) {
		snprintf(note, cap, "saved");
		*key = saved;
	}
}

/* ---- the routes ---- */

/*
 * What a read is: open (no right asked), drawn from the sampler (flowcutd
 * not asked: a password not the read credential is judged on a `status`),
 * or asking flowcutd itself (a costly read, bounded per client)
 */
enum read_kind { R_ASKS, R_SAMPLED, R_OPEN };

static const struct route {
	const char *path;
	int get, post;
	enum read_kind kind;
} routes[] = {
	{"/health", 1, 0, R_OPEN}, {"/", 1, 0, R_SAMPLED}, {"/conns", 1, 0, R_ASKS},
	{"/cuts", 1, 0, R_ASKS}, {"/settings", 1, 1, R_ASKS}, {"/conns/cut", 0, 1, R_ASKS},
	{"/metrics", 1, 0, R_SAMPLED}, {"/api/status", 1, 0, R_SAMPLED},
	{"/api/counters", 1, 0, R_SAMPLED}, {"/api/conns", 1, 0, R_ASKS},
	{"/api/cuts", 1, 0, R_ASKS}, {"/api/settings", 1, 0, R_ASKS},
};

static enum MHD_Result
route(struct fw_http *h, struct MHD_Connection *c, struct req *r, const char *method)
{
	const char *uri = r->uri ? r->uri : "/";
	const char *qm = strchr(uri, '?');
	size_t plen = qm ? (size_t)(qm - uri) : strlen(uri);
	char path[128], err[256], secret[FW_AUTH_SECRET_MAX + 1];
	const char *why = NULL, *operator;
	bool asked = false;
	const struct route *rt = NULL;
	int get = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
	struct fw_form q;
	enum MHD_Result rc;

	/* its request whole (a POST's body too): no longer waiting on its client (fw_guard) */
	fw_guard_answering(h->guard, guarded(c));
	/* DNS rebinding: a name of someone else's resolving to 127.0.0.1 is not this page */
	if (!fw_auth_host_ok(&h->auth, hdr(c, "Host")))
		return fail(c, "/", 421, "Host: not an address this server listens on (--listen)", NULL,
			    NULL);
	if (plen >= sizeof(path))
		return fail(c, "/", 404, "no such page (a path past 127 bytes)", NULL, NULL);
	memcpy(path, uri, plen);
	path[plen] = '\0';
	for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++)
		if (strcmp(routes[i].path, path) == 0)
			rt = &routes[i];
	if (rt == NULL)
		return fail(c, path, 404, "no such page", NULL, NULL);
	if (!((get && rt->get) || (strcmp(method, "POST") == 0 && rt->post)))
		return fail(c, path, 405, "this method is not allowed here", "Allow",
			    rt->get && rt->post ? "GET, HEAD, POST" : rt->get ? "GET, HEAD" : "POST");
	if (fw_form_parse(qm ? qm + 1 : "", qm ? strlen(qm + 1) : 0, &q, err, sizeof(err)) != 0) {
		char what[300];

		snprintf(what, sizeof(what), "query: %s", err);
		return fail(c, path, 400, what, NULL, NULL);
	}
	if (!get) {
		struct fw_form f;

		fw_form_free(&q);
		if (r->too_big)
			return fail(c, path, 413, "the form is past 16 KiB", NULL, NULL);
		if (!fw_auth_origin_ok(hdr(c, "Origin"), hdr(c, "Referer"), hdr(c, "Host")))
			return fail(c, path, 403, "a change needs this origin in Origin or Referer", NULL, NULL);
		if (fw_form_parse(r->body ? r->body : "", r->len, &f, err, sizeof(err)) != 0) {
			char what[300];

			snprintf(what, sizeof(what), "form: %s", err);
			return fail(c, path, 400, what, NULL, NULL);
		}
		rc = change(h, c, path, &f);
		fw_form_free(&f);
		return rc;
	}
	if (rt->kind == R_OPEN) {
		fw_form_free(&q);
		return health(h, c);
	}
	if (read_right(h, c, secret, sizeof(secret), &asked, &why) != 0) {
		fw_form_free(&q);
		return challenge(c, path, why, READS_ASK);
	}
	operator = asked ? secret : NULL;
	if ((operator != NULL || rt->kind == R_ASKS) &&
	    !fw_guard_costly(h->guard, guarded(c), fw_guard_now_ms())) {
		/* it would ask flowcutd: a client's such reads are bounded a second */
		explicit_bzero(secret, sizeof(secret));
		fw_form_free(&q);
		return fail(c, path, 429, "too many reads that ask flowcutd from you, a second "
			    "(--reads-a-second): try again", "Retry-After", "1");
	}
	if (operator != NULL && rt->kind == R_SAMPLED && operator_ok(h, c, path, operator, &rc) != 0) {
		explicit_bzero(secret, sizeof(secret));
		fw_form_free(&q);
		return rc;
	}
	if (strcmp(path, "/") == 0 || strcmp(path, "/api/status") == 0)
		rc = page_status(h, c, path[1] == 'a', h->auth.csrf);
	else if (strcmp(path, "/api/counters") == 0)
		rc = api_counters(h, c);
	else if (strcmp(path, "/metrics") == 0)
		rc = metrics(h, c);
	else {
		char note[64];
		const char *key;

		done_note(path, &q, note, sizeof(note), &key);
		rc = page_read(h, c, path, &q, operator, key, note[0] ? note : NULL, 0);
	}
	explicit_bzero(secret, sizeof(secret));
	fw_form_free(&q);
	return rc;
}

static enum MHD_Result
handler(void *cls, struct MHD_Connection *c, const char *url, const char *method,
	const char *version, const char *upload, size_t *upload_len, void **ctx)
{
	struct fw_http *h = cls;
	struct req *r = *ctx;

	(void)version;
	if (r == NULL)
		return MHD_NO;
	/*
	 * its headers whole: when no room was made for it (every other connection being
	 * answered), or it is not guarded and past the soft limit, 503 at once, flowcutd
	 * not asked, the connection closed
	 */
	if (!r->looked && (r->looked = 1)) {
		struct fw_guard_conn *e = guarded(c);

		if (e != NULL ? e->over : __atomic_load_n(&h->open, __ATOMIC_RELAXED) > FW_HTTP_BUSY)
			return fail(c, url, 503, "busy: too many connections, try again", "Retry-After",
				    "1");
	}
	if (strcmp(method, "POST") == 0) {
		if (r->body == NULL) {	/* the first call: the headers only */
			const char *cl = hdr(c, "Content-Length");
			const char *ct = hdr(c, "Content-Type");

			r->body = calloc(1, FW_FORM_BODY_MAX + 1);
			if (r->body == NULL)
				return MHD_NO;
			if (cl != NULL && strtoull(cl, NULL, 10) > FW_FORM_BODY_MAX)
				return fail(c, "/", 413, "the form is past 16 KiB (Content-Length)", NULL, NULL);
			if (ct == NULL || strncasecmp(ct, "application/x-www-form-urlencoded", 33) != 0 ||
			    (ct[33] != '\0' && ct[33] != ';'))
				return fail(c, "/", 415, "a form must be application/x-www-form-urlencoded",
					    NULL, NULL);
			return MHD_YES;
		}
		if (*upload_len > 0) {
			if (r->len + *upload_len > FW_FORM_BODY_MAX)
				r->too_big = 1;
			else
				memcpy(r->body + r->len, upload, *upload_len);
			r->len += r->too_big ? 0 : *upload_len;
			*upload_len = 0;
			return MHD_YES;
		}
	}
	return route(cls, c, r, method);
}

static void *
uri_log(void *cls, const char *uri, struct MHD_Connection *c)
{
	struct req *r = calloc(1, sizeof(*r));

	(void)cls;
	(void)c;
	if (r != NULL)
		r->uri = strdup(uri);
	return r;
}

/* the connections open, all addresses, each in the guard (its entry the socket's context) */
static void
notify_conn(void *cls, struct MHD_Connection *c, void **sctx, enum MHD_ConnectionNotificationCode t)
{
	struct fw_http *h = cls;

	if (t == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *i =
			MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);

		__atomic_add_fetch(&h->open, 1, __ATOMIC_RELAXED);
		*sctx = i != NULL ? fw_guard_open(h->guard, i->connect_fd, fw_guard_now_ms()) : NULL;
	} else if (t == MHD_CONNECTION_NOTIFY_CLOSED) {
		__atomic_sub_fetch(&h->open, 1, __ATOMIC_RELAXED);
		fw_guard_close(h->guard, *sctx);
		*sctx = NULL;
	}
}

static void
completed(void *cls, struct MHD_Connection *c, void **ctx, enum MHD_RequestTerminationCode why)
{
	struct fw_http *h = cls;
	struct req *r = *ctx;

	(void)why;
	fw_guard_answered(h->guard, guarded(c), fw_guard_now_ms());
	if (r != NULL) {
		free(r->uri);
		if (r->body != NULL)
			explicit_bzero(r->body, r->len);	/* a change's form */
		free(r->body);
		free(r);
	}
	*ctx = NULL;
}

static int
parse_addr(const char *s, struct sockaddr_storage *ss, int *v6)
{
	char host[INET6_ADDRSTRLEN + 2];
	const char *colon = strrchr(s, ':');
	size_t hl;
	char *end;
	unsigned long port;

	if (colon == NULL || colon == s)
		return -EINVAL;
	port = strtoul(colon + 1, &end, 10);
	if (*end != '\0' || colon[1] == '\0' || port == 0 || port > 65535)
		return -EINVAL;
	hl = (size_t)(colon - s);
	if (hl >= sizeof(host))
		return -EINVAL;
	memcpy(host, s, hl);
	host[hl] = '\0';
	memset(ss, 0, sizeof(*ss));
	if (host[0] == '[' && host[hl - 1] == ']') {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;

		host[hl - 1] = '\0';
		a->sin6_family = AF_INET6;
		a->sin6_port = htons((uint16_t)port);
		*v6 = 1;
		return inet_pton(AF_INET6, host + 1, &a->sin6_addr) == 1 ? 0 : -EINVAL;
	}
	struct sockaddr_in *a = (struct sockaddr_in *)ss;

	a->sin_family = AF_INET;
	a->sin_port = htons((uint16_t)port);
	*v6 = 0;
	return inet_pton(AF_INET, host, &a->sin_addr) == 1 ? 0 : -EINVAL;
}

/*
 * One MHD daemon: on a socket someone else made (MHD_OPTION_LISTEN_SOCKET,
 * fd) or listening at sa itself (MHD_OPTION_SOCK_ADDR): the option's
 * argument has its own type in the variadic list, so each has its call.
 */
static struct MHD_Daemon *
daemon_on(struct fw_http *h, int v6, enum MHD_OPTION where, int fd, struct sockaddr *sa)
{
	/* poll(), not select(): a descriptor past FD_SETSIZE is served, not closed unseen */
	unsigned int flags = MHD_USE_POLL_INTERNAL_THREAD | MHD_USE_ERROR_LOG | (v6 ? MHD_USE_IPv6 : 0);

#define FW_HTTP_OPTIONS_							\
	MHD_OPTION_THREAD_POOL_SIZE, (unsigned int)FW_HTTP_THREADS,		\
	MHD_OPTION_NOTIFY_CONNECTION, notify_conn, h,				\
	MHD_OPTION_CONNECTION_LIMIT, (unsigned int)FW_HTTP_CONN_LIMIT,		\
	MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned int)FW_HTTP_PER_IP_LIMIT,	\
	MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)FW_HTTP_TIMEOUT_S,		\
	MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)FW_HTTP_CONN_MEMORY,	\
	MHD_OPTION_URI_LOG_CALLBACK, uri_log, NULL,				\
	MHD_OPTION_NOTIFY_COMPLETED, completed, h,				\
	MHD_OPTION_END
	if (where == MHD_OPTION_LISTEN_SOCKET)
		return MHD_start_daemon(flags, 0, NULL, NULL, handler, h, MHD_OPTION_LISTEN_SOCKET,
					(MHD_socket)fd, FW_HTTP_OPTIONS_);
	return MHD_start_daemon(flags, 0, NULL, NULL, handler, h, MHD_OPTION_SOCK_ADDR, sa,
				FW_HTTP_OPTIONS_);
#undef FW_HTTP_OPTIONS_
}

int
fw_http_start(struct fw_http *h, const char *const *addrs, const int *fds, unsigned int n,
	      const char *ctl_path, const char *read_secret, unsigned int reads_per_s,
	      struct fw_sample *sample, char *err, size_t errlen)
{
	int rc;

	memset(h, 0, sizeof(*h));
	h->ctl_path = ctl_path;
	h->read_secret = read_secret;
	h->guard = malloc(sizeof(*h->guard));
	if (h->guard == NULL) {
		snprintf(err, errlen, "the connections' guard: no memory");
		return -ENOMEM;
	}
	fw_guard_init(h->guard, reads_per_s);	/* without sock_diag: clients by address (said) */
	h->sample = sample;
	if (n > FW_HTTP_LISTEN_MAX) {
		snprintf(err, errlen, "--listen: more than %d addresses", FW_HTTP_LISTEN_MAX);
		fw_http_stop(h);
		return -EINVAL;
	}
	if ((rc = fw_auth_init(&h->auth)) != 0) {
		snprintf(err, errlen, "the CSRF token: getrandom: %s", strerror(-rc));
		fw_http_stop(h);
		return rc;
	}
	for (unsigned int i = 0; i < n; i++) {
		struct sockaddr_storage ss;
		int v6;

		if (parse_addr(addrs[i], &ss, &v6) != 0 || fw_auth_listen(&h->auth, addrs[i]) != 0) {
			snprintf(err, errlen, "--listen %s: not ADDR:PORT (127.0.0.1:9842, [::1]:9842)",
				 addrs[i]);
			fw_http_stop(h);
			return -EINVAL;
		}
		h->d[i] = fds != NULL ? daemon_on(h, v6, MHD_OPTION_LISTEN_SOCKET, fds[i], NULL)
				      : daemon_on(h, v6, MHD_OPTION_SOCK_ADDR, -1, (struct sockaddr *)&ss);
		if (h->d[i] == NULL) {
			snprintf(err, errlen, "%s %s: libmicrohttpd could not listen there",
				 fds != NULL ? "the socket handed in for" : "--listen", addrs[i]);
			fw_http_stop(h);
			return -EADDRNOTAVAIL;
		}
		h->nd = i + 1;
	}
	return 0;
}

void
fw_http_stop(struct fw_http *h)
{
	for (unsigned int i = 0; i < h->nd; i++)
		MHD_stop_daemon(h->d[i]);
	h->nd = 0;
	explicit_bzero(&h->auth, sizeof(h->auth));
	if (h->guard != NULL) {	/* after the daemons: no connection is left to close */
		fw_guard_fini(h->guard);
		free(h->guard);
		h->guard = NULL;
	}
}
