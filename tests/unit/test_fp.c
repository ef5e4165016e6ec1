/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The fast path against coprocessor-model.md, row by row.
 *
 * Every test gets a fresh fast path wired as the lab's appliance: port 0
 * faces the client, port 1 the server; next hop 0 leads to the server,
 * next hop 1 back to the client.  Frames are built and checked from
 * scratch by tests/lib/fc_frame.c; time is a virtual clock.  After every
 * test the counters must add up: received = wire + host + inspector + drop.
 */
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "fc_eal.h"
#include "fc_frame.h"
#include "fp.h"

#define S 1000000000ull		/* one second of virtual time */
#define MS 1000000ull		/* one millisecond of virtual time */

static struct rte_mempool *pool;
static unsigned int instance;

static const uint8_t LIF0_MAC[6] = { 0x02, 0, 0, 0, 0, 0x01 };
static const uint8_t LIF1_MAC[6] = { 0x02, 0, 0, 0, 0, 0x02 };
static const uint8_t CLIENT_MAC[6] = { 0x02, 0, 0, 0, 0, 0xa1 };
static const uint8_t SERVER_MAC[6] = { 0x02, 0, 0, 0, 0, 0xb2 };

struct t {
	struct fp *fp;
	struct fp_worker *w;
	uint64_t now;
	/* the last frame out of send() */
	uint8_t out[2048];
	size_t out_len;
};

/* ---- fixtures ---- */

static int
setup_on(void **state, bool own_heap)
{
	struct t *t = calloc(1, sizeof(*t));
	char name[16];
	struct fp_params p = { .max_conns = 64, .max_nhops = 16, .max_workers = 2,
			       .socket_id = SOCKET_ID_ANY };
	bool huge;
	struct fp_lif l0 = { .port = 0, .mtu = 1500 }, l1 = { .port = 1, .mtu = 1500 };
	struct fp_nhop n0 = { .port = 1, .mtu = 1500, .resolved = true };
	struct fp_nhop n1 = { .port = 0, .mtu = 1500, .resolved = true };

	snprintf(name, sizeof(name), "t%u", instance++);
	p.name = name;
	if (own_heap) {
		p.socket_id = fp_heap_create(name, &p, &huge);
		assert_true(p.socket_id >= 0);
	}
	t->fp = fp_create(&p);
	assert_non_null(t->fp);
	t->w = fp_worker_create(t->fp, 0);
	assert_non_null(t->w);
	memcpy(l0.mac, LIF0_MAC, 6);
	memcpy(l1.mac, LIF1_MAC, 6);
	assert_int_equal(fp_lif_set(t->fp, 0, &l0), 0);
	assert_int_equal(fp_lif_set(t->fp, 1, &l1), 0);
	memcpy(n0.dmac, SERVER_MAC, 6);
	memcpy(n0.smac, LIF1_MAC, 6);
	memcpy(n1.dmac, CLIENT_MAC, 6);
	memcpy(n1.smac, LIF0_MAC, 6);
	assert_int_equal(fp_nhop_set(t->fp, 0, &n0, false), 0);
	assert_int_equal(fp_nhop_set(t->fp, 1, &n1, false), 0);
	assert_int_equal(fp_cfg_set(t->fp, FC_CFG_OFFLOAD | FC_CFG_IPS), 0);
	t->now = 1000 * S;
	*state = t;
	return 0;
}

static int
setup(void **state)
{
	return setup_on(state, false);
}

/* The same fast path with its tables on fp_heap_create()'s heap. */
static int
setup_heap(void **state)
{
	return setup_on(state, true);
}

/* The model's invariant, then the teardown. */
static int
teardown(void **state)
{
	struct t *t = *state;
	uint64_t c[FC_CNT_MAX], sum[FC_CLS_MAX] = { 0 };

	fp_counters_read(t->fp, c);
	for (unsigned int i = 0; i < FC_CNT_MAX; i++)
		sum[fc_cnt_class(i)] += c[i];
	assert_int_equal(sum[FC_CLS_RX],
			 sum[FC_CLS_WIRE] + sum[FC_CLS_HOST] + sum[FC_CLS_IPS] + sum[FC_CLS_DROP]);
	assert_int_equal(sum[FC_CLS_KN_RX], sum[FC_CLS_KN_WIRE] + sum[FC_CLS_KN_DROP]);
	fp_worker_destroy(t->w);
	fp_destroy(t->fp);
	free(t);
	return 0;
}

/* ---- frames and connections ---- */

/* A frame of the original direction (client to server, on port 0). */
static struct fc_frame_spec
orig_frame(int family, uint8_t proto)
{
	struct fc_frame_spec s = { .payload = 18, .win = 1000, .tcp_flags = FP_TCP_ACK,
				   .seq = 1000, .ack = 5000 };

	memcpy(s.dmac, LIF0_MAC, 6);
	memcpy(s.smac, CLIENT_MAC, 6);
	if (family == 4)
		fc_key4(&s.key, proto, "198.18.0.10", 40000, "198.19.0.10",
			proto == IPPROTO_ICMP ? 8 : 80);
	else
		fc_key6(&s.key, proto, "2001:2::10", 40000, "2001:2:0:1::10",
			proto == IPPROTO_ICMPV6 ? 128 : 80);
	return s;
}

/* The reply of orig_frame(), as the server sends it (on port 1). */
static struct fc_frame_spec
reply_frame(int family, uint8_t proto)
{
	struct fc_frame_spec s = orig_frame(family, proto);

	fp_key_reverse(&s.key, &s.key);
	memcpy(s.dmac, LIF1_MAC, 6);
	memcpy(s.smac, SERVER_MAC, 6);
	s.seq = 5000;
	s.ack = 1018;
	return s;
}

static struct fp_conn_spec
conn_spec(int family, uint8_t proto, uint8_t action)
{
	struct fp_conn_spec cs = { .verdict = FC_VERDICT_CUT_THRU };

	cs.mf[0].key = orig_frame(family, proto).key;
	cs.mf[0].key.port = 0;
	cs.mf[0].nhop = 0;
	cs.mf[0].action = action;
	cs.mf[1].key = reply_frame(family, proto).key;
	cs.mf[1].key.port = 1;
	cs.mf[1].nhop = 1;
	cs.mf[1].action = action;
	return cs;
}

static fp_conn_id
conn_make(struct t *t, int family, uint8_t proto, uint8_t action)
{
	struct fp_conn_spec cs = conn_spec(family, proto, action);
	fp_conn_id id;

	assert_int_equal(fp_conn_create(t->fp, &cs, t->now, &id), 0);
	return id;
}

static struct rte_mbuf *
mbuf_of(const struct fc_frame_spec *s)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	uint8_t buf[2048];
	size_t len = fc_frame_build(s, buf, sizeof(buf));

	assert_non_null(m);
	assert_true(len > 0);
	memcpy(rte_pktmbuf_append(m, (uint16_t)len), buf, len);
	return m;
}

/* One frame through the fast path on `port`; keeps the frame in t->out. */
static struct fp_out
send_mbuf(struct t *t, uint16_t port, struct rte_mbuf *m)
{
	struct fp_out o;

	assert_int_equal(fp_process_burst(t->w, port, &m, 1, t->now, &o), 1);
	t->out_len = rte_pktmbuf_pkt_len(m);
	memcpy(t->out, rte_pktmbuf_mtod(m, void *), t->out_len);
	rte_pktmbuf_free(m);
	return o;
}

static struct fp_out
send_frame(struct t *t, uint16_t port, const struct fc_frame_spec *s)
{
	return send_mbuf(t, port, mbuf_of(s));
}

static uint64_t
counter(struct t *t, enum fc_cnt c)
{
	uint64_t v[FC_CNT_MAX];

	fp_counters_read(t->fp, v);
	return v[c];
}

/* Asserts the outcome by counter name, so a failure says which. */
static void
expect(struct fp_out o, enum fc_cnt want, uint16_t dest)
{
	if (o.reason != want)
		fail_msg("counted %s, expected %s", fc_cnt_name(o.reason), fc_cnt_name(want));
	assert_int_equal(o.dest, dest);
}

static uint16_t
dest_for(enum fc_cnt c, uint16_t wire_port)
{
	switch (fc_cnt_class(c)) {
	case FC_CLS_WIRE: return wire_port;
	case FC_CLS_DROP: return FP_DEST_DROP;
	case FC_CLS_IPS: return FP_DEST_IPS;
	default: return c == FC_CNT_FROM_WIRE_TO_KN_AUX ? FP_DEST_HOST_AUX : FP_DEST_HOST;
	}
}

/* ---- the seed's truth table ---- */

/*
 * FWD / IPS (and DROP, AUX) x the IPS switch x the verdict, both ways.
 * The seed measured the first three blocks; the rest are the model's.
 */
/* THP as the kernel says it: "always [madvise] never" and the like. */
static bool
thp_enabled(void)
{
	char buf[128] = "";
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");

	if (f == NULL)
		return false;
	if (fgets(buf, sizeof(buf), f) == NULL)
		buf[0] = '\0';
	fclose(f);
	return strstr(buf, "[never]") == NULL && buf[0] != '\0';
}

/*
 * fp_heap_create sizes a heap for the tables of its parameters: the
 * tables fit it at every size, also just past a power of two, where
 * rte_hash's buckets and the rings double; a name in use is refused;
 * the kernel's THP setting decides the pages.
 */
static void
test_heap_fits(void **state)
{
	static const uint32_t conns[] = { 1, 4097, 131073 };
	(void)state;

	for (size_t i = 0; i < sizeof(conns) / sizeof(conns[0]); i++) {
		char name[16];
		struct fp_params p = { .name = name, .max_conns = conns[i], .max_nhops = 4097,
				       .max_workers = 4 };
		struct rte_malloc_socket_stats st;
		bool huge;
		struct fp *fp;

		snprintf(name, sizeof(name), "heap%u", conns[i]);
		p.socket_id = fp_heap_create(name, &p, &huge);
		assert_true(p.socket_id >= 0);
		assert_int_equal(huge, thp_enabled());
		fp = fp_create(&p);
		assert_non_null(fp);
		assert_int_equal(rte_malloc_get_socket_stats(p.socket_id, &st), 0);
		assert_true(st.heap_allocsz_bytes <= st.heap_totalsz_bytes);
		fp_destroy(fp);
		assert_int_equal(fp_heap_create(name, &p, &huge), -1);
		assert_int_equal(rte_errno, EEXIST);
	}
	{
		struct fp_params p = { .name = "heap0", .max_conns = 0, .max_nhops = 1,
				       .max_workers = 1 };
		bool huge;

		assert_int_equal(fp_heap_create("heap0", &p, &huge), -1);
		assert_int_equal(rte_errno, EINVAL);
	}
}

static void
test_truth_table(void **state)
{
	static const struct {
		uint8_t action;
		uint32_t cfg;		/* besides OFFLOAD */
		uint8_t verdict;
		enum fc_cnt want;
	} rows[] = {
		{ FC_ACTION_FWD, 0, FC_VERDICT_CUT_THRU, FC_CNT_FROM_WIRE_TO_WIRE },
		{ FC_ACTION_FWD, 0, FC_VERDICT_DROP, FC_CNT_FROM_WIRE_TO_WIRE },
		{ FC_ACTION_FWD, 0, FC_VERDICT_SEND_TO_IPS, FC_CNT_FROM_WIRE_TO_WIRE },
		{ FC_ACTION_FWD, FC_CFG_IPS, FC_VERDICT_CUT_THRU, FC_CNT_FROM_WIRE_TO_WIRE },
		{ FC_ACTION_FWD, FC_CFG_IPS, FC_VERDICT_DROP, FC_CNT_FROM_WIRE_TO_WIRE },
		{ FC_ACTION_FWD, FC_CFG_IPS, FC_VERDICT_SEND_TO_IPS, FC_CNT_FROM_WIRE_TO_WIRE },
		{ FC_ACTION_IPS, 0, FC_VERDICT_CUT_THRU, FC_CNT_FROM_WIRE_TO_WIRE_IPS_DISABLED },
		{ FC_ACTION_IPS, 0, FC_VERDICT_DROP, FC_CNT_FROM_WIRE_TO_WIRE_IPS_DISABLED },
		{ FC_ACTION_IPS, 0, FC_VERDICT_SEND_TO_IPS, FC_CNT_FROM_WIRE_TO_WIRE_IPS_DISABLED },
		{ FC_ACTION_IPS, FC_CFG_IPS, FC_VERDICT_CUT_THRU, FC_CNT_FROM_WIRE_TO_WIRE_VERDICT_CUT_THRU },
		{ FC_ACTION_IPS, FC_CFG_IPS, FC_VERDICT_DROP, FC_CNT_FROM_WIRE_DROP_IPS_VERDICT },
		{ FC_ACTION_IPS, FC_CFG_IPS, FC_VERDICT_SEND_TO_IPS, FC_CNT_FROM_WIRE_TO_IPS_INSPECT },
		{ FC_ACTION_IPS, FC_CFG_DROP_IF_IPS_OFF, FC_VERDICT_CUT_THRU, FC_CNT_FROM_WIRE_DROP_IPS_DISABLED },
		{ FC_ACTION_IPS, FC_CFG_DROP_IF_IPS_OFF, FC_VERDICT_DROP, FC_CNT_FROM_WIRE_DROP_IPS_DISABLED },
		{ FC_ACTION_IPS, FC_CFG_IPS | FC_CFG_DROP_IF_IPS_OFF, FC_VERDICT_CUT_THRU, FC_CNT_FROM_WIRE_TO_WIRE_VERDICT_CUT_THRU },
		{ FC_ACTION_DROP, FC_CFG_IPS, FC_VERDICT_CUT_THRU, FC_CNT_FROM_WIRE_DROP_MFLOW_ACTION },
		{ FC_ACTION_DROP, 0, FC_VERDICT_DROP, FC_CNT_FROM_WIRE_DROP_MFLOW_ACTION },
		{ FC_ACTION_AUX, FC_CFG_IPS, FC_VERDICT_DROP, FC_CNT_FROM_WIRE_TO_KN_AUX },
		{ FC_ACTION_AUX, 0, FC_VERDICT_CUT_THRU, FC_CNT_FROM_WIRE_TO_KN_AUX },
	};
	struct t *t = *state;

	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		for (int family = 4; family <= 6; family += 2) {
			struct fc_frame_spec o = orig_frame(family, IPPROTO_UDP);
			struct fc_frame_spec p = reply_frame(family, IPPROTO_UDP);
			fp_conn_id id = conn_make(t, family, IPPROTO_UDP, rows[r].action);

			print_message("row %zu IPv%d: action %u cfg %#x verdict %u -> %s\n", r,
				      family, rows[r].action, rows[r].cfg, rows[r].verdict,
				      fc_cnt_name(rows[r].want));
			assert_int_equal(fp_cfg_set(t->fp, FC_CFG_OFFLOAD | rows[r].cfg), 0);
			assert_int_equal(fp_conn_verdict_set(t->fp, id, rows[r].verdict), 0);
			expect(send_frame(t, 0, &o), rows[r].want, dest_for(rows[r].want, 1));
			expect(send_frame(t, 1, &p), rows[r].want, dest_for(rows[r].want, 0));
			assert_int_equal(fp_conn_remove(t->fp, id, NULL), 0);
		}
	}
}

/* The seed's third row in time: cut, then set back to CUT_THRU, forwarded again. */
static void
test_verdict_drop_and_back(void **state)
{
	struct t *t = *state;
	struct fc_frame_spec o = orig_frame(4, IPPROTO_UDP), p = reply_frame(4, IPPROTO_UDP);
	fp_conn_id id = conn_make(t, 4, IPPROTO_UDP, FC_ACTION_IPS);

	expect(send_frame(t, 0, &o), FC_CNT_FROM_WIRE_TO_WIRE_VERDICT_CUT_THRU, 1);
	assert_int_equal(fp_conn_verdict_set(t->fp, id, FC_VERDICT_DROP), 0);
	for (int i = 0; i < 100; i++) {
		expect(send_frame(t, 0, &o), FC_CNT_FROM_WIRE_DROP_IPS_VERDICT, FP_DEST_DROP);
		expect(send_frame(t, 1, &p), FC_CNT_FROM_WIRE_DROP_IPS_VERDICT, FP_DEST_DROP);
	}
	assert_int_equal(counter(t, FC_CNT_FROM_WIRE_DROP_IPS_VERDICT), 200);
	assert_int_equal(fp_conn_verdict_set(t->fp, id, FC_VERDICT_CUT_THRU), 0);
	expect(send_frame(t, 0, &o), FC_CNT_FROM_WIRE_TO_WIRE_VERDICT_CUT_THRU, 1);
	expect(send_frame(t, 1, &p), FC_CNT_FROM_WIRE_TO_WIRE_VERDICT_CUT_THRU, 0);
	assert_int_equal(fp_conn_verdict_set(t->fp, id, 3), -EINVAL);
}

/* ---- the model's steps, in order ---- */

/* A row prepares the table (and may change the frame), then one frame goes in. */
struct step_row {
	const char *name;
	void (*prep)(struct t *t, fp_conn_id id, struct fc_frame_spec *s, uint16_t *port);
	uint8_t action;
	uint8_t proto;
	enum fc_cnt want;
};

static void prep_none(struct t *t, fp_conn_id id, struct fc_frame_spec *s, uint16_t *port)
{ (void)t; (void)id; (void)s; (void)port; }
static void prep_port_unknown(struct t *t, fp_conn_id id, struct fc_frame_spec *s, uint16_t *port)
{ (void)t; (void)id; (void)s; *port = 7; }
static void prep_port_out_of_range(struct t *t, fp_conn_id id, struct fc_frame_spec *s, uint16_t *port)
{ (void)t; (void)id; (void)s; *port = 4000; }
static void prep_vlan_unknown(struct t *t, fp_conn_id id, struct fc_frame_spec *s, uint16_t *port)
{ (void)t; (void)id; (void)port; s->vlan = 100; }
static void
lif0_flags(struct t *t, bool admin, bool offload)
{
	struct fp_lif l;

	assert_int_equal(fp_lif_get(t->fp, 0, &l), 0);
	l.admin_disabled = admin;
	l.offload_disabled = offload;
	assert_int_equal(fp_lif_set(t->fp, 0, &l), 0);
}
static void prep_lif_disabled(struct t *t, fp_conn_id id, struct fc_frame_spec *s, uint16_t *port)
{ (void)id; (void)s; (void)port; lif0_flags(t, true, false); }
static void prep_lif_no_offload(struct t *t, fp_conn_id id, struct fc_frame_spec *s, uint16_t *port)
{ (void)id; (void)s; (void)port; lif0_flags(t, false, true); }
static void prep_gate_shut(struct t *t, fp_conn_id id, struct fc_frame_spec *s, uint16_t *port)
{ (void)id; (void)s; (void)port; assert_int_equal(fp_cfg_set(t->fp, FC_CFG_IPS), 0); }
static void prep_wrong_mac(struct t *t, fp_conn_id id, struct fc_frame_spec *s, uint16_t *port)
{ (void)t; (void)id; (void)port; s->dmac[5] = 0x77; }
static void prep_no_conn(struct t *t, fp_conn_id id, struct fc_frame_spec *s, uint16_t *port)
{ (void)t; (void)id; (void)port; s->key.sport = htons(40001); }
static void prep_icmp_error(struct t *t, fp_conn_id id, struct fc_frame_spec *s, uint16_t *port)
{ (void)t; (void)id; (void)port; s->key.dport = 3; }
static void prep_inactive(struct t *t, fp_conn_id id, struct fc_frame_spec *s, uint16_t *port)
{
	struct fp_conn_mod m = { .mask = FP_MOD_ACTIVE, .active = { false, true } };

	(void)s; (void)port;
	assert_int_equal(fp_conn_modify(t->fp, id, &m), 0);
}
static void prep_given_back(struct t *t, fp_conn_id id, struct fc_frame_spec *s, uint16_t *port)
{
	struct fc_frame_spec fin = *s;

	(void)id;
	fin.tcp_flags = FP_TCP_FIN | FP_TCP_ACK;
	expect(send_frame(t, *port, &fin), FC_CNT_FROM_WIRE_TO_KN_TCP_FIN_SYN_RST, FP_DEST_HOST);
}
static void prep_rev_bump(struct t *t, fp_conn_id id, struct fc_frame_spec *s, uint16_t *port)
{ (void)id; (void)s; (void)port; fp_fw_rev_set(t->fp, fp_fw_rev_get(t->fp) + 1); }
/* a cut connection, then a new revision: it drops on until made again at it */
static void prep_cut_rev_bump(struct t *t, fp_conn_id id, struct fc_frame_spec *s, uint16_t *port)
{
	(void)s; (void)port;
	assert_int_equal(fp_conn_verdict_set(t->fp, id, FC_VERDICT_DROP), 0);
	fp_fw_rev_set(t->fp, fp_fw_rev_get(t->fp) + 1);
}
static void prep_cut_fin(struct t *t, fp_conn_id id, struct fc_frame_spec *s, uint16_t *port)
{
	(void)port;
	assert_int_equal(fp_conn_verdict_set(t->fp, id, FC_VERDICT_DROP), 0);
	s->tcp_flags = FP_TCP_FIN | FP_TCP_ACK;
}
static void prep_rst(struct t *t, fp_conn_id id, struct fc_frame_spec *s, uint16_t *port);
/* A FWD connection cut in hardware: its action DROP; its FIN stays here. */
static void prep_cut_fwd_fin(struct t *t, fp_conn_id id, struct fc_frame_spec *s, uint16_t *port)
{
	struct fp_conn_mod m = { .mask = FP_MOD_ACTION,
				 .action = { FC_ACTION_DROP, FC_ACTION_DROP } };

	(void)port;
	assert_int_equal(fp_conn_modify(t->fp, id, &m), 0);
	s->tcp_flags = FP_TCP_FIN | FP_TCP_ACK;
}
static void prep_cut_rst(struct t *t, fp_conn_id id, struct fc_frame_spec *s, uint16_t *port)
{
	(void)port;
	assert_int_equal(fp_conn_verdict_set(t->fp, id, FC_VERDICT_DROP), 0);
	s->tcp_flags = FP_TCP_RST;
}
/* The host's lease taken, then lapsed: the fast path fails closed. */
static void
lease_lapse(struct t *t)
{
	assert_int_equal(fp_lease_renew(t->fp, t->now, 1000, 0, NULL), 0);
	assert_true(fp_lease_tick(t->fp, t->now + 1000 * MS));
}
static void prep_lapsed(struct t *t, fp_conn_id id, struct fc_frame_spec *s, uint16_t *port)
{ (void)id; (void)s; (void)port; lease_lapse(t); }
static void prep_lapsed_fin(struct t *t, fp_conn_id id, struct fc_frame_spec *s, uint16_t *port)
{ (void)id; (void)port; lease_lapse(t); s->tcp_flags = FP_TCP_FIN | FP_TCP_ACK; }
static void prep_lapsed_cut(struct t *t, fp_conn_id id, struct fc_frame_spec *s, uint16_t *port)
{
	(void)port;
	lease_lapse(t);
	assert_int_equal(fp_conn_verdict_set(t->fp, id, FC_VERDICT_DROP), 0);
	s->tcp_flags = FP_TCP_RST;
}
static void prep_fin(struct t *t, fp_conn_id id, struct fc_frame_spec *s, uint16_t *port)
{ (void)t; (void)id; (void)port; s->tcp_flags = FP_TCP_FIN | FP_TCP_ACK; }
static void prep_syn(struct t *t, fp_conn_id id, struct fc_frame_spec *s, uint16_t *port)
{ (void)t; (void)id; (void)port; s->tcp_flags = FP_TCP_SYN; }
static void prep_rst(struct t *t, fp_conn_id id, struct fc_frame_spec *s, uint16_t *port)
{ (void)t; (void)id; (void)port; s->tcp_flags = FP_TCP_RST; }
static void prep_seq_far(struct t *t, fp_conn_id id, struct fc_frame_spec *s, uint16_t *port)
{
	struct fc_frame_spec r = reply_frame(4, IPPROTO_TCP);

	(void)id;
	assert_int_equal(fp_cfg_set(t->fp, FC_CFG_OFFLOAD | FC_CFG_IPS | FC_CFG_TCP_SEQ_CHK), 0);
	expect(send_frame(t, *port, s), FC_CNT_FROM_WIRE_TO_WIRE, 1);	/* both ways seen */
	expect(send_frame(t, 1, &r), FC_CNT_FROM_WIRE_TO_WIRE, 0);
	s->seq += 10000000;
}
static void prep_rst_far(struct t *t, fp_conn_id id, struct fc_frame_spec *s, uint16_t *port)
{
	struct fc_frame_spec r = reply_frame(4, IPPROTO_TCP);

	(void)id;
	expect(send_frame(t, *port, s), FC_CNT_FROM_WIRE_TO_WIRE, 1);	/* both ways seen */
	expect(send_frame(t, 1, &r), FC_CNT_FROM_WIRE_TO_WIRE, 0);
	s->seq += 10000000;
	s->tcp_flags = FP_TCP_RST;
}
static void
nhop0_program(struct t *t, bool resolved, const uint8_t *dmac, uint16_t mtu, uint16_t vlan,
	      bool reused)
{
	struct fp_nhop n;

	assert_int_equal(fp_nhop_get(t->fp, 0, &n, NULL), 0);
	n.resolved = resolved;
	memcpy(n.dmac, dmac, 6);
	n.mtu = mtu;
	n.vlan = vlan;
	assert_int_equal(fp_nhop_set(t->fp, 0, &n, reused), 0);
}
static void
nhop0_set(struct t *t, bool resolved, const uint8_t *dmac, uint16_t mtu, uint16_t vlan)
{
	nhop0_program(t, resolved, dmac, mtu, vlan, false);
}
static void prep_nhop_unresolved(struct t *t, fp_conn_id id, struct fc_frame_spec *s, uint16_t *port)
{ (void)id; (void)s; (void)port; nhop0_set(t, false, SERVER_MAC, 1500, 0); }
static void prep_nhop_reused(struct t *t, fp_conn_id id, struct fc_frame_spec *s, uint16_t *port)
{
	static const uint8_t other[6] = { 0x02, 0, 0, 0, 0, 0xc3 };

	(void)id; (void)s; (void)port;
	nhop0_program(t, true, other, 1500, 0, true);
}
static void prep_ttl1(struct t *t, fp_conn_id id, struct fc_frame_spec *s, uint16_t *port)
{ (void)t; (void)id; (void)port; s->ttl = 1; }
static void prep_mtu(struct t *t, fp_conn_id id, struct fc_frame_spec *s, uint16_t *port)
{ (void)id; (void)port; s->payload = 101; nhop0_set(t, true, SERVER_MAC, 128, 0); }
static void prep_mtu_fits(struct t *t, fp_conn_id id, struct fc_frame_spec *s, uint16_t *port)
{ (void)id; (void)port; s->payload = 100; nhop0_set(t, true, SERVER_MAC, 128, 0); }

/*
 * The first-frame stamps of `id` say a frame was forwarded exactly when a
 * wire counter counted one (every frame of a row at t->now): a dropped,
 * host-bound or inspected frame stamps nothing.
 */
static void
first_fwd_by_wire(struct t *t, fp_conn_id id)
{
	uint64_t c[FC_CNT_MAX], wire = 0;
	struct fp_conn_info ci;

	fp_counters_read(t->fp, c);
	for (unsigned int i = 0; i < FC_CNT_MAX; i++)
		if (fc_cnt_class(i) == FC_CLS_WIRE)
			wire += c[i];
	if (fp_conn_get(t->fp, id, &ci) != 0)
		return;		/* a row that took it out: nothing left to stamp */
	assert_int_equal(ci.mf[0].first_fwd != 0 || ci.mf[1].first_fwd != 0, wire != 0);
	for (unsigned int d = 0; d < 2; d++)
		assert_true(ci.mf[d].first_fwd == 0 || ci.mf[d].first_fwd == t->now);
}

static void
test_model_steps(void **state)
{
	static const struct step_row rows[] = {
		{ "1 unknown port", prep_port_unknown, FC_ACTION_FWD, IPPROTO_UDP, FC_CNT_FROM_WIRE_DROP_LIF_UNKNOWN },
		{ "1 port id out of range", prep_port_out_of_range, FC_ACTION_FWD, IPPROTO_UDP, FC_CNT_FROM_WIRE_DROP_LIF_UNKNOWN },
		{ "1 VLAN without a LIF", prep_vlan_unknown, FC_ACTION_FWD, IPPROTO_UDP, FC_CNT_FROM_WIRE_DROP_LIF_UNKNOWN },
		{ "1 LIF admin-disabled", prep_lif_disabled, FC_ACTION_FWD, IPPROTO_UDP, FC_CNT_FROM_WIRE_DROP_LIF_DISABLED },
		{ "1 LIF offload-disabled", prep_lif_no_offload, FC_ACTION_FWD, IPPROTO_UDP, FC_CNT_FROM_WIRE_TO_KN_LIF_OFFLOAD_DISABLED },
		{ "2 gate shut", prep_gate_shut, FC_ACTION_IPS, IPPROTO_UDP, FC_CNT_FROM_WIRE_TO_KN_FORCED },
		{ "parse: not our MAC", prep_wrong_mac, FC_ACTION_FWD, IPPROTO_UDP, FC_CNT_FROM_WIRE_TO_KN_L2_NOT_LIF_MAC },
		{ "3 no microflow", prep_no_conn, FC_ACTION_FWD, IPPROTO_UDP, FC_CNT_FROM_WIRE_TO_KN_NON_ACCEL },
		{ "3 ICMP error is no microflow", prep_icmp_error, FC_ACTION_FWD, IPPROTO_ICMP, FC_CNT_FROM_WIRE_TO_KN_NON_ACCEL },
		{ "4 microflow not active", prep_inactive, FC_ACTION_FWD, IPPROTO_UDP, FC_CNT_FROM_WIRE_TO_KN_MFLOW_NOT_ACTIVE },
		{ "4 connection given back", prep_given_back, FC_ACTION_FWD, IPPROTO_TCP, FC_CNT_FROM_WIRE_TO_KN_CONN_INVALID },
		{ "4 older firewall revision", prep_rev_bump, FC_ACTION_IPS, IPPROTO_UDP, FC_CNT_FROM_WIRE_TO_KN_FW_REV_MISMATCH },
		{ "4 older revision, cut (verdict DROP): still dropped", prep_cut_rev_bump, FC_ACTION_IPS, IPPROTO_UDP, FC_CNT_FROM_WIRE_DROP_IPS_VERDICT },
		{ "4 older revision, cut (action DROP): still dropped", prep_rev_bump, FC_ACTION_DROP, IPPROTO_UDP, FC_CNT_FROM_WIRE_DROP_MFLOW_ACTION },
		{ "5 cut: a FIN is dropped, not given back", prep_cut_fin, FC_ACTION_IPS, IPPROTO_TCP, FC_CNT_FROM_WIRE_DROP_IPS_VERDICT },
		{ "5 cut: an RST is dropped, not given back", prep_cut_rst, FC_ACTION_IPS, IPPROTO_TCP, FC_CNT_FROM_WIRE_DROP_IPS_VERDICT },
		{ "5 FWD cut (action DROP): a FIN is dropped", prep_cut_fwd_fin, FC_ACTION_FWD, IPPROTO_TCP, FC_CNT_FROM_WIRE_DROP_MFLOW_ACTION },
		{ "5 action DROP from the start", prep_none, FC_ACTION_DROP, IPPROTO_UDP, FC_CNT_FROM_WIRE_DROP_MFLOW_ACTION },
		{ "5b lease lapsed: FWD to the host", prep_lapsed, FC_ACTION_FWD, IPPROTO_UDP, FC_CNT_FROM_WIRE_TO_KN_LEASE_LAPSED },
		{ "5b lease lapsed: IPS to the host", prep_lapsed, FC_ACTION_IPS, IPPROTO_TCP, FC_CNT_FROM_WIRE_TO_KN_LEASE_LAPSED },
		{ "5b lease lapsed: a FIN to the host, not given back", prep_lapsed_fin, FC_ACTION_FWD, IPPROTO_TCP, FC_CNT_FROM_WIRE_TO_KN_LEASE_LAPSED },
		{ "5b lease lapsed: a cut connection still drops", prep_lapsed_cut, FC_ACTION_IPS, IPPROTO_TCP, FC_CNT_FROM_WIRE_DROP_IPS_VERDICT },
		{ "5b lease lapsed: action DROP still drops", prep_lapsed, FC_ACTION_DROP, IPPROTO_UDP, FC_CNT_FROM_WIRE_DROP_MFLOW_ACTION },
		{ "6 FIN", prep_fin, FC_ACTION_IPS, IPPROTO_TCP, FC_CNT_FROM_WIRE_TO_KN_TCP_FIN_SYN_RST },
		{ "6 SYN", prep_syn, FC_ACTION_FWD, IPPROTO_TCP, FC_CNT_FROM_WIRE_TO_KN_TCP_FIN_SYN_RST },
		{ "6 RST", prep_rst, FC_ACTION_FWD, IPPROTO_TCP, FC_CNT_FROM_WIRE_TO_KN_TCP_FIN_SYN_RST },
		{ "6 RST outside the window", prep_rst_far, FC_ACTION_FWD, IPPROTO_TCP, FC_CNT_FROM_WIRE_TO_KN_TCP_FIN_SYN_RST_OUT_OF_WINDOW },
		{ "6 far out of window", prep_seq_far, FC_ACTION_FWD, IPPROTO_TCP, FC_CNT_FROM_WIRE_TO_KN_TCP_SEQ_CHK_INVALID },
		{ "7 next hop unresolved", prep_nhop_unresolved, FC_ACTION_FWD, IPPROTO_UDP, FC_CNT_FROM_WIRE_TO_KN_NHOP_UNRESOLVED },
		{ "7 next hop index reused", prep_nhop_reused, FC_ACTION_FWD, IPPROTO_UDP, FC_CNT_FROM_WIRE_TO_KN_NHOP_STALE },
		{ "7 TTL expires", prep_ttl1, FC_ACTION_FWD, IPPROTO_UDP, FC_CNT_FROM_WIRE_TO_KN_TTL_EXPIRED },
		{ "7 larger than the MTU", prep_mtu, FC_ACTION_FWD, IPPROTO_UDP, FC_CNT_FROM_WIRE_TO_KN_MTU_EXCEEDED },
		{ "7 exactly the MTU", prep_mtu_fits, FC_ACTION_FWD, IPPROTO_UDP, FC_CNT_FROM_WIRE_TO_WIRE },
		{ "7 FWD", prep_none, FC_ACTION_FWD, IPPROTO_TCP, FC_CNT_FROM_WIRE_TO_WIRE },
	};
	struct t *t = *state;

	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		struct t *fresh;
		struct fc_frame_spec s;
		uint16_t port = 0;
		fp_conn_id id;

		print_message("step %s -> %s\n", rows[r].name, fc_cnt_name(rows[r].want));
		/* every row on a fresh fast path */
		assert_int_equal(teardown(state), 0);
		assert_int_equal(setup(state), 0);
		fresh = *state;
		t = fresh;
		s = orig_frame(4, rows[r].proto);
		id = conn_make(t, 4, rows[r].proto, rows[r].action);
		rows[r].prep(t, id, &s, &port);
		expect(send_frame(t, port, &s), rows[r].want, dest_for(rows[r].want, 1));
		first_fwd_by_wire(t, id);
	}
}

/*
 * The host's lease on a virtual clock: none after boot (forwarding), held,
 * lapsed at its end to the nanosecond (failing closed), not reopened by a
 * renewal that does not acknowledge the lapse, reopened by one that does;
 * a release fails closed at once; a held lease is extended whatever it
 * acknowledges; a length over the limit refused.  Each state seen by a frame.
 */
static void
test_host_lease(void **state)
{
	struct t *t = *state;
	struct fc_frame_spec o = orig_frame(4, IPPROTO_UDP);
	struct fp_lease l;
	uint64_t t0 = t->now;

	conn_make(t, 4, IPPROTO_UDP, FC_ACTION_FWD);
	fp_lease_get(t->fp, t->now, &l);
	assert_int_equal(l.state, FC_LEASE_NONE);
	expect(send_frame(t, 0, &o), FC_CNT_FROM_WIRE_TO_WIRE, 1);
	assert_false(fp_lease_tick(t->fp, t->now + 3600 * S));	/* nothing to lapse */

	assert_int_equal(fp_lease_renew(t->fp, t0, 3000, 7, &l), 0);	/* ack ignored: none to know */
	assert_int_equal(l.state, FC_LEASE_HELD);
	assert_int_equal(l.ms, 3000);
	assert_int_equal(l.left_ns, 3000 * MS);
	t->now = t0 + 3000 * MS - 1;
	assert_false(fp_lease_tick(t->fp, t->now));
	expect(send_frame(t, 0, &o), FC_CNT_FROM_WIRE_TO_WIRE, 1);
	t->now = t0 + 3000 * MS;
	assert_true(fp_lease_tick(t->fp, t->now));
	assert_false(fp_lease_tick(t->fp, t->now + S));	/* said once */
	fp_lease_get(t->fp, t->now, &l);
	assert_int_equal(l.state, FC_LEASE_LAPSED);
	assert_int_equal(l.lapses, 1);
	assert_int_equal(l.left_ns, 0);
	expect(send_frame(t, 0, &o), FC_CNT_FROM_WIRE_TO_KN_LEASE_LAPSED, FP_DEST_HOST);

	/* a renewal that does not know of the lapse: still failing closed */
	assert_int_equal(fp_lease_renew(t->fp, t->now, 3000, 0, &l), 0);
	assert_int_equal(l.state, FC_LEASE_LAPSED);
	expect(send_frame(t, 0, &o), FC_CNT_FROM_WIRE_TO_KN_LEASE_LAPSED, FP_DEST_HOST);
	/* acknowledged: forwarding again */
	assert_int_equal(fp_lease_renew(t->fp, t->now, 3000, 1, &l), 0);
	assert_int_equal(l.state, FC_LEASE_HELD);
	expect(send_frame(t, 0, &o), FC_CNT_FROM_WIRE_TO_WIRE, 1);
	/* held: any renewal extends it */
	t->now += 2000 * MS;
	assert_int_equal(fp_lease_renew(t->fp, t->now, 3000, 0, &l), 0);
	t->now += 2000 * MS;
	assert_false(fp_lease_tick(t->fp, t->now));
	expect(send_frame(t, 0, &o), FC_CNT_FROM_WIRE_TO_WIRE, 1);

	/* released (a clean stop): failing closed at once */
	assert_int_equal(fp_lease_renew(t->fp, t->now, 0, 1, &l), 0);
	assert_int_equal(l.state, FC_LEASE_LAPSED);
	assert_int_equal(l.lapses, 2);
	expect(send_frame(t, 0, &o), FC_CNT_FROM_WIRE_TO_KN_LEASE_LAPSED, FP_DEST_HOST);
	assert_int_equal(fp_lease_renew(t->fp, t->now, 0, 2, &l), 0);	/* again: no new lapse */
	assert_int_equal(l.lapses, 2);

	assert_int_equal(fp_lease_renew(t->fp, t->now, FP_LEASE_MAX_MS + 1, 2, NULL), -EINVAL);
	fp_lease_get(t->fp, t->now, &l);
	assert_int_equal(l.state, FC_LEASE_LAPSED);
	assert_int_equal(counter(t, FC_CNT_FROM_WIRE_TO_KN_LEASE_LAPSED), 3);
}

/* Non-IP, truncated and fragmented frames each have their own counter. */
static void
test_unparsed(void **state)
{
	struct t *t = *state;
	struct fc_frame_spec s = orig_frame(4, IPPROTO_UDP);
	struct rte_mbuf *m;
	uint8_t *f;

	conn_make(t, 4, IPPROTO_UDP, FC_ACTION_FWD);
	m = mbuf_of(&s);		/* ARP */
	f = rte_pktmbuf_mtod(m, uint8_t *);
	f[12] = 0x08;
	f[13] = 0x06;
	expect(send_mbuf(t, 0, m), FC_CNT_FROM_WIRE_TO_KN_NON_IP, FP_DEST_HOST);

	m = mbuf_of(&s);		/* a first fragment */
	f = rte_pktmbuf_mtod(m, uint8_t *);
	f[14 + 6] = 0x20;
	expect(send_mbuf(t, 0, m), FC_CNT_FROM_WIRE_TO_KN_IP_FRAG, FP_DEST_HOST);

	m = mbuf_of(&s);		/* IP total length beyond the frame */
	f = rte_pktmbuf_mtod(m, uint8_t *);
	f[14 + 2] = 0x05;
	expect(send_mbuf(t, 0, m), FC_CNT_FROM_WIRE_TO_KN_PARSE_ERROR, FP_DEST_HOST);

	m = mbuf_of(&s);		/* a runt: 10 bytes */
	rte_pktmbuf_trim(m, (uint16_t)(rte_pktmbuf_pkt_len(m) - 10));
	expect(send_mbuf(t, 0, m), FC_CNT_FROM_WIRE_TO_KN_PARSE_ERROR, FP_DEST_HOST);
}

/* ---- forwarding: the frame that leaves, built from scratch ---- */

struct fwd_row {
	int family;
	uint8_t proto;
	uint16_t vlan_in, vlan_out;
	bool nat;
	bool udp_no_csum;
};

/*
 * With `nat`, the connection is a source + destination NAT as conntrack
 * would describe it: the client talks to 198.19.0.99:8080 (2001:2:0:1::99),
 * which is the server at its real address and port 80, and the client is
 * seen by the server as 198.18.9.1:50000.
 */
static void
test_forward_rewrite(void **state)
{
	static const struct fwd_row rows[] = {
		{ 4, IPPROTO_UDP, 0, 0, false, false },
		{ 4, IPPROTO_TCP, 0, 0, false, false },
		{ 4, IPPROTO_ICMP, 0, 0, false, false },
		{ 6, IPPROTO_UDP, 0, 0, false, false },
		{ 6, IPPROTO_TCP, 0, 0, false, false },
		{ 6, IPPROTO_ICMPV6, 0, 0, false, false },
		{ 4, IPPROTO_UDP, 10, 0, false, false },
		{ 4, IPPROTO_UDP, 0, 20, false, false },
		{ 6, IPPROTO_TCP, 10, 20, false, false },
		{ 4, IPPROTO_TCP, 0, 0, true, false },
		{ 4, IPPROTO_UDP, 0, 0, true, false },
		{ 4, IPPROTO_UDP, 0, 0, true, true },
		{ 4, IPPROTO_ICMP, 0, 0, true, false },
		{ 6, IPPROTO_TCP, 0, 0, true, false },
		{ 6, IPPROTO_UDP, 10, 0, true, false },
		{ 6, IPPROTO_UDP, 0, 0, true, true },	/* a zero checksum stays zero */
		{ 6, IPPROTO_ICMPV6, 0, 30, true, false },
		{ 4, IPPROTO_GRE, 0, 0, false, false },
	};
	struct t *t = *state;

	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		const struct fwd_row *w = &rows[r];
		bool icmp = w->proto == IPPROTO_ICMP || w->proto == IPPROTO_ICMPV6;
		struct fc_frame_spec in[2], want[2];
		struct fp_conn_spec cs;
		struct fp_lif l;
		fp_conn_id id;

		print_message("rewrite row %zu: IPv%d proto %u vlan %u->%u%s%s\n", r, w->family,
			      w->proto, w->vlan_in, w->vlan_out, w->nat ? " NAT" : "",
			      w->udp_no_csum ? " no-UDP-csum" : "");
		assert_int_equal(teardown(state), 0);
		assert_int_equal(setup(state), 0);
		t = *state;
		if (w->vlan_in) {	/* LIFs for the tagged ingress */
			assert_int_equal(fp_lif_get(t->fp, 0, &l), 0);
			l.vlan = w->vlan_in;
			assert_int_equal(fp_lif_set(t->fp, 0, &l), 0);
			assert_int_equal(fp_lif_get(t->fp, 1, &l), 0);
			l.vlan = w->vlan_in;
			assert_int_equal(fp_lif_set(t->fp, 1, &l), 0);
		}
		if (w->vlan_out) {
			for (uint32_t n = 0; n < 2; n++) {
				struct fp_nhop nh;

				assert_int_equal(fp_nhop_get(t->fp, n, &nh, NULL), 0);
				nh.vlan = w->vlan_out;
				assert_int_equal(fp_nhop_set(t->fp, n, &nh, false), 0);
			}
		}
		in[0] = orig_frame(w->family, w->proto);
		in[1] = reply_frame(w->family, w->proto);
		if (w->nat) {
			/* the client sends to the public address ... */
			if (w->family == 4)
				fc_key4(&in[0].key, w->proto, "198.18.0.10", 40000, "198.19.0.99",
					icmp ? 8 : 8080);
			else
				fc_key6(&in[0].key, w->proto, "2001:2::10", 40000, "2001:2:0:1::99",
					icmp ? 128 : 8080);
			/* ... the server answers the translated source */
			if (w->family == 4)
				fc_key4(&in[1].key, w->proto, "198.19.0.10", icmp ? 50000 : 80,
					"198.18.9.1", icmp ? 0 : 50000);
			else
				fc_key6(&in[1].key, w->proto, "2001:2:0:1::10", icmp ? 50000 : 80,
					"2001:2::9:1", icmp ? 129 : 50000);
		}
		for (int d = 0; d < 2; d++) {
			in[d].vlan = w->vlan_in;
			in[d].udp_no_csum = w->udp_no_csum;
			in[d].ttl = 64;
			cs.mf[d].key = in[d].key;
			cs.mf[d].key.port = (uint16_t)d;
			cs.mf[d].key.vlan = w->vlan_in;
			cs.mf[d].nhop = (uint32_t)d;
			cs.mf[d].action = FC_ACTION_FWD;
			cs.mf[d].tcp_wscale = 0;
			cs.mf[d].timeout_s = 0;
		}
		cs.verdict = FC_VERDICT_CUT_THRU;
		assert_int_equal(fp_conn_create(t->fp, &cs, t->now, &id), 0);

		for (int d = 0; d < 2; d++) {
			uint8_t buf[2048];
			size_t len;
			const char *why;
			struct fc_key back;

			/* what must leave: built from scratch */
			want[d] = in[d];
			memcpy(want[d].dmac, d == 0 ? SERVER_MAC : CLIENT_MAC, 6);
			memcpy(want[d].smac, d == 0 ? LIF1_MAC : LIF0_MAC, 6);
			want[d].vlan = w->vlan_out;
			want[d].ttl = 63;
			fp_key_reverse(&in[d ^ 1].key, &back);
			memcpy(want[d].key.src, back.src, 16);
			memcpy(want[d].key.dst, back.dst, 16);
			want[d].key.sport = back.sport;
			if (!icmp)
				want[d].key.dport = back.dport;
			len = fc_frame_build(&want[d], buf, sizeof(buf));

			expect(send_frame(t, (uint16_t)d, &in[d]), FC_CNT_FROM_WIRE_TO_WIRE, d == 0 ? 1 : 0);
			if (fc_frame_check(t->out, t->out_len, &why) != 0)
				fail_msg("direction %d: bad %s", d, why);
			assert_int_equal(t->out_len, len);
			assert_memory_equal(t->out, buf, len);
		}
	}
}

/* ---- TCP ---- */

/* The truth table and the rewrite again, the tables on fp_heap_create()'s heap. */
static void
test_truth_table_on_heap(void **state)
{
	test_truth_table(state);
}

static void
test_forward_rewrite_on_heap(void **state)
{
	test_forward_rewrite(state);
}

static void
test_tcp_give_back_and_revive(void **state)
{
	struct t *t = *state;
	struct fc_frame_spec o = orig_frame(6, IPPROTO_TCP), p = reply_frame(6, IPPROTO_TCP);
	fp_conn_id id = conn_make(t, 6, IPPROTO_TCP, FC_ACTION_IPS);
	struct fp_event ev[4];
	struct fp_conn_info ci;

	expect(send_frame(t, 0, &o), FC_CNT_FROM_WIRE_TO_WIRE_VERDICT_CUT_THRU, 1);
	o.tcp_flags = FP_TCP_RST;
	expect(send_frame(t, 0, &o), FC_CNT_FROM_WIRE_TO_KN_TCP_FIN_SYN_RST, FP_DEST_HOST);
	o.tcp_flags = FP_TCP_ACK;
	/* stops matching at once, both ways */
	expect(send_frame(t, 0, &o), FC_CNT_FROM_WIRE_TO_KN_CONN_INVALID, FP_DEST_HOST);
	expect(send_frame(t, 1, &p), FC_CNT_FROM_WIRE_TO_KN_CONN_INVALID, FP_DEST_HOST);
	assert_int_equal(fp_sweep(t->fp, t->now, 0, ev, 4), 1);
	assert_int_equal(ev[0].type, FC_EV_GIVEN_BACK);
	assert_int_equal(ev[0].reason, FC_REASON_TCP_FIN_SYN_RST);
	assert_int_equal(ev[0].id, id);
	assert_memory_equal(&ev[0].key[0], &conn_spec(6, IPPROTO_TCP, 0).mf[0].key,
			    sizeof(struct fc_key));
	assert_int_equal(fp_sweep(t->fp, t->now, 0, ev, 4), 0);	/* reported once */

	/* revived: matches again */
	assert_int_equal(fp_conn_revive(t->fp, id), 0);
	assert_int_equal(fp_conn_revive(t->fp, id), -EALREADY);
	expect(send_frame(t, 1, &p), FC_CNT_FROM_WIRE_TO_WIRE_VERDICT_CUT_THRU, 0);

	/* given back again and not revived: removed after the terminal time */
	p.tcp_flags = FP_TCP_FIN | FP_TCP_ACK;
	expect(send_frame(t, 1, &p), FC_CNT_FROM_WIRE_TO_KN_TCP_FIN_SYN_RST, FP_DEST_HOST);
	t->now += 4 * S;
	assert_int_equal(fp_sweep(t->fp, t->now, 0, ev, 4), 1);
	assert_int_equal(ev[0].type, FC_EV_GIVEN_BACK);
	assert_int_equal(fp_conn_get(t->fp, id, &ci), 0);
	assert_int_equal(ci.state, FP_CONN_INVALID);
	t->now += 5 * S;
	assert_int_equal(fp_sweep(t->fp, t->now, 0, ev, 4), 1);
	assert_int_equal(ev[0].type, FC_EV_REMOVED);
	assert_int_equal(ev[0].reason, FC_REASON_TERMINAL);
	assert_int_equal(fp_conn_get(t->fp, id, &ci), -ENOENT);
	assert_int_equal(fp_conn_count(t->fp), 0);
	expect(send_frame(t, 1, &p), FC_CNT_FROM_WIRE_TO_KN_NON_ACCEL, FP_DEST_HOST);
}

static void
test_tcp_max_retrans(void **state)
{
	struct t *t = *state;
	struct fc_frame_spec o = orig_frame(4, IPPROTO_TCP), p = reply_frame(4, IPPROTO_TCP);
	struct fp_event ev[2];

	conn_make(t, 4, IPPROTO_TCP, FC_ACTION_FWD);
	/* a growing stream is no repeat */
	for (int i = 0; i < 30; i++) {
		expect(send_frame(t, 0, &o), FC_CNT_FROM_WIRE_TO_WIRE, 1);
		o.seq += o.payload;
	}
	/* the same ACK, end and window: nine pass, the tenth gives back */
	p.payload = 0;
	for (int i = 1; i < FP_MAX_RETRANS; i++)
		expect(send_frame(t, 1, &p), FC_CNT_FROM_WIRE_TO_WIRE, 0);
	/* the other direction's repeats are its own */
	expect(send_frame(t, 0, &o), FC_CNT_FROM_WIRE_TO_WIRE, 1);
	expect(send_frame(t, 1, &p), FC_CNT_FROM_WIRE_TO_KN_TCP_MAX_RETRANS, FP_DEST_HOST);
	expect(send_frame(t, 0, &o), FC_CNT_FROM_WIRE_TO_KN_CONN_INVALID, FP_DEST_HOST);
	assert_int_equal(fp_sweep(t->fp, t->now, 0, ev, 2), 1);
	assert_int_equal(ev[0].type, FC_EV_GIVEN_BACK);
	assert_int_equal(ev[0].reason, FC_REASON_TCP_MAX_RETRANS);

	/* a changed window breaks the run */
	assert_int_equal(fp_conn_revive(t->fp, ev[0].id), 0);
	for (int i = 0; i < 3 * FP_MAX_RETRANS; i++) {
		p.win = (uint16_t)(1000 + (i % FP_MAX_RETRANS == 0));
		expect(send_frame(t, 1, &p), FC_CNT_FROM_WIRE_TO_WIRE, 0);
	}
}

/*
 * A give-back is reported at once (fp_given_back), not when the sweep
 * passes, and once: the sweep does not report it again.  A full ring
 * loses nothing: the sweep finds what did not fit.
 */
static void
test_given_back_at_once(void **state)
{
	struct t *t = *state;
	struct fc_frame_spec o = orig_frame(4, IPPROTO_TCP);
	fp_conn_id id = conn_make(t, 4, IPPROTO_TCP, FC_ACTION_IPS);
	struct fp_event ev[4];

	assert_int_equal(fp_given_back(t->fp, ev, 4), 0);
	o.tcp_flags = FP_TCP_FIN | FP_TCP_ACK;
	expect(send_frame(t, 0, &o), FC_CNT_FROM_WIRE_TO_KN_TCP_FIN_SYN_RST, FP_DEST_HOST);
	assert_int_equal(fp_given_back(t->fp, ev, 0), 0);	/* no room: kept */
	assert_int_equal(fp_given_back(t->fp, ev, 4), 1);
	assert_int_equal(ev[0].type, FC_EV_GIVEN_BACK);
	assert_int_equal(ev[0].reason, FC_REASON_TCP_FIN_SYN_RST);
	assert_int_equal(ev[0].id, id);
	assert_int_equal(fp_given_back(t->fp, ev, 4), 0);
	assert_int_equal(fp_sweep(t->fp, t->now, 0, ev, 4), 0);	/* reported once */

	/* revived and given back again: a report of its own */
	assert_int_equal(fp_conn_revive(t->fp, id), 0);
	o.tcp_flags = FP_TCP_RST;
	expect(send_frame(t, 0, &o), FC_CNT_FROM_WIRE_TO_KN_TCP_FIN_SYN_RST, FP_DEST_HOST);
	assert_int_equal(fp_given_back(t->fp, ev, 4), 1);
	assert_int_equal(ev[0].id, id);

}

/* More give-backs than a worker's ring holds: the sweep reports the rest. */
static void
test_given_back_ring_full(void **state)
{
	struct t *t = *state;
	unsigned int n = fp_conn_capacity(t->fp), got = 0, k;
	struct fp_event *ev = calloc(n, sizeof(*ev));

	assert_non_null(ev);
	for (unsigned int i = 0; i < n; i++) {
		struct fc_frame_spec f = orig_frame(4, IPPROTO_TCP);
		struct fp_conn_spec sp = conn_spec(4, IPPROTO_TCP, FC_ACTION_IPS);
		fp_conn_id id;

		sp.mf[0].key.sport = sp.mf[1].key.dport = htons((uint16_t)(20000 + i));
		assert_int_equal(fp_conn_create(t->fp, &sp, t->now, &id), 0);
		f.key.sport = htons((uint16_t)(20000 + i));
		f.tcp_flags = FP_TCP_FIN | FP_TCP_ACK;
		expect(send_frame(t, 0, &f), FC_CNT_FROM_WIRE_TO_KN_TCP_FIN_SYN_RST, FP_DEST_HOST);
	}
	while ((k = fp_given_back(t->fp, ev + got, 16)) > 0)
		got += k;
	assert_true(got > 0 && got < n);	/* the ring held fewer than the table */
	got += fp_sweep(t->fp, t->now, 0, ev + got, n - got);
	assert_int_equal(got, n);
	for (unsigned int i = 0; i < n; i++)
		assert_int_equal(ev[i].type, FC_EV_GIVEN_BACK);
	assert_int_equal(fp_sweep(t->fp, t->now, 0, ev, n), 0);	/* each once */
	free(ev);
}

/*
 * The listing and the sweep skip empty slots a word of fp->used at a time:
 * on a table of 200 (three words and a part) with connections left in
 * slots across the words' edges, the listing returns exactly those, in
 * slot order, windows cut mid-word included; a sweep of budget 50 slots
 * covers the table in four, empty stretches counted, and ages each idle
 * connection out once.
 */
static void
test_listing_and_sweep_skip_empty(void **state)
{
	enum { N = 200, BUDGET = 50 };
	struct fp_params p = { .name = "used", .max_conns = N, .max_nhops = 2, .max_workers = 1,
			       .socket_id = SOCKET_ID_ANY };
	static const uint32_t kept[] = { 0, 7, 62, 63, 64, 65, 127, 128, 140, 191, 192, 199 };
	fp_conn_id ids[N];
	struct fp_conn_info ci;
	struct fp_event ev[N];
	struct fp *fp;
	uint32_t slot, n, k;
	uint64_t now = 1000 * S;

	(void)state;
	fp = fp_create(&p);
	assert_non_null(fp);
	for (uint32_t i = 0; i < N; i++) {
		struct fp_conn_spec sp = conn_spec(4, IPPROTO_UDP, FC_ACTION_IPS);

		sp.mf[0].key.sport = sp.mf[1].key.dport = htons((uint16_t)(20000 + i));
		sp.mf[0].timeout_s = sp.mf[1].timeout_s = 10;
		assert_int_equal(fp_conn_create(fp, &sp, now, &ids[i]), 0);
	}
	for (uint32_t i = 0, j = 0; i < N; i++) {
		if (j < sizeof(kept) / sizeof(kept[0]) && kept[j] == i)
			j++;
		else
			assert_int_equal(fp_conn_remove(fp, ids[i], NULL), 0);
	}
	/* the whole table: the kept, in order (slots were taken 0, 1, ...) */
	for (slot = 0, k = 0; fp_conn_next(fp, &slot, &ci) == 0; k++) {
		assert_true(k < sizeof(kept) / sizeof(kept[0]));
		assert_true(ci.id == ids[kept[k]]);
	}
	assert_int_equal(k, sizeof(kept) / sizeof(kept[0]));
	assert_int_equal(slot, N);
	/* a window 63..140 (cut mid-word at both ends): 63, 64, 65, 127, 128 */
	for (slot = 63, k = 0; fp_conn_next_before(fp, &slot, 140, &ci) == 0; k++)
		assert_true(ci.id == ids[kept[3 + k]]);
	assert_int_equal(k, 5);
	assert_int_equal(slot, 140);
	/* idle past 10 s: four sweeps of 50 slots age out every one, each once */
	now += 11 * S;
	for (n = 0, k = 0; k < N / BUDGET; k++)
		n += fp_sweep(fp, now, BUDGET, ev + n, N - n);
	assert_int_equal(n, sizeof(kept) / sizeof(kept[0]));
	for (uint32_t i = 0; i < n; i++) {
		assert_int_equal(ev[i].type, FC_EV_AGED_OUT);
		assert_true(ev[i].id == ids[kept[i]]);
	}
	assert_int_equal(fp_conn_count(fp), 0);
	assert_int_equal(fp_sweep(fp, now, 0, ev, N), 0);
	slot = 0;
	assert_int_equal(fp_conn_next(fp, &slot, &ci), -ENOENT);
	fp_destroy(fp);
}

/* Puts a SACK option (one block, left..right) into a frame's TCP options. */
static void
sack(struct fc_frame_spec *s, uint32_t left, uint32_t right)
{
	uint8_t o[12] = { 1, 1, 5, 10, (uint8_t)(left >> 24), (uint8_t)(left >> 16),
			  (uint8_t)(left >> 8), (uint8_t)left, (uint8_t)(right >> 24),
			  (uint8_t)(right >> 16), (uint8_t)(right >> 8), (uint8_t)right };

	memcpy(s->tcp_opts, o, sizeof(o));
	s->tcp_optlen = sizeof(o);
}

/*
 * A receiver in loss recovery repeats its ACK while its SACK blocks grow:
 * the connection works, nothing is given back.  The same ACK with the same
 * SACK ten times is a stalled sender: given back.
 */
static void
test_tcp_dup_acks_with_sack(void **state)
{
	struct t *t = *state;
	struct fc_frame_spec p = reply_frame(4, IPPROTO_TCP);

	conn_make(t, 4, IPPROTO_TCP, FC_ACTION_FWD);
	p.payload = 0;
	for (uint32_t i = 0; i < 3 * FP_MAX_RETRANS; i++) {
		sack(&p, 3000, 4000 + 100 * i);	/* more arrives after the hole */
		expect(send_frame(t, 1, &p), FC_CNT_FROM_WIRE_TO_WIRE, 0);
	}
	/* nothing more arrives: the last one above was the first of ten */
	for (int i = 2; i < FP_MAX_RETRANS; i++)
		expect(send_frame(t, 1, &p), FC_CNT_FROM_WIRE_TO_WIRE, 0);
	expect(send_frame(t, 1, &p), FC_CNT_FROM_WIRE_TO_KN_TCP_MAX_RETRANS, FP_DEST_HOST);
}

/*
 * Given back, then revived after the host carried the stream for a while:
 * the next segments are far past what the fast path saw last, both ways,
 * and must be forwarded (tracking learnt anew), not called out of window
 * for good (each side's segments beyond a stale edge, its ACKs ahead of a
 * stale end: the lab saw a download go through the host to its end).
 */
static void
test_tcp_revive_learns_anew(void **state)
{
	struct t *t = *state;
	struct fc_frame_spec o = orig_frame(4, IPPROTO_TCP), p = reply_frame(4, IPPROTO_TCP);
	fp_conn_id id;

	assert_int_equal(fp_cfg_set(t->fp, FC_CFG_OFFLOAD | FC_CFG_TCP_SEQ_CHK), 0);
	id = conn_make(t, 4, IPPROTO_TCP, FC_ACTION_FWD);
	expect(send_frame(t, 0, &o), FC_CNT_FROM_WIRE_TO_WIRE, 1);
	p.payload = 0;
	expect(send_frame(t, 1, &p), FC_CNT_FROM_WIRE_TO_WIRE, 0);
	o.tcp_flags = FP_TCP_RST | FP_TCP_ACK;
	expect(send_frame(t, 0, &o), FC_CNT_FROM_WIRE_TO_KN_TCP_FIN_SYN_RST, FP_DEST_HOST);
	assert_int_equal(fp_conn_revive(t->fp, id), 0);
	/* 20 MB later, through the host meanwhile */
	o.tcp_flags = FP_TCP_ACK;
	o.seq += 20000000;
	p.ack = o.seq;
	p.seq += 7;
	o.ack = p.seq;
	for (int i = 0; i < 4; i++) {
		expect(send_frame(t, 0, &o), FC_CNT_FROM_WIRE_TO_WIRE, 1);
		expect(send_frame(t, 1, &p), FC_CNT_FROM_WIRE_TO_WIRE, 0);
		o.seq += o.payload;
		p.ack = o.seq;
	}
	/* and the window is checked again */
	o.seq += 1000000;
	expect(send_frame(t, 0, &o), FC_CNT_FROM_WIRE_TO_KN_TCP_SEQ_CHK_INVALID, FP_DEST_HOST);
}

static void
test_tcp_seq_chk(void **state)
{
	static const struct {
		const char *name;
		int64_t dseq, dack;	/* added to the next in-window segment */
		bool valid;
	} rows[] = {
		{ "in window", 0, 0, true },
		{ "retransmission of the last segment", -18, 0, true },
		{ "beyond the receiver's window", 1000 + 5000, 0, false },
		{ "far past", -1000000, 0, false },
		{ "acks data never sent", 0, 100000, false },
		{ "acks far back", 0, -200000, false },
	};
	struct t *t = *state;

	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		for (int chk = 0; chk < 2; chk++) {
			struct fc_frame_spec o, p;
			bool pass = rows[r].valid || !chk;

			print_message("seq %s, TCP_SEQ_CHK %s\n", rows[r].name, chk ? "on" : "off");
			assert_int_equal(teardown(state), 0);
			assert_int_equal(setup(state), 0);
			t = *state;
			o = orig_frame(4, IPPROTO_TCP);
			p = reply_frame(4, IPPROTO_TCP);
			assert_int_equal(fp_cfg_set(t->fp, FC_CFG_OFFLOAD | (chk ? FC_CFG_TCP_SEQ_CHK : 0)), 0);
			conn_make(t, 4, IPPROTO_TCP, FC_ACTION_FWD);
			/* both ways seen: windows of 1000 each */
			expect(send_frame(t, 0, &o), FC_CNT_FROM_WIRE_TO_WIRE, 1);
			p.payload = 0;
			expect(send_frame(t, 1, &p), FC_CNT_FROM_WIRE_TO_WIRE, 0);
			o.seq = (uint32_t)(o.seq + o.payload + rows[r].dseq);
			o.ack = (uint32_t)(o.ack + rows[r].dack);
			expect(send_frame(t, 0, &o), pass ? FC_CNT_FROM_WIRE_TO_WIRE
						    : FC_CNT_FROM_WIRE_TO_KN_TCP_SEQ_CHK_INVALID,
			       pass ? 1 : FP_DEST_HOST);
		}
	}
}

/*
 * A FIN, SYN or RST gives the connection back only inside the tracked
 * window (coprocessor-model.md step 6): one outside it (a spoofed RST)
 * goes to the host alone, counted TCP_FIN_SYN_RST_OUT_OF_WINDOW, and the
 * connection forwards on, both ways, with no GIVEN_BACK event.  With no
 * window yet (a direction not seen since the create) it gives back.  Each
 * row in both directions, IPv4 and IPv6, TCP_SEQ_CHK off and on (it plays
 * no part here), on a fresh fast path (teardown checks the sum).
 */
static void
test_tcp_flags_window(void **state)
{
	static const struct {
		const char *name;
		uint8_t flags;
		int64_t dseq, dack;	/* added to the next in-window segment */
		unsigned int seen;	/* directions seen before: 2 both, 1 the sender's, 0 none */
		bool gives_back;
	} rows[] = {
		{ "FIN in the window", FP_TCP_FIN | FP_TCP_ACK, 0, 0, 2, true },
		{ "FIN after the last segment's retransmission", FP_TCP_FIN | FP_TCP_ACK, -18, 0, 2, true },
		{ "FIN far outside", FP_TCP_FIN | FP_TCP_ACK, 0x40000000, 0, 2, false },
		{ "FIN acking data never sent", FP_TCP_FIN | FP_TCP_ACK, 0, 100000, 2, false },
		{ "SYN in the window", FP_TCP_SYN, 0, 0, 2, true },
		{ "SYN far outside", FP_TCP_SYN, -0x70000000ll, 0, 2, false },
		{ "RST at the sender's end", FP_TCP_RST, 0, 0, 2, true },
		{ "RST|ACK at the sender's end", FP_TCP_RST | FP_TCP_ACK, 0, 0, 2, true },
		{ "RST far outside", FP_TCP_RST, 0x40000000, 0, 2, false },
		{ "RST far behind", FP_TCP_RST, -1000000, 0, 2, false },
		{ "RST in the receiver's window, past the sender's end", FP_TCP_RST, 100, 0, 2, false },
		{ "RST|ACK acking data never sent", FP_TCP_RST | FP_TCP_ACK, 0, 100000, 2, false },
		{ "RST far outside, just offloaded: no window, gives back", FP_TCP_RST, 0x40000000, 0, 0, true },
		{ "RST far outside, the other way not seen: gives back", FP_TCP_RST, 0x40000000, 0, 1, true },
	};
	struct t *t = *state;

	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++)
	for (int family = 4; family <= 6; family += 2)
	for (unsigned int dir = 0; dir < 2; dir++)
	for (int chk = 0; chk < 2; chk++) {
		struct fc_frame_spec f[2], flagged;
		struct fp_event ev[2];
		struct fp_conn_info ci;
		fp_conn_id id;
		uint16_t in = (uint16_t)dir, out = (uint16_t)(dir ^ 1);

		print_message("%s, IPv%d, direction %u, TCP_SEQ_CHK %s\n", rows[r].name, family,
			      dir, chk ? "on" : "off");
		assert_int_equal(teardown(state), 0);
		assert_int_equal(setup(state), 0);
		t = *state;
		assert_int_equal(fp_cfg_set(t->fp, FC_CFG_OFFLOAD | (chk ? FC_CFG_TCP_SEQ_CHK : 0)), 0);
		id = conn_make(t, family, IPPROTO_TCP, FC_ACTION_FWD);
		f[0] = orig_frame(family, IPPROTO_TCP);
		f[1] = reply_frame(family, IPPROTO_TCP);
		f[1].ack = f[0].seq + f[0].payload;
		f[0].ack = f[1].seq + f[1].payload;
		/* the windows: each way 18 bytes sent, windows of 1000 */
		if (rows[r].seen >= 1)
			expect(send_frame(t, in, &f[dir]), FC_CNT_FROM_WIRE_TO_WIRE, out);
		if (rows[r].seen >= 2)
			expect(send_frame(t, out, &f[dir ^ 1]), FC_CNT_FROM_WIRE_TO_WIRE, in);
		f[0].seq += f[0].payload;
		f[1].seq += f[1].payload;

		flagged = f[dir];
		flagged.payload = 0;
		flagged.tcp_flags = rows[r].flags;
		flagged.seq = (uint32_t)(flagged.seq + rows[r].dseq);
		flagged.ack = (uint32_t)(flagged.ack + rows[r].dack);
		if (!(rows[r].flags & FP_TCP_ACK))
			flagged.ack = 0;
		expect(send_frame(t, in, &flagged),
		       rows[r].gives_back ? FC_CNT_FROM_WIRE_TO_KN_TCP_FIN_SYN_RST
					  : FC_CNT_FROM_WIRE_TO_KN_TCP_FIN_SYN_RST_OUT_OF_WINDOW,
		       FP_DEST_HOST);
		assert_int_equal(counter(t, FC_CNT_FROM_WIRE_TO_KN_TCP_FIN_SYN_RST), rows[r].gives_back);
		assert_int_equal(counter(t, FC_CNT_FROM_WIRE_TO_KN_TCP_FIN_SYN_RST_OUT_OF_WINDOW),
				 !rows[r].gives_back);
		assert_int_equal(fp_given_back(t->fp, ev, 2), rows[r].gives_back);
		assert_int_equal(fp_conn_get(t->fp, id, &ci), 0);
		assert_int_equal(ci.state, rows[r].gives_back ? FP_CONN_INVALID : FP_CONN_VALID);
		if (rows[r].gives_back) {
			expect(send_frame(t, in, &f[dir]), FC_CNT_FROM_WIRE_TO_KN_CONN_INVALID, FP_DEST_HOST);
			continue;
		}
		/* the connection forwards on, both ways, in the window it had */
		for (int i = 0; i < 3; i++) {
			expect(send_frame(t, in, &f[dir]), FC_CNT_FROM_WIRE_TO_WIRE, out);
			f[dir].seq += f[dir].payload;
			f[dir ^ 1].ack = f[dir].seq;
			expect(send_frame(t, out, &f[dir ^ 1]), FC_CNT_FROM_WIRE_TO_WIRE, in);
		}
		assert_int_equal(counter(t, FC_CNT_FROM_WIRE_TO_KN_TCP_SEQ_CHK_INVALID), 0);
		assert_int_equal(fp_given_back(t->fp, ev, 2), 0);
		/* and a close in the window still gives it back */
		flagged = f[dir];
		flagged.payload = 0;
		flagged.tcp_flags = FP_TCP_FIN | FP_TCP_ACK;
		expect(send_frame(t, in, &flagged), FC_CNT_FROM_WIRE_TO_KN_TCP_FIN_SYN_RST, FP_DEST_HOST);
		assert_int_equal(fp_given_back(t->fp, ev, 2), 1);
		assert_int_equal(ev[0].reason, FC_REASON_TCP_FIN_SYN_RST);
	}
}

/*
 * The repeated-ACK rule is the real sender's: an RST outside the window
 * in the middle of a run neither breaks nor counts in it; the tenth ACK
 * gives back.
 */
static void
test_tcp_spoof_in_dup_acks(void **state)
{
	struct t *t = *state;
	struct fc_frame_spec o = orig_frame(4, IPPROTO_TCP), p = reply_frame(4, IPPROTO_TCP);
	struct fc_frame_spec rst;

	conn_make(t, 4, IPPROTO_TCP, FC_ACTION_FWD);
	expect(send_frame(t, 0, &o), FC_CNT_FROM_WIRE_TO_WIRE, 1);
	p.payload = 0;
	for (int i = 1; i < FP_MAX_RETRANS; i++)
		expect(send_frame(t, 1, &p), FC_CNT_FROM_WIRE_TO_WIRE, 0);
	rst = p;
	rst.tcp_flags = FP_TCP_RST;
	rst.seq += 0x40000000;
	expect(send_frame(t, 1, &rst), FC_CNT_FROM_WIRE_TO_KN_TCP_FIN_SYN_RST_OUT_OF_WINDOW,
	       FP_DEST_HOST);
	expect(send_frame(t, 1, &p), FC_CNT_FROM_WIRE_TO_KN_TCP_MAX_RETRANS, FP_DEST_HOST);
}

/* ---- time ---- */

/* What happens between a connection's first forwarded frame and its next. */
static void ff_none(struct t *t, fp_conn_id *id) { (void)t; (void)id; }
static void
ff_modify(struct t *t, fp_conn_id *id)
{
	struct fp_conn_mod m = { .mask = FP_MOD_ACTION | FP_MOD_TIMEOUT,
				 .action = { FC_ACTION_FWD, FC_ACTION_FWD },
				 .timeout_s = { 30, 30 } };

	assert_int_equal(fp_conn_modify(t->fp, *id, &m), 0);
}
static void
ff_cut(struct t *t, fp_conn_id *id)
{
	assert_int_equal(fp_conn_verdict_set(t->fp, *id, FC_VERDICT_DROP), 0);
}
static void
ff_revive(struct t *t, fp_conn_id *id)
{
	struct fc_frame_spec rst = orig_frame(4, IPPROTO_TCP);

	rst.tcp_flags = FP_TCP_RST;
	expect(send_frame(t, 0, &rst), FC_CNT_FROM_WIRE_TO_KN_TCP_FIN_SYN_RST, FP_DEST_HOST);
	assert_int_equal(fp_conn_revive(t->fp, *id), 0);
}
static void
ff_remade(struct t *t, fp_conn_id *id)
{
	struct fp_conn_info ci;
	struct fp_event ev[4];
	fp_conn_id old = *id;

	assert_int_equal(fp_conn_remove(t->fp, old, NULL), 0);
	assert_int_equal(fp_conn_get(t->fp, old, &ci), -ENOENT);
	*id = conn_make(t, 6, IPPROTO_UDP, FC_ACTION_IPS);
	assert_int_equal(fp_conn_get(t->fp, *id, &ci), 0);
	assert_int_equal(ci.mf[0].first_fwd, 0);
	assert_int_equal(ci.mf[1].first_fwd, 0);
	/* the old slot freed (the sweep, past the grace period), then taken again */
	assert_int_equal(fp_sweep(t->fp, t->now, 0, ev, 4), 0);
	for (uint16_t sport = 41000;; sport++) {
		struct fp_conn_spec cs = conn_spec(6, IPPROTO_UDP, FC_ACTION_IPS);
		fp_conn_id other;

		assert_true(sport < 41000 + 64);
		cs.mf[0].key.sport = htons(sport);
		cs.mf[1].key.dport = htons(sport);
		assert_int_equal(fp_conn_create(t->fp, &cs, t->now, &other), 0);
		if (FP_CONN_SLOT(other) != FP_CONN_SLOT(old))
			continue;
		assert_int_equal(fp_conn_get(t->fp, other, &ci), 0);
		assert_int_equal(ci.mf[0].first_fwd, 0);
		assert_int_equal(ci.mf[1].first_fwd, 0);
		break;
	}
}

/*
 * The first forwarded frame's stamp (fp.h, fp_conn_info's first_fwd), as
 * rows: a connection forwards its first frame at T1, then `between`, then
 * a frame at T2 counted `second`; the original direction's stamp is then
 * T1 (kept), T2 (made anew) - the reply's stays 0.  Then the reply's own
 * stamp, and a burst at time 0.
 */
static void
test_first_fwd(void **state)
{
	enum { KEPT, AT_T2 };
	static const struct {
		const char *what;
		int family;
		uint8_t proto;
		void (*between)(struct t *t, fp_conn_id *id);
		enum fc_cnt second;
		int stamp;
	} rows[] = {
		{ "a second frame: stamped once", 4, IPPROTO_UDP, ff_none,
		  FC_CNT_FROM_WIRE_TO_WIRE_VERDICT_CUT_THRU, KEPT },
		{ "a second frame, IPv6", 6, IPPROTO_UDP, ff_none,
		  FC_CNT_FROM_WIRE_TO_WIRE_VERDICT_CUT_THRU, KEPT },
		{ "kept across a modify (action, timeouts)", 4, IPPROTO_UDP, ff_modify,
		  FC_CNT_FROM_WIRE_TO_WIRE, KEPT },
		{ "kept across a cut: the drop stamps nothing", 6, IPPROTO_UDP, ff_cut,
		  FC_CNT_FROM_WIRE_DROP_IPS_VERDICT, KEPT },
		{ "kept across a give-back and revive (TCP)", 4, IPPROTO_TCP, ff_revive,
		  FC_CNT_FROM_WIRE_TO_WIRE_VERDICT_CUT_THRU, KEPT },
		{ "cleared by its delete: made again, stamped anew", 6, IPPROTO_UDP, ff_remade,
		  FC_CNT_FROM_WIRE_TO_WIRE_VERDICT_CUT_THRU, AT_T2 },
	};
	struct t *t = *state;
	struct fp_conn_info ci;
	struct fc_frame_spec p;
	fp_conn_id id;

	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		struct fc_frame_spec o = orig_frame(rows[r].family, rows[r].proto);
		uint64_t t1, t2;

		print_message("first frame: %s\n", rows[r].what);
		assert_int_equal(teardown(state), 0);
		assert_int_equal(setup(state), 0);
		t = *state;
		id = conn_make(t, rows[r].family, rows[r].proto, FC_ACTION_IPS);
		t1 = t->now += 3 * MS;
		expect(send_frame(t, 0, &o), FC_CNT_FROM_WIRE_TO_WIRE_VERDICT_CUT_THRU, 1);
		assert_int_equal(fp_conn_get(t->fp, id, &ci), 0);
		assert_int_equal(ci.mf[0].first_fwd, t1);
		assert_int_equal(ci.mf[1].first_fwd, 0);
		rows[r].between(t, &id);
		t2 = t->now += 5 * MS;
		expect(send_frame(t, 0, &o), rows[r].second, dest_for(rows[r].second, 1));
		assert_int_equal(fp_conn_get(t->fp, id, &ci), 0);
		assert_int_equal(ci.mf[0].first_fwd, rows[r].stamp == KEPT ? t1 : t2);
		assert_int_equal(ci.mf[1].first_fwd, 0);
		assert_true(ci.mf[0].first_fwd <= ci.mf[0].stats.last_seen);
	}

	/* the reply's stamp is its own */
	p = reply_frame(4, IPPROTO_UDP);
	assert_int_equal(teardown(state), 0);
	assert_int_equal(setup(state), 0);
	t = *state;
	id = conn_make(t, 4, IPPROTO_UDP, FC_ACTION_FWD);
	t->now += 7 * MS;
	expect(send_frame(t, 1, &p), FC_CNT_FROM_WIRE_TO_WIRE, 0);
	assert_int_equal(fp_conn_get(t->fp, id, &ci), 0);
	assert_int_equal(ci.mf[0].first_fwd, 0);
	assert_int_equal(ci.mf[1].first_fwd, t->now);

	/* a burst at time 0 stamps 1: 0 stays "none" */
	t->now = 0;
	p = orig_frame(4, IPPROTO_UDP);
	expect(send_frame(t, 0, &p), FC_CNT_FROM_WIRE_TO_WIRE, 1);
	assert_int_equal(fp_conn_get(t->fp, id, &ci), 0);
	assert_int_equal(ci.mf[0].first_fwd, 1);
}

static void
test_aging(void **state)
{
	struct t *t = *state;
	struct fc_frame_spec o = orig_frame(4, IPPROTO_UDP), p = reply_frame(4, IPPROTO_UDP);
	uint64_t t0 = t->now;
	fp_conn_id id = conn_make(t, 4, IPPROTO_UDP, FC_ACTION_IPS);
	fp_conn_id cut = 0;
	struct fp_conn_spec cs = conn_spec(4, IPPROTO_UDP, FC_ACTION_IPS);
	struct fc_frame_spec co = o;
	struct fp_event ev[4];

	/* a second, cut connection: it stays while its sender sends */
	cs.mf[0].key.sport = co.key.sport = htons(40002);
	cs.mf[1].key.dport = htons(40002);
	cs.mf[0].timeout_s = cs.mf[1].timeout_s = 30;
	assert_int_equal(fp_conn_create(t->fp, &cs, t->now, &cut), 0);
	assert_int_equal(fp_conn_verdict_set(t->fp, cut, FC_VERDICT_DROP), 0);

	t->now = t0 + 30 * S;
	expect(send_frame(t, 0, &o), FC_CNT_FROM_WIRE_TO_WIRE_VERDICT_CUT_THRU, 1);
	for (int s = 0; s < 100; s += 10) {
		t->now = t0 + (uint64_t)s * S;
		expect(send_frame(t, 0, &co), FC_CNT_FROM_WIRE_DROP_IPS_VERDICT, FP_DEST_DROP);
		assert_int_equal(fp_sweep(t->fp, t->now, 0, ev, 4), 0);
	}
	/* t0+90: the first idle 90 s one way, 60 s the other (not past 60) */
	t->now = t0 + 90 * S;
	assert_int_equal(fp_sweep(t->fp, t->now, 0, ev, 4), 0);
	t->now = t0 + 91 * S;
	assert_int_equal(fp_sweep(t->fp, t->now, 0, ev, 4), 1);
	assert_int_equal(ev[0].type, FC_EV_AGED_OUT);
	assert_int_equal(ev[0].reason, FC_REASON_IDLE);
	assert_int_equal(ev[0].id, id);
	assert_int_equal(ev[0].stats[0].packets, 1);
	assert_int_equal(ev[0].stats[0].bytes, 20 + 8 + 18);
	assert_int_equal(ev[0].stats[0].last_seen, t0 + 30 * S);
	assert_int_equal(ev[0].stats[1].packets, 0);
	expect(send_frame(t, 1, &p), FC_CNT_FROM_WIRE_TO_KN_NON_ACCEL, FP_DEST_HOST);
	/* the cut one, quiet since t0+90 with a 30 s timeout, leaves at t0+121 */
	t->now = t0 + 120 * S;
	assert_int_equal(fp_sweep(t->fp, t->now, 0, ev, 4), 0);
	t->now = t0 + 121 * S;
	assert_int_equal(fp_sweep(t->fp, t->now, 0, ev, 4), 1);
	assert_int_equal(ev[0].id, cut);
	assert_int_equal(ev[0].stats[0].packets, 10);
	assert_int_equal(fp_conn_count(t->fp), 0);
}

/* A full event array never loses an event: the sweep stops and resumes. */
static void
test_sweep_no_lost_events(void **state)
{
	struct t *t = *state;
	struct fp_event ev[1];
	unsigned int total = 0;

	for (int i = 0; i < 10; i++) {
		struct fp_conn_spec cs = conn_spec(4, IPPROTO_UDP, FC_ACTION_FWD);
		fp_conn_id id;

		cs.mf[0].key.sport = cs.mf[1].key.dport = htons((uint16_t)(1000 + i));
		assert_int_equal(fp_conn_create(t->fp, &cs, t->now, &id), 0);
	}
	t->now += 61 * S;
	for (int i = 0; i < 40 && total < 10; i++)
		total += fp_sweep(t->fp, t->now, 0, ev, 1);
	assert_int_equal(total, 10);
	assert_int_equal(fp_conn_count(t->fp), 0);
}

static void
test_fw_rev(void **state)
{
	struct t *t = *state;
	struct fc_frame_spec o = orig_frame(4, IPPROTO_UDP);
	struct fp_event ev[4];
	fp_conn_id id;

	fp_fw_rev_set(t->fp, 7);
	id = conn_make(t, 4, IPPROTO_UDP, FC_ACTION_IPS);
	expect(send_frame(t, 0, &o), FC_CNT_FROM_WIRE_TO_WIRE_VERDICT_CUT_THRU, 1);
	fp_fw_rev_set(t->fp, 8);
	expect(send_frame(t, 0, &o), FC_CNT_FROM_WIRE_TO_KN_FW_REV_MISMATCH, FP_DEST_HOST);
	assert_int_equal(fp_sweep(t->fp, t->now, 0, ev, 4), 1);
	assert_int_equal(ev[0].type, FC_EV_REMOVED);
	assert_int_equal(ev[0].reason, FC_REASON_FW_REV);
	assert_int_equal(ev[0].id, id);
	/* judged again and offloaded again under the new revision */
	conn_make(t, 4, IPPROTO_UDP, FC_ACTION_IPS);
	expect(send_frame(t, 0, &o), FC_CNT_FROM_WIRE_TO_WIRE_VERDICT_CUT_THRU, 1);
}

/*
 * After a revision change the host offloads a connection again as soon as
 * the new rules pass it, before any sweep: the new one takes the keys of
 * the old-revision one (which goes without an event), and the keys of one
 * of the revision in force stay refused.
 */
static void
test_fw_rev_create_replaces(void **state)
{
	struct t *t = *state;
	struct fc_frame_spec o = orig_frame(4, IPPROTO_UDP);
	struct fp_conn_spec cs = conn_spec(4, IPPROTO_UDP, FC_ACTION_IPS);
	struct fp_event ev[4];
	fp_conn_id old, id, got;

	fp_fw_rev_set(t->fp, 7);
	old = conn_make(t, 4, IPPROTO_UDP, FC_ACTION_IPS);
	fp_fw_rev_set(t->fp, 8);
	expect(send_frame(t, 0, &o), FC_CNT_FROM_WIRE_TO_KN_FW_REV_MISMATCH, FP_DEST_HOST);
	assert_int_equal(fp_conn_create(t->fp, &cs, t->now, &id), 0);
	assert_int_not_equal(id, old);
	assert_int_equal(fp_conn_count(t->fp), 1);
	assert_int_equal(fp_conn_lookup(t->fp, &cs.mf[1].key, &got, NULL), 0);
	assert_int_equal(got, id);
	expect(send_frame(t, 0, &o), FC_CNT_FROM_WIRE_TO_WIRE_VERDICT_CUT_THRU, 1);
	/* the old one is gone: no command reaches it, no sweep reports it */
	assert_int_equal(fp_conn_verdict_set(t->fp, old, FC_VERDICT_DROP), -ENOENT);
	assert_int_equal(fp_sweep(t->fp, t->now, 0, ev, 4), 0);
	/* the revision in force keeps its keys */
	assert_int_equal(fp_conn_create(t->fp, &cs, t->now, &got), -EEXIST);
}

/* ---- making connections: all or nothing ---- */

static void
mut_family(struct fp_conn_spec *c) { c->mf[1].key.family = 6; }
static void
mut_bad_family(struct fp_conn_spec *c) { c->mf[0].key.family = 5; }
static void
mut_v4_junk(struct fp_conn_spec *c) { c->mf[0].key.src[9] = 1; }
static void
mut_pad(struct fp_conn_spec *c) { c->mf[1].key.zero[3] = 1; }
static void
mut_port(struct fp_conn_spec *c) { c->mf[0].key.port = FP_MAX_PORTS; }
static void
mut_vlan(struct fp_conn_spec *c) { c->mf[0].key.vlan = 4096; }
static void
mut_same(struct fp_conn_spec *c) { c->mf[1].key = c->mf[0].key; }
static void
mut_action(struct fp_conn_spec *c) { c->mf[1].action = 4; }
static void
mut_verdict(struct fp_conn_spec *c) { c->verdict = 3; }
static void
mut_nhop(struct fp_conn_spec *c) { c->mf[0].nhop = 16; }
static void
mut_wscale(struct fp_conn_spec *c) { c->mf[0].tcp_wscale = 15; }
static void
mut_proto(struct fp_conn_spec *c) { c->mf[1].key.proto = IPPROTO_TCP; }
static void
mut_nat_gre(struct fp_conn_spec *c)
{
	for (int d = 0; d < 2; d++) {
		c->mf[d].key.proto = IPPROTO_GRE;
		c->mf[d].key.sport = c->mf[d].key.dport = 0;
	}
	c->mf[1].key.dst[3] = 99;
}

static void
mut_icmp6_in_v4(struct fp_conn_spec *c)
{
	for (int d = 0; d < 2; d++) {
		c->mf[d].key.proto = IPPROTO_ICMPV6;
		c->mf[d].key.sport = htons(7);
		c->mf[d].key.dport = (uint16_t)(d ? 129 : 128);
	}
}

static void
test_create_refusals(void **state)
{
	static const struct {
		const char *name;
		void (*mut)(struct fp_conn_spec *);
		int err;
	} rows[] = {
		{ "families differ", mut_family, -EINVAL },
		{ "no such family", mut_bad_family, -EINVAL },
		{ "IPv4 key with bytes past the address", mut_v4_junk, -EINVAL },
		{ "padding set", mut_pad, -EINVAL },
		{ "port out of range", mut_port, -EINVAL },
		{ "VLAN out of range", mut_vlan, -EINVAL },
		{ "both keys equal", mut_same, -EINVAL },
		{ "action out of range", mut_action, -EINVAL },
		{ "verdict out of range", mut_verdict, -EINVAL },
		{ "next hop out of range", mut_nhop, -EINVAL },
		{ "window scale out of range", mut_wscale, -EINVAL },
		{ "protocols differ", mut_proto, -EINVAL },
		{ "NAT on GRE", mut_nat_gre, -EOPNOTSUPP },
		{ "ICMPv6 in an IPv4 key", mut_icmp6_in_v4, -EINVAL },
	};
	struct t *t = *state;

	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		struct fp_conn_spec cs = conn_spec(4, IPPROTO_UDP, FC_ACTION_FWD);
		fp_conn_id id;

		print_message("refuse: %s\n", rows[r].name);
		rows[r].mut(&cs);
		assert_int_equal(fp_conn_create(t->fp, &cs, t->now, &id), rows[r].err);
		assert_int_equal(fp_conn_count(t->fp), 0);
		assert_int_equal(fp_conn_lookup(t->fp, &cs.mf[0].key, &id, NULL), -ENOENT);
		assert_int_equal(fp_conn_lookup(t->fp, &cs.mf[1].key, &id, NULL), -ENOENT);
	}
}

static void
test_create_exists_and_full(void **state)
{
	struct t *t = *state;
	struct fp_conn_spec cs = conn_spec(4, IPPROTO_UDP, FC_ACTION_FWD);
	struct fp_conn_spec half = cs;
	fp_conn_id id, first, got;
	unsigned int dir;
	struct fp_event ev[1];

	first = conn_make(t, 4, IPPROTO_UDP, FC_ACTION_FWD);
	/* one key taken: refused, and the other key was not added */
	half.mf[1].key.sport = htons(1);
	assert_int_equal(fp_conn_create(t->fp, &half, t->now, &id), -EEXIST);
	assert_int_equal(fp_conn_lookup(t->fp, &half.mf[1].key, &got, NULL), -ENOENT);
	assert_int_equal(fp_conn_lookup(t->fp, &cs.mf[1].key, &got, &dir), 0);
	assert_int_equal(got, first);
	assert_int_equal(dir, 1);
	assert_int_equal(fp_conn_count(t->fp), 1);

	/* fill the table (64), one more is refused; frames go to the host */
	for (int i = 1; i < 64; i++) {
		struct fp_conn_spec c = cs;

		c.mf[0].key.sport = c.mf[1].key.dport = htons((uint16_t)(2000 + i));
		assert_int_equal(fp_conn_create(t->fp, &c, t->now, &id), 0);
	}
	assert_int_equal(fp_conn_count(t->fp), 64);
	{
		struct fp_conn_spec c = cs;
		struct fc_frame_spec o = orig_frame(4, IPPROTO_UDP);

		c.mf[0].key.sport = c.mf[1].key.dport = o.key.sport = htons(3000);
		assert_int_equal(fp_conn_create(t->fp, &c, t->now, &id), -ENOSPC);
		expect(send_frame(t, 0, &o), FC_CNT_FROM_WIRE_TO_KN_NON_ACCEL, FP_DEST_HOST);
		/* room again once one leaves and its grace period is over */
		assert_int_equal(fp_conn_remove(t->fp, first, NULL), 0);
		fp_sweep(t->fp, t->now, 1, ev, 1);
		assert_int_equal(fp_conn_create(t->fp, &c, t->now, &id), 0);
		expect(send_frame(t, 0, &o), FC_CNT_FROM_WIRE_TO_WIRE, 1);
		/* the slot was reused: the old handle reaches nothing */
		assert_int_equal(FP_CONN_SLOT(id), FP_CONN_SLOT(first));
		assert_int_equal(fp_conn_verdict_set(t->fp, first, FC_VERDICT_DROP), -ENOENT);
		assert_int_equal(fp_conn_remove(t->fp, first, NULL), -ENOENT);
	}
}

static void
test_remove_final_counts(void **state)
{
	struct t *t = *state;
	struct fc_frame_spec o = orig_frame(6, IPPROTO_UDP), p = reply_frame(6, IPPROTO_UDP);
	fp_conn_id id = conn_make(t, 6, IPPROTO_UDP, FC_ACTION_FWD);
	struct fp_mflow_stats st[2];
	struct fp_conn_info ci;
	uint32_t slot = 0;

	for (int i = 0; i < 3; i++)
		expect(send_frame(t, 0, &o), FC_CNT_FROM_WIRE_TO_WIRE, 1);
	expect(send_frame(t, 1, &p), FC_CNT_FROM_WIRE_TO_WIRE, 0);
	assert_int_equal(fp_conn_next(t->fp, &slot, &ci), 0);
	assert_int_equal(ci.id, id);
	assert_int_equal(ci.mf[0].stats.packets, 3);
	assert_int_equal(fp_conn_next(t->fp, &slot, &ci), -ENOENT);
	assert_int_equal(fp_conn_remove(t->fp, id, st), 0);
	assert_int_equal(st[0].packets, 3);
	assert_int_equal(st[0].bytes, 3 * (40 + 8 + 18));
	assert_int_equal(st[1].packets, 1);
	/* stops matching at once */
	expect(send_frame(t, 0, &o), FC_CNT_FROM_WIRE_TO_KN_NON_ACCEL, FP_DEST_HOST);
	assert_int_equal(fp_conn_remove(t->fp, id, st), -ENOENT);
}

static void
test_modify(void **state)
{
	struct t *t = *state;
	struct fc_frame_spec o = orig_frame(4, IPPROTO_UDP), p = reply_frame(4, IPPROTO_UDP);
	fp_conn_id id = conn_make(t, 4, IPPROTO_UDP, FC_ACTION_FWD);
	struct fp_conn_mod m = { .mask = FP_MOD_ACTION,
				 .action = { FC_ACTION_IPS, FC_ACTION_DROP } };
	struct fp_conn_info ci;

	assert_int_equal(fp_conn_modify(t->fp, id, &m), 0);
	expect(send_frame(t, 0, &o), FC_CNT_FROM_WIRE_TO_WIRE_VERDICT_CUT_THRU, 1);
	expect(send_frame(t, 1, &p), FC_CNT_FROM_WIRE_DROP_MFLOW_ACTION, FP_DEST_DROP);
	m.mask = FP_MOD_TIMEOUT;
	m.timeout_s[0] = 5;
	m.timeout_s[1] = 0;
	assert_int_equal(fp_conn_modify(t->fp, id, &m), 0);
	assert_int_equal(fp_conn_get(t->fp, id, &ci), 0);
	assert_int_equal(ci.mf[0].timeout_s, 5);
	assert_int_equal(ci.mf[1].timeout_s, FP_DEFAULT_TIMEOUT_S);
	/* a bad action changes nothing, not even the good half */
	m.mask = FP_MOD_ACTION | FP_MOD_TIMEOUT;
	m.action[0] = FC_ACTION_FWD;
	m.action[1] = 9;
	m.timeout_s[0] = 77;
	assert_int_equal(fp_conn_modify(t->fp, id, &m), -EINVAL);
	assert_int_equal(fp_conn_get(t->fp, id, &ci), 0);
	assert_int_equal(ci.mf[0].action, FC_ACTION_IPS);
	assert_int_equal(ci.mf[0].timeout_s, 5);
	m.mask = 0x80;
	assert_int_equal(fp_conn_modify(t->fp, id, &m), -EINVAL);
}

/* ---- configuration, ports, counters ---- */

static void
test_cfg_word(void **state)
{
	struct t *t = *state;
	struct fp *fresh;
	struct fp_params p = { .name = "cfgboot", .max_conns = 1, .max_nhops = 1,
			       .max_workers = 1, .socket_id = SOCKET_ID_ANY };

	fresh = fp_create(&p);
	assert_non_null(fresh);
	assert_int_equal(fp_cfg_get(fresh), 0x002);
	fp_destroy(fresh);
	fp_destroy(NULL);

	assert_int_equal(fp_cfg_set(t->fp, FC_CFG_ALL), 0);
	assert_int_equal(fp_cfg_get(t->fp), 0x80f);
	assert_int_equal(fp_cfg_set(t->fp, 0x010), -EINVAL);
	assert_int_equal(fp_cfg_set(t->fp, FC_CFG_OFFLOAD | 0x100), -EINVAL);
	assert_int_equal(fp_cfg_get(t->fp), 0x80f);

	p.max_conns = 0;
	assert_null(fp_create(&p));
	p.max_conns = 1;
	p.name = "a-name-that-is-far-too-long";
	assert_null(fp_create(&p));
}

static void
test_lifs_and_nhops(void **state)
{
	struct t *t = *state;
	struct fp_lif l = { .port = 1, .vlan = 0, .mtu = 1500 };
	struct fp_nhop n;
	uint32_t rev0, rev1;

	assert_int_equal(fp_lif_set(t->fp, 5, &l), -EEXIST);	/* port 1 untagged is LIF 1 */
	l.vlan = 4096;
	assert_int_equal(fp_lif_set(t->fp, 5, &l), -EINVAL);
	l.vlan = 10;
	l.mtu = 20;
	assert_int_equal(fp_lif_set(t->fp, 5, &l), -EINVAL);
	assert_int_equal(fp_lif_set(t->fp, FP_MAX_LIFS, &l), -EINVAL);
	assert_int_equal(fp_lif_get(t->fp, 5, &l), -ENOENT);

	/* moving LIF 0 to VLAN 7 frees untagged port 0 */
	assert_int_equal(fp_lif_get(t->fp, 0, &l), 0);
	l.vlan = 7;
	assert_int_equal(fp_lif_set(t->fp, 0, &l), 0);
	{
		struct fc_frame_spec o = orig_frame(4, IPPROTO_UDP);

		expect(send_frame(t, 0, &o), FC_CNT_FROM_WIRE_DROP_LIF_UNKNOWN, FP_DEST_DROP);
		o.vlan = 7;
		expect(send_frame(t, 0, &o), FC_CNT_FROM_WIRE_TO_KN_NON_ACCEL, FP_DEST_HOST);
	}

	assert_int_equal(fp_nhop_get(t->fp, 0, &n, &rev0), 0);
	n.resolved = false;
	n.mtu = 9000;
	assert_int_equal(fp_nhop_set(t->fp, 0, &n, false), 0);
	assert_int_equal(fp_nhop_get(t->fp, 0, &n, &rev1), 0);
	assert_int_equal(rev1, rev0);		/* same neighbour */
	n.port = 0;
	assert_int_equal(fp_nhop_set(t->fp, 0, &n, false), 0);
	assert_int_equal(fp_nhop_get(t->fp, 0, &n, &rev1), 0);
	assert_int_equal(rev1, rev0 + 1);	/* another one */
	n.dmac[0] ^= 0x10;
	assert_int_equal(fp_nhop_set(t->fp, 0, &n, false), 0);
	assert_int_equal(fp_nhop_get(t->fp, 0, &n, &rev0), 0);
	assert_int_equal(rev0, rev1);		/* its new MAC */
	assert_int_equal(fp_nhop_set(t->fp, 0, &n, true), 0);
	assert_int_equal(fp_nhop_get(t->fp, 0, &n, &rev0), 0);
	assert_int_equal(rev0, rev1 + 1);	/* the host says: another one */
	n.mtu = 67;
	assert_int_equal(fp_nhop_set(t->fp, 0, &n, false), -EINVAL);
	assert_int_equal(fp_nhop_set(t->fp, 16, &n, false), -EINVAL);
	assert_int_equal(fp_nhop_get(t->fp, 16, &n, NULL), -EINVAL);
}

/* A next hop that resolves after its connections were made: they forward. */
static void
test_nhop_resolves_later(void **state)
{
	static const uint8_t zero[6];
	struct t *t = *state;
	struct fc_frame_spec o = orig_frame(4, IPPROTO_UDP);

	nhop0_set(t, false, zero, 1500, 0);
	conn_make(t, 4, IPPROTO_UDP, FC_ACTION_FWD);
	expect(send_frame(t, 0, &o), FC_CNT_FROM_WIRE_TO_KN_NHOP_UNRESOLVED, FP_DEST_HOST);
	nhop0_set(t, true, SERVER_MAC, 1500, 0);
	expect(send_frame(t, 0, &o), FC_CNT_FROM_WIRE_TO_WIRE, 1);
	assert_memory_equal(t->out, SERVER_MAC, 6);
	/* the same neighbour's new MAC (a server replaced): followed at once */
	nhop0_set(t, true, CLIENT_MAC, 1500, 0);
	expect(send_frame(t, 0, &o), FC_CNT_FROM_WIRE_TO_WIRE, 1);
	assert_memory_equal(t->out, CLIENT_MAC, 6);
	/* a smaller MTU too: what no longer fits goes to the host */
	nhop0_set(t, true, CLIENT_MAC, 100, 0);
	o.payload = 100;
	expect(send_frame(t, 0, &o), FC_CNT_FROM_WIRE_TO_KN_MTU_EXCEEDED, FP_DEST_HOST);
	o.payload = 18;
	/* the index given to another neighbour: its connections go to the host */
	nhop0_program(t, true, SERVER_MAC, 1500, 0, true);
	expect(send_frame(t, 0, &o), FC_CNT_FROM_WIRE_TO_KN_NHOP_STALE, FP_DEST_HOST);
}

static void
test_counters_and_host_path(void **state)
{
	struct t *t = *state;
	struct fc_frame_spec o = orig_frame(4, IPPROTO_UDP);
	uint64_t c[FC_CNT_MAX];

	conn_make(t, 4, IPPROTO_UDP, FC_ACTION_FWD);
	for (int i = 0; i < 5; i++)
		expect(send_frame(t, 0, &o), FC_CNT_FROM_WIRE_TO_WIRE, 1);
	assert_int_equal(counter(t, FC_CNT_FROM_WIRE_RX), 5);
	assert_int_equal(fp_from_host(t->w, 1), 1);
	assert_int_equal(fp_from_host(t->w, 9), FP_DEST_DROP);
	assert_int_equal(fp_from_host(t->w, 60000), FP_DEST_DROP);
	fp_counters_read(t->fp, c);
	assert_int_equal(c[FC_CNT_FROM_KN_RX], 3);
	assert_int_equal(c[FC_CNT_FROM_KN_TO_WIRE], 1);
	assert_int_equal(c[FC_CNT_FROM_KN_DROP_LIF_UNKNOWN], 2);
	fp_counters_clear(t->fp);
	fp_counters_read(t->fp, c);
	for (unsigned int i = 0; i < FC_CNT_MAX; i++)
		assert_int_equal(c[i], 0);
	expect(send_frame(t, 0, &o), FC_CNT_FROM_WIRE_TO_WIRE, 1);
	assert_int_equal(counter(t, FC_CNT_FROM_WIRE_TO_WIRE), 1);
	/* names: every counter has one: the vendor's prefixes, or the program's */
	for (unsigned int i = 0; i < FC_CNT_MAX; i++)
		assert_true(strncmp(fc_cnt_name(i), fc_cnt_class(i) == FC_CLS_NPU ? "NPU_" : "FROM_",
				    fc_cnt_class(i) == FC_CLS_NPU ? 4 : 5) == 0);
	assert_null(fc_cnt_name(FC_CNT_MAX));
}

/* ---- the new-connection limit (step 3, flowcut's) ---- */

/*
 * One row: the clock moved on by `advance`, then `n` frames of a kind on
 * worker `worker`, each counted `want`.  TCP frames miss unless `conn`
 * (the connection made first: a hit, never metered).
 */
struct meter_row {
	const char *what;
	uint64_t advance;
	int family;
	uint8_t proto;
	uint8_t flags;		/* TCP */
	unsigned int worker;
	unsigned int n;
	enum fc_cnt want;
};

#define SYN_ FP_TCP_SYN
#define ACK_ FP_TCP_ACK
#define NEW_OK FC_CNT_FROM_WIRE_TO_KN_NON_ACCEL
#define NEW_DROP FC_CNT_FROM_WIRE_DROP_NEW_CONN_RATE

/*
 * 2,000 SYNs a second for the coprocessor, the fixture's 2 workers 1,000
 * each: a SYN a millisecond, a bucket of 100 (100 ms), full at the start.
 */
static const struct meter_row meter_rows[] = {
	{ "a full bucket: 100 SYNs to the host", 0, 4, IPPROTO_TCP, SYN_, 0, 100, NEW_OK },
	{ "the 101st drops (IPv4)", 0, 4, IPPROTO_TCP, SYN_, 0, 1, NEW_DROP },
	{ "the same bucket for IPv6", 0, 6, IPPROTO_TCP, SYN_, 0, 3, NEW_DROP },
	{ "a SYN-ACK is never metered", 0, 4, IPPROTO_TCP, SYN_ | ACK_, 0, 5, NEW_OK },
	{ "an ACK is never metered", 0, 6, IPPROTO_TCP, ACK_, 0, 5, NEW_OK },
	{ "a RST is never metered", 0, 4, IPPROTO_TCP, FP_TCP_RST, 0, 5, NEW_OK },
	{ "UDP is never metered (IPv4)", 0, 4, IPPROTO_UDP, 0, 0, 5, NEW_OK },
	{ "UDP is never metered (IPv6)", 0, 6, IPPROTO_UDP, 0, 0, 5, NEW_OK },
	{ "ICMP is never metered", 0, 4, IPPROTO_ICMP, 0, 0, 5, NEW_OK },
	{ "ICMPv6 is never metered", 0, 6, IPPROTO_ICMPV6, 0, 0, 5, NEW_OK },
	{ "worker 1's bucket is its own", 0, 6, IPPROTO_TCP, SYN_, 1, 100, NEW_OK },
	{ "... and empties the same", 0, 4, IPPROTO_TCP, SYN_, 1, 1, NEW_DROP },
	{ "half a millisecond: no SYN yet", MS / 2, 6, IPPROTO_TCP, SYN_, 0, 1, NEW_DROP },
	{ "a millisecond on: one SYN (IPv6)", MS / 2, 6, IPPROTO_TCP, SYN_, 0, 1, NEW_OK },
	{ "... and no second", 0, 6, IPPROTO_TCP, SYN_, 0, 1, NEW_DROP },
	{ "10 ms: 10 SYNs (IPv4)", 10 * MS, 4, IPPROTO_TCP, SYN_, 0, 10, NEW_OK },
	{ "... the 11th drops", 0, 4, IPPROTO_TCP, SYN_, 0, 1, NEW_DROP },
	{ "10 s: the bucket full, no more", 10 * S, 4, IPPROTO_TCP, SYN_, 0, 100, NEW_OK },
	{ "... the 101st drops", 0, 6, IPPROTO_TCP, SYN_, 0, 1, NEW_DROP },
};

/* Runs the rows; returns how many frames they dropped. */
static uint64_t
run_meter_rows(struct t *t, const struct meter_row *rows, size_t nrows, struct fp_worker *w1)
{
	uint64_t drops = 0;

	for (size_t r = 0; r < nrows; r++) {
		const struct meter_row *row = &rows[r];
		struct fc_frame_spec s = orig_frame(row->family, row->proto);

		t->now += row->advance;
		s.tcp_flags = row->flags;
		for (unsigned int i = 0; i < row->n; i++) {
			struct rte_mbuf *m;
			struct fp_out o;

			s.key.sport = (uint16_t)htons((uint16_t)(1024 + r * 128 + i));
			if (row->proto == IPPROTO_ICMP || row->proto == IPPROTO_ICMPV6)
				s.key.sport = 0;
			m = mbuf_of(&s);
			assert_int_equal(fp_process_burst(row->worker ? w1 : t->w, 0, &m, 1,
							  t->now, &o), 1);
			rte_pktmbuf_free(m);
			if (o.reason != row->want)
				fail_msg("%s: frame %u counted %s, expected %s", row->what, i,
					 fc_cnt_name(o.reason), fc_cnt_name(row->want));
			assert_int_equal(o.dest, dest_for(row->want, 1));
		}
		if (row->want == NEW_DROP)
			drops += row->n;
	}
	return drops;
}

static void
test_new_conn_rate(void **state)
{
	struct t *t = *state;
	struct fp_worker *w1;

	assert_int_equal(fp_new_conn_rate_get(t->fp), 0);
	assert_int_equal(fp_new_conn_rate_set(t->fp, FP_NEW_CONN_RATE_MAX + 1), -EINVAL);
	assert_int_equal(fp_new_conn_rate_get(t->fp), 0);
	assert_int_equal(fp_new_conn_rate_set(t->fp, 2000), 0);
	assert_int_equal(fp_new_conn_rate_get(t->fp), 2000);
	w1 = fp_worker_create(t->fp, 1);	/* after the set: its bucket full too */
	assert_non_null(w1);
	assert_int_equal(counter(t, NEW_DROP),
			 run_meter_rows(t, meter_rows, sizeof(meter_rows) / sizeof(meter_rows[0]), w1));
	fp_worker_destroy(w1);
}

/*
 * The bucket empty: a SYN of a connection the fast path holds is a hit
 * (step 6 gives it back), never metered; with no limit (0) no miss drops;
 * set again, the bucket starts full.
 */
static const struct meter_row meter_off_rows[] = {
	{ "no limit: 300 SYNs to the host (IPv6)", 0, 6, IPPROTO_TCP, SYN_, 0, 300, NEW_OK },
	{ "no limit: 300 SYNs to the host (IPv4)", 0, 4, IPPROTO_TCP, SYN_, 0, 300, NEW_OK },
};

static void
test_new_conn_rate_off_and_hits(void **state)
{
	struct t *t = *state;
	struct fc_frame_spec s = orig_frame(6, IPPROTO_TCP);

	conn_make(t, 6, IPPROTO_TCP, FC_ACTION_FWD);
	assert_int_equal(fp_new_conn_rate_set(t->fp, 2000), 0);
	/* 100 to the host, then a drop: the bucket empty */
	assert_int_equal(run_meter_rows(t, meter_rows, 2, NULL), 1);
	s.tcp_flags = SYN_;
	expect(send_frame(t, 0, &s), FC_CNT_FROM_WIRE_TO_KN_TCP_FIN_SYN_RST, FP_DEST_HOST);
	assert_int_equal(fp_new_conn_rate_set(t->fp, 0), 0);
	assert_int_equal(run_meter_rows(t, meter_off_rows, 2, NULL), 0);
	assert_int_equal(fp_new_conn_rate_set(t->fp, 2000), 0);
	assert_int_equal(run_meter_rows(t, meter_rows, 2, NULL), 1);
	assert_int_equal(counter(t, NEW_DROP), 2);
}

/* A burst of mixed frames: each gets its own outcome, in place. */
static void
test_mixed_burst(void **state)
{
	struct t *t = *state;
	struct rte_mbuf *m[FP_BURST_MAX];
	struct fp_out out[FP_BURST_MAX];
	fp_conn_id cut;
	struct fc_frame_spec fwd = orig_frame(4, IPPROTO_UDP);
	struct fp_conn_spec cs = conn_spec(6, IPPROTO_TCP, FC_ACTION_IPS);
	struct fc_frame_spec ips = orig_frame(6, IPPROTO_TCP);

	conn_make(t, 4, IPPROTO_UDP, FC_ACTION_FWD);
	assert_int_equal(fp_conn_create(t->fp, &cs, t->now, &cut), 0);
	assert_int_equal(fp_conn_verdict_set(t->fp, cut, FC_VERDICT_DROP), 0);
	for (int i = 0; i < FP_BURST_MAX; i++) {
		struct fc_frame_spec s = i % 3 == 0 ? fwd : ips;

		if (i % 3 == 2)
			s.key.sport = htons(1);	/* no microflow */
		m[i] = mbuf_of(&s);
	}
	assert_int_equal(fp_process_burst(t->w, 0, m, FP_BURST_MAX, t->now, out), FP_BURST_MAX);
	for (int i = 0; i < FP_BURST_MAX; i++) {
		if (i % 3 == 0)
			expect(out[i], FC_CNT_FROM_WIRE_TO_WIRE, 1);
		else if (i % 3 == 1)
			expect(out[i], FC_CNT_FROM_WIRE_DROP_IPS_VERDICT, FP_DEST_DROP);
		else
			expect(out[i], FC_CNT_FROM_WIRE_TO_KN_NON_ACCEL, FP_DEST_HOST);
		rte_pktmbuf_free(m[i]);
	}
	assert_int_equal(counter(t, FC_CNT_FROM_WIRE_RX), FP_BURST_MAX);
}

/* The headroom a VLAN push needs, missing: to the host, the frame unchanged. */
static void
test_no_headroom(void **state)
{
	struct t *t = *state;
	struct fc_frame_spec o = orig_frame(4, IPPROTO_UDP);
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	uint8_t buf[256];
	size_t len = fc_frame_build(&o, buf, sizeof(buf));
	struct fp_nhop n;
	struct fp_out out;

	assert_int_equal(fp_nhop_get(t->fp, 0, &n, NULL), 0);
	n.vlan = 5;
	assert_int_equal(fp_nhop_set(t->fp, 0, &n, false), 0);
	conn_make(t, 4, IPPROTO_UDP, FC_ACTION_FWD);
	m->data_off = 0;
	memcpy(rte_pktmbuf_append(m, (uint16_t)len), buf, len);
	out = send_mbuf(t, 0, m);
	expect(out, FC_CNT_FROM_WIRE_TO_KN_NO_HEADROOM, FP_DEST_HOST);
	assert_memory_equal(t->out, buf, len);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_truth_table, setup, teardown),
		cmocka_unit_test_setup_teardown(test_truth_table_on_heap, setup_heap, teardown),
		cmocka_unit_test_setup_teardown(test_forward_rewrite_on_heap, setup_heap, teardown),
		cmocka_unit_test(test_heap_fits),
		cmocka_unit_test_setup_teardown(test_verdict_drop_and_back, setup, teardown),
		cmocka_unit_test_setup_teardown(test_host_lease, setup, teardown),
		cmocka_unit_test_setup_teardown(test_model_steps, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unparsed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_forward_rewrite, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tcp_give_back_and_revive, setup, teardown),
		cmocka_unit_test_setup_teardown(test_given_back_at_once, setup, teardown),
		cmocka_unit_test_setup_teardown(test_given_back_ring_full, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tcp_max_retrans, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tcp_dup_acks_with_sack, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tcp_seq_chk, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tcp_flags_window, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tcp_spoof_in_dup_acks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tcp_revive_learns_anew, setup, teardown),
		cmocka_unit_test_setup_teardown(test_aging, setup, teardown),
		cmocka_unit_test_setup_teardown(test_first_fwd, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sweep_no_lost_events, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fw_rev, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fw_rev_create_replaces, setup, teardown),
		cmocka_unit_test_setup_teardown(test_create_refusals, setup, teardown),
		cmocka_unit_test_setup_teardown(test_create_exists_and_full, setup, teardown),
		cmocka_unit_test_setup_teardown(test_remove_final_counts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_modify, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cfg_word, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lifs_and_nhops, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nhop_resolves_later, setup, teardown),
		cmocka_unit_test_setup_teardown(test_counters_and_host_path, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mixed_burst, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_headroom, setup, teardown),
		cmocka_unit_test_setup_teardown(test_new_conn_rate, setup, teardown),
		cmocka_unit_test_setup_teardown(test_new_conn_rate_off_and_hits, setup, teardown),
		cmocka_unit_test(test_listing_and_sweep_skip_empty),
	};

	if (fc_eal_init("test_fp", 256) != 0)
		return 1;
	pool = rte_pktmbuf_pool_create("test_fp_pool", 1023, 0, 0,
				       RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	if (pool == NULL) {
		fprintf(stderr, "test_fp: mbuf pool: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
