/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * npu_cmd: the coprocessor's command decoder - one command from the link
 * applied to the fast path, and its answer.
 *
 * Every field is checked before anything changes: a payload of the wrong
 * length (-EBADMSG), an unknown opcode (-EOPNOTSUPP), a non-zero reserved
 * field or a value out of range (-EINVAL), a table read's window past the
 * table (-ERANGE) is answered with that error and
 * the tables are as they were; the fast path's own refusals (-EEXIST,
 * -ENOSPC, -ENOENT, ...) pass through.  An answer carries a payload only
 * when its rc is 0.
 *
 * Runs on the fast path's control thread (it calls fp's control
 * functions).  No state of its own.
 */
#ifndef FLOWCUT_NPU_CMD_H
#define FLOWCUT_NPU_CMD_H

#include <stdint.h>

#include <flowcut/fc_cmd.h>

#include "fp.h"
#include "lk.h"

/* What a command works on: the fast path, and the program's own counters. */
struct npu_cmd_env {
	struct fp *fp;
	/* adds the program's counters (class FC_CLS_NPU) into out; NULL: none */
	void (*npu_counters)(void *arg, uint64_t out[FC_CNT_MAX]);
	/* starts them from zero (COUNTER_CLEAR); NULL: none */
	void (*npu_clear)(void *arg);
	void *arg;
	/* the link's client slot the command came on (HOST_LEASE: 0 only) */
	int client;
};

/*
 * npu_cmd_exec - apply `hdr` and its payload (hdr->len bytes) at time
 * `now`; fill *ans (op, tag, rc, len) and up to FC_CMD_MAX_PAYLOAD bytes
 * of answer payload.
 */
void npu_cmd_exec(const struct npu_cmd_env *env, const struct fc_cmd_hdr *hdr,
		  const void *payload, uint64_t now, struct fc_ans_hdr *ans, void *ans_payload);

/* npu_cmd_event - an fp_event as the link carries it. */
void npu_cmd_event(const struct fp_event *in, struct lk_event *out);

#endif
