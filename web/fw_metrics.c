/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdio.h>
#include <string.h>

#include "fw_metrics.h"

static void
family(struct fw_buf *b, const char *name, const char *type, const char *help)
{
	fw_buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* a metric name's part: [a-zA-Z0-9_] kept, any other byte '_' */
static void
name_part(struct fw_buf *b, const char *s, double *scale)
{
	/* a unit word flowcutd's names abbreviate, in the base unit promtool
	 * asks for: turn_max_us is turn_max_seconds, its value * 1e-6 */
	static const struct {
		const char *word, *base;
		double scale;
	} units[] = {
		{"us", "seconds", 1e-6},
		{"ms", "seconds", 1e-3},
	};

	while (*s != '\0') {
		size_t w = strcspn(s, "_"), u;

		for (u = 0; u < sizeof(units) / sizeof(units[0]); u++)
			if (strlen(units[u].word) == w && strncmp(s, units[u].word, w) == 0)
				break;
		if (u < sizeof(units) / sizeof(units[0])) {
			fw_buf_str(b, units[u].base);
			*scale = units[u].scale;
		} else {
			for (size_t i = 0; i < w; i++) {
				char c = s[i];

				if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')))
					c = '_';
				fw_buf_add(b, &c, 1);
			}
		}
		s += w;
		if (*s == '_') {
			fw_buf_add(b, "_", 1);
			s++;
		}
	}
}

/* " VALUE\n" of an integer, real or bool; false when v is none of them */
static int
value(struct fw_buf *b, const json_t *v)
{
	if (json_is_integer(v))
		fw_buf_printf(b, " %lld\n", (long long)json_integer_value(v));
	else if (json_is_real(v))
		fw_buf_printf(b, " %.17g\n", json_real_value(v));
	else if (json_is_boolean(v))
		fw_buf_str(b, json_is_true(v) ? " 1\n" : " 0\n");
	else
		return 0;
	return 1;
}

static int
is_value(const json_t *v)
{
	return json_is_integer(v) || json_is_real(v) || json_is_boolean(v);
}

/* name{label="key"} for every key of obj */
static void
labelled(struct fw_buf *b, const json_t *obj, const char *name, const char *type,
	 const char *help, const char *label)
{
	const char *key;
	json_t *v;
	int any = 0;

	json_object_foreach((json_t *)obj, key, v)
		any |= is_value(v);
	if (!any)
		return;
	family(b, name, type, help);
	json_object_foreach((json_t *)obj, key, v) {
		if (!is_value(v))
			continue;
		fw_buf_printf(b, "%s{%s=\"", name, label);
		fw_buf_label(b, key);
		fw_buf_str(b, "\"}");
		value(b, v);
	}
}

/* PREFIX_KEY_SUFFIX, one family each, for every key of obj */
static void
each(struct fw_buf *b, const json_t *obj, const char *prefix, const char *suffix,
     const char *type, const char *help)
{
	const char *key;
	json_t *v;

	json_object_foreach((json_t *)obj, key, v) {
		struct fw_buf n = {0};
		double scale = 1;

		if (!is_value(v))
			continue;
		fw_buf_str(&n, prefix);
		name_part(&n, key, &scale);
		fw_buf_str(&n, suffix);
		if (fw_buf_err(&n) != 0) {
			b->err = n.err;
			fw_buf_free(&n);
			return;
		}
		fw_buf_printf(b, "# HELP %s %s %s\n# TYPE %s %s\n%s", n.p, help, key, n.p, type, n.p);
		if (scale != 1 && json_is_number(v))
			fw_buf_printf(b, " %.9g\n", json_number_value(v) * scale);	/* a us is 1e-6 s: 9 digits hold it */
		else
			value(b, v);
		fw_buf_free(&n);
	}
}

static void
one(struct fw_buf *b, const json_t *v, const char *name, const char *type, const char *help)
{
	if (!is_value(v))
		return;
	family(b, name, type, help);
	fw_buf_str(b, name);
	value(b, v);
}

static const struct {
	const char *key, *name, *help;
} ct_names[] = {
	{"entries", "node_nf_conntrack_entries", "Number of currently allocated flow entries for connection tracking."},
	{"limit", "node_nf_conntrack_entries_limit", "Maximum size of connection tracking table."},
	{"insert_failed", "node_nf_conntrack_stat_insert_failed", "Number of entries for which list insertion was attempted but failed."},
	{"drop", "node_nf_conntrack_stat_drop", "Number of packets dropped due to conntrack failure."},
	{"early_drop", "node_nf_conntrack_stat_early_drop", "Number of dropped conntrack entries to make room for new ones, if maximum table size was reached."},
};

static const struct {
	const char *key, *name, *type, *help;
} src_figs[] = {
	{"elements", "flowcut_source_elements", "gauge", "Elements (or lines) a watched set or list holds."},
	{"cut", "flowcut_source_connections_cut_total", "counter", "Connections a watched set or list has cut."},
	{"frames", "flowcut_source_frames_dropped_total", "counter", "Frames dropped on the coprocessor for connections a source cut."},
};

static void
sources(struct fw_buf *b, const json_t *triggers)
{
	const json_t *srcs = json_object_get(triggers, "sources"), *s;
	static const char *const kinds[] = {"set", "list", "fingerprint", "hand", "conn"};
	int header = 0;
	size_t i;

	/* cuts by trigger: the kinds seen, summed */
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		long long sum = 0;
		int seen = 0;

		json_array_foreach(srcs, i, s) {
			const char *kind = json_string_value(json_object_get(s, "kind"));
			const json_t *cut = json_object_get(s, "cut");

			if (kind != NULL && strcmp(kind, kinds[k]) == 0 && json_is_integer(cut)) {
				sum += json_integer_value(cut);
				seen = 1;
			}
		}
		if (!seen)
			continue;
		if (!header++)
			family(b, "flowcut_cuts_total", "counter", "Connections cut, by the kind of trigger.");
		fw_buf_printf(b, "flowcut_cuts_total{trigger=\"%s\"} %lld\n", kinds[k], sum);
	}
	for (size_t f = 0; f < sizeof(src_figs) / sizeof(src_figs[0]); f++) {
		header = 0;
		json_array_foreach(srcs, i, s) {
			const char *kind = json_string_value(json_object_get(s, "kind"));
			const char *name = json_string_value(json_object_get(s, "name"));
			const json_t *v = json_object_get(s, src_figs[f].key);

			if (kind == NULL || name == NULL || !is_value(v))
				continue;
			if (!header++)
				family(b, src_figs[f].name, src_figs[f].type, src_figs[f].help);
			fw_buf_printf(b, "%s{kind=\"", src_figs[f].name);
			fw_buf_label(b, kind);
			fw_buf_str(b, "\",source=\"");
			fw_buf_label(b, name);
			fw_buf_str(b, "\"}");
			value(b, v);
		}
	}
}

static void
ports(struct fw_buf *b, const json_t *arr)
{
	static const char *const ways[] = {"to_host", "to_wire", "dropped"};
	const json_t *p;
	int header = 0;
	size_t i;

	for (size_t w = 0; w < 3; w++) {
		json_array_foreach(arr, i, p) {
			const json_t *port = json_object_get(p, "port"), *v = json_object_get(p, ways[w]);

			if (!json_is_integer(port) || !is_value(v))
				continue;
			if (!header++)
				family(b, "flowcut_port_frames_total", "counter",
				       "Frames of a front port: to the host, to the wire, dropped.");
			fw_buf_printf(b, "flowcut_port_frames_total{port=\"%lld\",way=\"%s\"}",
				      (long long)json_integer_value(port), ways[w]);
			value(b, v);
		}
	}
}

/*
 * flowcut_wire_frames_total{port,figure}: each port's own figures ("wire"
 * of "ports"), but BUSY_NS, a time: flowcut_wire_busy_seconds_total{port}.
 */
static void
wire(struct fw_buf *b, const json_t *arr)
{
	const json_t *p, *v;
	const char *name;
	int header = 0, busy = 0;
	size_t i;

	json_array_foreach(arr, i, p) {
		const json_t *port = json_object_get(p, "port"), *w = json_object_get(p, "wire");

		if (!json_is_integer(port) || !json_is_object(w))
			continue;
		json_object_foreach((json_t *)w, name, v) {
			if (!is_value(v))
				continue;
			if (strcmp(name, "BUSY_NS") == 0)
				continue;	/* below */
			if (!header++)
				family(b, "flowcut_wire_frames_total", "counter",
				       "A wire port's own figures, as its DPDK driver counts them: "
				       "frames read, lost before they were read, sent, failed to send.");
			fw_buf_printf(b, "flowcut_wire_frames_total{port=\"%lld\",figure=\"",
				      (long long)json_integer_value(port));
			fw_buf_label(b, name);
			fw_buf_str(b, "\"}");
			value(b, v);
		}
	}
	json_array_foreach(arr, i, p) {
		const json_t *port = json_object_get(p, "port");

		v = json_object_get(json_object_get(p, "wire"), "BUSY_NS");
		if (!json_is_integer(port) || !json_is_integer(v))
			continue;
		if (!busy++)
			family(b, "flowcut_wire_busy_seconds_total", "counter",
			       "The coprocessor's workers' time on the frames a wire port received, "
			       "each burst from its read to its sending (not their empty polls).");
		fw_buf_printf(b, "flowcut_wire_busy_seconds_total{port=\"%lld\"} %.9f\n",
			      (long long)json_integer_value(port), (double)json_integer_value(v) / 1e9);
	}
}

/* flowcut_connections{action,verdict} from connections_by, and the cut ones */
static void
conns(struct fw_buf *b, const json_t *by, const json_t *cut)
{
	const json_t *c;
	int header = 0;
	size_t i;

	json_array_foreach(by, i, c) {
		const char *action = json_string_value(json_object_get(c, "action"));
		const char *verdict = json_string_value(json_object_get(c, "verdict"));
		const json_t *n = json_object_get(c, "n");

		if (action == NULL || verdict == NULL || !is_value(n))
			continue;
		if (!header++)
			family(b, "flowcut_connections", "gauge",
			       "Connections offloaded, by their microflows' action and their verdict.");
		fw_buf_str(b, "flowcut_connections{action=\"");
		fw_buf_label(b, action);
		fw_buf_str(b, "\",verdict=\"");
		fw_buf_label(b, verdict);
		fw_buf_str(b, "\"}");
		value(b, n);
	}
	one(b, cut, "flowcut_connections_cut", "gauge",
	    "Connections offloaded and cut by flowcut, dropping on the coprocessor.");
}

int
fw_metrics_render(struct fw_buf *b, const json_t *c, const json_t *triggers)
{
	const char *boot = json_string_value(json_object_get(c, "boot_id"));

	family(b, "flowcut_web_flowcutd_up", "gauge", "1 when flowcutd answered counters, else 0.");
	fw_buf_printf(b, "flowcut_web_flowcutd_up %d\n", c != NULL);
	labelled(b, json_object_get(c, "fastpath"), "flowcut_fastpath_frames_total", "counter",
		 "Frames of the fast path by outcome, as flowcutctl counters --all names them.",
		 "outcome");
	each(b, json_object_get(c, "flowcutd"), "flowcut_daemon_", "", "untyped",
	     "flowcutd's figure");
	ports(b, json_object_get(c, "ports"));
	wire(b, json_object_get(c, "ports"));
	each(b, json_object_get(c, "link"), "flowcut_link_", "_total", "counter",
	     "The link's count of");
	conns(b, json_object_get(c, "connections_by"), json_object_get(json_object_get(c, "connections"), "cut"));
	one(b, json_object_get(c, "gate"), "flowcut_gate", "gauge",
	    "1 when the coprocessor's gate is open (read back from it).");
	one(b, json_object_get(c, "ips_switch"), "flowcut_ips_switch", "gauge",
	    "1 when the coprocessor's IPS switch is on (read back from it).");
	one(b, json_object_get(c, "uptime_s"), "flowcut_uptime_seconds", "gauge",
	    "Seconds since the coprocessor booted.");
	{
		/* the figures' own time: a scrape's value may be the sampler's of up to 1 s before */
		const json_t *t = json_object_get(c, "fastpath_time_ms");

		if (!json_is_integer(t))
			t = json_object_get(c, "time_ms");
		if (json_is_integer(t)) {
			family(b, "flowcut_counters_time_seconds", "gauge",
			       "When the coprocessor published the fast-path counters shown here "
			       "(CLOCK_REALTIME; flowcutd's answer's time if it does not say).");
			fw_buf_printf(b, "flowcut_counters_time_seconds %.3f\n",
				      (double)json_integer_value(t) / 1000.0);
		}
	}
	if (boot != NULL) {
		family(b, "flowcut_boot_info", "gauge", "The coprocessor's boot id.");
		fw_buf_str(b, "flowcut_boot_info{boot_id=\"");
		fw_buf_label(b, boot);
		fw_buf_str(b, "\"} 1\n");
	}
	for (size_t i = 0; i < sizeof(ct_names) / sizeof(ct_names[0]); i++)
		one(b, json_object_get(json_object_get(c, "conntrack"), ct_names[i].key),
		    ct_names[i].name, "gauge", ct_names[i].help);
	sources(b, triggers);
	return fw_buf_err(b);
}
