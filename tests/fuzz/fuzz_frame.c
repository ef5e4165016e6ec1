/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz target: one frame through the whole decision.
 *
 * Input: byte 0 picks the ingress port (bits 0-1) and the configuration
 * word (bits 2-7 map onto OFFLOAD, TCP_SEQ_CHK, IPS, DROP_IF_IPS_OFF); byte
 * 1 picks the connections' action and verdict; the rest is the frame.
 * The table holds TCP, UDP and ICMP connections, IPv4 and IPv6, plain and
 * NATed, on the addresses the seeds use (fuzz_seeds() below), so
 * mutations reach every step.  Checks: no crash or sanitizer report, the
 * counters add up after every frame, a frame sent to the wire still parses
 * and carries valid checksums.
 *
 * Built by clang with libFuzzer (build/fuzz/fuzz_frame, with
 * libfuzzer_glue.c), and by the normal compiler with replay_main.c
 * (build/fuzz_frame_replay), which replays the kept corpus and every
 * regression input in the normal suite.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_mbuf.h>

#include "fc_eal.h"
#include "fc_frame.h"
#include "fuzz.h"
#include "fp.h"

static struct fp *fp;
static struct fp_worker *w;
static struct rte_mempool *pool;
static fp_conn_id ids[64];
static unsigned int nids;

static void
die(const char *what)
{
	fprintf(stderr, "fuzz_frame: %s\n", what);
	abort();
}

static void
add_conn(const struct fc_key *k0, const struct fc_key *k1)
{
	struct fp_conn_spec cs = { .verdict = FC_VERDICT_CUT_THRU };

	cs.mf[0].key = *k0;
	cs.mf[1].key = *k1;
	cs.mf[1].key.port = 1;
	cs.mf[1].nhop = 1;
	cs.mf[0].action = cs.mf[1].action = FC_ACTION_IPS;
	if (fp_conn_create(fp, &cs, 0, &ids[nids++]) != 0)
		die("connection");
}

/* The table's keys; NAT keys put the server behind a public address. */
static void fuzz_key(int family, uint8_t proto, bool nat, struct fc_key *k0, struct fc_key *k1);

#define FUZZ_LIF0_MAC { 2, 0, 0, 0, 0, 1 }
#define FUZZ_LIF1_MAC { 2, 0, 0, 0, 0, 2 }
#define FUZZ_VLAN 10

int
fuzz_init(void)
{
	static const uint8_t protos4[] = { IPPROTO_TCP, IPPROTO_UDP, IPPROTO_ICMP, IPPROTO_GRE };
	static const uint8_t protos6[] = { IPPROTO_TCP, IPPROTO_UDP, IPPROTO_ICMPV6, IPPROTO_ESP };
	struct fp_params p = { .name = "fuzz", .max_conns = 64, .max_nhops = 4,
			       .max_workers = 1, .socket_id = SOCKET_ID_ANY };
	struct fp_lif l0 = { .port = 0, .mtu = 1500, .mac = FUZZ_LIF0_MAC };
	struct fp_lif l1 = { .port = 1, .mtu = 1500, .mac = FUZZ_LIF1_MAC };
	struct fp_lif l2 = { .port = 0, .vlan = FUZZ_VLAN, .mtu = 1500, .mac = FUZZ_LIF0_MAC };
	struct fp_nhop n0 = { .port = 1, .vlan = FUZZ_VLAN, .mtu = 1500, .resolved = true,
			      .dmac = { 2, 0, 0, 0, 0, 0xb2 }, .smac = FUZZ_LIF1_MAC };
	struct fp_nhop n1 = { .port = 0, .mtu = 1400, .resolved = true,
			      .dmac = { 2, 0, 0, 0, 0, 0xa1 }, .smac = FUZZ_LIF0_MAC };

	if (fc_eal_init("fuzz_frame", 128) != 0)
		return -1;
	pool = rte_pktmbuf_pool_create("fuzz_pool", 63, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
				       SOCKET_ID_ANY);
	fp = fp_create(&p);
	if (pool == NULL || fp == NULL || (w = fp_worker_create(fp, 0)) == NULL)
		die("setup");
	if (fp_lif_set(fp, 0, &l0) || fp_lif_set(fp, 1, &l1) || fp_lif_set(fp, 2, &l2) ||
	    fp_nhop_set(fp, 0, &n0, false) || fp_nhop_set(fp, 1, &n1, false))
		die("ports");
	/* the new-connection limit on: a SYN that misses goes through the meter */
	if (fp_new_conn_rate_set(fp, 100) != 0)
		die("the new-connection limit");
	for (int i = 0; i < 4; i++) {
		struct fc_key k0, k1;

		fuzz_key(4, protos4[i], false, &k0, &k1);
		add_conn(&k0, &k1);
		fuzz_key(4, protos4[i], true, &k0, &k1);
		if (protos4[i] != IPPROTO_GRE)
			add_conn(&k0, &k1);
		fuzz_key(6, protos6[i], false, &k0, &k1);
		add_conn(&k0, &k1);
		fuzz_key(6, protos6[i], true, &k0, &k1);
		if (protos6[i] != IPPROTO_ESP)
			add_conn(&k0, &k1);
	}
	return 0;
}

static void
fuzz_key(int family, uint8_t proto, bool nat, struct fc_key *k0, struct fc_key *k1)
{
	bool icmp = proto == IPPROTO_ICMP || proto == IPPROTO_ICMPV6;
	uint16_t req = proto == IPPROTO_ICMP ? 8 : 128, rep = proto == IPPROTO_ICMP ? 0 : 129;

	if (family == 4) {
		fc_key4(k0, proto, "198.18.0.10", 40000, nat ? "198.19.0.99" : "198.19.0.10",
			icmp ? req : 80);
		fc_key4(k1, proto, "198.19.0.10", icmp ? (nat ? 50000 : 40000) : 80,
			nat ? "198.18.9.1" : "198.18.0.10", icmp ? rep : (nat ? 50000 : 40000));
	} else {
		fc_key6(k0, proto, "2001:2::10", 40000, nat ? "2001:2:0:1::99" : "2001:2:0:1::10",
			icmp ? req : 80);
		fc_key6(k1, proto, "2001:2:0:1::10", icmp ? (nat ? 50000 : 40000) : 80,
			nat ? "2001:2::9:1" : "2001:2::10", icmp ? rep : (nat ? 50000 : 40000));
	}
}

int
fuzz_one(const uint8_t *data, size_t size)
{
	static const uint32_t bits[] = { FC_CFG_OFFLOAD, FC_CFG_TCP_SEQ_CHK, FC_CFG_IPS,
					 FC_CFG_DROP_IF_IPS_OFF };
	struct rte_mbuf *m;
	struct fp_out out;
	uint64_t c[FC_CNT_MAX], sum[FC_CLS_MAX] = { 0 };
	uint32_t cfg = 0;
	uint16_t port;

	if (size < 2 || size - 2 > RTE_MBUF_DEFAULT_DATAROOM)
		return 0;
	port = data[0] & 3;
	for (int i = 0; i < 4; i++)
		if (data[0] & (4 << i))
			cfg |= bits[i];
	fp_cfg_set(fp, cfg);
	for (unsigned int i = 0; i < nids; i++) {
		struct fp_conn_mod mod = { .mask = FP_MOD_ACTION,
					   .action = { data[1] & 3, (data[1] >> 2) & 3 } };

		fp_conn_modify(fp, ids[i], &mod);
		fp_conn_verdict_set(fp, ids[i], (uint8_t)((data[1] >> 4) % FC_VERDICT_MAX));
		fp_conn_revive(fp, ids[i]);	/* undo give-backs of earlier inputs */
	}
	m = rte_pktmbuf_alloc(pool);
	if (m == NULL)
		die("mbuf");
	memcpy(rte_pktmbuf_append(m, (uint16_t)(size - 2)), data + 2, size - 2);
	fp_process_burst(w, port, &m, 1, 1, &out);
	if (fc_cnt_class(out.reason) == FC_CLS_WIRE) {
		struct fp_parsed pp;
		const uint8_t *f = rte_pktmbuf_mtod(m, const uint8_t *);
		const char *why;

		if (fp_parse_frame(f, m->data_len, m->pkt_len, &pp) != FP_PARSE_FLOW)
			die("a forwarded frame no longer parses");
		/* checksums stay as valid as they came in: check only frames that came valid */
		if (fc_frame_check(data + 2, size - 2, NULL) == 0 &&
		    fc_frame_check(f, m->pkt_len, &why) != 0) {
			fprintf(stderr, "fuzz_frame: forwarded with a bad %s\n", why);
			abort();
		}
	}
	rte_pktmbuf_free(m);
	fp_counters_read(fp, c);
	for (unsigned int i = 0; i < FC_CNT_MAX; i++)
		sum[fc_cnt_class(i)] += c[i];
	if (sum[FC_CLS_RX] != sum[FC_CLS_WIRE] + sum[FC_CLS_HOST] + sum[FC_CLS_IPS] +
				 sum[FC_CLS_DROP])
		die("counters do not add up");
	return 0;
}

/* Seeds: a frame of every connection of the table, both ways. */
int
fuzz_seeds(const char *out)
{
	static const uint8_t p4[] = { IPPROTO_TCP, IPPROTO_UDP, IPPROTO_ICMP, IPPROTO_GRE };
	static const uint8_t p6[] = { IPPROTO_TCP, IPPROTO_UDP, IPPROTO_ICMPV6, IPPROTO_ESP };
	static const uint8_t lif0[6] = FUZZ_LIF0_MAC, lif1[6] = FUZZ_LIF1_MAC;

	for (int fam = 4; fam <= 6; fam += 2)
		for (int i = 0; i < 4; i++)
			for (int nat = 0; nat < 2; nat++)
				for (int d = 0; d < 2; d++) {
					struct fc_frame_spec s = { .payload = 20, .win = 512,
								   .tcp_flags = FP_TCP_ACK, .seq = 1 };
					struct fc_key k[2];
					uint8_t buf[256];
					char path[4096];
					size_t len;
					FILE *f;

					fuzz_key(fam, fam == 4 ? p4[i] : p6[i], nat, &k[0], &k[1]);
					s.key = k[d];
					memcpy(s.dmac, d ? lif1 : lif0, 6);
					/* port d; OFFLOAD | IPS; actions IPS both ways; CUT_THRU */
					buf[0] = (uint8_t)(d | 4 | 16);
					buf[1] = (uint8_t)(2 | 2 << 2 | 2 << 4);
					len = fc_frame_build(&s, buf + 2, sizeof(buf) - 2);
					snprintf(path, sizeof(path), "%s/seed-v%d-p%u-nat%d-dir%d", out,
						 fam, s.key.proto, nat, d);
					f = fopen(path, "wb");
					if (f == NULL || fwrite(buf, 1, len + 2, f) != len + 2) {
						fprintf(stderr, "fuzz_frame: %s: %s\n", path, strerror(errno));
						if (f)
							fclose(f);
						return -1;
					}
					fclose(f);
				}
	return 0;
}
