/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz target: command decoding (npu/npu_cmd.c) against a live fast path.
 *
 * Input: a sequence of commands, each | op (16) | len (16) | payload |,
 * len cut to what is left.  The fast path is made afresh for every input
 * so inputs are independent.  Checks, per command: an answer with an error
 * carries no payload and one without never exceeds FC_CMD_MAX_PAYLOAD; a
 * command answered -EBADMSG, -EOPNOTSUPP or -EINVAL changed nothing (the
 * configuration word, the revision, every LIF, next hop and connection are
 * as they were); the table never holds more than its size.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_hash_crc.h>
#include <rte_memory.h>

#include "fc_eal.h"
#include "fc_frame.h"
#include "fp.h"
#include "fuzz.h"
#include "npu_cmd.h"

#define CONNS 8
#define NHOPS 4

static void
die(const char *what, unsigned int op, int rc)
{
	fprintf(stderr, "fuzz_cmd: %s (op %u %s, rc %d)\n", what, op,
		fc_cmd_name(op) ? fc_cmd_name(op) : "?", rc);
	abort();
}

int
fuzz_init(void)
{
	return fc_eal_init("fuzz_cmd", 64);
}

/* A digest of everything a command could change. */
static uint32_t
digest(const struct fp *fp)
{
	uint32_t h = fp_cfg_get(fp) ^ fp_fw_rev_get(fp) * 31 ^ fp_conn_count(fp) * 7;
	uint32_t slot = 0;
	struct fp_conn_info ci;

	for (uint16_t i = 0; i < FP_MAX_LIFS; i++) {
		struct fp_lif l;

		if (fp_lif_get(fp, i, &l) == 0)
			h = rte_hash_crc(&l, sizeof(l), h + i);
	}
	for (uint32_t i = 0; i < NHOPS; i++) {
		struct fp_nhop n;
		uint32_t rev;

		fp_nhop_get(fp, i, &n, &rev);
		h = rte_hash_crc(&n, sizeof(n), h ^ rev);
	}
	while (fp_conn_next(fp, &slot, &ci) == 0)
		h = rte_hash_crc(&ci, sizeof(ci), h);
	return h;
}

int
fuzz_one(const uint8_t *data, size_t size)
{
	static unsigned int n;
	struct fp_params p = { .max_conns = CONNS, .max_nhops = NHOPS, .max_workers = 1,
			       .socket_id = SOCKET_ID_ANY, .name = "fuzzcmd" };
	struct fp *fp = fp_create(&p);
	uint64_t now = 1;

	(void)n;
	if (fp == NULL)
		die("fp_create", 0, -rte_errno);
	while (size >= 4) {
		struct fc_cmd_hdr h;
		struct fc_ans_hdr a;
		uint8_t payload[FC_CMD_MAX_PAYLOAD + 8] = { 0 };
		uint8_t ans[FC_CMD_MAX_PAYLOAD + 64];
		uint32_t before;

		memcpy(&h.op, data, 2);
		memcpy(&h.len, data + 2, 2);
		h.tag = (uint32_t)size;
		data += 4;
		size -= 4;
		if (h.len > size)
			h.len = (uint16_t)size;
		if (h.len > FC_CMD_MAX_PAYLOAD)
			h.len = FC_CMD_MAX_PAYLOAD;
		memcpy(payload, data, h.len);
		data += h.len;
		size -= h.len;

		before = digest(fp);
		npu_cmd_exec(&(struct npu_cmd_env){ .fp = fp }, &h, payload, now, &a, ans);
		if (a.tag != h.tag || a.op != h.op || a.zero != 0)
			die("answer header", h.op, a.rc);
		if (a.rc != 0 && a.len != 0)
			die("an error answer with a payload", h.op, a.rc);
		if (a.len > FC_CMD_MAX_PAYLOAD)
			die("an answer too long", h.op, a.rc);
		if ((a.rc == -EBADMSG || a.rc == -EOPNOTSUPP || a.rc == -EINVAL ||
		     a.rc == -ERANGE) &&
		    digest(fp) != before)
			die("a refused command changed the tables", h.op, a.rc);
		if (fp_conn_count(fp) > CONNS)
			die("more connections than the table holds", h.op, a.rc);
		now += 1000000000ull;
	}
	{
		struct fp_event ev[CONNS * 2];

		fp_sweep(fp, now + 1000ull * 1000000000ull, 0, ev, CONNS * 2);
	}
	fp_destroy(fp);
	return 0;
}

static uint8_t all[8192];
static size_t all_len;

static int
write_file(const char *path, const void *a, size_t alen)
{
	FILE *f = fopen(path, "wb");
	int ok;

	if (f == NULL)
		return -1;
	ok = fwrite(a, 1, alen, f) == alen;
	return fclose(f) == 0 && ok ? 0 : -1;
}

/*
 * One file per command, valid, and one with them all in order (they
 * build a connection, read it, cut it and remove it).
 */
static int
seed(const char *dir, unsigned int i, uint16_t op, const void *payload, uint16_t len)
{
	char path[4096];
	uint8_t one[4 + FC_CMD_MAX_PAYLOAD];

	memcpy(one, &op, 2);
	memcpy(one + 2, &len, 2);
	if (len)
		memcpy(one + 4, payload, len);
	memcpy(all + all_len, one, 4u + len);
	all_len += 4u + len;
	snprintf(path, sizeof(path), "%s/seed-%02u-%s", dir, i, fc_cmd_name(op));
	return write_file(path, one, 4u + len);
}

int
fuzz_seeds(const char *dir)
{
	struct fc_cmd_rev rev = { .rev = 3 };
	struct fc_cmd_cfg cfg = { .fw_cfg = FC_CFG_OFFLOAD | FC_CFG_IPS };
	struct fc_cmd_lif lif = { .id = 1, .port = 1, .mtu = 1500, .mac = { 2, 0, 0, 0, 0, 2 } };
	struct fc_cmd_lif_read lr = { .id = 1 };
	struct fc_cmd_nhop nh = { .id = 1, .port = 1, .mtu = 1500, .flags = FC_NHOP_RESOLVED,
				  .dmac = { 2, 0, 0, 0, 0, 0xb2 } };
	struct fc_cmd_nhop_read nr = { .id = 1 };
	struct fc_cmd_flow_create fc = { .verdict = FC_VERDICT_CUT_THRU };
	struct fc_cmd_conn_modify cm = { .id = 0, .mask = FP_MOD_ACTION,
					 .action = { FC_ACTION_IPS, FC_ACTION_IPS } };
	struct fc_cmd_conn_verdict cv = { .id = 0, .verdict = FC_VERDICT_DROP };
	struct fc_cmd_conn_id cid = { .id = 0 };
	struct fc_cmd_mflow mf = { .id = 0, .dir = 1 };
	struct fc_cmd_range rg = { .first = 0, .max = 4 };
	struct fc_cmd_brief br = { .first = 0, .end = CONNS / 2 };
	struct fc_key k0, k1;
	unsigned int i = 0;
	int rc = 0;

	fc_key4(&k0, IPPROTO_TCP, "198.18.0.10", 40000, "198.19.0.10", 80);
	fp_key_reverse(&k0, &k1);
	k1.port = 1;
	memcpy(&fc.mf[0].key, &k0, sizeof(k0));
	memcpy(&fc.mf[1].key, &k1, sizeof(k1));
	fc.mf[0].action = fc.mf[1].action = FC_ACTION_FWD;
	fc.mf[1].nhop = 1;
	rc |= seed(dir, i++, FC_CMD_FW_STATE_REV_SET, &rev, sizeof(rev));
	rc |= seed(dir, i++, FC_CMD_FW_CFG_PARAMS_SET, &cfg, sizeof(cfg));
	rc |= seed(dir, i++, FC_CMD_FW_CFG_PARAMS_GET, NULL, 0);
	rc |= seed(dir, i++, FC_CMD_LIF_ADD_UPDATE, &lif, sizeof(lif));
	rc |= seed(dir, i++, FC_CMD_LIF_READ, &lr, sizeof(lr));
	rc |= seed(dir, i++, FC_CMD_NHOP_PROGRAM, &nh, sizeof(nh));
	rc |= seed(dir, i++, FC_CMD_NHOP_READ, &nr, sizeof(nr));
	rc |= seed(dir, i++, FC_CMD_FLOW_CREATE_FP, &fc, sizeof(fc));
	rc |= seed(dir, i++, FC_CMD_CONN_MODIFY_FP, &cm, sizeof(cm));
	rc |= seed(dir, i++, FC_CMD_CONN_MODIFY_FP_VERDICT, &cv, sizeof(cv));
	rc |= seed(dir, i++, FC_CMD_MFLOW_INVALIDATE, &mf, sizeof(mf));
	rc |= seed(dir, i++, FC_CMD_MFLOW_PROGRAM, &mf, sizeof(mf));
	rc |= seed(dir, i++, FC_CMD_CONN_READ_BY_ID, &cid, sizeof(cid));
	rc |= seed(dir, i++, FC_CMD_CONN_READ_BY_KEY, &k0, sizeof(k0));
	rc |= seed(dir, i++, FC_CMD_CONN_READ_RANGE, &rg, sizeof(rg));
	rc |= seed(dir, i++, FC_CMD_CONN_READ_BRIEF, &br, sizeof(br));
	rc |= seed(dir, i++, FC_CMD_TABLE_STATS_READ, NULL, 0);
	rc |= seed(dir, i++, FC_CMD_COUNTER_READ, NULL, 0);
	rc |= seed(dir, i++, FC_CMD_COUNTER_CLEAR, NULL, 0);
	rc |= seed(dir, i++, FC_CMD_CONN_REVIVE_FP, &cid, sizeof(cid));
	rc |= seed(dir, i++, FC_CMD_CONN_RECLAIM_FP, &cid, sizeof(cid));
	{
		char path[4096];

		snprintf(path, sizeof(path), "%s/seed-all", dir);
		rc |= write_file(path, all, all_len);
	}
	return rc ? -1 : 0;
}
