/* SPDX-License-Identifier: BSD-3-Clause */
/* fd_counters: see fd_counters.h. */
#include "fd_counters.h"

#include <inttypes.h>
#include <stdio.h>

#include <flowcut/fc_defs.h>

/* `n` figures as one object, those with a value < 0 left out (NULL: no memory, a name NULL). */
static json_t *
figures(const struct fd_counter *c, unsigned int n)
{
	json_t *o = json_object();

	for (unsigned int i = 0; o != NULL && i < n; i++) {
		if (c[i].name == NULL) {
			json_decref(o);
			return NULL;
		}
		if (c[i].value >= 0 && json_object_set_new(o, c[i].name, json_integer(c[i].value))) {
			json_decref(o);
			return NULL;
		}
	}
	return o;
}

/*
 * [{"port": P, "to_host": N, "wire": {"RX_FRAMES": N, ...}}, ...] ("wire"
 * for the ports the coprocessor published; NULL: no memory).
 */
static json_t *
ports_json(const struct fd_counters_in *in)
{
	json_t *a = json_array();

	for (unsigned int p = 0; a != NULL && p < in->ports; p++) {
		json_t *o = json_pack("{s:I, s:I}", "port", (json_int_t)p, "to_host",
				      (json_int_t)fd_counter_u64(in->to_host[p]));

		if (o != NULL && in->wire != NULL && p < in->nwire) {
			json_t *w = json_object();

			for (unsigned int k = 0; w != NULL && k < FC_WIRE_MAX; k++)
				if (json_object_set_new(w, fc_wire_name(k),
							json_integer(fd_counter_u64(in->wire[p][k]))) != 0) {
					json_decref(w);
					w = NULL;
				}
			if (json_object_set_new(o, "wire", w) != 0) {
				json_decref(o);
				o = NULL;
			}
		}
		if (json_array_append_new(a, o) != 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

/* "connections" (NULL: no memory). */
static json_t *
conns_json(const struct fd_counters_in *in)
{
	const uint32_t(*n)[FC_VERDICT_MAX] = in->conns;
	int64_t ips = 0, fwd = 0, dropping = n[FC_ACTION_IPS][FC_VERDICT_DROP];

	for (unsigned int v = 0; v < FC_VERDICT_MAX; v++) {
		ips += n[FC_ACTION_IPS][v];
		fwd += n[FC_ACTION_FWD][v];
		dropping += n[FC_ACTION_DROP][v];
	}
	ips -= n[FC_ACTION_IPS][FC_VERDICT_DROP];
	return json_pack("{s:I, s:I, s:I, s:I}", "ips", (json_int_t)ips, "fwd", (json_int_t)fwd,
			 "cut", (json_int_t)in->conns_cut, "dropping", (json_int_t)dropping);
}

/* "connections_by": every action and verdict pair (NULL: no memory). */
static json_t *
conns_by_json(const struct fd_counters_in *in)
{
	json_t *a = json_array();

	for (unsigned int act = 0; a != NULL && act < FC_ACTION_MAX; act++)
		for (unsigned int v = 0; v < FC_VERDICT_MAX; v++)
			if (json_array_append_new(a, json_pack("{s:s, s:s, s:I}", "action",
							       fc_action_name(act), "verdict",
							       fc_verdict_name(v), "n",
							       (json_int_t)in->conns[act][v])) != 0) {
				json_decref(a);
				return NULL;
			}
	return a;
}

json_t *
fd_counters_json(const struct fd_counters_in *in)
{
	json_t *doc = in ? json_object() : NULL;
	char boot[20];
	bool bad = doc == NULL;

	if (bad)
		return NULL;
	/* json_object_set_new frees the value either way, and refuses a NULL one */
	if (in->fastpath != NULL)
		bad |= json_object_set_new(doc, "fastpath", figures(in->fastpath, in->nfastpath)) != 0;
	bad |= json_object_set_new(doc, "flowcutd", figures(in->flowcutd, in->nflowcutd)) != 0;
	bad |= json_object_set_new(doc, "conntrack", figures(in->conntrack, in->nconntrack)) != 0;
	bad |= json_object_set_new(doc, "ports", ports_json(in)) != 0;
	bad |= json_object_set_new(doc, "link", figures(in->link, in->nlink)) != 0;
	if (in->conns != NULL) {
		bad |= json_object_set_new(doc, "connections", conns_json(in)) != 0;
		bad |= json_object_set_new(doc, "connections_by", conns_by_json(in)) != 0;
	}
	if (in->cfg_known) {
		bad |= json_object_set_new(doc, "gate",
					   json_boolean(in->fw_cfg & FC_CFG_OFFLOAD)) != 0;
		bad |= json_object_set_new(doc, "ips_switch",
					   json_boolean(in->fw_cfg & FC_CFG_IPS)) != 0;
	}
	snprintf(boot, sizeof(boot), "%016" PRIx64, in->boot_id);
	bad |= json_object_set_new(doc, "boot_id", json_string(boot)) != 0;
	if (in->uptime_known && in->uptime_s >= 0)
		bad |= json_object_set_new(doc, "uptime_s", json_integer(in->uptime_s)) != 0;
	bad |= json_object_set_new(doc, "time_ms", json_integer(in->time_ms)) != 0;
	if (in->fastpath != NULL && in->fastpath_time_ms > 0)
		bad |= json_object_set_new(doc, "fastpath_time_ms",
					   json_integer(in->fastpath_time_ms)) != 0;
	if (bad) {
		json_decref(doc);
		return NULL;
	}
	return doc;
}
