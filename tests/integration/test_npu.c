/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The real flowcut-npu, on net_pcap ports, driven over the link.
 *
 * The test moves into a network namespace of its own (unshare; it and all
 * it made vanish with the process) and makes two veth pairs there.  The
 * coprocessor reads each port with net_pcap from one veth end (rx_iface)
 * and writes what it sends to a capture file (tx_pcap); the test plays a
 * capture of a TCP connection and a UDP stream into the other ends, and
 * reads the output captures back with libpcap.
 *
 *  - forward and cut: the forwarded frames carry the next hops' MACs, one
 *    less TTL and valid checksums; after CONN_MODIFY_FP_VERDICT DROP is
 *    answered, no frame of the stream leaves and DROP_IPS_VERDICT counts
 *    them; the counters add up;
 *  - restart: killed mid-stream (SIGKILL) and started again, it says so on
 *    the event ring with a new boot id, its table is empty and fw_cfg 0x002;
 *    frames are dropped as from an unknown port until the host programs
 *    the ports again, then go to the host (the gate is shut);
 *  - garbage: the whole region scribbled on while it runs and a client
 *    calls; it neither crashes nor hangs, and still stops cleanly;
 *  - no ports: a device EAL could not make leaves none, and it exits
 *    saying so, its link not made; with --ports N, fewer than N the same.
 *
 * Needs root (namespaces, veth); says skipped otherwise.  Every wait is
 * bounded.  FC_PROGS names the folder of flowcut-npu and flowcutctl (the
 * sanitizer builds, say), else BUILD, else build.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <pcap/pcap.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <flowcut/fc_cmd.h>

#include "fc_frame.h"
#include "lk.h"

static const uint8_t LIF_MAC[2][6] = { { 2, 0, 0, 0, 0, 1 }, { 2, 0, 0, 0, 0, 2 } };
static const uint8_t HOST_MAC[2][6] = { { 2, 0, 0, 0, 0, 0xa1 }, { 2, 0, 0, 0, 0, 0xb2 } };

static char dir[64];		/* captures and the link */
static char link_path[128];
static pid_t npu = -1;
static bool have_netns;
static int sock[2] = { -1, -1 };	/* raw sockets on the test's veth ends */

static void
npu_kill(void)
{
	if (npu > 0) {
		kill(npu, SIGKILL);
		waitpid(npu, NULL, 0);
		npu = -1;
	}
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Where flowcut-npu and flowcutctl are. */
static const char *
progs(void)
{
	const char *p = getenv("FC_PROGS");

	if (p == NULL)
		p = getenv("BUILD");
	return p ? p : "build";
}

/* Starts flowcut-npu on the two ports; waits until its link is up. */
static struct lk *
npu_start(const char *tag)
{
	const char *build = progs();
	char bin[256], prefix[64], v0[256], v1[256];
	struct lk *lk = NULL;
	double t0;

	snprintf(bin, sizeof(bin), "%s/flowcut-npu", build);
	snprintf(prefix, sizeof(prefix), "fc-npu-%s-%d", tag, (int)getpid());
	snprintf(v0, sizeof(v0), "net_pcap0,rx_iface=w0,tx_pcap=%s/out0-%s.pcap", dir, tag);
	snprintf(v1, sizeof(v1), "net_pcap1,rx_iface=w1,tx_pcap=%s/out1-%s.pcap", dir, tag);
	npu = fork();
	assert_true(npu >= 0);
	if (npu == 0) {
		execl(bin, bin, "--no-huge", "-m", "256", "--no-pci", "--no-telemetry", "--no-shconf",
		      "--file-prefix", prefix, "-l", "0,1", "--log-level=error", "--vdev", v0,
		      "--vdev", v1, "--", "--link", link_path, "--conns", "1024", "--sweep-ms",
		      "20", (char *)NULL);
		perror(bin);
		_exit(127);
	}
	t0 = now_s();
	while (now_s() - t0 < 20) {
		int st;

		if (waitpid(npu, &st, WNOHANG) == npu) {
			npu = -1;
			fail_msg("flowcut-npu exited at start (status %d)", st);
		}
		lk = lk_attach(link_path, -1);
		if (lk != NULL && lk_npu_pid(lk) == (uint32_t)npu)
			return lk;	/* this coprocessor's region, not a stale one */
		lk_close(lk);
		usleep(20000);
	}
	fail_msg("flowcut-npu did not bring its link up in 20 s");
	return NULL;
}

/* SIGTERM and wait (bounded): the captures are complete after this. */
static int
npu_stop(void)
{
	double t0 = now_s();
	int st = -1;

	kill(npu, SIGTERM);
	while (now_s() - t0 < 10) {
		if (waitpid(npu, &st, WNOHANG) == npu) {
			npu = -1;
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		}
		usleep(10000);
	}
	npu_kill();
	fail_msg("flowcut-npu did not stop within 10 s of SIGTERM");
	return -1;
}

static int
group_setup(void **state)
{
	(void)state;
	if (geteuid() != 0 || unshare(CLONE_NEWNET) != 0)
		return 0;	/* tests skip */
	/* 0700, root's: the link may live in it (lk_create refuses /dev/shm itself) */
	snprintf(dir, sizeof(dir), "/dev/shm/fc-test-npu-XXXXXX");
	if (mkdtemp(dir) == NULL) {
		dir[0] = '\0';
		return 0;
	}
	snprintf(link_path, sizeof(link_path), "%s/link", dir);
	have_netns = true;
	if (system("ip link set lo up && "
		   "sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1 && "
		   "ip link add w0 type veth peer name t0 && ip link add w1 type veth peer name t1 && "
		   "for i in w0 t0 w1 t1; do ip link set $i up && "
		   "{ ethtool -K $i tx off tso off gso off gro off >/dev/null 2>&1 || true; }; done") != 0) {
		have_netns = false;
		return 0;
	}
	for (int i = 0; i < 2; i++) {
		struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL) };
		char name[16];

		snprintf(name, sizeof(name), "t%d", i);
		sll.sll_ifindex = (int)if_nametoindex(name);
		sock[i] = socket(AF_PACKET, SOCK_RAW, 0);
		if (sock[i] < 0 || bind(sock[i], (struct sockaddr *)&sll, sizeof(sll)) != 0)
			have_netns = false;
	}
	return 0;
}

static int
group_teardown(void **state)
{
	char cmd[256];

	(void)state;
	npu_kill();
	snprintf(cmd, sizeof(cmd), "rm -rf %s /var/run/dpdk/fc-npu-*-%d", dir, (int)getpid());
	if (dir[0])
		(void)system(cmd);
	return 0;	/* the namespace and its veths go with this process */
}

static int
test_teardown(void **state)
{
	lk_close(*state);
	*state = NULL;
	npu_kill();
	return 0;
}

/* ---- driving the coprocessor ---- */

static int
cmd(struct lk *lk, uint16_t op, const void *p, uint16_t len, void *ans, uint16_t cap)
{
	return lk_call(lk, op, p, len, ans, cap, NULL, 2000);
}

static void
program_ports(struct lk *lk)
{
	struct fc_cmd_cfg cfg = { .fw_cfg = FC_CFG_OFFLOAD | FC_CFG_IPS | FC_CFG_TCP_SEQ_CHK };

	for (uint16_t i = 0; i < 2; i++) {
		struct fc_cmd_lif l = { .id = i, .port = i, .mtu = 1500 };
		struct fc_cmd_nhop n = { .id = i, .port = (uint16_t)(1 - i), .mtu = 1500,
					 .flags = FC_NHOP_RESOLVED };

		memcpy(l.mac, LIF_MAC[i], 6);
		memcpy(n.dmac, HOST_MAC[1 - i], 6);
		memcpy(n.smac, LIF_MAC[1 - i], 6);
		assert_int_equal(cmd(lk, FC_CMD_LIF_ADD_UPDATE, &l, sizeof(l), NULL, 0), 0);
		assert_int_equal(cmd(lk, FC_CMD_NHOP_PROGRAM, &n, sizeof(n), NULL, 0), 0);
	}
	assert_int_equal(cmd(lk, FC_CMD_FW_CFG_PARAMS_SET, &cfg, sizeof(cfg), NULL, 0), 0);
}

static uint64_t
conn_make(struct lk *lk, const struct fc_key *orig)
{
	struct fc_cmd_flow_create c = { .verdict = FC_VERDICT_CUT_THRU };
	struct fc_ans_conn_id a;
	struct fc_key r;

	fp_key_reverse(orig, &r);
	r.port = 1;
	memcpy(&c.mf[0].key, orig, sizeof(*orig));
	memcpy(&c.mf[1].key, &r, sizeof(r));
	c.mf[0].nhop = 0;
	c.mf[1].nhop = 1;
	c.mf[0].action = c.mf[1].action = FC_ACTION_IPS;
	assert_int_equal(cmd(lk, FC_CMD_FLOW_CREATE_FP, &c, sizeof(c), &a, sizeof(a)), 0);
	return a.id;
}

/* Plays one frame into port `port` (as the peer on that wire sends it). */
static void
play(int port, struct fc_frame_spec *s, pcap_dumper_t *cap)
{
	uint8_t buf[2048];
	size_t len;

	memcpy(s->dmac, LIF_MAC[port], 6);
	memcpy(s->smac, HOST_MAC[port], 6);
	len = fc_frame_build(s, buf, sizeof(buf));
	assert_true(len > 0);
	assert_int_equal(send(sock[port], buf, len, 0), (ssize_t)len);
	if (cap != NULL) {
		struct pcap_pkthdr h = { .caplen = (bpf_u_int32)len, .len = (bpf_u_int32)len };

		pcap_dump((u_char *)cap, &h, buf);
	}
}

static uint64_t
counter(struct lk *lk, enum fc_cnt c)
{
	struct fc_ans_counters a;

	assert_int_equal(cmd(lk, FC_CMD_COUNTER_READ, NULL, 0, &a, sizeof(a)), 0);
	return a.value[c];
}

/* Waits (5 s at most) until the coprocessor has taken in `n` frames. */
static void
wait_rx(struct lk *lk, uint64_t n)
{
	double t0 = now_s();

	while (counter(lk, FC_CNT_FROM_WIRE_RX) < n) {
		if (now_s() - t0 > 5)
			fail_msg("the coprocessor took in %" PRIu64 " frames of %" PRIu64 " in 5 s",
				 counter(lk, FC_CNT_FROM_WIRE_RX), n);
		usleep(2000);
	}
}

struct capture {
	unsigned int frames, bad, tcp, udp, udp_after_cut;
};

/* Reads an output capture: every frame checked, counted by kind. */
static struct capture
read_capture(const char *path, int to_port)
{
	char err[PCAP_ERRBUF_SIZE];
	pcap_t *p = pcap_open_offline(path, err);
	struct capture c = { 0 };
	struct pcap_pkthdr *h;
	const u_char *f;

	if (p == NULL)
		fail_msg("%s: %s", path, err);
	while (pcap_next_ex(p, &h, &f) == 1) {
		struct fp_parsed pp;
		const char *why;

		c.frames++;
		if (memcmp(f, HOST_MAC[to_port], 6) != 0 || memcmp(f + 6, LIF_MAC[to_port], 6) != 0 ||
		    fc_frame_check(f, h->caplen, &why) != 0 ||
		    fp_parse_frame(f, h->caplen, h->caplen, &pp) != FP_PARSE_FLOW ||
		    f[pp.l3_off + (pp.key.family == 4 ? 8 : 7)] != 63) {
			c.bad++;
			continue;
		}
		if (pp.key.proto == IPPROTO_TCP)
			c.tcp++;
		if (pp.key.proto == IPPROTO_UDP) {
			c.udp++;
			c.udp_after_cut += h->caplen > 120;	/* after the cut: 142 bytes, before: 102 */
		}
	}
	pcap_close(p);
	return c;
}

/* ---- the tests ---- */

static void
test_forward_and_cut(void **state)
{
	char path[256];
	struct fc_key tcp, udp;
	uint64_t udp_id, c[FC_CNT_MAX], sum[FC_CLS_MAX] = { 0 };
	struct fc_ans_counters ac;
	pcap_t *dead;
	pcap_dumper_t *in;
	struct capture o0, o1;
	struct lk *lk;
	unsigned int sent = 0;

	if (!have_netns)
		skip();
	*state = lk = npu_start("fwd");
	program_ports(lk);
	fc_key4(&tcp, IPPROTO_TCP, "198.18.0.10", 40000, "198.19.0.10", 80);
	fc_key6(&udp, IPPROTO_UDP, "2001:2::10", 5000, "2001:2:0:1::10", 5201);
	conn_make(lk, &tcp);
	udp_id = conn_make(lk, &udp);

	/* the input capture, kept beside the outputs */
	dead = pcap_open_dead(DLT_EN10MB, 65535);
	snprintf(path, sizeof(path), "%s/in.pcap", dir);
	in = pcap_dump_open(dead, path);
	assert_non_null(in);
	for (int i = 0; i < 20; i++) {
		struct fc_frame_spec o = { .key = tcp, .ttl = 64, .tcp_flags = FP_TCP_ACK,
					   .seq = 1000 + 100u * (uint32_t)i, .ack = 5000,
					   .win = 8192, .payload = 100 };
		struct fc_frame_spec r = { .ttl = 64, .tcp_flags = FP_TCP_ACK, .seq = 5000,
					   .ack = 1100 + 100u * (uint32_t)i, .win = 8192 };

		fp_key_reverse(&tcp, &r.key);
		/* an ACK after the data it acknowledges, as on a real wire:
		 * the two ports are captured apart, so wait for the data first */
		play(0, &o, in);
		wait_rx(lk, ++sent);
		play(1, &r, in);
		sent++;
	}
	for (int i = 0; i < 50; i++) {
		struct fc_frame_spec u = { .key = udp, .ttl = 64, .payload = 40 };

		play(0, &u, in);
		sent++;
	}
	wait_rx(lk, sent);

	/* the cut: from its answer on, nothing of the stream leaves */
	{
		struct fc_cmd_conn_verdict v = { .id = udp_id, .verdict = FC_VERDICT_DROP };

		assert_int_equal(cmd(lk, FC_CMD_CONN_MODIFY_FP_VERDICT, &v, sizeof(v), NULL, 0), 0);
	}
	for (int i = 0; i < 30; i++) {
		struct fc_frame_spec u = { .key = udp, .ttl = 64, .payload = 80 };

		play(0, &u, in);
		sent++;
	}
	wait_rx(lk, sent);
	pcap_dump_close(in);
	pcap_close(dead);

	assert_int_equal(cmd(lk, FC_CMD_COUNTER_READ, NULL, 0, &ac, sizeof(ac)), 0);
	memcpy(c, ac.value, sizeof(c));
	for (unsigned int i = 0; i < FC_CNT_MAX; i++) {
		sum[fc_cnt_class(i)] += c[i];
		if (c[i])
			print_message("  %-40s %" PRIu64 "\n", fc_cnt_name(i), c[i]);
	}
	assert_int_equal(c[FC_CNT_FROM_WIRE_RX], sent);
	assert_int_equal(c[FC_CNT_FROM_WIRE_TO_WIRE_VERDICT_CUT_THRU], 40 + 50);
	assert_int_equal(c[FC_CNT_FROM_WIRE_DROP_IPS_VERDICT], 30);
	assert_int_equal(sum[FC_CLS_RX],
			 sum[FC_CLS_WIRE] + sum[FC_CLS_HOST] + sum[FC_CLS_IPS] + sum[FC_CLS_DROP]);
	assert_int_equal(sum[FC_CLS_NPU], 0);
	lk_close(lk);
	*state = NULL;
	assert_int_equal(npu_stop(), 0);

	snprintf(path, sizeof(path), "%s/out1-fwd.pcap", dir);
	o1 = read_capture(path, 1);
	snprintf(path, sizeof(path), "%s/out0-fwd.pcap", dir);
	o0 = read_capture(path, 0);
	print_message("to the server: %u frames (%u TCP, %u UDP); to the client: %u\n",
		      o1.frames, o1.tcp, o1.udp, o0.frames);
	assert_int_equal(o1.bad + o0.bad, 0);
	assert_int_equal(o1.tcp, 20);
	assert_int_equal(o1.udp, 50);
	assert_int_equal(o1.udp_after_cut, 0);
	assert_int_equal(o0.tcp, 20);
	assert_int_equal(o0.frames, 20);
}

static void
test_restart(void **state)
{
	struct fc_ans_table_stats ts;
	struct fc_ans_cfg cfg;
	struct lk_event ev;
	struct fc_key udp;
	struct lk *lk;
	uint64_t boot0;
	bool booted = false;
	double t0;

	if (!have_netns)
		skip();
	*state = lk = npu_start("restart");
	program_ports(lk);
	fc_key4(&udp, IPPROTO_UDP, "198.18.0.10", 7000, "198.19.0.10", 7001);
	conn_make(lk, &udp);
	for (int i = 0; i < 100; i++) {
		struct fc_frame_spec u = { .key = udp, .ttl = 64, .payload = 40 };

		play(0, &u, NULL);
	}
	wait_rx(lk, 100);
	boot0 = lk_boot_id(lk);

	/* killed mid-stream, started again */
	npu_kill();
	for (int i = 0; i < 20; i++) {
		struct fc_frame_spec u = { .key = udp, .ttl = 64, .payload = 40 };

		play(0, &u, NULL);
	}
	{
		struct lk *second = npu_start("restart2");

		lk_close(second);
	}
	assert_int_not_equal(lk_boot_id(lk), boot0);
	assert_int_equal(cmd(lk, FC_CMD_TABLE_STATS_READ, NULL, 0, &ts, sizeof(ts)), -ECONNRESET);
	assert_int_equal(lk_resync(lk), 0);
	t0 = now_s();
	while (!booted && now_s() - t0 < 5) {
		if (lk_event_take(lk, &ev) == 0)
			booted = ev.type == LK_EV_BOOT && ev.boot_id == lk_boot_id(lk);
		else
			lk_event_wait(lk, 50);
	}
	assert_true(booted);
	assert_int_equal(cmd(lk, FC_CMD_TABLE_STATS_READ, NULL, 0, &ts, sizeof(ts)), 0);
	assert_int_equal(ts.conns, 0);
	assert_int_equal(cmd(lk, FC_CMD_FW_CFG_PARAMS_GET, NULL, 0, &cfg, sizeof(cfg)), 0);
	assert_int_equal(cfg.fw_cfg, 0x002);
	/* no port is known until the host says so again: counted and dropped */
	for (int i = 0; i < 10; i++) {
		struct fc_frame_spec u = { .key = udp, .ttl = 64, .payload = 40 };

		play(0, &u, NULL);
	}
	wait_rx(lk, 10);
	assert_int_equal(counter(lk, FC_CNT_FROM_WIRE_DROP_LIF_UNKNOWN), 10);
	/* ports back, settings not yet: the gate is shut, every frame to the host */
	for (uint16_t i = 0; i < 2; i++) {
		struct fc_cmd_lif l = { .id = i, .port = i, .mtu = 1500 };

		memcpy(l.mac, LIF_MAC[i], 6);
		assert_int_equal(cmd(lk, FC_CMD_LIF_ADD_UPDATE, &l, sizeof(l), NULL, 0), 0);
	}
	for (int i = 0; i < 10; i++) {
		struct fc_frame_spec u = { .key = udp, .ttl = 64, .payload = 40 };

		play(0, &u, NULL);
	}
	wait_rx(lk, 20);
	assert_int_equal(counter(lk, FC_CNT_FROM_WIRE_TO_KN_FORCED), 10);
	lk_close(lk);
	*state = NULL;
	assert_int_equal(npu_stop(), 0);
}

static void
test_garbage_while_running(void **state)
{
	uint64_t seed = 0x2545f4914f6cdd1dull;
	uint32_t size;
	uint8_t *base;
	struct lk *lk, *scribbler;
	unsigned int answered = 0, failed = 0;
	double t0;

	if (!have_netns)
		skip();
	*state = lk = npu_start("garbage");
	scribbler = lk_attach(link_path, -1);
	assert_non_null(scribbler);
	base = lk_region(scribbler, &size);
	t0 = now_s();
	while (now_s() - t0 < 2.0) {
		struct fc_ans_cfg cfg;
		struct fc_frame_spec u = { .ttl = 64, .payload = 40 };
		int rc;

		for (int i = 0; i < 2000; i++) {
			seed ^= seed << 13;
			seed ^= seed >> 7;
			seed ^= seed << 17;
			base[seed % size] = (uint8_t)(seed >> 40);
		}
		fc_key4(&u.key, IPPROTO_UDP, "198.18.0.1", 1, "198.19.0.1", 2);
		play(0, &u, NULL);
		rc = cmd(lk, FC_CMD_FW_CFG_PARAMS_GET, NULL, 0, &cfg, sizeof(cfg));
		if (rc == 0)
			answered++;
		else
			failed++;
		if (rc == -ECONNRESET || rc == -EPROTO)
			lk_resync(lk);
	}
	print_message("%u calls answered, %u failed while the region was scribbled on\n",
		      answered, failed);
	assert_int_equal(kill(npu, 0), 0);	/* still running */
	lk_close(scribbler);
	lk_close(lk);
	*state = NULL;
	assert_int_equal(npu_stop(), 0);	/* and stops cleanly */
}

/*
 * A client that posts more commands than its answer ring holds, before it
 * reads any answer: every command is answered, none is done unanswered.
 */
static void
test_answers_never_lost(void **state)
{
	struct fc_ans_cfg cfg;
	struct lk *lk;
	unsigned int got = 0;
	uint32_t seen_last = 0;
	double t0;

	if (!have_netns)
		skip();
	*state = lk = npu_start("answers");
	for (uint32_t i = 1; i <= LK_CMD_SLOTS; i++) {
		struct fc_cmd_rev r = { .rev = i };

		assert_int_equal(lk_cmd_post(lk, FC_CMD_FW_STATE_REV_SET, i, &r, sizeof(r)), 0);
	}
	lk_cmd_kick(lk);
	usleep(100000);		/* all taken and answered: the answer ring is full */
	{
		struct fc_cmd_rev r = { .rev = 777 };

		assert_int_equal(lk_cmd_post(lk, FC_CMD_FW_STATE_REV_SET, 1000, &r, sizeof(r)), 0);
		lk_cmd_kick(lk);
	}
	usleep(100000);
	/* the 65th waits, untaken, until its answer has room: read them all */
	t0 = now_s();
	while (got < LK_CMD_SLOTS + 1 && now_s() - t0 < 5) {
		struct fc_ans_hdr a;
		uint8_t p[FC_CMD_MAX_PAYLOAD];

		if (lk_ans_take(lk, &a, p, sizeof(p)) == 0) {
			got++;
			seen_last |= a.tag == 1000;
		} else {
			lk_ans_wait(lk, 10);
		}
	}
	assert_int_equal(got, LK_CMD_SLOTS + 1);
	assert_true(seen_last);
	assert_int_equal(cmd(lk, FC_CMD_FW_CFG_PARAMS_GET, NULL, 0, &cfg, sizeof(cfg)), 0);
	assert_int_equal(cfg.fw_rev, 777);
	lk_close(lk);
	*state = NULL;
	assert_int_equal(npu_stop(), 0);
}

/* Runs flowcutctl on the test's link; returns its exit status and output. */
static int
ctl(char *out, size_t cap, const char *args)
{
	const char *build = progs();
	char cmdline[512];
	size_t n;
	FILE *p;
	int rc;

	snprintf(cmdline, sizeof(cmdline), "%s/flowcutctl --link %s %s 2>&1", build, link_path,
		 args);
	p = popen(cmdline, "r");
	assert_non_null(p);
	n = fread(out, 1, cap - 1, p);
	out[n] = '\0';
	rc = WEXITSTATUS(pclose(p));
	if (rc != 0)	/* what it said, for the failure that follows */
		print_message("flowcutctl %s: exit %d: %s\n", args, rc, out);
	return rc;
}

static void
test_flowcutctl(void **state)
{
	static char out[65536];
	struct fc_cmd_conn_id q;
	struct fc_conn_info ci;
	struct fc_ans_cfg cfg;
	struct fc_key udp;
	struct lk *lk;
	char args[128];
	uint64_t id;

	if (!have_netns)
		skip();
	*state = lk = npu_start("ctl");
	program_ports(lk);
	fc_key4(&udp, IPPROTO_UDP, "198.18.0.10", 9000, "198.19.0.10", 9001);
	id = conn_make(lk, &udp);
	for (int i = 0; i < 5; i++) {
		struct fc_frame_spec u = { .key = udp, .ttl = 64, .payload = 40 };

		play(0, &u, NULL);
	}
	wait_rx(lk, 5);
	usleep(120000);		/* the counters window is refreshed every 50 ms */

	assert_int_equal(ctl(out, sizeof(out), "conns"), 0);
	print_message("%s", out);
	assert_non_null(strstr(out, "4 udp 198.18.0.10:9000 > 198.19.0.10:9001 port 0 vlan 0  5 pkts"));
	assert_non_null(strstr(out, "\n1 connection\n"));
	assert_int_equal(ctl(out, sizeof(out), "--json conns"), 0);
	assert_non_null(strstr(out, "\"action\": \"IPS\""));
	assert_non_null(strstr(out, "\"verdict\": \"CUT_THRU\""));
	assert_int_equal(ctl(out, sizeof(out), "counters"), 0);
	assert_non_null(strstr(out, "FROM_WIRE_TO_WIRE_VERDICT_CUT_THRU"));
	assert_null(strstr(out, "FROM_WIRE_DROP_IPS_VERDICT"));	/* non-zero only */
	assert_int_equal(ctl(out, sizeof(out), "--json counters"), 0);
	assert_non_null(strstr(out, "\"FROM_WIRE_RX\": 5"));

	/* the cut by hand */
	snprintf(args, sizeof(args), "conn verdict %" PRIu64 " drop", id);
	assert_int_equal(ctl(out, sizeof(out), args), 0);
	q.id = id;
	assert_int_equal(cmd(lk, FC_CMD_CONN_READ_BY_ID, &q, sizeof(q), &ci, sizeof(ci)), 0);
	assert_int_equal(ci.verdict, FC_VERDICT_DROP);
	assert_int_equal(ctl(out, sizeof(out), "conn verdict 99999 drop"), 1);
	assert_non_null(strstr(out, "no such connection"));
	assert_int_equal(ctl(out, sizeof(out), "conn verdict 1 maybe"), 2);

	/* the configuration word by name, read-modify-write */
	assert_int_equal(ctl(out, sizeof(out), "cfg IPS=off DROP_IF_IPS_OFF=on"), 0);
	assert_int_equal(cmd(lk, FC_CMD_FW_CFG_PARAMS_GET, NULL, 0, &cfg, sizeof(cfg)), 0);
	assert_int_equal(cfg.fw_cfg, FC_CFG_OFFLOAD | FC_CFG_TCP_SEQ_CHK | FC_CFG_DROP_IF_IPS_OFF);
	assert_int_equal(ctl(out, sizeof(out), "cfg GATE=on"), 2);
	assert_non_null(strstr(out, "no bit named 'GATE'"));
	assert_int_equal(ctl(out, sizeof(out), "--json status"), 0);
	assert_non_null(strstr(out, "\"connections\": 1"));
	lk_close(lk);
	*state = NULL;
	assert_int_equal(npu_stop(), 0);
	assert_int_equal(ctl(out, sizeof(out), "status"), 1);	/* nobody there */
}

/*
 * Aging never waits for the host: nobody takes the events here, and six
 * rounds of 1,000 connections with a 1 s timeout age out one after the
 * other, though the event ring (4,096) is full after four.  What did not
 * fit is counted, never a reason to keep a connection nobody can judge.
 */
static void
test_aging_without_a_reader(void **state)
{
	struct fc_ans_table_stats ts;
	struct lk *lk;

	if (!have_netns)
		skip();
	*state = lk = npu_start("age");
	program_ports(lk);
	for (unsigned int round = 0; round < 6; round++) {
		double t0;

		for (unsigned int i = 0; i < 1000; i++) {
			struct fc_cmd_flow_create c = { .verdict = FC_VERDICT_CUT_THRU };
			struct fc_ans_conn_id a;
			struct fc_key k, r;

			fc_key4(&k, IPPROTO_UDP, "198.18.0.10", (uint16_t)(1024 + i), "198.19.0.10",
				(uint16_t)(6000 + round));
			fp_key_reverse(&k, &r);
			r.port = 1;
			c.mf[0].key = k;
			c.mf[1].key = r;
			c.mf[1].nhop = 1;
			c.mf[0].action = c.mf[1].action = FC_ACTION_IPS;
			c.mf[0].timeout_s = c.mf[1].timeout_s = 1;
			if (cmd(lk, FC_CMD_FLOW_CREATE_FP, &c, sizeof(c), &a, sizeof(a)) != 0)
				fail_msg("round %u: connection %u not made (the table full of "
					 "connections that did not age out?)", round, i);
		}
		t0 = now_s();
		do {
			assert_int_equal(cmd(lk, FC_CMD_TABLE_STATS_READ, NULL, 0, &ts, sizeof(ts)), 0);
			if (ts.conns == 0)
				break;
			usleep(50000);
		} while (now_s() - t0 < 5);
		if (ts.conns != 0)
			fail_msg("round %u: %u connections still in the table 5 s after their 1 s "
				 "timeout, the event ring unread", round, ts.conns);
		print_message("round %u: aged out in %.2f s\n", round, now_s() - t0);
	}
	assert_true(counter(lk, FC_CNT_NPU_EVENT_RING_FULL) > 0);
	print_message("events lost for want of room, counted: %" PRIu64 "\n",
		      counter(lk, FC_CNT_NPU_EVENT_RING_FULL));
}

/*
 * A port EAL could not make leaves no coprocessor running without a wire:
 * EAL goes on past a device that fails its probe, and flowcut-npu with no
 * ports would bring its link up, be programmed and forward nothing.  It
 * must exit, saying so, with no link made.
 */
/* flowcut-npu with these devices and options: its exit status, its output in out */
static int
npu_refused(const char *vdev, const char *opts, char *out, size_t outlen)
{
	char cmd[1024];
	size_t n = 0;
	FILE *f;
	int rc;

	snprintf(cmd, sizeof(cmd),
		 "timeout 30 %s/flowcut-npu --no-huge -m 256 --no-pci --no-telemetry --no-shconf "
		 "--file-prefix fc-npu-noport-%d -l 0,1 --log-level=error --vdev %s -- "
		 "--link %s/noport.link %s 2>&1", progs(), (int)getpid(), vdev, dir, opts);
	out[0] = '\0';
	f = popen(cmd, "r");
	assert_non_null(f);
	while (n < outlen - 1 && fgets(out + n, (int)(outlen - n), f) != NULL)
		n = strlen(out);
	rc = pclose(f);
	print_message("%s", out);
	assert_true(WIFEXITED(rc));
	return WEXITSTATUS(rc);
}

static void
test_no_ports_refused(void **state)
{
	char out[4096], path[512], vdev[512];
	struct stat st;

	(void)state;
	if (!have_netns)
		skip();
	snprintf(path, sizeof(path), "%s/noport.link", dir);
	snprintf(vdev, sizeof(vdev), "net_pcap0,rx_iface=no-such-if,tx_pcap=%s/noport.pcap", dir);
	assert_int_equal(npu_refused(vdev, "", out, sizeof(out)), 1);
	assert_non_null(strstr(out, "no ports"));
	assert_int_not_equal(stat(path, &st), 0);
	/* --ports N: exactly N, or it exits (one made of the two it was told) */
	snprintf(vdev, sizeof(vdev), "net_pcap0,rx_iface=w0,tx_pcap=%s/noport.pcap", dir);
	assert_int_equal(npu_refused(vdev, "--ports 2", out, sizeof(out)), 1);
	assert_non_null(strstr(out, "EAL made 1 ports, --ports says 2"));
	assert_int_not_equal(stat(path, &st), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_forward_and_cut, test_teardown),
		cmocka_unit_test_teardown(test_restart, test_teardown),
		cmocka_unit_test_teardown(test_flowcutctl, test_teardown),
		cmocka_unit_test_teardown(test_answers_never_lost, test_teardown),
		cmocka_unit_test_teardown(test_garbage_while_running, test_teardown),
		cmocka_unit_test_teardown(test_aging_without_a_reader, test_teardown),
		cmocka_unit_test(test_no_ports_refused),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
