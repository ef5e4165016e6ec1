/* SPDX-License-Identifier: BSD-3-Clause */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "fw_graph.h"
#include "fw_html.h"

static const char css[] =
	"body{font-family:system-ui,sans-serif;margin:0;color:#222;background:#fff}"
	"header{background:#1d3557;color:#fff;padding:8px 16px;display:flex;gap:18px;align-items:center}"
	"header a{color:#fff;text-decoration:none}header a.cur{font-weight:bold;text-decoration:underline}"
	"header .me{margin-left:auto}main{padding:12px 16px}"
	"table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ddd;padding:3px 8px;text-align:left}"
	"td.n{text-align:right;font-variant-numeric:tabular-nums}th{background:#f1f1f1}"
	".cards{display:flex;flex-wrap:wrap;gap:10px}.card{border:1px solid #ccc;border-radius:6px;padding:8px 14px;min-width:120px}"
	".card b{display:block;font-size:1.5em}.on{color:#1a7f37}.off{color:#b42318}"
	".err{color:#b42318;font-weight:bold}.ok{color:#1a7f37}.help{color:#555;font-size:.9em}"
	"form.inline{display:inline;margin:0}.setting{border-bottom:1px solid #eee;padding:8px 0}"
	".setting label{font-weight:bold;display:block}textarea{width:40em;height:5em}"
	".cols{display:flex;flex-wrap:wrap;gap:0 24px;align-items:flex-start;font-size:.9em}";

static const struct {
	const char *path, *name;
} nav[] = {
	{"/", "Status"}, {"/conns", "Connections"}, {"/cuts", "Cuts"}, {"/settings", "Settings"},
};

static void
begin(struct fw_buf *b, const char *title, const char *path, const char *csrf)
{
	fw_buf_str(b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
		      "<meta name=\"viewport\" content=\"width=device-width\"><title>flowcut - ");
	fw_buf_html(b, title);
	fw_buf_printf(b, "</title><style>%s</style></head>\n<body><header><strong>flowcut</strong>", css);
	for (size_t i = 0; i < sizeof(nav) / sizeof(nav[0]); i++)
		fw_buf_printf(b, "<a href=\"%s\"%s>%s</a>", nav[i].path,
			      strcmp(nav[i].path, path) == 0 ? " class=\"cur\"" : "", nav[i].name);
	(void)csrf;
	fw_buf_str(b, "<span class=\"me\">changes ask for the operator's secret</span></header>\n<main><h1>");
	fw_buf_html(b, title);
	fw_buf_str(b, "</h1>\n");
}

static int
end(struct fw_buf *b)
{
	fw_buf_str(b, "</main></body></html>\n");
	return fw_buf_err(b);
}

static void
csrf_field(struct fw_buf *b, const char *csrf)
{
	fw_buf_printf(b, "<input type=\"hidden\" name=\"csrf\" value=\"%s\">", csrf);
}

/* an integer as it is, anything else "-" */
static void
num(struct fw_buf *b, const json_t *v)
{
	if (json_is_integer(v))
		fw_buf_printf(b, "%lld", (long long)json_integer_value(v));
	else
		fw_buf_str(b, "-");
}

/* a string escaped, an integer as it is, anything else "-" */
static void
text(struct fw_buf *b, const json_t *v)
{
	if (json_is_integer(v))
		num(b, v);
	else
		fw_buf_html(b, json_string_value(v));
}

static void
onoff(struct fw_buf *b, const json_t *v, const char *on, const char *off)
{
	if (json_is_boolean(v))
		fw_buf_printf(b, "<b class=\"%s\">%s</b>", json_is_true(v) ? "on" : "off",
			      json_is_true(v) ? on : off);
	else
		fw_buf_str(b, "<b>-</b>");
}

static void
card(struct fw_buf *b, const char *name, const json_t *v)
{
	fw_buf_printf(b, "<div class=\"card\">%s<b>", name);
	num(b, v);
	fw_buf_str(b, "</b></div>");
}

static void
uptime(struct fw_buf *b, const json_t *v)
{
	long long s;

	if (!json_is_integer(v)) {
		fw_buf_str(b, "-");
		return;
	}
	s = json_integer_value(v);
	fw_buf_printf(b, "%lldd %02lld:%02lld:%02lld", s / 86400, s / 3600 % 24, s / 60 % 60, s % 60);
}

/* every counter of section by name, with its rate */
static void
counter_table(struct fw_buf *b, const json_t *last, const json_t *prev, const char *section)
{
	const char *key;
	json_t *v;

	fw_buf_printf(b, "<h3>%s</h3><table><tr><th>counter</th><th>value</th><th>a second</th></tr>\n",
		      section);
	json_object_foreach(json_object_get(last, section), key, v) {
		double r;

		fw_buf_str(b, "<tr><td>");
		fw_buf_html(b, key);
		fw_buf_str(b, "</td><td class=\"n\">");
		num(b, v);
		fw_buf_str(b, "</td><td class=\"n\">");
		if (prev != NULL && fw_sample_rate(prev, last, section, key, &r) == 0)
			fw_buf_printf(b, "%.1f", r);
		else
			fw_buf_str(b, "-");
		fw_buf_str(b, "</td></tr>\n");
	}
	fw_buf_str(b, "</table>\n");
}

int
fw_html_status(struct fw_buf *b, const json_t *last, const json_t *prev,
	       const struct fw_point *pts, unsigned int n, const char *err, const char *csrf)
{
	const json_t *conns = json_object_get(last, "connections");

	begin(b, "Status", "/", csrf);
	if (err != NULL && err[0] != '\0') {
		fw_buf_str(b, "<p class=\"err\">flowcutd did not answer: ");
		fw_buf_html(b, err);
		fw_buf_str(b, "</p>\n");
	}
	{	/* a forced never_cut: cuts silently not made, said first */
		json_int_t w = json_integer_value(json_object_get(json_object_get(last, "flowcutd"),
								  "never_cut_wide"));

		if (w > 0)
			fw_buf_printf(b, "<p class=\"err\">never_cut holds %lld range(s) wider than a "
				      "/16 or /48 (never_cut_min_prefix lowered): nothing in them is "
				      "ever cut</p>\n", (long long)w);
	}
	fw_buf_str(b, "<div class=\"cards\"><div class=\"card\">gate");
	onoff(b, json_object_get(last, "gate"), "open", "closed");
	fw_buf_str(b, "</div><div class=\"card\">IPS switch");
	onoff(b, json_object_get(last, "ips_switch"), "on", "off");
	fw_buf_str(b, "</div><div class=\"card\">boot id<b>");
	text(b, json_object_get(last, "boot_id"));
	fw_buf_str(b, "</b></div><div class=\"card\">uptime<b>");
	uptime(b, json_object_get(last, "uptime_s"));
	fw_buf_str(b, "</b></div>");
	card(b, "IPS", json_object_get(conns, "ips"));
	card(b, "FWD", json_object_get(conns, "fwd"));
	card(b, "cut", json_object_get(conns, "cut"));
	card(b, "dropping", json_object_get(conns, "dropping"));
	fw_buf_str(b, "</div>\n<h2>Frames a second, last five minutes</h2>\n");
	fw_graph_svg(b, pts, n);
	if (n > 0 && pts[n - 1].ok)
		fw_buf_printf(b, "<p>now: to the wire %.0f/s, to the host %.0f/s, dropped %.0f/s</p>\n",
			      pts[n - 1].wire, pts[n - 1].host, pts[n - 1].dropped);
	fw_buf_str(b, "<h2>Counters</h2><div class=\"cols\">");
	fw_buf_str(b, "<div>");
	counter_table(b, last, prev, "fastpath");
	fw_buf_str(b, "</div><div>");
	counter_table(b, last, prev, "flowcutd");
	counter_table(b, last, prev, "link");
	counter_table(b, last, prev, "conntrack");
	fw_buf_str(b, "</div></div>\n<script>setTimeout(function(){location.reload()},2000)</script>\n");
	return end(b);
}

static void
endpoint(struct fw_buf *b, const json_t *c, const char *addr, const char *port)
{
	const json_t *a = json_object_get(c, addr);
	int v6 = json_integer_value(json_object_get(c, "family")) == 6;

	fw_buf_str(b, v6 ? "[" : "");
	text(b, a);
	fw_buf_str(b, v6 ? "]:" : ":");
	num(b, json_object_get(c, port));
}

/* a cut's trigger: "set inet t s 10.0.0.0/8", "list NAME line N", ... */
static void
trigger(struct fw_buf *b, const json_t *cut)
{
	const json_t *el = json_object_get(cut, "element"), *line = json_object_get(cut, "line");

	if (!json_is_object(cut)) {
		fw_buf_str(b, "-");
		return;
	}
	text(b, json_object_get(cut, "trigger"));
	fw_buf_str(b, " ");
	text(b, json_object_get(cut, "source"));
	if (json_is_string(el)) {
		fw_buf_str(b, " ");
		fw_buf_html(b, json_string_value(el));
	}
	if (json_is_integer(line)) {
		fw_buf_str(b, " line ");
		num(b, line);
	}
	fw_buf_str(b, json_is_true(json_object_get(cut, "in_hardware")) ? " (in hardware)" : "");
}

static void
qval(struct fw_buf *b, const struct fw_form *q, const char *key)
{
	const char *v = q ? fw_form_get(q, key) : NULL;

	fw_buf_html(b, v ? v : "");
}

/* a query value percent-encoded for a link */
static void
qenc(struct fw_buf *b, const char *v)
{
	for (; *v != '\0'; v++) {
		unsigned char c = (unsigned char)*v;

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    c == '.' || c == '_' || c == '-' || c == ':')
			fw_buf_add(b, v, 1);
		else
			fw_buf_printf(b, "%%%02X", c);
	}
}

/* when_s as UTC and its age at now_s (fw_html.h) */
static void
when(struct fw_buf *b, const json_t *v, int64_t now_s)
{
	static const struct { int64_t s; const char *unit; } units[] = {
		{ 86400, "d" }, { 3600, "h" }, { 60, "min" }, { 1, "s" } };
	time_t t;
	struct tm tm;
	char buf[32];
	int64_t ago;
	size_t u = 0;

	if (!json_is_integer(v) || (t = (time_t)json_integer_value(v)) < 0 ||
	    gmtime_r(&t, &tm) == NULL || strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", &tm) == 0) {
		fw_buf_str(b, "-");
		return;
	}
	ago = now_s > (int64_t)t ? now_s - (int64_t)t : 0;
	while (units[u].s > 1 && ago < units[u].s)
		u++;
	fw_buf_printf(b, "%s UTC (%lld %s ago)", buf, (long long)(ago / units[u].s), units[u].unit);
}

/* ---- the tables: one renderer, a column a cell function ---- */

/* what a cell may need beyond its row */
struct cell_ctx {
	const char *csrf;	/* the form's token: a cut button (NULL: none) */
	int64_t now_s;		/* a time's age */
};

struct col {
	const char *th;
	void (*cell)(struct fw_buf *b, const json_t *row, const struct col *c,
		     const struct cell_ctx *x);
	const char *key, *key2;	/* the row's members the cell shows */
	bool n;			/* a number: right-aligned */
};

static void
c_text(struct fw_buf *b, const json_t *row, const struct col *c, const struct cell_ctx *x)
{
	(void)x;
	text(b, json_object_get(row, c->key));
}

static void
c_num(struct fw_buf *b, const json_t *row, const struct col *c, const struct cell_ctx *x)
{
	(void)x;
	num(b, json_object_get(row, c->key));
}

static void
c_endpoint(struct fw_buf *b, const json_t *row, const struct col *c, const struct cell_ctx *x)
{
	(void)x;
	endpoint(b, row, c->key, c->key2);
}

/* "udp 198.18.0.2:40000 &rarr; 198.18.1.2:5202" */
static void
c_tuple(struct fw_buf *b, const json_t *row, const struct col *c, const struct cell_ctx *x)
{
	(void)c;
	(void)x;
	text(b, json_object_get(row, "proto"));
	fw_buf_str(b, " ");
	endpoint(b, row, "src", "sport");
	fw_buf_str(b, " &rarr; ");
	endpoint(b, row, "dst", "dport");
}

/* the member key's trigger, or with no key the row's own */
static void
c_trigger(struct fw_buf *b, const json_t *row, const struct col *c, const struct cell_ctx *x)
{
	(void)x;
	trigger(b, c->key != NULL ? json_object_get(row, c->key) : row);
}

/* milliseconds as seconds, one decimal */
static void
c_ms(struct fw_buf *b, const json_t *row, const struct col *c, const struct cell_ctx *x)
{
	const json_t *v = json_object_get(row, c->key);

	(void)x;
	if (json_is_integer(v))
		fw_buf_printf(b, "%.1f", (double)json_integer_value(v) / 1000.0);
	else
		fw_buf_str(b, "-");
}

static void
c_yesno(struct fw_buf *b, const json_t *row, const struct col *c, const struct cell_ctx *x)
{
	const json_t *v = json_object_get(row, c->key);

	(void)x;
	fw_buf_str(b, json_is_boolean(v) ? (json_is_true(v) ? "yes" : "no") : "-");
}

static void
c_when(struct fw_buf *b, const json_t *row, const struct col *c, const struct cell_ctx *x)
{
	when(b, json_object_get(row, c->key), x->now_s);
}

/* the connection's cut button (a form to /conns/cut with the CSRF token) */
static void
c_cut(struct fw_buf *b, const json_t *row, const struct col *c, const struct cell_ctx *x)
{
	const json_t *id = json_object_get(row, "id");

	(void)c;
	if (x->csrf == NULL || !json_is_integer(id))
		return;
	fw_buf_str(b, "<form class=\"inline\" method=\"post\" action=\"/conns/cut\">");
	csrf_field(b, x->csrf);
	fw_buf_printf(b, "<input type=\"hidden\" name=\"id\" value=\"%lld\"><button>cut</button></form>",
		      (long long)json_integer_value(id));
}

/* a table: a header row of the columns, then a row an element of rows (an array) */
static void
table(struct fw_buf *b, const struct col *cols, size_t ncols, const json_t *rows,
      const struct cell_ctx *x)
{
	const json_t *row;
	size_t i;

	fw_buf_str(b, "<table><tr>");
	for (size_t k = 0; k < ncols; k++)
		fw_buf_printf(b, "<th>%s</th>", cols[k].th);
	fw_buf_str(b, "</tr>\n");
	json_array_foreach(rows, i, row) {
		fw_buf_str(b, "<tr>");
		for (size_t k = 0; k < ncols; k++) {
			fw_buf_str(b, cols[k].n ? "<td class=\"n\">" : "<td>");
			cols[k].cell(b, row, &cols[k], x);
			fw_buf_str(b, "</td>");
		}
		fw_buf_str(b, "</tr>\n");
	}
	fw_buf_str(b, "</table>\n");
}

static const struct col conn_cols[] = {
	{ "id", c_num, "id", NULL, true }, { "proto", c_text, "proto", NULL, false },
	{ "source", c_endpoint, "src", "sport", false },
	{ "destination", c_endpoint, "dst", "dport", false },
	{ "action", c_text, "action", NULL, false }, { "verdict", c_text, "verdict", NULL, false },
	{ "state", c_text, "state", NULL, false }, { "idle s", c_ms, "idle_ms", NULL, true },
	{ "packets", c_num, "packets", NULL, true }, { "bytes", c_num, "bytes", NULL, true },
	{ "cut by", c_trigger, "cut", NULL, false }, { "", c_cut, NULL, NULL, false },
};

static const struct col source_cols[] = {
	{ "kind", c_text, "kind", NULL, false }, { "name", c_text, "name", NULL, false },
	{ "elements", c_num, "elements", NULL, true },
	{ "connections cut", c_num, "cut", NULL, true },
	{ "frames dropped", c_num, "frames", NULL, true },
};

static const struct col cut_cols[] = {
	{ "when", c_when, "when_s", NULL, false }, { "trigger", c_trigger, NULL, NULL, false },
	{ "connection", c_num, "id", NULL, true }, { "tuple", c_tuple, NULL, NULL, false },
	{ "in hardware", c_yesno, "in_hardware", NULL, false },
	{ "frames dropped", c_num, "frames_dropped", NULL, true },
};

int
fw_html_conns(struct fw_buf *b, const json_t *doc, const char *err, const struct fw_form *q,
	      const char *csrf, const char *msg)
{
	static const char *const filters[] = {"addr", "port", "state", "action"};
	const json_t *next = json_object_get(doc, "next");
	size_t i;

	begin(b, "Connections", "/conns", csrf);
	if (msg != NULL) {
		fw_buf_str(b, "<p class=\"ok\">");
		fw_buf_html(b, msg);
		fw_buf_str(b, "</p>\n");
	}
	fw_buf_str(b, "<form method=\"get\" action=\"/conns\">");
	for (i = 0; i < 4; i++) {
		fw_buf_printf(b, "<label>%s <input name=\"%s\" size=\"14\" value=\"", filters[i], filters[i]);
		qval(b, q, filters[i]);
		fw_buf_str(b, "\"></label> ");
	}
	fw_buf_str(b, "<button>filter</button></form>\n");
	if (doc == NULL) {
		if (err != NULL) {
			fw_buf_str(b, "<p class=\"err\">");
			fw_buf_html(b, err);
			fw_buf_str(b, "</p>\n");
		}
		return end(b);
	}
	table(b, conn_cols, sizeof(conn_cols) / sizeof(conn_cols[0]),
	      json_object_get(doc, "conns"), &(struct cell_ctx){ .csrf = csrf });
	if (json_is_integer(next)) {
		fw_buf_printf(b, "<p><a href=\"/conns?from=%lld", (long long)json_integer_value(next));
		for (i = 0; i < 4; i++) {
			const char *v = q ? fw_form_get(q, filters[i]) : NULL;

			if (v != NULL && v[0] != '\0') {
				fw_buf_printf(b, "&amp;%s=", filters[i]);
				qenc(b, v);
			}
		}
		fw_buf_str(b, "\">next page</a></p>\n");
	} else {
		fw_buf_str(b, "<p>the end of the table</p>\n");
	}
	fw_buf_str(b, "<p class=\"help\">A cut asks for the operator's secret (HTTP authentication, any "
		      "user name, the password <code>/etc/flowcut/web.secret</code>).</p>\n");
	return end(b);
}

int
fw_html_cuts(struct fw_buf *b, const json_t *cuts, const json_t *triggers, const char *err,
	     int64_t now_s)
{
	begin(b, "Cuts", "/cuts", NULL);
	if (err != NULL && err[0] != '\0') {
		fw_buf_str(b, "<p class=\"err\">");
		fw_buf_html(b, err);
		fw_buf_str(b, "</p>\n");
	}
	fw_buf_str(b, "<h2>Watched sets and lists</h2>");
	table(b, source_cols, sizeof(source_cols) / sizeof(source_cols[0]),
	      json_object_get(triggers, "sources"), &(struct cell_ctx){ 0 });
	fw_buf_str(b, "<h2>Recent cuts</h2>");
	table(b, cut_cols, sizeof(cut_cols) / sizeof(cut_cols[0]), json_object_get(cuts, "cuts"),
	      &(struct cell_ctx){ .now_s = now_s });
	return end(b);
}

static void
setting_value(struct fw_buf *b, const json_t *k)
{
	const char *kind = json_string_value(json_object_get(k, "kind"));
	const char *key = json_string_value(json_object_get(k, "key"));
	const json_t *v = json_object_get(k, "value"), *e;
	size_t i;

	if (kind != NULL && strcmp(kind, "bool") == 0) {
		const char *s = json_string_value(v);

		fw_buf_str(b, "<select name=\"value\" id=\"");
		fw_buf_html(b, key);
		fw_buf_printf(b, "\"><option%s>on</option><option%s>off</option></select>",
			      s && strcmp(s, "on") == 0 ? " selected" : "",
			      s && strcmp(s, "off") == 0 ? " selected" : "");
	} else if (json_is_array(v) || (kind != NULL && strcmp(kind, "list") == 0)) {
		fw_buf_str(b, "<input type=\"hidden\" name=\"list\" value=\"1\"><textarea name=\"value\" id=\"");
		fw_buf_html(b, key);
		fw_buf_str(b, "\">");
		json_array_foreach(v, i, e) {
			fw_buf_html(b, json_string_value(e));
			fw_buf_str(b, "\n");
		}
		fw_buf_str(b, "</textarea>");
	} else {
		fw_buf_str(b, "<input name=\"value\" size=\"40\" id=\"");
		fw_buf_html(b, key);
		fw_buf_str(b, "\" value=\"");
		fw_buf_html(b, json_is_string(v) ? json_string_value(v) : "");
		fw_buf_str(b, "\">");
	}
}

int
fw_html_settings(struct fw_buf *b, const json_t *doc, const char *err, const char *csrf,
		 const char *refused_key, const char *refused_why, const char *saved_key)
{
	const json_t *k, *refused = json_object_get(doc, "refused");
	size_t i;

	begin(b, "Settings", "/settings", csrf);
	if (doc == NULL) {
		fw_buf_str(b, "<p class=\"err\">");
		fw_buf_html(b, err ? err : "no answer");
		fw_buf_str(b, "</p>\n");
		return end(b);
	}
	fw_buf_str(b, "<p>The file: <code>");
	text(b, json_object_get(doc, "path"));
	fw_buf_str(b, "</code>. A save takes effect as a save of the file does.</p>\n");
	if (json_is_string(refused)) {
		fw_buf_str(b, "<p class=\"err\">The file as it is now is refused: ");
		fw_buf_html(b, json_string_value(refused));
		fw_buf_str(b, "</p>\n");
	}
	fw_buf_str(b, "<p class=\"help\">A save asks for the operator's secret (HTTP authentication, any "
		      "user name, the password <code>/etc/flowcut/web.secret</code>).</p>\n");
	json_array_foreach(json_object_get(doc, "keys"), i, k) {
		const char *key = json_string_value(json_object_get(k, "key"));

		if (key == NULL)
			continue;
		fw_buf_str(b, "<div class=\"setting\"><form method=\"post\" action=\"/settings\"><label for=\"");
		fw_buf_html(b, key);
		fw_buf_str(b, "\">");
		fw_buf_html(b, key);
		fw_buf_str(b, "</label>");
		if (csrf != NULL)
			csrf_field(b, csrf);
		fw_buf_str(b, "<input type=\"hidden\" name=\"key\" value=\"");
		fw_buf_html(b, key);
		fw_buf_str(b, "\">");
		setting_value(b, k);
		if (csrf != NULL)
			fw_buf_str(b, " <button>save</button>");
		if (refused_key != NULL && strcmp(refused_key, key) == 0) {
			/* flowcutd's refusal of a secret says "refused: " itself */
			fw_buf_str(b, " <span class=\"err\">");
			if (strncmp(refused_why, "refused: ", 9) != 0)
				fw_buf_str(b, "refused: ");
			fw_buf_html(b, refused_why);
			fw_buf_str(b, "</span>");
		} else if (saved_key != NULL && strcmp(saved_key, key) == 0) {
			fw_buf_str(b, " <span class=\"ok\">saved</span>");
		}
		fw_buf_str(b, "<div class=\"help\">");
		text(b, json_object_get(k, "help"));
		fw_buf_str(b, " (default: ");
		if (json_is_array(json_object_get(k, "default")))
			fw_buf_str(b, "none");
		else
			text(b, json_object_get(k, "default"));
		fw_buf_str(b, ")</div></form></div>\n");
	}
	return end(b);
}

int
fw_html_error(struct fw_buf *b, unsigned int code, const char *what)
{
	fw_buf_printf(b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>%u</title>"
		      "</head><body><h1>%u</h1><p>", code, code);
	fw_buf_html(b, what);
	fw_buf_str(b, "</p><p><a href=\"/\">status</a></p></body></html>\n");
	return fw_buf_err(b);
}
