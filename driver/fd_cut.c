/* SPDX-License-Identifier: BSD-3-Clause */
/* fd_cut: see fd_cut.h. */
#include "fd_cut.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libnetfilter_conntrack/libnetfilter_conntrack.h>

#include <flowcut/fc_cmd.h>

#include "fd_cmds.h"
#include "fd_ct.h"
#include "fd_policy.h"

struct fd_cut {
	struct fd_offload *off;
	struct fd_cut_stats st;
};

/* One connection whose drop is in flight: its state is killed when it is answered. */
struct pending {
	struct fd_cut *c;
	struct nf_conntrack *ct;	/* the whole state, owned */
	uint64_t fp_id;
	enum fd_cut_trigger trigger;
};

const char *
fd_cut_trigger_name(enum fd_cut_trigger t)
{
	static const char *const names[FD_CUT_NTRIGGERS] = {
#define FD_CUT_NAME_(n, s) [FD_CUT_##n] = s,
		FD_CUT_TRIGGERS(FD_CUT_NAME_)
#undef FD_CUT_NAME_
	};

	return (unsigned int)t < FD_CUT_NTRIGGERS ? names[t] : "?";
}

struct fd_cut *
fd_cut_open(struct fd_offload *o)
{
	struct fd_cut *c = calloc(1, sizeof(*c));

	if (c != NULL)
		c->off = o;
	return c;
}

void
fd_cut_close(struct fd_cut *c)
{
	free(c);
}

void
fd_cut_stats(const struct fd_cut *c, struct fd_cut_stats *out)
{
	*out = c->st;
}

/* A tuple's address, 4 or 16 bytes by family. */
static void
addr(const struct nf_conntrack *ct, int family, enum nf_conntrack_attr v4,
     enum nf_conntrack_attr v6, uint8_t out[16])
{
	if (family == 4) {
		uint32_t a = nfct_get_attr_u32(ct, v4);

		memcpy(out, &a, 4);
	} else {
		memcpy(out, nfct_get_attr(ct, v6), 16);
	}
}

/* Is either end as the wire sees it (orig src, reply src) in the list? */
static bool
far_end_in(const struct nf_conntrack *ct, const struct fc_list *l)
{
	int family = fd_policy_family(ct);
	uint8_t a[16];

	addr(ct, family, ATTR_ORIG_IPV4_SRC, ATTR_ORIG_IPV6_SRC, a);
	if (fc_list_holds(l, (uint8_t)family, a))
		return true;
	addr(ct, family, ATTR_REPL_IPV4_SRC, ATTR_REPL_IPV6_SRC, a);
	return fc_list_holds(l, (uint8_t)family, a);
}

/* "tcp 198.18.0.10:40000 -> 198.19.0.10:80" (the original tuple). */
static void
tuple_format(const struct nf_conntrack *ct, char *buf, size_t len)
{
	int family = fd_policy_family(ct), af = family == 4 ? AF_INET : AF_INET6;
	uint8_t l4 = nfct_get_attr_u8(ct, ATTR_ORIG_L4PROTO), s[16], d[16];
	char ss[INET6_ADDRSTRLEN], ds[INET6_ADDRSTRLEN];
	const char *p = l4 == IPPROTO_TCP ? "tcp" : l4 == IPPROTO_UDP ? "udp" :
			l4 == IPPROTO_ICMP ? "icmp" : l4 == IPPROTO_ICMPV6 ? "icmpv6" : "proto";
	bool ports = l4 == IPPROTO_TCP || l4 == IPPROTO_UDP;

	addr(ct, family, ATTR_ORIG_IPV4_SRC, ATTR_ORIG_IPV6_SRC, s);
	addr(ct, family, ATTR_ORIG_IPV4_DST, ATTR_ORIG_IPV6_DST, d);
	inet_ntop(af, s, ss, sizeof(ss));
	inet_ntop(af, d, ds, sizeof(ds));
	if (ports)
		snprintf(buf, len, "%s %s%s%s:%u -> %s%s%s:%u", p, family == 6 ? "[" : "", ss,
			 family == 6 ? "]" : "", ntohs(nfct_get_attr_u16(ct, ATTR_ORIG_PORT_SRC)),
			 family == 6 ? "[" : "", ds, family == 6 ? "]" : "",
			 ntohs(nfct_get_attr_u16(ct, ATTR_ORIG_PORT_DST)));
	else
		snprintf(buf, len, "%s %s -> %s", p, ss, ds);
}

/*
 * The state killed, the cut counted and logged.  `fp_id` NULL: not in the
 * fast path, and `why` (a negative errno, or 0) says why it could not be
 * made dropping (0 is a valid connection id).  A state gone already was killed by someone else: still cut.
 */
static void
finish(struct fd_cut *c, const struct nf_conntrack *ct, const uint64_t *fp_id, bool hw,
       enum fd_cut_trigger t, int why)
{
	int rc = fd_ct_kill(fd_offload_ct(c->off), ct);
	char tuple[160];

	tuple_format(ct, tuple, sizeof(tuple));
	if (rc != 0 && rc != -ENOENT) {
		c->st.failed++;
		fprintf(stderr, "flowcutd: cut (%s) %s ct %u: killing its conntrack state: %s\n",
			fd_cut_trigger_name(t), tuple, nfct_get_attr_u32(ct, ATTR_ID),
			strerror(-rc));
		return;
	}
	if (hw)
		c->st.in_hardware[t]++;
	else
		c->st.on_host[t]++;
	if (fp_id)
		printf("flowcutd: cut (%s) %s ct %u conn %" PRIu64 " %s\n", fd_cut_trigger_name(t),
		       tuple, nfct_get_attr_u32(ct, ATTR_ID), *fp_id,
		       hw ? "in hardware" : "taken out, on the host");
	else
		printf("flowcutd: cut (%s) %s ct %u no connection%s%s%s, on the host\n",
		       fd_cut_trigger_name(t), tuple, nfct_get_attr_u32(ct, ATTR_ID),
		       why ? " (not made: " : "", why ? strerror(-why) : "", why ? ")" : "");
}

static struct pending *
pending_new(struct fd_cut *c, const struct nf_conntrack *ct, enum fd_cut_trigger t)
{
	struct pending *p = calloc(1, sizeof(*p));

	if (p == NULL || (p->ct = nfct_clone(ct)) == NULL) {
		free(p);
		return NULL;
	}
	p->c = c;
	p->trigger = t;
	return p;
}

static void
pending_free(struct pending *p)
{
	nfct_destroy(p->ct);
	free(p);
}

/* A state not offloaded was made dropping (or not): killed either way. */
static void
made_done(void *dctx, int rc, uint64_t fp_id)
{
	struct pending *p = dctx;

	p->fp_id = fp_id;
	finish(p->c, p->ct, rc == 0 ? &p->fp_id : NULL, rc == 0, p->trigger, rc);
	pending_free(p);
}

/* The coprocessor answered a drop: marked cut and killed, or back to the host. */
static void
drop_done(void *dctx, int rc, const void *ans, uint16_t len)
{
	struct pending *p = dctx;
	struct fd_cut *c = p->c;

	(void)ans, (void)len;
	if (rc == 0 && fd_offload_mark_cut(c->off, p->fp_id) == 0) {
		finish(c, p->ct, &p->fp_id, true, p->trigger, 0);
	} else {
		/* refused, unanswered, or gone meanwhile: out of the fast path, killed */
		char tuple[160];

		tuple_format(p->ct, tuple, sizeof(tuple));
		fprintf(stderr, "flowcutd: cut (%s) %s conn %" PRIu64 ": drop not answered (%s); "
			"taken out instead\n", fd_cut_trigger_name(p->trigger), tuple, p->fp_id,
			strerror(rc ? -rc : ENOENT));
		(void)fd_offload_take_out(c->off, nfct_get_attr_u32(p->ct, ATTR_ID));
		finish(c, p->ct, &p->fp_id, false, p->trigger, 0);
	}
	pending_free(p);
}

/*
 * Posts an offloaded connection's drop; its completion kills the state.
 * 0, or an error (the completion will not run; `ct` still the caller's).
 */
static int
post_drop(struct fd_cut *c, const struct fd_offload_conn *oc, const struct nf_conntrack *ct,
	  enum fd_cut_trigger t)
{
	const struct fd_cmds *cmds = fd_offload_cmds(c->off);
	struct pending *p = pending_new(c, ct, t);
	int rc;

	if (p == NULL)
		return -ENOMEM;
	p->fp_id = oc->fp_id;
	if (oc->action == FC_ACTION_IPS) {
		struct fc_cmd_conn_verdict v = { .id = oc->fp_id, .verdict = FC_VERDICT_DROP };

		rc = fd_cmds_post(cmds, FC_CMD_CONN_MODIFY_FP_VERDICT, &v, sizeof(v), drop_done, p);
	} else {
		/* FWD: the verdict is never consulted; the action drops, both ways */
		struct fc_cmd_conn_modify m = { .id = oc->fp_id, .mask = FC_MOD_ACTION,
						.action = { FC_ACTION_DROP, FC_ACTION_DROP } };

		rc = fd_cmds_post(cmds, FC_CMD_CONN_MODIFY_FP, &m, sizeof(m), drop_done, p);
	}
	if (rc != 0)
		pending_free(p);
	return rc;
}

/* One live state to cut: 1 when it was (or is being) cut, 0 when it was cut already. */
static int
cut_one(struct fd_cut *c, const struct nf_conntrack *ct, enum fd_cut_trigger t)
{
	struct fd_offload_conn oc;
	bool offloaded = fd_offload_find_ct(c->off, nfct_get_attr_u32(ct, ATTR_ID), &oc) == 0;
	struct pending *p;
	int rc;

	if (offloaded && oc.cut)
		return 0;
	if (!fd_offload_cut_in_hardware(c->off)) {
		if (offloaded && fd_offload_take_out(c->off, oc.ct_id) != 0)
			fprintf(stderr, "flowcutd: cut (%s) conn %" PRIu64 ": not taken out; the "
				"fast path is taken out whole\n", fd_cut_trigger_name(t), oc.fp_id);
		finish(c, ct, offloaded ? &oc.fp_id : NULL, false, t, 0);
		return 1;
	}
	if (offloaded) {
		if (post_drop(c, &oc, ct, t) == 0)
			return 1;
		(void)fd_offload_take_out(c->off, oc.ct_id);	/* no drop: out, and killed */
		finish(c, ct, &oc.fp_id, false, t, 0);
		return 1;
	}
	/* not offloaded: made dropping first, where it runs between front ports */
	p = pending_new(c, ct, t);
	if (p == NULL) {
		finish(c, ct, NULL, false, t, -ENOMEM);
		return 1;
	}
	rc = fd_offload_post_create_cut(c->off, ct, made_done, p);
	if (rc != 0) {
		finish(c, ct, NULL, false, t, rc);
		pending_free(p);
	}
	return 1;
}

int
fd_cut_ranges(struct fd_cut *c, const struct fc_list *l, enum fd_cut_trigger t)
{
	struct nf_conntrack **all;
	size_t n;
	int rc = fd_ct_dump(fd_offload_ct(c->off), &all, &n), cut = 0;

	for (size_t i = 0; i < n; i++)
		if (far_end_in(all[i], l))
			cut += cut_one(c, all[i], t);
	fd_ct_dump_free(all, n);
	/* every drop answered (or failed at its deadline), every kill done */
	(void)fd_cmds_flush(fd_offload_cmds(c->off), -1);
	if (rc != 0) {
		fprintf(stderr, "flowcutd: cut (%s): conntrack dump incomplete; %d cut from what "
			"it held\n", fd_cut_trigger_name(t), cut);
		return rc;
	}
	return cut;
}

int
fd_cut_conn(struct fd_cut *c, uint64_t fp_id, enum fd_cut_trigger t)
{
	struct fd_offload_conn oc;
	struct nf_conntrack *tuple = NULL, *whole;
	int rc = fd_offload_find_fp(c->off, fp_id, &oc, &tuple);

	if (rc != 0)
		return rc;
	if (oc.cut) {
		nfct_destroy(tuple);
		return -EALREADY;
	}
	whole = fd_ct_get(fd_offload_ct(c->off), tuple);
	nfct_destroy(tuple);
	if (whole == NULL)
		return -ENOENT;	/* the state just went: its DESTROY takes it out */
	cut_one(c, whole, t);
	nfct_destroy(whole);
	(void)fd_cmds_flush(fd_offload_cmds(c->off), -1);
	return 0;
}
