/* SPDX-License-Identifier: BSD-3-Clause */
/* fd_cut: see fd_cut.h. */
#include "fd_cut.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libnetfilter_conntrack/libnetfilter_conntrack.h>

#include <flowcut/fc_cmd.h>

#include "fd_clock.h"
#include "fd_cmds.h"
#include "fd_ct.h"
#include "fd_nft.h"
#include "fd_offload_cut.h"
#include "fd_policy.h"
#include "fd_tuple.h"
#include "fd_why.h"

/* room for one log line: a tuple of two IPv6 ends and the rest */
#define FD_CUT_LINE 320

struct fd_cut {
	struct fd_offload *off;
	struct fd_ct_io ct;		/* the kills, the dump, the gets */
	struct fd_cmds cmds;		/* the drops */
	bool cut_in_hardware;		/* dropping on the coprocessor, else on the host */
	struct fd_nft *nft;		/* conn4/conn6 for the cuts on the host; may be NULL */
	struct fd_cut_stats st;
	struct pending *kills, **kills_tail;	/* drops answered, states to kill */
	/* this cut's timing, from its start: the drops answered, first and last */
	uint64_t t0;		/* fd_clock_ns() at the cut's start */
	double first_ms, last_ms;
	unsigned int dropping, on_host;
	struct fc_list never;	/* never_cut, canonical (fd_cut_never) */
	struct fc_list said;	/* the never-cut addresses said already (not canonical) */
	struct fd_why *why;	/* what each cut connection keeps for `why` (fd_cut_why); may be NULL */
	size_t log_len;
	char log[64 * 1024];	/* lines kept until the batch is over (say, log_flush) */
};

/* One connection whose drop is in flight: its state is killed when it is answered. */
struct pending {
	struct fd_cut *c;
	struct nf_conntrack *ct;	/* the state, or its original tuple: owned */
	uint32_t ct_id;
	uint64_t fp_id;
	enum fd_cut_trigger trigger;
	uint32_t line;		/* its record's (fd_cut_cause): a fingerprint's list line, or 0 */
	uint16_t src;		/* its record's source when the cause named one, else FD_WHY_NONE */
	bool in_fp;		/* in the fast path (fp_id) */
	bool hw;		/* dropping there */
	int why;		/* why it could not be made dropping (a negative errno), or 0 */
	struct pending *next;	/* in the cut's kills to send */
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
fd_cut_open(const struct fd_cut_parts *parts)
{
	struct fd_cut *c = calloc(1, sizeof(*c));

	if (c != NULL) {
		c->off = parts->off;
		c->ct = parts->ct;
		c->cmds = parts->cmds;
		c->cut_in_hardware = parts->cut_in_hardware;
		c->nft = parts->nft;
		c->kills_tail = &c->kills;
	}
	return c;
}

void
fd_cut_settings(struct fd_cut *c, bool cut_in_hardware)
{
	c->cut_in_hardware = cut_in_hardware;
}

void
fd_cut_close(struct fd_cut *c)
{
	if (c == NULL)
		return;
	fc_list_free(&c->never);
	fc_list_free(&c->said);
	free(c);
}

void
fd_cut_stats(const struct fd_cut *c, struct fd_cut_stats *out)
{
	*out = c->st;
}

/* Is either end as the wire sees it (orig src, reply src) in the list? */
static bool
far_end_in(const struct nf_conntrack *ct, const struct fc_list *l)
{
	int family = fd_policy_family(ct);
	uint8_t a[16];

	fd_policy_addr(ct, ATTR_ORIG_IPV4_SRC, ATTR_ORIG_IPV6_SRC, a);
	if (fc_list_holds(l, (uint8_t)family, a))
		return true;
	fd_policy_addr(ct, ATTR_REPL_IPV4_SRC, ATTR_REPL_IPV6_SRC, a);
	return fc_list_holds(l, (uint8_t)family, a);
}

/* ---- never cut ---- */

static unsigned int
alen(uint8_t family)
{
	return family == 4 ? 4 : 16;
}

/* The first of two ends (4 or 16 bytes by family) never_cut holds, or NULL. */
static const uint8_t *
never_end(const struct fd_cut *c, uint8_t family, const uint8_t *a, const uint8_t *b)
{
	if (fc_list_holds(&c->never, family, a))
		return a;
	return fc_list_holds(&c->never, family, b) ? b : NULL;
}

/*
 * A cut over never-cut addresses `r` (a range within never_cut): counted,
 * and said once per range (an address, or the part of a never-cut prefix
 * a cut's range covers) with the trigger that asked.
 */
static void
never_said(struct fd_cut *c, const struct fc_range *r, enum fd_cut_trigger t, const char *how)
{
	char a[96];

	if (t == FD_CUT_SET)
		c->st.never_cut_set++;
	else
		c->st.never_cut_refused++;
	for (size_t i = 0; i < c->said.n; i++)
		if (memcmp(&c->said.r[i], r, sizeof(*r)) == 0)
			return;
	if (c->said.n == FD_CUT_NEVER_SAID || fc_list_add(&c->said, r) != 0)
		return;		/* counted; no more said (or no memory to know) */
	fc_range_format(r, a, sizeof(a));
	if (t == FD_CUT_SET)
		fprintf(stderr, "flowcutd: never cut: watched set's element %s %s, in never_cut: "
			"not cut by flowcut; its connections left to the host's rules\n", how, a);
	else
		printf("flowcutd: never cut (%s): %s %s, in never_cut: not cut there (the rest of "
		       "the cut is)\n", fd_cut_trigger_name(t), how, a);
	fflush(stdout);
}

/* A connection with never-cut end `e` (of `family`): said as its address. */
static void
never_conn(struct fd_cut *c, uint8_t family, const uint8_t *e, enum fd_cut_trigger t)
{
	struct fc_range r = { .family = family };

	memcpy(r.lo, e, alen(family));
	memcpy(r.hi, e, alen(family));
	never_said(c, &r, t, "a connection's end");
}

/* Whether two ranges of one family overlap, and their common part in *both. */
static bool
overlap(const struct fc_range *x, const struct fc_range *y, struct fc_range *both)
{
	unsigned int n = alen(x->family);

	if (x->family != y->family || memcmp(x->lo, y->hi, n) > 0 || memcmp(y->lo, x->hi, n) > 0)
		return false;
	*both = (struct fc_range){ .family = x->family };
	memcpy(both->lo, memcmp(x->lo, y->lo, n) > 0 ? x->lo : y->lo, n);
	memcpy(both->hi, memcmp(x->hi, y->hi, n) < 0 ? x->hi : y->hi, n);
	return true;
}

/* The never-cut addresses a cut of `l` covers: each counted, said once. */
static void
never_ranges(struct fd_cut *c, const struct fc_list *l, enum fd_cut_trigger t)
{
	struct fc_range both;

	for (size_t j = 0; j < c->never.n; j++)
		for (size_t i = 0; i < l->n; i++)
			if (overlap(&c->never.r[j], &l->r[i], &both))
				never_said(c, &both, t, "covers");
}

/* "tcp 198.18.0.10:40000 -> 198.19.0.10:80": the state's original tuple, by fd_tuple_format. */
static void
tuple_format(const struct nf_conntrack *ct, char *buf, size_t len)
{
	struct fd_tuple t = { .family = (uint8_t)fd_policy_family(ct),
			      .proto = nfct_get_attr_u8(ct, ATTR_ORIG_L4PROTO) };

	fd_policy_addr(ct, ATTR_ORIG_IPV4_SRC, ATTR_ORIG_IPV6_SRC, t.src);
	fd_policy_addr(ct, ATTR_ORIG_IPV4_DST, ATTR_ORIG_IPV6_DST, t.dst);
	if (t.proto == IPPROTO_TCP || t.proto == IPPROTO_UDP) {
		t.sport = nfct_get_attr_u16(ct, ATTR_ORIG_PORT_SRC);
		t.dport = nfct_get_attr_u16(ct, ATTR_ORIG_PORT_DST);
	}
	fd_tuple_format(&t, buf, len);
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
	p->ct_id = nfct_get_attr_u32(ct, ATTR_ID);
	p->trigger = t;
	p->src = FD_WHY_NONE;
	return p;
}

/* A pending cut that takes `tuple` (a copy already its own). */
static struct pending *
pending_take(struct fd_cut *c, struct nf_conntrack *tuple, uint32_t ct_id, enum fd_cut_trigger t)
{
	struct pending *p = calloc(1, sizeof(*p));

	if (p == NULL)
		return NULL;
	*p = (struct pending){ .c = c, .ct = tuple, .ct_id = ct_id, .trigger = t,
			       .src = FD_WHY_NONE };
	return p;
}

static void
pending_free(struct pending *p)
{
	nfct_destroy(p->ct);
	free(p);
}

/* The lines kept so far, written at once. */
static void
log_flush(struct fd_cut *c)
{
	if (c->log_len > 0 && fwrite(c->log, 1, c->log_len, stdout) != c->log_len)
		fprintf(stderr, "flowcutd: the cut's log lines could not be written whole\n");
	fflush(stdout);
	c->log_len = 0;
}

/*
 * One cut's line, kept with the others until the batch is over: one write
 * for many lines, not one each (a change may cut 100,000).
 */
static void __attribute__((format(printf, 2, 3)))
say(struct fd_cut *c, const char *fmt, ...)
{
	size_t room;
	va_list ap;
	int n;

	if (sizeof(c->log) - c->log_len < FD_CUT_LINE)
		log_flush(c);
	room = sizeof(c->log) - c->log_len;
	va_start(ap, fmt);
	n = vsnprintf(c->log + c->log_len, room, fmt, ap);
	va_end(ap);
	if (n > 0)
		c->log_len += (size_t)n < room ? (size_t)n : room - 1;	/* cut short, never lost whole */
}

/* conntrack answered the kill: the cut counted and logged, or its failure said. */
static void
killed(void *arg, int rc)
{
	struct pending *p = arg;
	struct fd_cut *c = p->c;
	enum fd_cut_trigger t = p->trigger;
	char tuple[160];

	tuple_format(p->ct, tuple, sizeof(tuple));
	if (rc != 0 && rc != -ENOENT) {
		c->st.cut_failed++;
		fprintf(stderr, "flowcutd: cut (%s) %s ct %u: killing its conntrack state: %s\n",
			fd_cut_trigger_name(t), tuple, p->ct_id, strerror(-rc));
	} else {
		/* a state gone already was killed by someone else: still cut */
		if (p->hw)
			c->st.in_hardware[t]++;
		else
			c->st.on_host[t]++;
		if (p->in_fp)
			say(c, "flowcutd: cut (%s) %s ct %u conn %" PRIu64 " %s\n",
			    fd_cut_trigger_name(t), tuple, p->ct_id, p->fp_id,
			    p->hw ? "in hardware" : "taken out, on the host");
		else
			say(c, "flowcutd: cut (%s) %s ct %u no connection%s%s%s, on the host\n",
			    fd_cut_trigger_name(t), tuple, p->ct_id, p->why ? " (not made: " : "",
			    p->why ? strerror(-p->why) : "", p->why ? ")" : "");
	}
	pending_free(p);
}

/*
 * The state's kill queued: sent once the cut's drops are all answered (so
 * the coprocessor's answers never wait on conntrack's work), in batches of
 * FD_CT_KILL_BATCH (kills_send); once answered, the cut is counted and
 * logged.  `in_fp`: the connection is (or was) in the fast path as
 * p->fp_id; `why` (a negative errno, or 0) says why it could not be made
 * dropping.  Takes p.
 */
static void
kill_state(struct pending *p, bool in_fp, bool hw, int why)
{
	struct fd_cut *c = p->c;

	p->in_fp = in_fp;
	p->hw = hw;
	p->why = why;
	p->next = NULL;
	*c->kills_tail = p;
	c->kills_tail = &p->next;
}

/*
 * A state killed on the host whose whole tuple we hold (a TCP or UDP one
 * not offloaded, or cut by connection): its two directions go into
 * conn4/conn6 first, so its next frame opens no new state mid-stream.
 * (An offloaded one found in the binding carries its original tuple only:
 * it was cut by address, and the address rule drops what still comes.)
 */
static void
block(struct fd_cut *c, const struct pending *p)
{
	const struct nf_conntrack *ct = p->ct;
	struct fd_tuple b = { .family = (uint8_t)fd_policy_family(ct) };

	if (c->nft == NULL || p->hw || !nfct_attr_is_set(ct, ATTR_REPL_PORT_SRC))
		return;
	b.proto = nfct_get_attr_u8(ct, ATTR_ORIG_L4PROTO);
	if (b.proto != IPPROTO_TCP && b.proto != IPPROTO_UDP)
		return;
	/* as the forward hook sees them: DNAT done, SNAT not yet; src the client */
	fd_policy_addr(ct, ATTR_ORIG_IPV4_SRC, ATTR_ORIG_IPV6_SRC, b.src);
	fd_policy_addr(ct, ATTR_REPL_IPV4_SRC, ATTR_REPL_IPV6_SRC, b.dst);
	b.sport = nfct_get_attr_u16(ct, ATTR_ORIG_PORT_SRC);
	b.dport = nfct_get_attr_u16(ct, ATTR_REPL_PORT_SRC);
	if (fd_nft_block(c->nft, &b) != 0)
		fprintf(stderr, "flowcutd: cut (%s) ct %u: not put in the connection drop sets\n",
			fd_cut_trigger_name(p->trigger), p->ct_id);
}

/* Every queued kill sent and answered, the ones on the host blocked first. */
static void
kills_send(struct fd_cut *c)
{
	struct pending *p = c->kills;

	for (const struct pending *q = p; q != NULL; q = q->next)
		block(c, q);
	if (c->nft != NULL)
		(void)fd_nft_block_flush(c->nft);	/* said if it failed */
	c->kills = NULL;
	c->kills_tail = &c->kills;
	while (p != NULL) {
		struct pending *next = p->next;
		int rc = c->ct.kill_post(c->ct.ctx, p->ct, killed, p);

		if (rc != 0)
			killed(p, rc);
		p = next;
	}
	(void)c->ct.kill_flush(c->ct.ctx);
}

/* One more connection dropping on the coprocessor: the cut's timing. */
static void
now_dropping(struct fd_cut *c)
{
	c->last_ms = fd_clock_ms_since(c->t0);
	if (c->dropping++ == 0)
		c->first_ms = c->last_ms;
}

void
fd_cut_why(struct fd_cut *c, struct fd_why *why)
{
	c->why = why;
}

const struct fc_list *
fd_cut_never_list(const struct fd_cut *c)
{
	return &c->never;
}

/*
 * A connection now dropping on the coprocessor: its record for `why` (its
 * source by its ends: the set's or the list's that holds one; or the one
 * its cause named, with its line), kept beside the binding's entry.
 * `made`: created dropping, its frames counted from 0.
 */
static void
why_note(struct fd_cut *c, uint64_t fp_id, const struct pending *p, bool made)
{
	enum fd_cut_trigger t = p->trigger;
	struct fd_offload_conn oc;
	struct fd_why_rec r = { .trigger = (uint8_t)t, .hw = 1, .based = made,
				.when_s = (uint32_t)time(NULL), .src = p->src,
				.line = p->line };

	if (c->why == NULL || fd_offload_find(c->off, FD_OFFLOAD_BY_FP, fp_id, NULL, &oc, NULL) != 0)
		return;
	r.slot = oc.slot;
	if (t == FD_CUT_SET || t == FD_CUT_LIST)
		r.src = (uint16_t)fd_why_owner(c->why, t == FD_CUT_SET ? FD_WHY_SET : FD_WHY_LIST,
					       oc.family, oc.ends[0], oc.ends[1]);
	if (fd_why_cut(c->why, &r) != 0)
		fprintf(stderr, "flowcutd: cut (%s) conn %" PRIu64 ": no memory for its record; "
			"why will not know it\n", fd_cut_trigger_name(t), fp_id);
}

/* A state not offloaded was made dropping (or not): killed either way. */
static void
made_done(void *dctx, int rc, uint64_t fp_id)
{
	struct pending *p = dctx;

	p->fp_id = fp_id;
	if (rc == 0) {
		now_dropping(p->c);
		why_note(p->c, fp_id, p, true);
	}
	kill_state(p, rc == 0, rc == 0, rc);
}

/* The coprocessor answered a drop: marked cut and killed, or back to the host. */
static void
drop_done(void *dctx, int rc, const void *ans, uint16_t len)
{
	struct pending *p = dctx;
	struct fd_cut *c = p->c;
	char tuple[160];

	(void)ans, (void)len;
	if (rc == 0 && fd_offload_mark(c->off, p->fp_id, FD_OFFLOAD_MARK_CUT, (uint8_t)p->trigger) == 0) {
		now_dropping(c);
		why_note(c, p->fp_id, p, false);
		kill_state(p, true, true, 0);
		return;
	}
	/* refused, unanswered, or gone meanwhile: out of the fast path, killed */
	tuple_format(p->ct, tuple, sizeof(tuple));
	fprintf(stderr, "flowcutd: cut (%s) %s conn %" PRIu64 ": drop not answered (%s); "
		"taken out instead\n", fd_cut_trigger_name(p->trigger), tuple, p->fp_id,
		strerror(rc ? -rc : ENOENT));
	(void)fd_offload_take_out(c->off, p->ct_id, p->ct);
	kill_state(p, true, false, 0);
}

/*
 * Posts an offloaded connection's drop; its completion kills the state.
 * 0, or an error (the completion will not run; p still the caller's).
 */
static int
post_drop(struct fd_cut *c, const struct fd_offload_conn *oc, struct pending *p)
{
	const struct fd_cmds *cmds = &c->cmds;
	struct fc_cmd_conn_verdict v = { .id = oc->fp_id, .verdict = FC_VERDICT_DROP };
	/* FWD: the verdict is never consulted; the action drops, both ways */
	struct fc_cmd_conn_modify m = { .id = oc->fp_id, .mask = FC_MOD_ACTION,
					.action = { FC_ACTION_DROP, FC_ACTION_DROP } };

	p->fp_id = oc->fp_id;
	if (oc->action == FC_ACTION_IPS)
		return fd_cmds_post(cmds, FC_CMD_CONN_MODIFY_FP_VERDICT, &v, sizeof(v), drop_done,
				    p);
	return fd_cmds_post(cmds, FC_CMD_CONN_MODIFY_FP, &m, sizeof(m), drop_done, p);
}

/* No memory to carry a cut: taken out and killed now, one round trip, said. */
static void
cut_bare(struct fd_cut *c, const struct nf_conntrack *ct, const struct fd_offload_conn *oc,
	 enum fd_cut_trigger t)
{
	char tuple[160];
	int rc;

	tuple_format(ct, tuple, sizeof(tuple));
	if (oc)
		(void)fd_offload_take_out(c->off, oc->ct_id, ct);
	rc = c->ct.kill(c->ct.ctx, ct);
	fprintf(stderr, "flowcutd: cut (%s) %s: no memory; %s\n", fd_cut_trigger_name(t), tuple,
		rc == 0 || rc == -ENOENT ? "taken out and killed, not counted" :
		"its state could not be killed");
	c->st.cut_failed += rc != 0 && rc != -ENOENT;
}

/* An offloaded connection not cut yet, its state in p: made dropping, or taken out.  Takes p. */
static void
cut_offloaded(struct fd_cut *c, const struct fd_offload_conn *oc, struct pending *p)
{
	p->fp_id = oc->fp_id;
	if (!c->cut_in_hardware) {
		if (fd_offload_take_out(c->off, oc->ct_id, p->ct) != 0)
			fprintf(stderr, "flowcutd: cut (%s) conn %" PRIu64 ": not taken out; the "
				"fast path is taken out whole\n", fd_cut_trigger_name(p->trigger),
				oc->fp_id);
		kill_state(p, true, false, 0);
		return;
	}
	if (post_drop(c, oc, p) != 0) {
		(void)fd_offload_take_out(c->off, oc->ct_id, p->ct);	/* no drop: out, and killed */
		kill_state(p, true, false, 0);
	}
}

/*
 * Whether the state has a never-cut end: then said and counted, and with
 * a watched set's trigger, given back to the host if offloaded (`oc`):
 * taken out, its state killed, counted never_cut_given_back.
 */
static bool
never_state(struct fd_cut *c, const struct nf_conntrack *ct, const struct fd_offload_conn *oc,
	    enum fd_cut_trigger t)
{
	uint8_t family = (uint8_t)fd_policy_family(ct), a[16], b[16];
	const uint8_t *e;
	char tuple[160];
	int rc;

	fd_policy_addr(ct, ATTR_ORIG_IPV4_SRC, ATTR_ORIG_IPV6_SRC, a);
	fd_policy_addr(ct, ATTR_REPL_IPV4_SRC, ATTR_REPL_IPV6_SRC, b);
	e = never_end(c, family, a, b);
	if (e == NULL)
		return false;
	never_conn(c, family, e, t);
	if (t != FD_CUT_SET || oc == NULL)
		return true;
	tuple_format(ct, tuple, sizeof(tuple));
	rc = fd_offload_take_out(c->off, oc->ct_id, ct);
	if (rc == 0)
		rc = c->ct.kill(c->ct.ctx, ct);
	if (rc == 0 || rc == -ENOENT) {
		c->st.never_cut_given_back++;
		say(c, "flowcutd: never cut (set) %s conn %" PRIu64 ": given back to the host's "
		    "rules (out of the fast path, a new state)\n", tuple, oc->fp_id);
	} else {
		fprintf(stderr, "flowcutd: never cut (set) %s conn %" PRIu64 ": not given back: "
			"%s\n", tuple, oc->fp_id, strerror(-rc));
	}
	return true;
}

/* The cause's part of a pending cut's record: its line, its source named (fd_why_source). */
static void
pending_cause(struct fd_cut *c, struct pending *p, const struct fd_cut_cause *from)
{
	int src;

	if (from == NULL)
		return;
	p->line = from->line;
	if (from->list != NULL && c->why != NULL &&
	    (src = fd_why_source(c->why, FD_WHY_FINGERPRINTS, from->list)) >= 0)
		p->src = (uint16_t)src;
}

/* One live state to cut: 1 when it was (or is being) cut, 0 when it was cut already. */
static int
cut_one(struct fd_cut *c, const struct nf_conntrack *ct, enum fd_cut_trigger t,
	const struct fd_cut_cause *from)
{
	struct fd_offload_conn oc;
	bool offloaded;
	struct pending *p;
	int rc;

	fd_offload_settle(c->off);	/* an offload on its way is in the table first */
	offloaded = fd_offload_find(c->off, FD_OFFLOAD_BY_CT, nfct_get_attr_u32(ct, ATTR_ID), ct, &oc, NULL) == 0;

	if (offloaded && oc.cut)
		return 0;
	if (c->never.n > 0 && never_state(c, ct, offloaded ? &oc : NULL, t))
		return -EPERM;
	p = pending_new(c, ct, t);
	if (p == NULL) {
		cut_bare(c, ct, offloaded ? &oc : NULL, t);
		return 1;
	}
	pending_cause(c, p, from);
	if (offloaded) {
		cut_offloaded(c, &oc, p);
		return 1;
	}
	if (!c->cut_in_hardware) {
		kill_state(p, false, false, 0);
		return 1;
	}
	/* not offloaded: made dropping first, where it runs between front ports */
	rc = fd_offload_post_create_cut(c->off, ct, (uint8_t)t, made_done, p);
	if (rc != 0)
		kill_state(p, false, false, rc);
	return 1;
}

/*
 * The end of a cut's phase: every drop answered (or failed at its
 * deadline), so every kill queued; then the kills sent and answered, the
 * lines written.
 */
static void
cut_done(struct fd_cut *c)
{
	(void)fd_cmds_flush(&c->cmds, -1);
	kills_send(c);
	log_flush(c);
}

/* A cut starts: its clock. */
static void
cut_begin(struct fd_cut *c)
{
	c->t0 = fd_clock_ns();		/* the wait below is the cut's time too */
	fd_offload_settle(c->off);	/* so the picks see every offload made */
	c->dropping = 0;
	c->first_ms = c->last_ms = 0;
}

/* A cut of ranges over: one line of its figures, after its connections' lines. */
static void
cut_summary(struct fd_cut *c, enum fd_cut_trigger t, int cut)
{
	if (cut <= 0)
		return;
	printf("flowcutd: cut (%s) of %d connections: %u dropping on the coprocessor, the "
	       "first %.2f ms and the last %.2f ms after flowcutd read the change; every state "
	       "killed at %.2f ms\n", fd_cut_trigger_name(t), cut, c->dropping, c->first_ms, c->last_ms,
	       fd_clock_ms_since(c->t0));
	fflush(stdout);
}

struct pick_in {
	const struct fd_cut *c;
	const struct fc_list *l;
};

/*
 * fd_offload_pick's test: not cut yet, an end in the list, and neither
 * end never cut (those the dump's phase says, counts and gives back).
 */
static bool
ends_in(void *arg, const struct fd_offload_conn *oc)
{
	const struct pick_in *p = arg;

	return !oc->cut && (fc_list_holds(p->l, oc->family, oc->ends[0]) ||
			    fc_list_holds(p->l, oc->family, oc->ends[1])) &&
	       never_end(p->c, oc->family, oc->ends[0], oc->ends[1]) == NULL;
}

/*
 * Two phases.  First the offloaded connections, found in the binding's own
 * table, so their drops go out at once, before any conntrack dump (the
 * first drops within milliseconds whatever conntrack holds).  Then, once
 * those are answered and their states killed, one dump for the states
 * not offloaded (an offloaded one still there was cut in the first, and
 * is skipped).
 */
int
fd_cut_ranges(struct fd_cut *c, const struct fc_list *l, enum fd_cut_trigger t)
{
	struct fd_offload_conn *pk = NULL;
	struct nf_conntrack **all;
	long npk;
	size_t n;
	int rc, cut = 0;

	cut_begin(c);
	never_ranges(c, l, t);
	npk = fd_offload_pick(c->off, FD_OFFLOAD_LIVE, ends_in, &(struct pick_in){ .c = c, .l = l }, &pk);

	for (long i = 0; i < npk; i++) {
		struct nf_conntrack *tuple = NULL;
		struct pending *p;

		/* still there: the completions of the drops before may have taken it out */
		if (fd_offload_find(c->off, FD_OFFLOAD_BY_FP, pk[i].fp_id, NULL, &pk[i], &tuple) != 0 ||
		    pk[i].cut) {
			if (tuple)
				nfct_destroy(tuple);
			continue;
		}
		p = pending_take(c, tuple, pk[i].ct_id, t);
		if (p == NULL) {
			cut_bare(c, tuple, &pk[i], t);
			nfct_destroy(tuple);
		} else {
			cut_offloaded(c, &pk[i], p);
		}
		cut++;
	}
	free(pk);
	if (npk < 0)
		fprintf(stderr, "flowcutd: cut (%s): no memory for the offloaded connections; "
			"the dump finds them\n", fd_cut_trigger_name(t));
	cut_done(c);
	rc = c->ct.dump(c->ct.ctx, &all, &n);
	for (size_t i = 0; i < n; i++)
		if (far_end_in(all[i], l) && cut_one(c, all[i], t, NULL) > 0)
			cut++;
	fd_ct_dump_free(all, n);
	cut_done(c);
	cut_summary(c, t, cut);
	if (rc != 0) {
		fprintf(stderr, "flowcutd: cut (%s): conntrack dump incomplete; %d cut from what "
			"it held\n", fd_cut_trigger_name(t), cut);
		return rc;
	}
	return cut;
}

int
fd_cut_state_from(struct fd_cut *c, const struct nf_conntrack *ct, enum fd_cut_trigger t,
		  const struct fd_cut_cause *from)
{
	int cut = cut_one(c, ct, t, from);

	cut_done(c);
	return cut;
}

int
fd_cut_state(struct fd_cut *c, const struct nf_conntrack *ct, enum fd_cut_trigger t)
{
	return fd_cut_state_from(c, ct, t, NULL);
}

int
fd_cut_conn(struct fd_cut *c, uint64_t fp_id, enum fd_cut_trigger t)
{
	return fd_cut_conn_from(c, fp_id, t, NULL);
}

int
fd_cut_conn_from(struct fd_cut *c, uint64_t fp_id, enum fd_cut_trigger t,
		 const struct fd_cut_cause *from)
{
	struct fd_offload_conn oc;
	struct nf_conntrack *tuple = NULL, *whole;
	int rc = fd_offload_find(c->off, FD_OFFLOAD_BY_FP, fp_id, NULL, &oc, &tuple);

	if (rc != 0)
		return rc;
	if (oc.cut) {
		nfct_destroy(tuple);
		return -EALREADY;
	}
	whole = c->ct.get(c->ct.ctx, tuple);
	nfct_destroy(tuple);
	if (whole == NULL)
		return -ENOENT;	/* the state just went: its DESTROY takes it out */
	rc = cut_one(c, whole, t, from);
	nfct_destroy(whole);
	cut_done(c);
	return rc < 0 ? rc : 0;
}

/*
 * fd_offload_pick_cut's test: cut by an address trigger (by hand, a
 * watched set, a list) and neither end in what is in force.  A
 * fingerprint's cut and one by connection are released by no address's
 * removal, and neither is one a flowcutd before cut (trigger unknown): it
 * may have been either, and only the coprocessor holds it (no host rule
 * would drop what a release gives back, nor the inspector see a second
 * ClientHello); it drops until its sender stops, and ages out.
 */
static bool
released_by(void *arg, const struct fd_offload_conn *oc)
{
	const struct fc_list *l = arg;

	if (oc->cut_by != FD_CUT_HAND && oc->cut_by != FD_CUT_SET && oc->cut_by != FD_CUT_LIST)
		return false;
	return !fc_list_holds(l, oc->family, oc->ends[0]) &&
	       !fc_list_holds(l, oc->family, oc->ends[1]);
}

static const char *
cut_by_name(uint8_t by)
{
	return by == FD_OFFLOAD_CUT_BY_UNKNOWN ? "a flowcutd before" : fd_cut_trigger_name(by);
}

/* The cut connections `pick` picks, released (taken out of the fast path): each said, counted. */
static long
release_picked(struct fd_cut *c, fd_offload_pick_fn *pick, void *arg, const char *why)
{
	struct fd_offload_conn *pk = NULL;
	uint64_t t0;
	uint64_t *ids;
	long npk = fd_offload_pick(c->off, FD_OFFLOAD_CUT, pick, arg, &pk), done;

	if (npk <= 0) {
		free(pk);
		if (npk < 0)
			fprintf(stderr, "flowcutd: release: no memory to look at the cut "
				"connections; they stay dropping\n");
		return npk;
	}
	t0 = fd_clock_ns();
	ids = calloc((size_t)npk, sizeof(*ids));
	if (ids == NULL) {
		free(pk);
		fprintf(stderr, "flowcutd: release of %ld cut connections: no memory; they stay "
			"dropping\n", npk);
		return -ENOMEM;
	}
	for (long i = 0; i < npk; i++) {
		int af = pk[i].family == 4 ? AF_INET : AF_INET6;
		char a[INET6_ADDRSTRLEN], b[INET6_ADDRSTRLEN];

		ids[i] = pk[i].fp_id;
		inet_ntop(af, pk[i].ends[1], a, sizeof(a));
		inet_ntop(af, pk[i].ends[0], b, sizeof(b));
		say(c, "flowcutd: release (cut by %s) conn %" PRIu64 " %s <-> %s: %s; taken out, "
		    "the host's rules judge it again\n", cut_by_name(pk[i].cut_by), pk[i].fp_id, a,
		    b, why);
	}
	done = fd_offload_release(c->off, ids, (size_t)npk);
	c->st.cut_released += (uint64_t)done;
	log_flush(c);
	printf("flowcutd: release of %ld cut connections: %ld taken out of the fast path in "
	       "%.2f ms\n", npk, done, fd_clock_ms_since(t0));
	fflush(stdout);
	free(ids);
	free(pk);
	return done;
}

long
fd_cut_release(struct fd_cut *c, const struct fc_list *in_force)
{
	return release_picked(c, released_by, (void *)in_force,
			      "no cut in force holds either end");
}

/* fd_cut_never's pick: a cut connection, by any trigger, with a never-cut end. */
static bool
never_protects(void *arg, const struct fd_offload_conn *oc)
{
	return never_end(arg, oc->family, oc->ends[0], oc->ends[1]) != NULL;
}

long
fd_cut_never(struct fd_cut *c, const struct fc_list *never)
{
	struct fc_list copy = { 0 };

	for (size_t i = 0; i < never->n; i++)
		if (fc_list_add(&copy, &never->r[i]) != 0) {
			fc_list_free(&copy);
			fprintf(stderr, "flowcutd: never_cut: no memory for its %zu ranges; the list "
				"before stays\n", never->n);
			return -ENOMEM;
		}
	fc_list_free(&c->never);
	fc_list_free(&c->said);		/* a new list: its addresses said anew */
	c->never = copy;
	if (c->never.n == 0)
		return 0;
	return release_picked(c, never_protects, c, "an end is never cut now (never_cut)");
}

/* fd_cut_releasable's pick: with nothing in force, every one an address cut. */
long
fd_cut_releasable(struct fd_cut *c)
{
	static const struct fc_list none;
	struct fd_offload_conn *pk = NULL;
	long n = fd_offload_pick(c->off, FD_OFFLOAD_CUT, released_by, (void *)&none, &pk);

	free(pk);
	return n;
}
