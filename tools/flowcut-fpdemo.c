/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * flowcut-fpdemo: the seed's truth table, observed on the fast path.
 *
 * For each row of the seed's table (the connection's action FWD or IPS,
 * the IPS switch off or on) a UDP stream of IPv4 and IPv6 frames, both
 * ways, crosses a fresh fast path: first with the verdict CUT_THRU, then
 * DROP (the cut), then CUT_THRU again.  Prints what reached the far side
 * in each phase and the counters that moved, and exits non-zero if any
 * row differs from the model (so `make test` can run it as a check).
 */
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_mbuf.h>

#include "fc_eal.h"
#include "fc_frame.h"
#include "fp.h"

#define FRAMES 1000	/* per phase, per direction and family */

static const uint8_t LIF_MAC[2][6] = { { 2, 0, 0, 0, 0, 1 }, { 2, 0, 0, 0, 0, 2 } };
static const uint8_t HOST_MAC[2][6] = { { 2, 0, 0, 0, 0, 0xa1 }, { 2, 0, 0, 0, 0, 0xb2 } };

static struct rte_mempool *pool;

static struct fp *
appliance(unsigned int row, uint32_t cfg)
{
	char name[16];
	struct fp_params p = { .max_conns = 16, .max_nhops = 2, .max_workers = 1,
			       .socket_id = SOCKET_ID_ANY };
	struct fp *fp;

	snprintf(name, sizeof(name), "demo%u", row);
	p.name = name;
	fp = fp_create(&p);
	if (fp == NULL)
		return NULL;
	for (uint16_t i = 0; i < 2; i++) {
		struct fp_lif l = { .port = i, .mtu = 1500 };
		struct fp_nhop n = { .port = (uint16_t)(1 - i), .mtu = 1500, .resolved = true };

		memcpy(l.mac, LIF_MAC[i], 6);
		memcpy(n.dmac, HOST_MAC[1 - i], 6);
		memcpy(n.smac, LIF_MAC[1 - i], 6);
		if (fp_lif_set(fp, i, &l) || fp_nhop_set(fp, i, &n, false))
			return NULL;
	}
	fp_cfg_set(fp, cfg);
	return fp;
}

static void
stream_keys(int family, struct fc_key k[2])
{
	if (family == 4)
		fc_key4(&k[0], IPPROTO_UDP, "198.18.0.10", 40000, "198.19.0.10", 5201);
	else
		fc_key6(&k[0], IPPROTO_UDP, "2001:2::10", 40000, "2001:2:0:1::10", 5201);
	fp_key_reverse(&k[0], &k[1]);
	k[1].port = 1;
}

/* Sends FRAMES frames each way per family; returns how many left on the wire. */
static unsigned int
stream(struct fp_worker *w)
{
	unsigned int wire = 0;

	for (int family = 4; family <= 6; family += 2) {
		struct fc_key k[2];

		stream_keys(family, k);
		for (unsigned int d = 0; d < 2; d++) {
			struct fc_frame_spec s = { .payload = 100, .key = k[d] };
			struct rte_mbuf *m[32];
			struct fp_out out[32];

			memcpy(s.dmac, LIF_MAC[d], 6);
			memcpy(s.smac, HOST_MAC[d], 6);
			for (unsigned int sent = 0; sent < FRAMES; sent += 32) {
				uint16_t n = (uint16_t)(FRAMES - sent < 32 ? FRAMES - sent : 32);

				for (uint16_t i = 0; i < n; i++) {
					uint8_t buf[256];
					size_t len = fc_frame_build(&s, buf, sizeof(buf));

					m[i] = rte_pktmbuf_alloc(pool);
					memcpy(rte_pktmbuf_append(m[i], (uint16_t)len), buf, len);
				}
				fp_process_burst(w, (uint16_t)d, m, n, 0, out);
				for (uint16_t i = 0; i < n; i++) {
					wire += out[i].dest == 1 - d;
					rte_pktmbuf_free(m[i]);
				}
			}
		}
	}
	return wire;
}

/* The counters that moved since the last call, by name. */
static void
counters_line(struct fp *fp, char *buf, size_t len)
{
	uint64_t c[FC_CNT_MAX];
	size_t off = 0;

	fp_counters_read(fp, c);
	buf[0] = '\0';
	for (unsigned int i = 0; i < FC_CNT_MAX; i++)
		if (c[i] && i != FC_CNT_FROM_WIRE_RX)
			off += (size_t)snprintf(buf + off, len - off, "%s%s %" PRIu64,
						off ? ", " : "", fc_cnt_name(i), c[i]);
	fp_counters_clear(fp);
}

int
main(void)
{
	static const struct {
		uint8_t action;
		bool ips;
		bool cut_drops;		/* what the model says the cut does */
	} rows[] = {
		{ FC_ACTION_FWD, false, false },
		{ FC_ACTION_FWD, true, false },
		{ FC_ACTION_IPS, false, false },
		{ FC_ACTION_IPS, true, true },
	};
	const unsigned int per_phase = 4 * FRAMES;
	int bad = 0;

	if (fc_eal_init("flowcut-fpdemo", 128) != 0)
		return 1;
	pool = rte_pktmbuf_pool_create("demo_pool", 255, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
				       SOCKET_ID_ANY);
	if (pool == NULL) {
		fprintf(stderr, "flowcut-fpdemo: mbuf pool: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	printf("The seed's truth table, observed: a UDP stream, IPv4 and IPv6, both ways,\n"
	       "%u frames per phase; the verdict is CUT_THRU, then DROP, then CUT_THRU.\n\n",
	       per_phase);
	printf("%-6s %-10s %-14s %-14s %-14s %s\n", "flows", "IPS switch", "CUT_THRU",
	       "DROP", "CUT_THRU again", "result");
	for (unsigned int r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		uint32_t cfg = FC_CFG_OFFLOAD | FC_CFG_TCP_SEQ_CHK | (rows[r].ips ? FC_CFG_IPS : 0);
		struct fp *fp = appliance(r, cfg);
		struct fp_worker *w = fp ? fp_worker_create(fp, 0) : NULL;
		char counts[3][512];
		unsigned int got[3];
		fp_conn_id ids[2];
		bool ok;

		if (w == NULL) {
			fprintf(stderr, "flowcut-fpdemo: set-up: %s\n", rte_strerror(rte_errno));
			return 1;
		}
		for (int f = 0; f < 2; f++) {
			struct fp_conn_spec cs = { .verdict = FC_VERDICT_CUT_THRU };
			struct fc_key k[2];

			stream_keys(f ? 6 : 4, k);
			for (int d = 0; d < 2; d++) {
				cs.mf[d].key = k[d];
				cs.mf[d].nhop = (uint32_t)d;
				cs.mf[d].action = rows[r].action;
			}
			if (fp_conn_create(fp, &cs, 0, &ids[f]) != 0) {
				fprintf(stderr, "flowcut-fpdemo: connection refused\n");
				return 1;
			}
		}
		for (int phase = 0; phase < 3; phase++) {
			uint8_t v = phase == 1 ? FC_VERDICT_DROP : FC_VERDICT_CUT_THRU;

			fp_conn_verdict_set(fp, ids[0], v);
			fp_conn_verdict_set(fp, ids[1], v);
			got[phase] = stream(w);
			counters_line(fp, counts[phase], sizeof(counts[phase]));
		}
		ok = got[0] == per_phase && got[2] == per_phase &&
		     got[1] == (rows[r].cut_drops ? 0 : per_phase);
		bad |= !ok;
		printf("%-6s %-10s %5u/%-8u %5u/%-8u %5u/%-8u %s\n",
		       rows[r].action == FC_ACTION_FWD ? "FWD" : "IPS", rows[r].ips ? "on" : "off",
		       got[0], per_phase, got[1], per_phase, got[2], per_phase,
		       ok ? (rows[r].cut_drops ? "cut: dropped, then forwarded again"
					       : "nothing changes: the stream goes on")
			  : "DIFFERS FROM THE MODEL");
		for (int phase = 0; phase < 3; phase++)
			printf("       %-14s %s\n", phase == 0 ? "CUT_THRU:" : phase == 1 ? "DROP:"
						   : "CUT_THRU:", counts[phase]);
		fp_worker_destroy(w);
		fp_destroy(fp);
	}
	printf("\n%s\n", bad ? "flowcut-fpdemo: a row differs from coprocessor-model.md"
			     : "Every row as the seed measured it.");
	return bad;
}
