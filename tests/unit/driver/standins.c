/* SPDX-License-Identifier: BSD-3-Clause */
/* standins: see standins.h. */
#include "standins.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <libnetfilter_conntrack/libnetfilter_conntrack.h>
#include <linux/netfilter/nf_conntrack_tcp.h>

#include "fd_nhop.h"
#include "fd_offload.h"

/* ---- what the binding did, in order: "OP field=value; ..." ---- */

char si_cmd_log[SI_LOG_MAX], si_ct_log[SI_LOG_MAX], si_all_log[SI_LOG_MAX];
struct si_seq si_seq[SI_SEQ_MAX];
unsigned int si_nseq;
struct si_counts si_counts;

static void
append(char *log, const char *fmt, va_list ap)
{
	size_t len = strlen(log);
	int n;

	if (len + 3 >= SI_LOG_MAX)
		return;		/* full: the rest left off */
	if (len > 0) {
		memcpy(log + len, "; ", 3);
		len += 2;
	}
	n = vsnprintf(log + len, SI_LOG_MAX - len, fmt, ap);
	if (n < 0)
		log[len] = '\0';
}

/* One step, in its own log and in the sequence of both. */
static void __attribute__((format(printf, 2, 3)))
say(char *log, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	append(log, fmt, ap);
	va_end(ap);
	va_start(ap, fmt);
	append(si_all_log, fmt, ap);
	va_end(ap);
}

static void
mark(enum si_mark m, unsigned int sport)
{
	if (si_nseq < SI_SEQ_MAX)
		si_seq[si_nseq++] = (struct si_seq){ .mark = m, .sport = sport };
}

void
si_log_reset(void)
{
	si_cmd_log[0] = si_ct_log[0] = si_all_log[0] = '\0';
	si_nseq = 0;
	memset(&si_counts, 0, sizeof(si_counts));
}

/* ---- the coprocessor, as the commands see it: a table of slots ---- */

#define FP_PAGE 8	/* the slots one CONN_READ_RANGE reads */

static struct {
	bool used;
	struct fc_conn_info ci;
} fp_slot[SI_FP_SLOTS];
static uint64_t fp_next_id;
uint32_t si_fp_rev;
uint16_t si_refuse;
bool si_hold_answers;

/* A key of the revision in force held already: FLOW_CREATE_FP is refused -EEXIST, as fp_conn.c's keys_claim. */
static bool
fp_key_held(const struct fc_mflow_spec mf[2])
{
	for (unsigned int i = 0; i < SI_FP_SLOTS; i++)
		for (int d = 0; d < 2 && fp_slot[i].used && fp_slot[i].ci.fw_rev == si_fp_rev; d++)
			for (int k = 0; k < 2; k++)
				if (memcmp(&fp_slot[i].ci.mf[d].key, &mf[k].key, sizeof(mf[k].key)) == 0)
					return true;
	return false;
}

static int
fp_slot_of(uint64_t id)
{
	/* ids are handed out in order: its slot is most often id - 1 (a hint, checked) */
	if (id >= 1 && id <= SI_FP_SLOTS && fp_slot[id - 1].used && fp_slot[id - 1].ci.id == id)
		return (int)(id - 1);
	for (int i = 0; i < SI_FP_SLOTS; i++)
		if (fp_slot[i].used && fp_slot[i].ci.id == id)
			return i;
	return -1;
}

struct fc_conn_info *
si_fp_conn(uint64_t id)
{
	int i = fp_slot_of(id);

	return i < 0 ? NULL : &fp_slot[i].ci;
}

uint64_t
si_fp_add(uint64_t id, const struct fc_mflow_spec mf[2], uint8_t verdict)
{
	for (unsigned int i = 0; i < SI_FP_SLOTS; i++) {
		struct fc_conn_info *ci = &fp_slot[i].ci;

		if (fp_slot[i].used)
			continue;
		fp_slot[i].used = true;
		*ci = (struct fc_conn_info){ .id = id, .state = FC_CONN_VALID, .verdict = verdict,
					     .fw_rev = si_fp_rev };
		for (int d = 0; d < 2; d++) {
			ci->mf[d].key = mf[d].key;
			ci->mf[d].nhop = mf[d].nhop;
			ci->mf[d].action = mf[d].action;
			ci->mf[d].timeout_s = mf[d].timeout_s;
		}
		return id;
	}
	fail_msg("the stand-in coprocessor's table is full");
	return 0;
}

void
si_fp_del(uint64_t id)
{
	int i = fp_slot_of(id);

	if (i >= 0)
		fp_slot[i].used = false;
}

void
si_fp_boot(void)
{
	memset(fp_slot, 0, sizeof(fp_slot));
}

static uint64_t
id_of(const void *p)
{
	return ((const struct fc_cmd_conn_id *)p)->id;
}

/* A connection's drop answered: its action or verdict set, marked by its client's port. */
static int
drop(int slot, const char *name, uint64_t id, const struct fc_cmd_conn_modify *m,
     const struct fc_cmd_conn_verdict *v)
{
	struct fc_conn_info *ci;

	if (m != NULL)
		say(si_cmd_log, "%s id=%" PRIu64 " action=%s,%s", name, id,
		    fc_action_name(m->action[0]), fc_action_name(m->action[1]));
	else
		say(si_cmd_log, "%s id=%" PRIu64 " verdict=%s", name, id,
		    fc_verdict_name(v->verdict));
	if (slot < 0)
		return -ENOENT;
	ci = &fp_slot[slot].ci;
	if (m != NULL && (m->mask & FC_MOD_ACTION))
		for (int d = 0; d < 2; d++)
			ci->mf[d].action = m->action[d];
	if (v != NULL)
		ci->verdict = v->verdict;
	if ((m != NULL && m->action[0] == FC_ACTION_DROP) ||
	    (v != NULL && v->verdict == FC_VERDICT_DROP))
		mark(SI_DROPPED, ntohs(ci->mf[0].key.sport));
	return 0;
}

/* One command answered: its rc, the answer in ans (*alen bytes of cap). */
static int
answer(uint16_t op, const void *p, void *ans, uint16_t cap, uint16_t *alen)
{
	const char *name = fc_cmd_name(op);
	_Alignas(8) uint8_t out[FC_CMD_MAX_PAYLOAD];	/* read as the answers' structs */
	size_t n = 0;
	int rc = 0;

	memset(out, 0, sizeof(out));
	*alen = 0;
	if (si_refuse != 0 && op == si_refuse) {
		say(si_cmd_log, "%s refused", name);
		return -EINVAL;
	}
	switch (op) {
	case FC_CMD_NHOP_PROGRAM:
		say(si_cmd_log, "%s port=%u", name, ((const struct fc_cmd_nhop *)p)->port);
		break;
	case FC_CMD_FLOW_CREATE_FP: {
		const struct fc_cmd_flow_create *c = p;
		struct fc_ans_conn_id a;

		if (fp_key_held(c->mf)) {
			say(si_cmd_log, "%s sport=%u: -EEXIST", name, ntohs(c->mf[0].key.sport));
			return -EEXIST;
		}
		a.id = si_fp_add(fp_next_id++, c->mf, c->verdict);

		say(si_cmd_log, "%s sport=%u verdict=%s action=%s", name,
		    ntohs(c->mf[0].key.sport), fc_verdict_name(c->verdict),
		    fc_action_name(c->mf[0].action));
		if (c->verdict == FC_VERDICT_DROP)
			mark(SI_DROPPED, ntohs(c->mf[0].key.sport));
		memcpy(out, &a, n = sizeof(a));
		break;
	}
	case FC_CMD_CONN_MODIFY_FP:
		rc = drop(fp_slot_of(id_of(p)), name, id_of(p), p, NULL);
		break;
	case FC_CMD_CONN_MODIFY_FP_VERDICT:
		rc = drop(fp_slot_of(id_of(p)), name, id_of(p), NULL, p);
		break;
	case FC_CMD_CONN_RECLAIM_FP:
	case FC_CMD_CONN_REVIVE_FP:
	case FC_CMD_CONN_READ_BY_ID: {
		int slot = fp_slot_of(id_of(p));

		say(si_cmd_log, "%s id=%" PRIu64, name, id_of(p));
		if (slot < 0)
			return -ENOENT;
		if (op == FC_CMD_CONN_READ_BY_ID) {
			memcpy(out, &fp_slot[slot].ci, n = sizeof(fp_slot[slot].ci));
		} else if (op == FC_CMD_CONN_RECLAIM_FP) {
			struct fc_ans_reclaim r = { .mf = { fp_slot[slot].ci.mf[0].stats,
							    fp_slot[slot].ci.mf[1].stats } };

			fp_slot[slot].used = false;
			memcpy(out, &r, n = sizeof(r));	/* the final counts: the slot's */
		}
		break;
	}
	case FC_CMD_CONN_READ_RANGE: {
		const struct fc_cmd_range *r = p;
		struct fc_ans_range *a = (struct fc_ans_range *)out;
		unsigned int end = r->first + FP_PAGE < SI_FP_SLOTS ? r->first + FP_PAGE : SI_FP_SLOTS;

		say(si_cmd_log, "%s first=%u", name, r->first);
		for (unsigned int i = r->first; i < end; i++)
			if (fp_slot[i].used)
				a->conn[a->count++] = fp_slot[i].ci;
		a->next = end;
		n = offsetof(struct fc_ans_range, conn) + a->count * sizeof(a->conn[0]);
		break;
	}
	case FC_CMD_CONN_READ_BRIEF: {
		const struct fc_cmd_brief *r = p;
		struct fc_ans_brief *a = (struct fc_ans_brief *)out;
		unsigned int slot = r->first, end = r->end ? r->end : SI_FP_SLOTS;

		si_counts.briefs++;	/* counted, not logged: a table's read is 32 windows */
		if (r->first >= SI_FP_SLOTS || end > SI_FP_SLOTS)
			return -ERANGE;
		if (end <= r->first)
			return -EINVAL;
		for (; slot < end && a->count < FC_BRIEF_MAX; slot++) {
			const struct fc_conn_info *ci = &fp_slot[slot].ci;
			struct fc_conn_brief *b = &a->conn[a->count];

			if (!fp_slot[slot].used)
				continue;
			*b = (struct fc_conn_brief){ .id = ci->id, .state = ci->state,
						     .verdict = ci->verdict, .reason = ci->reason,
						     .fw_rev = ci->fw_rev,
						     .actions = (uint8_t)(ci->mf[0].action |
									  ci->mf[1].action << 4) };
			b->last_seen = ci->mf[0].stats.last_seen > ci->mf[1].stats.last_seen
				       ? ci->mf[0].stats.last_seen : ci->mf[1].stats.last_seen;
			b->key[0] = ci->mf[0].key;
			b->key[1] = ci->mf[1].key;
			a->count++;
		}
		a->next = slot;
		n = offsetof(struct fc_ans_brief, conn) + a->count * sizeof(a->conn[0]);
		break;
	}
	case FC_CMD_TABLE_STATS_READ: {
		struct fc_ans_table_stats a = { .capacity = SI_FP_SLOTS };

		for (unsigned int i = 0; i < SI_FP_SLOTS; i++)
			a.conns += fp_slot[i].used;
		say(si_cmd_log, "%s", name);
		memcpy(out, &a, n = sizeof(a));
		break;
	}
	case FC_CMD_FW_CFG_PARAMS_GET: {
		struct fc_ans_cfg a = { .fw_rev = si_fp_rev };

		say(si_cmd_log, "%s", name);
		memcpy(out, &a, n = sizeof(a));
		break;
	}
	case FC_CMD_FW_STATE_REV_SET:
		si_fp_rev = ((const struct fc_cmd_rev *)p)->rev;
		say(si_cmd_log, "%s rev=%u", name, si_fp_rev);
		break;
	default:
		say(si_cmd_log, "%s (not answered by the stand-in)", name);
		rc = -EOPNOTSUPP;
	}
	*alen = (uint16_t)(n < cap ? n : cap);
	if (ans != NULL)
		memcpy(ans, out, *alen);
	return rc;
}

static int
cmd_call(void *ctx, uint16_t op, const void *p, uint16_t len, void *ans, uint16_t cap)
{
	uint16_t alen;

	(void)ctx, (void)len;
	si_counts.sync_cmds++;
	return answer(op, p, ans, cap, &alen);
}

/* Posted commands wait for the flush, as the command client's do. */
#define POSTED_MAX 1024

static struct {
	uint16_t op;
	_Alignas(8) uint8_t p[sizeof(struct fc_cmd_flow_create)];	/* read as the commands' structs */
	fd_cmds_done_fn *done;
	void *dctx;
} posted[POSTED_MAX];
static unsigned int nposted;

static int
cmd_post(void *ctx, uint16_t op, const void *p, uint16_t len, fd_cmds_done_fn *done, void *dctx)
{
	(void)ctx;
	if (nposted == POSTED_MAX || len > sizeof(posted[0].p))
		return -ENOBUFS;
	posted[nposted].op = op;
	memcpy(posted[nposted].p, p, len);
	posted[nposted].done = done;
	posted[nposted++].dctx = dctx;
	si_counts.posted++;
	return 0;
}

static int
cmd_flush(void *ctx, int ms)
{
	(void)ctx;
	if (si_hold_answers && ms >= 0)
		return nposted > 0 ? -ETIMEDOUT : 0;
	if (nposted > 0)
		si_counts.flushes++;
	for (unsigned int i = 0; i < nposted; i++) {
		static _Alignas(8) uint8_t ans[FC_CMD_MAX_PAYLOAD];
		uint16_t alen;
		int rc = answer(posted[i].op, posted[i].p, ans, sizeof(ans), &alen);

		posted[i].done(posted[i].dctx, rc, ans, alen);
	}
	nposted = 0;
	return 0;
}

const struct fd_cmds si_cmds = { .call = cmd_call, .post = cmd_post, .flush = cmd_flush };

/* ---- conntrack, as fd_ct_io sees it: the states it holds, events queued ---- */

struct nf_conntrack *si_host[SI_HOST_MAX];
static struct {
	enum fd_ct_event type;
	struct nf_conntrack *ct;
} evq[SI_HOST_MAX];
static unsigned int nevq;

/* kills posted, not sent yet: each its tuple (a copy, as fd_ct builds its message) */
static struct {
	struct nf_conntrack *t;
	fd_ct_done_fn *done;
	void *arg;
} killq[SI_KILL_BATCH];
static unsigned int nkillq;

static unsigned int
sport(const struct nf_conntrack *t)
{
	return ntohs(nfct_get_attr_u16(t, ATTR_ORIG_PORT_SRC));
}

struct nf_conntrack **
si_host_find(const struct nf_conntrack *t)
{
	static unsigned int hint[65536];	/* where each name was last found (checked) */
	unsigned int p = sport(t);

	if (si_host[hint[p]] != NULL && sport(si_host[hint[p]]) == p)
		return &si_host[hint[p]];
	for (unsigned int i = 0; i < SI_HOST_MAX; i++)
		if (si_host[i] != NULL && sport(si_host[i]) == p) {
			hint[p] = i;
			return &si_host[i];
		}
	return NULL;
}

int si_ct_events_rc;
uint64_t si_now_ns;

static uint64_t
si_clock(void)
{
	return si_now_ns;
}

static int
ct_events(void *ctx, unsigned int max, fd_ct_event_fn *cb, void *arg)
{
	unsigned int n = nevq;
	int rc = si_ct_events_rc;

	(void)ctx, (void)max;
	nevq = 0;
	for (unsigned int i = 0; i < n; i++) {
		cb(arg, evq[i].type, evq[i].ct, false);
		nfct_destroy(evq[i].ct);
	}
	si_ct_events_rc = 0;
	return rc != 0 ? rc : n > 0;
}

static void
ct_drain(void *ctx)
{
	(void)ctx;
	say(si_ct_log, "drain");
	for (unsigned int i = 0; i < nevq; i++)
		nfct_destroy(evq[i].ct);
	nevq = 0;
}

static struct nf_conntrack *
ct_get(void *ctx, const struct nf_conntrack *t)
{
	struct nf_conntrack **h = si_host_find(t);

	(void)ctx;
	si_counts.sync_ct++;
	say(si_ct_log, "get sport=%u", sport(t));
	return h ? nfct_clone(*h) : NULL;
}

static int
ct_dump(void *ctx, struct nf_conntrack ***out, size_t *n)
{
	(void)ctx;
	say(si_ct_log, "dump");
	*out = calloc(SI_HOST_MAX, sizeof(**out));
	assert_non_null(*out);
	*n = 0;
	for (unsigned int i = 0; i < SI_HOST_MAX; i++)
		if (si_host[i] != NULL)
			(*out)[(*n)++] = nfct_clone(si_host[i]);
	return 0;
}

static int
ct_mark(void *ctx, const struct nf_conntrack *t, uint32_t mark, uint32_t mask)
{
	struct nf_conntrack **h = si_host_find(t);

	(void)ctx;
	si_counts.sync_ct++;
	say(si_ct_log, "mark sport=%u mark=%#x mask=%#x", sport(t), mark, mask);
	if (h == NULL)
		return -ENOENT;
	nfct_set_attr_u32(*h, ATTR_MARK, (nfct_get_attr_u32(*h, ATTR_MARK) & ~mask) ^ mark);
	return 0;
}

static int
ct_tcp_loosen(void *ctx, const struct nf_conntrack *t)
{
	(void)ctx;
	si_counts.sync_ct++;
	say(si_ct_log, "tcp_loosen sport=%u", sport(t));
	return si_host_find(t) ? 0 : -ENOENT;
}

static int
ct_timeout(void *ctx, const struct nf_conntrack *t, uint32_t secs)
{
	struct nf_conntrack **h = si_host_find(t);

	(void)ctx;
	si_counts.sync_ct++;
	say(si_ct_log, "timeout sport=%u secs=%u", sport(t), secs);
	if (h == NULL)
		return -ENOENT;
	nfct_set_attr_u32(*h, ATTR_TIMEOUT, secs);	/* as a dump or a get reads it */
	return 0;
}

int
si_ct_kill(void *ctx, const struct nf_conntrack *t)
{
	struct nf_conntrack **h = si_host_find(t);

	(void)ctx;
	say(si_ct_log, "kill sport=%u", sport(t));
	mark(SI_KILLED, sport(t));
	if (h == NULL)
		return -ENOENT;
	nfct_destroy(*h);
	*h = NULL;
	return 0;
}

/* The synchronous kill, counted */
static int
ct_kill(void *ctx, const struct nf_conntrack *t)
{
	si_counts.sync_ct++;
	return si_ct_kill(ctx, t);
}

/* The kills posted, in one datagram: each answered, in order. */
static int
ct_kill_flush(void *ctx)
{
	unsigned int n = nkillq;

	if (n == 0)
		return 0;
	say(si_ct_log, "datagram kills=%u", n);
	if (si_counts.datagrams < SI_DATAGRAMS_MAX)
		si_counts.per_datagram[si_counts.datagrams] = n;
	si_counts.datagrams++;
	nkillq = 0;
	for (unsigned int i = 0; i < n; i++) {
		killq[i].done(killq[i].arg, si_ct_kill(ctx, killq[i].t));
		nfct_destroy(killq[i].t);
	}
	return (int)n;
}

/* Queued, as fd_ct_kill_post: a full batch sent first, so done may run inside a post. */
static int
ct_kill_post(void *ctx, const struct nf_conntrack *t, fd_ct_done_fn *done, void *arg)
{
	struct nf_conntrack *copy;

	if (nkillq == SI_KILL_BATCH)
		(void)ct_kill_flush(ctx);
	copy = nfct_clone(t);
	if (copy == NULL)
		return -EINVAL;
	killq[nkillq].t = copy;
	killq[nkillq].done = done;
	killq[nkillq++].arg = arg;
	si_counts.kill_posts++;
	return 0;
}

/* Updates and GETs posted, each queue answered in order at its flush (no datagrams counted). */
struct si_posted {
	struct nf_conntrack *t;
	struct fd_ct_update u;
	fd_ct_done_fn *done;		/* updates */
	fd_ct_state_fn *got;		/* GETs */
	void *arg;
};
static struct si_queue {
	struct si_posted q[SI_KILL_BATCH];
	unsigned int n;
} updq, getq;

static int
queue_flush(struct si_queue *sq)
{
	unsigned int n = sq->n;
	struct si_posted q[SI_KILL_BATCH];

	memcpy(q, sq->q, n * sizeof(q[0]));
	sq->n = 0;	/* a done may post again */
	for (unsigned int i = 0; i < n; i++) {
		struct nf_conntrack **h = si_host_find(q[i].t);

		if (q[i].got != NULL) {
			say(si_ct_log, "get sport=%u", sport(q[i].t));
			q[i].got(q[i].arg, h ? *h : NULL, h ? 0 : -ENOENT);
		} else {
			say(si_ct_log, "update sport=%u what=%#x timeout=%u mark=%#x mask=%#x",
			    sport(q[i].t), q[i].u.what, q[i].u.timeout, q[i].u.mark, q[i].u.mask);
			if (h != NULL && (q[i].u.what & FD_CT_UP_MARK))
				nfct_set_attr_u32(*h, ATTR_MARK, (nfct_get_attr_u32(*h, ATTR_MARK) &
								  ~q[i].u.mask) ^ q[i].u.mark);
			if (h != NULL && (q[i].u.what & FD_CT_UP_TIMEOUT))
				nfct_set_attr_u32(*h, ATTR_TIMEOUT, q[i].u.timeout);
			si_counts.updates++;
			q[i].done(q[i].arg, h ? 0 : -ENOENT);
		}
		nfct_destroy(q[i].t);
	}
	return (int)n;
}

static int
queue_post(struct si_queue *sq, const struct nf_conntrack *t, const struct si_posted *p)
{
	si_counts.ct_posted++;
	if (sq->n == SI_KILL_BATCH)
		(void)queue_flush(sq);
	sq->q[sq->n] = *p;
	sq->q[sq->n].t = nfct_clone(t);
	if (sq->q[sq->n].t == NULL)
		return -EINVAL;
	sq->n++;
	return 0;
}

static int
ct_update_post(void *ctx, const struct nf_conntrack *t, const struct fd_ct_update *u,
	       fd_ct_done_fn *done, void *arg)
{
	(void)ctx;
	return queue_post(&updq, t, &(struct si_posted){ .u = *u, .done = done, .arg = arg });
}

static int
ct_update_flush(void *ctx)
{
	(void)ctx;
	return queue_flush(&updq);
}

static int
ct_get_post(void *ctx, const struct nf_conntrack *t, fd_ct_state_fn *done, void *arg)
{
	(void)ctx;
	si_counts.get_posts++;
	return queue_post(&getq, t, &(struct si_posted){ .got = done, .arg = arg });
}

static int
ct_get_flush(void *ctx)
{
	(void)ctx;
	return queue_flush(&getq);
}

unsigned int si_dump_miss;

/* The dump being read: the states with (mark & mask) == mark, 8 a "datagram". */
static struct {
	bool on;
	uint32_t mark, mask;
	unsigned int next;	/* in si_host */
} dumping;

static int
ct_dump_start(void *ctx, uint32_t mark, uint32_t mask)
{
	(void)ctx;
	say(si_ct_log, "dump_start mark=%#x mask=%#x", mark, mask);
	dumping.on = true;
	dumping.mark = mark;
	dumping.mask = mask;
	dumping.next = 0;
	return 0;
}

static int
ct_dump_next(void *ctx, unsigned int max_datagrams, fd_ct_state_fn *cb, void *arg)
{
	unsigned int room = 8 * (max_datagrams ? max_datagrams : 1);
	int n = 0;

	(void)ctx;
	si_counts.dump_nexts++;
	if (max_datagrams > si_counts.dump_datagrams_max)
		si_counts.dump_datagrams_max = max_datagrams;
	for (; dumping.on && dumping.next < SI_HOST_MAX && room > 0; dumping.next++) {
		struct nf_conntrack *h = si_host[dumping.next];

		if (h == NULL || (nfct_get_attr_u32(h, ATTR_MARK) & dumping.mask) != dumping.mark ||
		    (si_dump_miss != 0 && sport(h) == si_dump_miss))
			continue;
		cb(arg, h, 0);
		n++;
		room--;
	}
	if (dumping.next == SI_HOST_MAX)
		dumping.on = false;
	return n;
}

uint64_t si_ct_events_lost;

static uint64_t
ct_events_lost(void *ctx)
{
	(void)ctx;
	return si_ct_events_lost;
}

static uint32_t
ct_established_timeout(void *ctx, uint8_t l4proto)
{
	(void)ctx;
	return l4proto == IPPROTO_TCP ? 432000 : 120;
}

const struct fd_ct_io si_ctio = {
	.events = ct_events, .drain = ct_drain, .get = ct_get, .dump = ct_dump, .mark = ct_mark,
	.tcp_loosen = ct_tcp_loosen, .timeout = ct_timeout, .kill = ct_kill,
	.kill_post = ct_kill_post, .kill_flush = ct_kill_flush,
	.update_post = ct_update_post, .update_flush = ct_update_flush,
	.get_post = ct_get_post, .get_flush = ct_get_flush, .dump_start = ct_dump_start,
	.dump_next = ct_dump_next, .events_lost = ct_events_lost,
	.established_timeout = ct_established_timeout,
};

/* ---- the host's routes: 198.18/16 and 2001:2::/48 out of port 0, the rest port 1 ---- */

static int
rt_path(void *ctx, int family, const uint8_t *dst, struct fd_hop *out)
{
	unsigned int port = family == 4 ? dst[1] != 18 : (dst[4] | dst[5]) != 0;

	(void)ctx;
	*out = (struct fd_hop){ .ifindex = SI_IFINDEX0 + port, .family = (uint8_t)family,
				.mac = { 2, 0, 0, 0, 0, (uint8_t)(0x10 + port) } };
	memcpy(out->nbr, dst, family == 4 ? 4 : 16);
	return 0;
}

static int
rt_get(void *ctx, int family, const uint8_t *dst, struct fd_hop *out)
{
	int rc = rt_path(ctx, family, dst, out);

	si_counts.route_gets++;
	out->resolved = true;
	return rc;
}

static int
rt_link_mtu(void *ctx, unsigned int ifindex, uint32_t *mtu)
{
	(void)ctx, (void)ifindex;
	*mtu = 1500;
	return 0;
}

static int
rt_neigh_get(void *ctx, unsigned int ifindex, int family, const uint8_t *addr, uint8_t mac[6],
	     bool *resolved)
{
	(void)ctx, (void)family, (void)addr;
	memcpy(mac, (uint8_t[6]){ 2, 0, 0, 0, 0, (uint8_t)(0x10 + ifindex - SI_IFINDEX0) }, 6);
	*resolved = true;
	return 0;
}

const struct fd_route_io si_rtio = { .get = rt_get, .path = rt_path,
				     .link_mtu = rt_link_mtu, .neigh_get = rt_neigh_get };

/* ---- states, built as conntrack would send them ---- */

#define A (IPS_ASSURED | IPS_SEEN_REPLY | IPS_CONFIRMED)
#define EST TCP_CONNTRACK_ESTABLISHED
const struct si_st si_tcp4 = { AF_INET, IPPROTO_TCP, "198.18.0.10", "198.19.0.10", 40000, 80,
			       A, EST, SI_BIT | 0x5, NULL, false };
const struct si_st si_udp6 = { AF_INET6, IPPROTO_UDP, "2001:2::10", "2001:2:1::10", 40001, 53,
			       A, 0, SI_BIT, NULL, false };
const struct si_st si_syn4 = { AF_INET, IPPROTO_TCP, "198.18.0.10", "198.19.0.10", 40002, 80,
			       IPS_CONFIRMED, TCP_CONNTRACK_SYN_SENT, SI_BIT | 0x700, NULL, false };

static void
set_addr(struct nf_conntrack *ct, int family, enum nf_conntrack_attr v4,
	 enum nf_conntrack_attr v6, const char *text)
{
	uint8_t a[16];

	assert_int_equal(inet_pton(family, text, a), 1);
	nfct_set_attr(ct, family == AF_INET ? v4 : v6, a);
}

struct nf_conntrack *
si_build(const struct si_st *s, uint32_t id)
{
	struct nf_conntrack *ct = nfct_new();
	const char *target = s->target ? s->target : s->server;

	assert_non_null(ct);
	nfct_set_attr_u8(ct, ATTR_ORIG_L3PROTO, (uint8_t)s->family);
	nfct_set_attr_u8(ct, ATTR_REPL_L3PROTO, (uint8_t)s->family);
	nfct_set_attr_u8(ct, ATTR_ORIG_L4PROTO, s->l4);
	nfct_set_attr_u8(ct, ATTR_REPL_L4PROTO, s->l4);
	set_addr(ct, s->family, ATTR_ORIG_IPV4_SRC, ATTR_ORIG_IPV6_SRC, s->client);
	set_addr(ct, s->family, ATTR_ORIG_IPV4_DST, ATTR_ORIG_IPV6_DST, s->server);
	set_addr(ct, s->family, ATTR_REPL_IPV4_SRC, ATTR_REPL_IPV6_SRC, target);
	set_addr(ct, s->family, ATTR_REPL_IPV4_DST, ATTR_REPL_IPV6_DST, s->client);
	nfct_set_attr_u16(ct, ATTR_ORIG_PORT_SRC, htons(s->cport));
	nfct_set_attr_u16(ct, ATTR_ORIG_PORT_DST, htons(s->sport));
	nfct_set_attr_u16(ct, ATTR_REPL_PORT_SRC, htons(s->sport));
	nfct_set_attr_u16(ct, ATTR_REPL_PORT_DST, htons(s->cport));
	nfct_set_attr_u32(ct, ATTR_STATUS, s->status | (s->target ? IPS_DST_NAT : 0));
	if (s->l4 == IPPROTO_TCP && !s->mark_only)
		nfct_set_attr_u8(ct, ATTR_TCP_STATE, s->tcp_state);
	nfct_set_attr_u32(ct, ATTR_MARK, s->mark);
	nfct_set_attr_u32(ct, ATTR_ID, id);
	return ct;
}

void
si_host_add(const struct si_st *s, uint32_t id)
{
	for (unsigned int i = 0; i < SI_HOST_MAX; i++)
		if (si_host[i] == NULL) {
			si_host[i] = si_build(s, id);
			return;
		}
	fail_msg("the stand-in conntrack is full");
}

void
si_event(enum fd_ct_event type, const struct si_st *s, uint32_t id)
{
	assert_true(nevq < SI_HOST_MAX);
	evq[nevq].type = type;
	evq[nevq++].ct = si_build(s, id);
}

/* ---- the binding over them ---- */

static struct fd_nhop *nhops;
struct fd_offload *si_off;
bool si_first_frame_reads;

struct fd_offload *
si_open(bool cut_in_hardware)
{
	struct fd_offload_cfg cfg = { .nports = 2, .ifindex = { SI_IFINDEX0, SI_IFINDEX0 + 1 },
				      .mac = { { 2, 0, 0, 0, 0, 1 }, { 2, 0, 0, 0, 0, 2 } },
				      .mark_bit = SI_BIT, .cut_in_hardware = cut_in_hardware,
				      .timeout_s = 30, .now_ns = si_clock,
				      .first_frame_reads = si_first_frame_reads };

	memset(fp_slot, 0, sizeof(fp_slot));
	fp_next_id = 1;
	si_fp_rev = 0;
	si_refuse = 0;
	si_hold_answers = false;
	si_ct_events_rc = 0;
	si_now_ns = 1000000000000ull;
	si_log_reset();
	nhops = fd_nhop_open(&si_cmds, cfg.nports, cfg.mac);
	assert_non_null(nhops);
	si_off = fd_offload_open(&si_cmds, &si_ctio, &si_rtio, nhops, &cfg);
	assert_non_null(si_off);
	return si_off;
}

void
si_close(void)
{
	fd_offload_close(si_off);
	si_off = NULL;
	fd_nhop_close(nhops);
	nhops = NULL;
	for (unsigned int i = 0; i < SI_HOST_MAX; i++) {
		if (si_host[i] != NULL)
			nfct_destroy(si_host[i]);
		si_host[i] = NULL;
	}
	for (unsigned int i = 0; i < nkillq; i++)
		nfct_destroy(killq[i].t);
	nkillq = 0;
	for (unsigned int i = 0; i < updq.n; i++)
		nfct_destroy(updq.q[i].t);
	for (unsigned int i = 0; i < getq.n; i++)
		nfct_destroy(getq.q[i].t);
	updq.n = getq.n = 0;
	dumping.on = false;
	si_dump_miss = 0;
	si_ct_events_lost = 0;
	nposted = 0;
	ct_drain(NULL);
}

void
si_offloaded(const struct si_st *s, uint32_t id)
{
	si_host_add(s, id);
	si_event(FD_CT_UPDATE, s, id);
	fd_offload_events(si_off);
}

void
si_fp_event(uint8_t type, uint8_t reason, uint64_t id)
{
	struct lk_event ev = { .type = type, .reason = reason, .id = id };

	fd_offload_fp_event(si_off, &ev);
}
