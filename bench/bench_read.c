/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_read: `flowcut-bench read`, the whole table read back from a
 * flowcut-npu started beside it: one round trip at a time and in windows
 * posted through the driver's command client.
 *
 *   flowcut-bench read [--conns N]
 *
 * read: flowcut-npu beside it, a table of N slots (default 1,048,576)
 * filled through the command client, then read whole: CONN_READ_RANGE and
 * CONN_READ_BRIEF one round trip at a time from each answer's next slot,
 * and CONN_READ_BRIEF in windows of FC_BRIEF_MAX slots posted through
 * fd_cmdq.  Printed: each read's time, connections and commands a second.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "fd_cmdq.h"
#include "fp.h"
#include "lk.h"

/* The completions of the brief reads posted: connections and commands answered. */
struct read_tally {
	uint64_t conns;
	uint64_t answered;
	uint64_t failed;
};

static void
read_brief_done(void *ctx, int rc, const void *ans, uint16_t len)
{
	struct read_tally *t = ctx;
	struct fc_ans_brief a;

	t->answered++;
	if (rc != 0 || len < offsetof(struct fc_ans_brief, conn)) {
		t->failed++;
		return;
	}
	memcpy(&a, ans, len);	/* as the driver will: its answer copied out */
	t->conns += a.count;
}

/*
 * The table read whole one answer at a time from each answer's next slot
 * (lk_call): CONN_READ_RANGE or CONN_READ_BRIEF.  Prints the rate; -1 after
 * saying what failed.
 */
static int
read_by_call(struct lk *lk, uint16_t op, uint32_t expect)
{
	struct fc_cmd_range r = { .first = 0, .max = FC_RANGE_MAX };
	struct fc_cmd_brief b = { .first = 0, .end = 0 };
	uint32_t *first = op == FC_CMD_CONN_READ_RANGE ? &r.first : &b.first;
	_Alignas(8) uint8_t buf[FC_CMD_MAX_PAYLOAD];
	uint64_t conns = 0, calls = 0;
	double t0 = mono_ns(), secs;

	for (;;) {
		/* both answers open with | next (32) | count (32) | */
		const struct fc_ans_brief *a = (const struct fc_ans_brief *)buf;
		uint16_t alen = 0;
		int rc = op == FC_CMD_CONN_READ_RANGE
			? lk_call(lk, op, &r, sizeof(r), buf, sizeof(buf), &alen, 2000)
			: lk_call(lk, op, &b, sizeof(b), buf, sizeof(buf), &alen, 2000);

		calls++;
		if (rc != 0 || alen < 8) {
			fprintf(stderr, "flowcut-bench: %s from slot %u: %s (%u bytes)\n",
				fc_cmd_name(op), *first, strerror(-rc), alen);
			return -1;
		}
		conns += a->count;
		if (a->count == 0 || a->next >= expect)
			break;
		*first = a->next;
	}
	secs = (mono_ns() - t0) / 1e9;
	printf("  %-15s one round trip at a time: %" PRIu64 " connections in %.3f s, "
	       "%.0f connections/s (%" PRIu64 " commands, %.0f a second)\n", fc_cmd_name(op),
	       conns, secs, conns / secs, calls, calls / secs);
	return 0;
}

/* The table read whole in windows of FC_BRIEF_MAX slots, posted through fd_cmdq. */
static int
read_brief_posted(struct lk *lk, uint32_t size)
{
	struct fd_cmdq *q = fd_cmdq_create(lk, &(struct fd_cmdq_params){ 0 });
	struct read_tally t = { 0 };
	double t0 = mono_ns(), secs;
	uint64_t posted = 0;
	int rc = 0;

	if (q == NULL) {
		fprintf(stderr, "flowcut-bench: fd_cmdq_create: %s\n", strerror(errno));
		return -1;
	}
	for (uint32_t w = 0; w < size && rc == 0;) {
		struct fc_cmd_brief b = { .first = w,
					  .end = size - w > FC_BRIEF_MAX ? w + FC_BRIEF_MAX : size };

		rc = fd_cmdq_post(q, FC_CMD_CONN_READ_BRIEF, &b, sizeof(b), read_brief_done, &t);
		if (rc == -ENOBUFS) {
			fd_cmdq_poll(q);	/* the cap is reached: take what has come */
			rc = 0;
			continue;
		}
		w = b.end;
		posted++;
	}
	if (rc == 0)
		rc = fd_cmdq_flush(q, 5000);
	secs = (mono_ns() - t0) / 1e9;
	fd_cmdq_destroy(q);
	if (rc != 0 || t.failed || t.answered != posted) {
		fprintf(stderr, "flowcut-bench: CONN_READ_BRIEF posted: %s, %" PRIu64 " of %" PRIu64
			" answered, %" PRIu64 " failed\n", strerror(-rc), t.answered, posted, t.failed);
		return -1;
	}
	printf("  %-15s windows of %zu slots, posted (fd_cmdq): %" PRIu64 " connections in %.3f s, "
	       "%.0f connections/s (%" PRIu64 " commands)\n", "CONN_READ_BRIEF", FC_BRIEF_MAX,
	       t.conns, secs, t.conns / secs, posted);
	return 0;
}

/*
 * flowcut-npu beside it with a table of n slots, filled with n connections
 * through the command client; then the table read whole three ways.
 */
int
bench_read(uint32_t n)
{
	struct bench_npu npu = { .pid = -1 };
	struct fd_cmdq *q = NULL;
	struct cmdq_tally t = { 0 };
	struct lk *lk = NULL;
	double t0;
	int rc = 1;

	if (bench_npu_start(&npu, "read", n, 256) != 0)
		goto out;
	lk = npu_attach(npu.path, npu.pid, -1, 60);
	q = lk ? fd_cmdq_create(lk, &(struct fd_cmdq_params){ 0 }) : NULL;
	if (q == NULL) {
		fprintf(stderr, "flowcut-bench: flowcut-npu's link did not come up (link %s)\n",
			lk ? "up, the command client refused" : lk_error());
		goto out;
	}
	t0 = mono_ns();
	for (uint32_t i = 0; i < n;) {
		struct fc_cmd_flow_create fc = { .verdict = FC_VERDICT_CUT_THRU };
		int prc;

		conn_key(i, &fc.mf[0].key);
		fp_key_reverse(&fc.mf[0].key, &fc.mf[1].key);
		fc.mf[1].key.port = 1;
		for (int d = 0; d < 2; d++) {
			fc.mf[d].action = FC_ACTION_FWD;
			fc.mf[d].timeout_s = 3600;
		}
		prc = fd_cmdq_post(q, FC_CMD_FLOW_CREATE_FP, &fc, sizeof(fc), cmdq_tally_done, &t);
		if (prc == -ENOBUFS) {
			fd_cmdq_poll(q);
			continue;
		}
		if (prc != 0) {
			fprintf(stderr, "flowcut-bench: FLOW_CREATE_FP %u: %s\n", i, strerror(-prc));
			goto out;
		}
		i++;
	}
	if (fd_cmdq_flush(q, 5000) != 0 || t.failed) {
		fprintf(stderr, "flowcut-bench: FLOW_CREATE_FP: %" PRIu64 " made, %" PRIu64
			" failed (first: %s)\n", t.ok, t.failed, strerror(-t.first_rc));
		goto out;
	}
	fd_cmdq_destroy(q);
	q = NULL;
	printf("flowcut-bench read: flowcut-npu beside it, a table of %u slots, %" PRIu64
	       " connections made (%.2f s), read whole:\n", n, t.ok, (mono_ns() - t0) / 1e9);
	if (read_by_call(lk, FC_CMD_CONN_READ_RANGE, n) != 0 ||
	    read_by_call(lk, FC_CMD_CONN_READ_BRIEF, n) != 0 || read_brief_posted(lk, n) != 0)
		goto out;
	rc = 0;
out:
	fd_cmdq_destroy(q);
	lk_close(lk);
	bench_npu_stop(&npu);
	return rc;
}
