/* SPDX-License-Identifier: BSD-3-Clause */
/* npu_cmd: see npu_cmd.h. */
#include "npu_cmd.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

/* The wire's key is the fast path's (struct fc_key, include/flowcut/fc_cmd.h): no copy shims. */
_Static_assert(sizeof(struct fc_mflow_stats) == sizeof(struct fp_mflow_stats), "stats");
/* CONN_MODIFY_FP's mask is handed to the fast path as it is */
_Static_assert(FC_MOD_ACTION == FP_MOD_ACTION && FC_MOD_TIMEOUT == FP_MOD_TIMEOUT &&
	       FC_MOD_ACTIVE == FP_MOD_ACTIVE, "CONN_MODIFY_FP mask bits");

static bool
all_zero(const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		if (b[i])
			return false;
	return true;
}

static void
info_out(const struct fp_conn_info *in, struct fc_conn_info *out)
{
	memset(out, 0, sizeof(*out));
	out->id = in->id;
	out->state = in->state;
	out->verdict = in->verdict;
	out->reason = in->reason;
	out->fw_rev = in->fw_rev;
	for (int d = 0; d < 2; d++) {
		out->mf[d].key = in->mf[d].key;
		out->mf[d].nhop = in->mf[d].nhop;
		out->mf[d].action = in->mf[d].action;
		out->mf[d].active = in->mf[d].active;
		out->mf[d].nat = in->mf[d].nat;
		out->mf[d].timeout_s = in->mf[d].timeout_s;
		memcpy(&out->mf[d].stats, &in->mf[d].stats, sizeof(out->mf[d].stats));
		out->mf[d].first_fwd_us = fc_first_fwd_us(in->mf[d].first_fwd,
							  in->mf[d].stats.last_seen);
	}
}

/* Each opcode: its payload size and its handler. */
struct handler {
	uint16_t len;
	int (*fn)(const struct npu_cmd_env *env, const void *p, uint64_t now, void *ans,
		  uint16_t *alen);
};

static int
do_rev(const struct npu_cmd_env *env, const void *p, uint64_t now, void *ans,
        uint16_t *alen)
{
	struct fp *fp = env->fp;

	const struct fc_cmd_rev *c = p;

	(void)now; (void)ans; (void)alen;
	fp_fw_rev_set(fp, c->rev);
	return 0;
}

static int
do_cfg_set(const struct npu_cmd_env *env, const void *p, uint64_t now, void *ans,
            uint16_t *alen)
{
	struct fp *fp = env->fp;

	const struct fc_cmd_cfg *c = p;

	(void)now; (void)ans; (void)alen;
	return fp_cfg_set(fp, c->fw_cfg);
}

static int
do_cfg_get(const struct npu_cmd_env *env, const void *p, uint64_t now, void *ans,
            uint16_t *alen)
{
	struct fp *fp = env->fp;

	struct fc_ans_cfg *a = ans;

	(void)p; (void)now;
	a->fw_cfg = fp_cfg_get(fp);
	a->fw_rev = fp_fw_rev_get(fp);
	*alen = sizeof(*a);
	return 0;
}

static int
do_lif(const struct npu_cmd_env *env, const void *p, uint64_t now, void *ans,
        uint16_t *alen)
{
	struct fp *fp = env->fp;

	const struct fc_cmd_lif *c = p;
	struct fp_lif l = { .port = c->port, .vlan = c->vlan, .mtu = c->mtu,
			    .admin_disabled = c->flags & FC_LIF_ADMIN_DISABLED,
			    .offload_disabled = c->flags & FC_LIF_OFFLOAD_DISABLED };

	(void)now; (void)ans; (void)alen;
	if (c->zero || (c->flags & ~(FC_LIF_ADMIN_DISABLED | FC_LIF_OFFLOAD_DISABLED)))
		return -EINVAL;
	memcpy(l.mac, c->mac, 6);
	return fp_lif_set(fp, c->id, &l);
}

static int
do_lif_read(const struct npu_cmd_env *env, const void *p, uint64_t now, void *ans,
             uint16_t *alen)
{
	struct fp *fp = env->fp;

	const struct fc_cmd_lif_read *c = p;
	struct fc_cmd_lif *a = ans;
	struct fp_lif l;
	int rc;

	(void)now;
	if (c->zero)
		return -EINVAL;
	rc = fp_lif_get(fp, c->id, &l);
	if (rc != 0)
		return rc;
	memset(a, 0, sizeof(*a));
	a->id = c->id;
	a->port = l.port;
	a->vlan = l.vlan;
	a->mtu = l.mtu;
	memcpy(a->mac, l.mac, 6);
	a->flags = (uint8_t)((l.admin_disabled ? FC_LIF_ADMIN_DISABLED : 0) |
			     (l.offload_disabled ? FC_LIF_OFFLOAD_DISABLED : 0));
	*alen = sizeof(*a);
	return 0;
}

static int
do_nhop(const struct npu_cmd_env *env, const void *p, uint64_t now, void *ans,
         uint16_t *alen)
{
	struct fp *fp = env->fp;

	const struct fc_cmd_nhop *c = p;
	struct fp_nhop n = { .port = c->port, .vlan = c->vlan, .mtu = c->mtu,
			     .resolved = c->flags & FC_NHOP_RESOLVED };

	(void)now; (void)ans; (void)alen;
	if (c->zero || c->rev || (c->flags & ~(FC_NHOP_RESOLVED | FC_NHOP_REUSED)))
		return -EINVAL;
	memcpy(n.dmac, c->dmac, 6);
	memcpy(n.smac, c->smac, 6);
	return fp_nhop_set(fp, c->id, &n, c->flags & FC_NHOP_REUSED);
}

static int
do_nhop_read(const struct npu_cmd_env *env, const void *p, uint64_t now, void *ans,
              uint16_t *alen)
{
	struct fp *fp = env->fp;

	const struct fc_cmd_nhop_read *c = p;
	struct fc_cmd_nhop *a = ans;
	struct fp_nhop n;
	uint32_t rev;
	int rc;

	(void)now;
	rc = fp_nhop_get(fp, c->id, &n, &rev);
	if (rc != 0)
		return rc;
	memset(a, 0, sizeof(*a));
	a->id = c->id;
	a->port = n.port;
	a->vlan = n.vlan;
	a->mtu = n.mtu;
	a->flags = n.resolved ? FC_NHOP_RESOLVED : 0;
	memcpy(a->dmac, n.dmac, 6);
	memcpy(a->smac, n.smac, 6);
	a->rev = rev;
	*alen = sizeof(*a);
	return 0;
}

static int
mflow_active(struct fp *fp, const void *p, bool active)
{
	const struct fc_cmd_mflow *c = p;
	struct fp_conn_mod mod = { .mask = FP_MOD_ACTIVE };
	struct fp_conn_info ci;
	int rc;

	if (c->dir > 1 || !all_zero(c->zero, sizeof(c->zero)))
		return -EINVAL;
	rc = fp_conn_get(fp, c->id, &ci);
	if (rc != 0)
		return rc;
	mod.active[0] = ci.mf[0].active;
	mod.active[1] = ci.mf[1].active;
	mod.active[c->dir] = active;
	return fp_conn_modify(fp, c->id, &mod);
}

static int
do_mflow_program(const struct npu_cmd_env *env, const void *p, uint64_t now, void *ans,
                  uint16_t *alen)
{
	struct fp *fp = env->fp;

	(void)now; (void)ans; (void)alen;
	return mflow_active(fp, p, true);
}

static int
do_mflow_invalidate(const struct npu_cmd_env *env, const void *p, uint64_t now, void *ans,
                     uint16_t *alen)
{
	struct fp *fp = env->fp;

	(void)now; (void)ans; (void)alen;
	return mflow_active(fp, p, false);
}

static int
do_flow_create(const struct npu_cmd_env *env, const void *p, uint64_t now, void *ans,
                uint16_t *alen)
{
	struct fp *fp = env->fp;

	const struct fc_cmd_flow_create *c = p;
	struct fc_ans_conn_id *a = ans;
	struct fp_conn_spec s = { .verdict = c->verdict };
	fp_conn_id id;
	int rc;

	if (!all_zero(c->zero, sizeof(c->zero)))
		return -EINVAL;
	for (int d = 0; d < 2; d++) {
		s.mf[d].key = c->mf[d].key;
		s.mf[d].nhop = c->mf[d].nhop;
		s.mf[d].action = c->mf[d].action;
		s.mf[d].tcp_wscale = c->mf[d].wscale;
		s.mf[d].timeout_s = c->mf[d].timeout_s;
	}
	rc = fp_conn_create(fp, &s, now, &id);
	if (rc != 0)
		return rc;
	a->id = id;
	*alen = sizeof(*a);
	return 0;
}

static int
do_conn_modify(const struct npu_cmd_env *env, const void *p, uint64_t now, void *ans,
                uint16_t *alen)
{
	struct fp *fp = env->fp;

	const struct fc_cmd_conn_modify *c = p;
	struct fp_conn_mod m = { .mask = c->mask };

	(void)now; (void)ans; (void)alen;
	if (c->zero || c->active[0] > 1 || c->active[1] > 1)
		return -EINVAL;
	for (int d = 0; d < 2; d++) {
		m.action[d] = c->action[d];
		m.timeout_s[d] = c->timeout_s[d];
		m.active[d] = c->active[d];
	}
	return fp_conn_modify(fp, c->id, &m);
}

static int
do_verdict(const struct npu_cmd_env *env, const void *p, uint64_t now, void *ans,
            uint16_t *alen)
{
	struct fp *fp = env->fp;

	const struct fc_cmd_conn_verdict *c = p;

	(void)now; (void)ans; (void)alen;
	if (!all_zero(c->zero, sizeof(c->zero)))
		return -EINVAL;
	return fp_conn_verdict_set(fp, c->id, c->verdict);
}

static int
do_reclaim(const struct npu_cmd_env *env, const void *p, uint64_t now, void *ans,
            uint16_t *alen)
{
	struct fp *fp = env->fp;

	const struct fc_cmd_conn_id *c = p;
	struct fp_mflow_stats st[2];
	int rc;

	(void)now;
	rc = fp_conn_remove(fp, c->id, st);
	if (rc != 0)
		return rc;
	memcpy(ans, st, sizeof(struct fc_ans_reclaim));
	*alen = sizeof(struct fc_ans_reclaim);
	return 0;
}

static int
do_revive(const struct npu_cmd_env *env, const void *p, uint64_t now, void *ans,
           uint16_t *alen)
{
	struct fp *fp = env->fp;

	const struct fc_cmd_conn_id *c = p;

	(void)now; (void)ans; (void)alen;
	return fp_conn_revive(fp, c->id);
}

static int
do_read_id(const struct npu_cmd_env *env, const void *p, uint64_t now, void *ans,
            uint16_t *alen)
{
	struct fp *fp = env->fp;

	const struct fc_cmd_conn_id *c = p;
	struct fp_conn_info ci;
	int rc;

	(void)now;
	rc = fp_conn_get(fp, c->id, &ci);
	if (rc != 0)
		return rc;
	info_out(&ci, ans);
	*alen = sizeof(struct fc_conn_info);
	return 0;
}

static int
do_read_key(const struct npu_cmd_env *env, const void *p, uint64_t now, void *ans,
             uint16_t *alen)
{
	struct fp *fp = env->fp;

	struct fc_key k;
	struct fp_conn_info ci;
	fp_conn_id id;
	int rc;

	(void)now;
	memcpy(&k, p, sizeof(k));	/* the payload may be unaligned */
	rc = fp_conn_lookup(fp, &k, &id, NULL);
	if (rc == 0)
		rc = fp_conn_get(fp, id, &ci);
	if (rc != 0)
		return rc;
	info_out(&ci, ans);
	*alen = sizeof(struct fc_conn_info);
	return 0;
}

static int
do_read_range(const struct npu_cmd_env *env, const void *p, uint64_t now, void *ans,
               uint16_t *alen)
{
	struct fp *fp = env->fp;

	const struct fc_cmd_range *c = p;
	struct fc_ans_range *a = ans;
	uint32_t slot = c->first, max = c->max;

	(void)now;
	if (max == 0 || max > FC_RANGE_MAX)
		return -EINVAL;
	a->count = 0;
	while (a->count < max) {
		struct fp_conn_info ci;

		if (fp_conn_next(fp, &slot, &ci) != 0)
			break;
		info_out(&ci, &a->conn[a->count++]);
	}
	a->next = slot;
	*alen = (uint16_t)(offsetof(struct fc_ans_range, conn) +
			   a->count * sizeof(struct fc_conn_info));
	return 0;
}

static void
brief_out(const struct fp_conn_info *in, struct fc_conn_brief *out)
{
	uint64_t s0 = in->mf[0].stats.last_seen, s1 = in->mf[1].stats.last_seen;

	out->id = in->id;
	out->state = in->state;
	out->verdict = in->verdict;
	out->reason = in->reason;
	out->actions = (uint8_t)((in->mf[0].action & 0xfu) | (in->mf[1].action & 0xfu) << 4);
	out->fw_rev = in->fw_rev;
	out->last_seen = s0 > s1 ? s0 : s1;
	out->key[0] = in->mf[0].key;
	out->key[1] = in->mf[1].key;
}

/* CONN_READ_BRIEF: the window first..end-1 (end 0: the table's end), FC_BRIEF_MAX at most. */
static int
do_read_brief(const struct npu_cmd_env *env, const void *p, uint64_t now, void *ans,
	      uint16_t *alen)
{
	const struct fc_cmd_brief *c = p;
	struct fc_ans_brief *a = ans;
	uint32_t size = fp_conn_capacity(env->fp);
	uint32_t slot = c->first, end = c->end ? c->end : size;

	(void)now;
	if (c->first >= size || end > size)
		return -ERANGE;
	if (end <= c->first)
		return -EINVAL;
	a->count = 0;
	while (a->count < FC_BRIEF_MAX) {
		struct fp_conn_info ci;

		if (fp_conn_next_before(env->fp, &slot, end, &ci) != 0)
			break;
		brief_out(&ci, &a->conn[a->count++]);
	}
	a->next = slot;
	*alen = (uint16_t)(offsetof(struct fc_ans_brief, conn) +
			   a->count * sizeof(struct fc_conn_brief));
	return 0;
}

static int
do_table_stats(const struct npu_cmd_env *env, const void *p, uint64_t now, void *ans,
                uint16_t *alen)
{
	struct fp *fp = env->fp;

	struct fc_ans_table_stats *a = ans;

	(void)p; (void)now;
	a->conns = fp_conn_count(fp);
	a->capacity = fp_conn_capacity(fp);
	*alen = sizeof(*a);
	return 0;
}

static int
do_counters(const struct npu_cmd_env *env, const void *p, uint64_t now, void *ans,
             uint16_t *alen)
{
	struct fp *fp = env->fp;

	struct fc_ans_counters *a = ans;

	(void)p; (void)now;
	a->count = FC_CNT_MAX;
	a->zero = 0;
	fp_counters_read(fp, a->value);
	if (env->npu_counters)
		env->npu_counters(env->arg, a->value);
	*alen = sizeof(*a);
	return 0;
}

static int
do_counters_clear(const struct npu_cmd_env *env, const void *p, uint64_t now, void *ans,
                   uint16_t *alen)
{
	struct fp *fp = env->fp;

	(void)p; (void)now; (void)ans; (void)alen;
	fp_counters_clear(fp);
	if (env->npu_clear)
		env->npu_clear(env->arg);
	return 0;
}

static void
lease_answer(const struct fp_lease *l, struct fc_ans_lease *a)
{
	memset(a, 0, sizeof(*a));
	a->state = l->state;
	a->lapses = l->lapses;
	a->ms = l->ms;
	a->left_ms = (uint32_t)((l->left_ns + 999999) / 1000000);
}

static int
do_lease(const struct npu_cmd_env *env, const void *p, uint64_t now, void *ans,
	 uint16_t *alen)
{
	const struct fc_cmd_lease *c = p;
	struct fp_lease l;
	int rc;

	if (env->client != 0)
		return -EPERM;	/* the lease is flowcutd's, on slot 0 */
	rc = fp_lease_renew(env->fp, now, c->ms, c->ack, &l);
	if (rc != 0)
		return rc;
	lease_answer(&l, ans);
	*alen = sizeof(struct fc_ans_lease);
	return 0;
}

static int
do_lease_read(const struct npu_cmd_env *env, const void *p, uint64_t now, void *ans,
	      uint16_t *alen)
{
	struct fp_lease l;

	(void)p;
	fp_lease_tick(env->fp, now);
	fp_lease_get(env->fp, now, &l);
	lease_answer(&l, ans);
	*alen = sizeof(struct fc_ans_lease);
	return 0;
}

static const struct handler *
handler_of(unsigned int op)
{
#define H(op_, type, fn_) [FC_CMD_##op_] = { (uint16_t)(type), fn_ }
	static const struct handler table[] = {
		H(FW_STATE_REV_SET, sizeof(struct fc_cmd_rev), do_rev),
		H(FW_CFG_PARAMS_SET, sizeof(struct fc_cmd_cfg), do_cfg_set),
		H(FW_CFG_PARAMS_GET, 0, do_cfg_get),
		H(LIF_ADD_UPDATE, sizeof(struct fc_cmd_lif), do_lif),
		H(LIF_READ, sizeof(struct fc_cmd_lif_read), do_lif_read),
		H(NHOP_PROGRAM, sizeof(struct fc_cmd_nhop), do_nhop),
		H(NHOP_READ, sizeof(struct fc_cmd_nhop_read), do_nhop_read),
		H(MFLOW_PROGRAM, sizeof(struct fc_cmd_mflow), do_mflow_program),
		H(MFLOW_INVALIDATE, sizeof(struct fc_cmd_mflow), do_mflow_invalidate),
		H(FLOW_CREATE_FP, sizeof(struct fc_cmd_flow_create), do_flow_create),
		H(CONN_MODIFY_FP, sizeof(struct fc_cmd_conn_modify), do_conn_modify),
		H(CONN_MODIFY_FP_VERDICT, sizeof(struct fc_cmd_conn_verdict), do_verdict),
		H(CONN_RECLAIM_FP, sizeof(struct fc_cmd_conn_id), do_reclaim),
		H(CONN_REVIVE_FP, sizeof(struct fc_cmd_conn_id), do_revive),
		H(CONN_READ_BY_ID, sizeof(struct fc_cmd_conn_id), do_read_id),
		H(CONN_READ_BY_KEY, sizeof(struct fc_key), do_read_key),
		H(CONN_READ_RANGE, sizeof(struct fc_cmd_range), do_read_range),
		H(CONN_READ_BRIEF, sizeof(struct fc_cmd_brief), do_read_brief),
		H(TABLE_STATS_READ, 0, do_table_stats),
		H(COUNTER_READ, 0, do_counters),
		H(COUNTER_CLEAR, 0, do_counters_clear),
		H(HOST_LEASE, sizeof(struct fc_cmd_lease), do_lease),
		H(HOST_LEASE_READ, 0, do_lease_read),
	};
#undef H
	if (op >= sizeof(table) / sizeof(table[0]) || table[op].fn == NULL)
		return NULL;
	return &table[op];
}

void
npu_cmd_exec(const struct npu_cmd_env *env, const struct fc_cmd_hdr *hdr,
	     const void *payload, uint64_t now, struct fc_ans_hdr *ans, void *ans_payload)
{
	const struct handler *h = handler_of(hdr->op);
	/* aligned copies: the link's payload bytes may sit anywhere */
	uint64_t in[FC_CMD_MAX_PAYLOAD / 8 + 1];
	uint64_t out[FC_CMD_MAX_PAYLOAD / 8 + 1];
	uint16_t alen = 0;

	ans->op = hdr->op;
	ans->tag = hdr->tag;
	ans->zero = 0;
	ans->len = 0;
	if (h == NULL) {
		ans->rc = -EOPNOTSUPP;
		return;
	}
	if (hdr->len != h->len || hdr->len > FC_CMD_MAX_PAYLOAD) {
		ans->rc = -EBADMSG;
		return;
	}
	memcpy(in, payload, hdr->len);
	ans->rc = h->fn(env, in, now, out, &alen);
	if (ans->rc == 0) {
		ans->len = alen;
		memcpy(ans_payload, out, alen);
	}
}

void
npu_cmd_event(const struct fp_event *in, struct lk_event *out)
{
	memset(out, 0, sizeof(*out));
	out->type = in->type;
	out->reason = in->reason;
	out->id = in->id;
	memcpy(out->key, in->key, sizeof(out->key));
	memcpy(out->stats, in->stats, sizeof(out->stats));
}
