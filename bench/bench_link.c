/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_link: `flowcut-bench link`, what a command over the link costs:
 * round trips, batches and the driver's command client, to a flowcut-npu
 * started beside it, and what that flowcut-npu costs when idle.
 *
 *   flowcut-bench link [--calls N] [--secs N]
 *
 * link: starts flowcut-npu (no ports) beside it and talks to it over the
 * link as flowcutctl would: N single CONN_MODIFY_FP_VERDICT round trips,
 * one after the other (median and 99th percentile), then batches of 64
 * commands for --secs seconds (commands per second), then the same N
 * commands twice, timed whole: one round trip at a time (lk_call), and
 * through the driver's command client (driver/cmd/fd_cmdq: batched, up to 256
 * in flight), with the ratio of the two rates.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "fd_cmdq.h"
#include "fp.h"
#include "lk.h"

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* CPU seconds a process has used (user + system), from /proc. */
static double
cpu_secs(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long ut = 0, st = 0;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (f == NULL)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');	/* fields after the command name */
	if (p == NULL || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
				&ut, &st) != 2)
		return 0;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/*
 * The same n verdict changes one round trip at a time (lk_call), then
 * through fd_cmdq with up to `cap` in flight; prints both rates and their
 * ratio.  0, or -1 after saying what failed.
 */
static int
link_call_vs_cmdq(struct lk *lk, uint64_t id, unsigned int n, unsigned int cap)
{
	struct fc_cmd_conn_verdict v = { .id = id, .verdict = FC_VERDICT_CUT_THRU };
	struct fd_cmdq_params p = { .max_inflight = cap };
	struct cmdq_tally t = { 0 };
	struct fd_cmdq_stats st;
	struct fd_cmdq *q;
	double s, call_s, cmdq_s;
	int rc;

	s = mono_ns();
	for (unsigned int i = 0; i < n; i++) {
		rc = lk_call(lk, FC_CMD_CONN_MODIFY_FP_VERDICT, &v, sizeof(v), NULL, 0, NULL, 2000);
		if (rc != 0) {
			fprintf(stderr, "flowcut-bench: lk_call %u: %s\n", i, strerror(-rc));
			return -1;
		}
	}
	call_s = (mono_ns() - s) / 1e9;

	q = fd_cmdq_create(lk, &p);
	if (q == NULL) {
		fprintf(stderr, "flowcut-bench: fd_cmdq_create: %s\n", strerror(errno));
		return -1;
	}
	s = mono_ns();
	for (unsigned int i = 0; i < n;) {
		rc = fd_cmdq_post(q, FC_CMD_CONN_MODIFY_FP_VERDICT, &v, sizeof(v), cmdq_tally_done,
				  &t);
		if (rc == 0) {
			i++;
			continue;
		}
		if (rc != -ENOBUFS) {
			fprintf(stderr, "flowcut-bench: fd_cmdq_post %u: %s\n", i, strerror(-rc));
			goto fail;
		}
		fd_cmdq_poll(q);	/* the cap is reached: take what has come */
	}
	rc = fd_cmdq_flush(q, 2000);
	cmdq_s = (mono_ns() - s) / 1e9;
	if (rc != 0 || t.ok != n) {
		fprintf(stderr, "flowcut-bench: fd_cmdq: flush %s, %" PRIu64 " answered, %" PRIu64
			" failed (first: %s)\n", strerror(-rc), t.ok, t.failed,
			strerror(-t.first_rc));
		goto fail;
	}
	fd_cmdq_stats(q, &st);
	printf("  the same %u commands, timed whole:\n", n);
	printf("    one round trip at a time (lk_call): %.0f commands per second\n", n / call_s);
	printf("    command client (fd_cmdq, up to %u in flight, %.1f per doorbell): "
	       "%.0f commands per second, %.1f x lk_call\n", cap,
	       (double)st.posted / (double)st.batches, n / cmdq_s, call_s / cmdq_s);
	fd_cmdq_destroy(q);
	return 0;
fail:
	fd_cmdq_destroy(q);
	return -1;
}

int
bench_link(unsigned int calls, unsigned int secs)
{
	struct bench_npu npu = { .pid = -1 };
	struct lk *lk = NULL;
	struct fc_cmd_flow_create fc = { .verdict = FC_VERDICT_CUT_THRU };
	struct fc_ans_conn_id cid;
	double *rtt = calloc(calls, sizeof(double)), t0, cmds = 0, elapsed;
	const unsigned int idle_calls = 500;
	double idle[500];
	int rc = 1;

	if (rtt == NULL) {
		fprintf(stderr, "flowcut-bench: no memory for %u round trips\n", calls);
		goto out;
	}
	if (bench_npu_start(&npu, "link", 1024, 128) != 0)
		goto out;
	lk = npu_attach(npu.path, npu.pid, -1, 20);
	if (lk == NULL) {
		fprintf(stderr, "flowcut-bench: flowcut-npu's link did not come up (link %s)\n",
			lk_error());
		goto out;
	}
	conn_key(0, (struct fc_key *)&fc.mf[0].key);
	fp_key_reverse((struct fc_key *)&fc.mf[0].key, (struct fc_key *)&fc.mf[1].key);
	fc.mf[1].key.port = 1;
	if (lk_call(lk, FC_CMD_FLOW_CREATE_FP, &fc, sizeof(fc), &cid, sizeof(cid), NULL, 2000)) {
		fprintf(stderr, "flowcut-bench: FLOW_CREATE_FP failed\n");
		goto out;
	}
	/* single round trips */
	for (unsigned int i = 0; i < calls; i++) {
		struct fc_cmd_conn_verdict v = { .id = cid.id,
						 .verdict = i & 1 ? FC_VERDICT_DROP : FC_VERDICT_CUT_THRU };
		double s = mono_ns();

		if (lk_call(lk, FC_CMD_CONN_MODIFY_FP_VERDICT, &v, sizeof(v), NULL, 0, NULL, 2000)) {
			fprintf(stderr, "flowcut-bench: call %u failed\n", i);
			goto out;
		}
		rtt[i] = mono_ns() - s;
	}
	qsort(rtt, calls, sizeof(double), cmp_double);
	/* from sleep: the coprocessor idle (asleep on its doorbell) before each */
	for (unsigned int i = 0; i < idle_calls; i++) {
		struct fc_cmd_conn_verdict v = { .id = cid.id, .verdict = FC_VERDICT_CUT_THRU };
		double s;

		usleep(2000);
		s = mono_ns();
		if (lk_call(lk, FC_CMD_CONN_MODIFY_FP_VERDICT, &v, sizeof(v), NULL, 0, NULL, 2000)) {
			fprintf(stderr, "flowcut-bench: call %u failed\n", i);
			goto out;
		}
		idle[i] = mono_ns() - s;
	}
	qsort(idle, idle_calls, sizeof(double), cmp_double);
	/* batches of 64 */
	t0 = mono_ns();
	while ((elapsed = mono_ns() - t0) < secs * 1e9) {
		struct fc_cmd_conn_verdict v = { .id = cid.id, .verdict = FC_VERDICT_CUT_THRU };
		unsigned int got = 0;

		for (uint32_t i = 0; i < 64; i++)
			if (lk_cmd_post(lk, FC_CMD_CONN_MODIFY_FP_VERDICT, i, &v, sizeof(v))) {
				fprintf(stderr, "flowcut-bench: post failed\n");
				goto out;
			}
		lk_cmd_kick(lk);
		while (got < 64) {
			struct fc_ans_hdr a;

			if (lk_ans_take(lk, &a, NULL, 0) == 0) {
				if (a.rc != 0) {
					fprintf(stderr, "flowcut-bench: batch answer %d\n", a.rc);
					goto out;
				}
				got++;
			}
		}
		cmds += 64;
	}
	printf("flowcut-bench link: flowcut-npu beside it, CONN_MODIFY_FP_VERDICT\n");
	printf("  round trip, one at a time (%u calls): median %.1f us, 99th percentile %.1f us,"
	       " max %.1f us\n", calls, rtt[calls / 2] / 1e3, rtt[calls * 99 / 100] / 1e3,
	       rtt[calls - 1] / 1e3);
	printf("  round trip to a sleeping coprocessor (%u calls, 2 ms apart): median %.1f us, "
	       "99th percentile %.1f us\n", idle_calls, idle[idle_calls / 2] / 1e3,
	       idle[idle_calls * 99 / 100] / 1e3);
	printf("  batches of 64 for %.1f s: %.0f commands per second\n", elapsed / 1e9,
	       cmds / (elapsed / 1e9));
	if (link_call_vs_cmdq(lk, cid.id, calls, LK_CMD_SLOTS) != 0)
		goto out;
	/* idle: what the coprocessor costs when nothing happens */
	{
		double c0 = cpu_secs(npu.pid), w0 = mono_ns();

		sleep(3);
		printf("  idle for %.1f s: flowcut-npu used %.2f %% of one core\n",
		       (mono_ns() - w0) / 1e9, 100.0 * (cpu_secs(npu.pid) - c0) / ((mono_ns() - w0) / 1e9));
	}
	rc = 0;
out:
	lk_close(lk);
	bench_npu_stop(&npu);
	free(rtt);
	return rc;
}
