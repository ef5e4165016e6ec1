/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_cut: `flowcut-bench cut` and `flowcut-bench ruleset`, what a cut
 * and a ruleset change cost through flowcutd's own binding (fd_offload,
 * fd_cut), N connections offloaded to a flowcut-npu started beside it.
 *
 *   flowcut-bench cut [--conns N]
 *
 * cut: flowcut-npu beside it holding N connections (default 100,000), made
 * over the link by the driver's own binding (fd_offload) from N UDP states
 * in the kernel's conntrack (a private network namespace: root only), no
 * traffic; then one address change cuts them all through flowcutd's cut
 * path (fd_cut_ranges, as a watched-set change runs it).  Printed: the time
 * from the change to the first and the last DROP answered, the commands
 * per second, and the whole cut with every conntrack state killed; beside
 * it, in the same run, the same N drops one round trip at a time.
 *
 *   flowcut-bench ruleset [--conns N]
 *
 * ruleset: the same N offloaded connections (default 200,000), then one
 * ruleset change as flowcutd answers it (fd_offload_ruleset_changed).
 * Printed: the time from the change to the new firewall revision answered
 * (from then on nothing the old rules judged forwards: the bound is
 * 10 ms), to its return (the cut kept, the table unlinked), then
 * its job (every state's leave and bit, a bounded share a turn) turned as
 * flowcutd's loop turns it: the turns, when it was done, the longest turn
 * and the p99 (what a cut, a ruleset change or a control request waits
 * behind it at most), beside 1,000 turns with nothing running.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <net/if.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <libnetfilter_conntrack/libnetfilter_conntrack.h>

#include "bench.h"
#include "ctgen.h"
#include "fc_list.h"
#include "fc_netns.h"
#include "fd_cmdq.h"
#include "fd_cmds.h"
#include "fd_ct.h"
#include "fd_cut.h"
#include "fd_hist.h"
#include "fd_offload.h"
#include "lk.h"

/* The drops of one cut, seen where they are posted and answered. */
struct cut_spy {
	struct fd_cmds real;
	double t0;		/* the change */
	double first, last;	/* first and last DROP answered, ns after t0 */
	uint64_t drops, failed;
	uint64_t *ids;		/* the connections dropped, for the one-at-a-time peer */
	unsigned int nids, cap;
	double rev_at;		/* FW_STATE_REV_SET answered, ns after t0 */
};

struct cut_post {
	struct cut_spy *spy;
	fd_cmds_done_fn *done;
	void *dctx;
};

static void
cut_spy_done(void *dctx, int rc, const void *ans, uint16_t len)
{
	struct cut_post *p = dctx;
	struct cut_spy *spy = p->spy;
	double t = mono_ns() - spy->t0;

	if (rc == 0) {
		if (spy->drops++ == 0)
			spy->first = t;
		spy->last = t;
	} else {
		spy->failed++;
	}
	p->done(p->dctx, rc, ans, len);
	free(p);
}

static int
cut_spy_post(void *ctx, uint16_t op, const void *payload, uint16_t len, fd_cmds_done_fn *done,
	     void *dctx)
{
	struct cut_spy *spy = ctx;
	struct cut_post *p;
	uint64_t id;
	int rc;

	if (op != FC_CMD_CONN_MODIFY_FP_VERDICT && op != FC_CMD_CONN_MODIFY_FP)
		return fd_cmds_post(&spy->real, op, payload, len, done, dctx);
	p = malloc(sizeof(*p));
	if (p == NULL)
		return -ENOMEM;
	*p = (struct cut_post){ .spy = spy, .done = done, .dctx = dctx };
	memcpy(&id, payload, sizeof(id));	/* both start with the connection's id */
	if (spy->nids < spy->cap)
		spy->ids[spy->nids++] = id;
	rc = fd_cmds_post(&spy->real, op, payload, len, cut_spy_done, p);
	if (rc != 0)
		free(p);
	return rc;
}

static int
cut_spy_call(void *ctx, uint16_t op, const void *payload, uint16_t len, void *ans, uint16_t cap)
{
	struct cut_spy *spy = ctx;
	int rc = fd_cmds_call(&spy->real, op, payload, len, ans, cap);

	if (op == FC_CMD_FW_STATE_REV_SET && rc == 0 && spy->t0 > 0)
		spy->rev_at = mono_ns() - spy->t0;
	return rc;
}

static int
cut_spy_flush(void *ctx, int ms)
{
	return fd_cmds_flush(&((struct cut_spy *)ctx)->real, ms);
}

/* The coprocessor's ports as flowcutd's program() sets them, and the IPS switch on. */
static int
cut_program(const struct fd_cmds *cmds, const uint8_t mac[2][6])
{
	struct fc_cmd_cfg cfg = { .fw_cfg = FC_CFG_OFFLOAD | FC_CFG_IPS };

	for (uint16_t p = 0; p < 2; p++) {
		struct fc_cmd_lif l = { .id = p, .port = p, .mtu = 1500 };
		int rc;

		memcpy(l.mac, mac[p], 6);
		rc = fd_cmds_call(cmds, FC_CMD_LIF_ADD_UPDATE, &l, sizeof(l), NULL, 0);
		if (rc != 0)
			return rc;
	}
	return fd_cmds_call(cmds, FC_CMD_FW_CFG_PARAMS_SET, &cfg, sizeof(cfg), NULL, 0);
}

/* n assured UDP states 198.18.0.10:sport -> 198.19.0.10:dport, marked for offload. */
static int
cut_states(unsigned int n)
{
	struct nfct_handle *h = nfct_open(CONNTRACK, 0);
	struct nf_conntrack *ct = nfct_new();
	int rc = 0;

	if (h == NULL || ct == NULL) {
		rc = -errno;
		goto out;
	}
	for (unsigned int i = 0; i < n; i++) {
		struct fd_tuple t = { .src = { 198, 18, 0, 10 }, .dst = { 198, 19, 0, 10 },
				      .sport = htons((uint16_t)(1024 + i % 64000)),
				      .dport = htons((uint16_t)(10000 + i / 64000)),
				      .family = 4, .proto = IPPROTO_UDP };

		ctg_state(ct, &t, IPS_ASSURED | IPS_SEEN_REPLY, 600, CUT_MARK);
		if (nfct_query(h, NFCT_Q_CREATE, ct) != 0) {
			rc = -errno;
			fprintf(stderr, "flowcut-bench: conntrack state %u: %s\n", i, strerror(errno));
			break;
		}
	}
out:
	if (ct)
		nfct_destroy(ct);
	if (h)
		nfct_close(h);
	return rc;
}

static unsigned int
cut_states_left(struct fd_ct *ct)
{
	struct nf_conntrack **all;
	size_t n;

	if (fd_ct_dump(ct, &all, &n) != 0)
		return UINT32_MAX;
	/* a state the cut missed is a bug: the first few shown whole */
	for (size_t i = 0; i < n && i < 5; i++) {
		char b[1024];

		nfct_snprintf(b, sizeof(b), all[i], NFCT_T_UNKNOWN, NFCT_O_DEFAULT,
			      NFCT_OF_SHOW_LAYER3 | NFCT_OF_ID);
		fprintf(stderr, "flowcut-bench: left after the cut: %s\n", b);
	}
	fd_ct_dump_free(all, n);
	return (unsigned int)n;
}

/*
 * A ruleset change's job turned as flowcutd's loop turns it (the binding's
 * events, then its work), each turn timed: the longest is the longest a
 * cut, a ruleset change or a control request waits behind it (they come
 * first in the next turn); then the same turns with nothing to do.
 */
static int
job_turns(struct fd_offload *off, uint64_t t0)
{
	struct fd_hist busy = { 0 }, idle = { 0 };
	struct fd_offload_stats os;
	unsigned int nturns = 0, longest = 0;

	while (fd_offload_busy(off)) {
		uint64_t t = mono_ns(), us;

		fd_offload_events(off);
		fd_offload_work(off);
		us = (mono_ns() - t) / 1000;
		if (us > busy.max_us)
			longest = nturns;
		fd_hist_add(&busy, us);
		nturns++;
	}
	fd_offload_stats(off, &os);
	printf("    the unmark and the leaves, a job: %u turns, done %.1f ms after the change "
	       "(%" PRIu64 " states left the fast path; the longest turn the %uth)\n", nturns,
	       (mono_ns() - t0) / 1e6, os.left, longest + 1);
	for (unsigned int k = 0; k < 1000; k++) {
		uint64_t t = mono_ns();

		fd_offload_events(off);
		fd_offload_work(off);
		fd_hist_add(&idle, (mono_ns() - t) / 1000);
	}
	printf("    a turn of the job: longest %" PRIu64 " us, p99 %" PRIu64 " us; with "
	       "nothing running: longest %" PRIu64 " us, p99 %" PRIu64 " us\n", busy.max_us,
	       fd_hist_p99(&busy), idle.max_us, fd_hist_p99(&idle));
	return 0;
}

int
bench_cut(unsigned int n, bool ruleset)
{
	static const uint8_t mac[2][6] = { { 0x02, 0xfc, 0, 0, 0, 1 }, { 0x02, 0xfc, 0, 0, 0, 2 } };
	struct fd_offload_cfg cfg = { .nports = 2, .mark_bit = CUT_MARK, .cut_in_hardware = true,
				      .timeout_s = 300 };
	struct cut_spy spy = { .cap = n };
	struct fd_cmds cmds = { .call = cut_spy_call, .post = cut_spy_post, .flush = cut_spy_flush,
				.ctx = &spy };
	const char *why = fc_netns_front_ports();
	struct fd_offload_stats os;
	struct fd_ct *ct = NULL;
	struct fd_ct_io ctio;
	struct fd_route *route = NULL;
	struct fd_route_io rtio;
	struct fd_nhop *nhops = NULL;
	struct fd_offload *off = NULL;
	struct fd_cut *cut = NULL;
	struct fd_cmdq *q = NULL;
	struct fc_list l = { 0 };
	struct lk *lk = NULL;
	struct bench_npu npu = { .pid = -1 };
	double t, whole, one_s;
	int rc = 1, cutn, out_fd = -1, devnull;
	unsigned int left;

	if (why != NULL) {
		printf("flowcut-bench cut: skipped: %s\n", why);
		return 0;
	}
	spy.ids = calloc(n, sizeof(*spy.ids));
	if (spy.ids == NULL) {
		fprintf(stderr, "flowcut-bench: no memory for %u ids\n", n);
		goto out;
	}
	/* the table twice the connections; about 600 B each with the hash, and the pools */
	if (bench_npu_start(&npu, "cut", 2 * n, 256 + (unsigned int)((uint64_t)n * 2 * 1200 >> 20)) != 0)
		goto out;
	lk = npu_attach(npu.path, npu.pid, 0, 30);
	q = lk ? fd_cmdq_create(lk, &(struct fd_cmdq_params){ 0 }) : NULL;
	if (q == NULL) {
		fprintf(stderr, "flowcut-bench: flowcut-npu's link did not come up (link %s)\n",
			lk ? "up, the command client refused" : lk_error());
		goto out;
	}
	spy.real = fd_cmds_q(q);
	if ((rc = cut_program(&spy.real, mac)) != 0) {
		fprintf(stderr, "flowcut-bench: programming the ports: %s\n", strerror(-rc));
		rc = 1;
		goto out;
	}
	rc = 1;
	t = mono_ns();
	if (cut_states(n) != 0)
		goto out;
	printf("flowcut-bench cut: flowcut-npu beside it, %u UDP states in conntrack (%.1f s to "
	       "make)\n", n, (mono_ns() - t) / 1e9);
	cfg.ifindex[0] = if_nametoindex("fp0");
	cfg.ifindex[1] = if_nametoindex("fp1");
	memcpy(cfg.mac, mac, sizeof(mac));
	/* as flowcutd: the binding's parts opened here, handed in */
	ct = fd_ct_open();
	route = fd_route_open();
	nhops = fd_nhop_open(&cmds, cfg.nports, cfg.mac);
	ctio = fd_ct_io_of(ct);
	rtio = fd_route_io_of(route);
	off = ct && route && nhops ? fd_offload_open(&cmds, &ctio, &rtio, nhops, &cfg) : NULL;
	cut = off ? fd_cut_open(&(struct fd_cut_parts){ .off = off, .ct = ctio, .cmds = cmds,
							.cut_in_hardware = cfg.cut_in_hardware })
		  : NULL;
	if (cut == NULL) {
		fprintf(stderr, "flowcut-bench: the binding: %s\n", strerror(errno));
		goto out;
	}
	t = mono_ns();
	fd_offload_resync(off);
	fd_offload_sync_finish(off);	/* offloads every state, as flowcutd at start */
	fd_offload_settle(off);		/* its creates answered, as the loop's next turns take them */
	fd_offload_stats(off, &os);
	printf("  offloaded by the binding: %" PRIu64 " connections in %.1f s (%" PRIu64
	       " refused)\n", os.offloaded, (mono_ns() - t) / 1e9, os.refused);
	if (ruleset) {
		/* the offloads' own events, unread while the bench made them: as a loop would have */
		fd_offload_skip_events(off);
		fd_offload_stats(off, &os);
		spy.t0 = mono_ns();
		(void)fd_offload_ruleset_changed(off);	/* said; rev_at stays 0 */
		whole = mono_ns() - spy.t0;
		printf("  one ruleset change, %" PRIu64 " connections offloaded (%" PRIu64
		       " revision bump):\n", os.offloaded, os.rev_bumps + 1);
		printf("    the new revision answered %.3f ms after the change: from then on no "
		       "connection the old rules judged forwards\n", spy.rev_at / 1e6);
		printf("    fd_offload_ruleset_changed returned after %.1f ms (the bump, the cut "
		       "kept, the table unlinked)\n", whole / 1e6);
		rc = job_turns(off, spy.t0);
		goto out;
	}
	if (fc_list_parse("198.19.0.10\n", 12, &l, NULL, NULL) != 0) {
		fprintf(stderr, "flowcut-bench: the list\n");
		goto out;
	}
	fc_list_canon(&l);
	/* the cut's log lines (one per connection) go where flowcutd's would, not here */
	fflush(stdout);
	out_fd = dup(STDOUT_FILENO);
	devnull = open("/dev/null", O_WRONLY);
	if (out_fd < 0 || devnull < 0 || dup2(devnull, STDOUT_FILENO) < 0) {
		fprintf(stderr, "flowcut-bench: stdout: %s\n", strerror(errno));
		goto out;
	}
	close(devnull);
	spy.t0 = mono_ns();
	cutn = fd_cut_ranges(cut, &l, FD_CUT_HAND);
	whole = mono_ns() - spy.t0;
	fflush(stdout);
	dup2(out_fd, STDOUT_FILENO);
	left = cut_states_left(ct);
	printf("  one change cuts %d connections (in hardware: DROP answered, then the state "
	       "killed):\n", cutn);
	printf("    first DROP answered %.2f ms after the change, last %.1f ms: %.0f drops per "
	       "second (%" PRIu64 " failed)\n", spy.first / 1e6, spy.last / 1e6,
	       spy.last > 0 ? spy.drops / (spy.last / 1e9) : 0.0, spy.failed);
	printf("    the whole cut, every conntrack state killed (in batches of %d): %.1f ms; "
	       "states left: %u\n", FD_CT_KILL_BATCH, whole / 1e6, left);
	/* the peer: the same drops, one round trip at a time, same client, same run */
	t = mono_ns();
	for (unsigned int i = 0; i < spy.nids; i++) {
		struct fc_cmd_conn_verdict v = { .id = spy.ids[i], .verdict = FC_VERDICT_DROP };

		if (fd_cmds_call(&spy.real, FC_CMD_CONN_MODIFY_FP_VERDICT, &v, sizeof(v), NULL, 0)) {
			fprintf(stderr, "flowcut-bench: one at a time, drop %u failed\n", i);
			goto out;
		}
	}
	one_s = (mono_ns() - t) / 1e9;
	printf("    the same %u drops one round trip at a time: %.1f ms, %.0f per second; the cut's "
	       "drops went %.1f x as fast\n", spy.nids, one_s * 1e3, spy.nids / one_s,
	       spy.last > 0 ? one_s / (spy.last / 1e9) : 0.0);
	rc = 0;
out:
	if (out_fd >= 0)
		close(out_fd);
	fc_list_free(&l);
	fd_cut_close(cut);
	fd_offload_close(off);
	fd_nhop_close(nhops);
	fd_route_close(route);
	fd_ct_close(ct);
	fd_cmdq_destroy(q);
	lk_close(lk);
	bench_npu_stop(&npu);
	free(spy.ids);
	return rc;
}
