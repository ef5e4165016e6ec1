/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_cut: the cut (driver/cut/fd_cut) driven without root, over the
 * binding (driver/offload) and the stand-ins of standins.h: conntrack's
 * I/O, the routes and the commands record what is asked and answer as
 * conntrack and the coprocessor would.  Each row brings the binding to a
 * starting point (`given`), cuts (a cut of ranges, or `when`), and says
 * the one sequence of commands answered and conntrack calls made (the
 * kills sent SI_KILL_BATCH a datagram), what the cut returns, and how many
 * it counted in hardware and on the host.  Every row also checks the
 * order: a connection's kill after its drop's answer, and no drop answered
 * without its kill.  With "Cut in hardware" off, fd_cut is opened without
 * an nft (conn4/conn6 need root: tests/integration/test_driver.c).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>
#include <libnetfilter_conntrack/libnetfilter_conntrack.h>

#include <flowcut/fc_cmd.h>
#include <flowcut/fc_ctl.h>

#include "fc_list.h"
#include "fd_cut.h"
#include "fd_explain.h"
#include "fd_frames.h"
#include "fd_offload.h"
#include "fd_offload_cut.h"
#include "fd_why.h"
#include "standins.h"

#define MANY 200	/* the batching rows: half IPv4 TCP, half IPv6 UDP */

static struct fd_offload *off;
static struct fd_cut *cut;

/* A canonical list of `text` (one range a line); the caller frees it. */
static struct fc_list
list_of(const char *text)
{
	struct fc_list l = { 0 };

	assert_int_equal(fc_list_parse(text, strlen(text), &l, NULL, NULL), 0);
	fc_list_canon(&l);
	return l;
}

static long
cut_ranges(const char *text, enum fd_cut_trigger t)
{
	struct fc_list l = list_of(text);
	long n = fd_cut_ranges(cut, &l, t);

	fc_list_free(&l);
	return n;
}

static long
release(const char *in_force)
{
	struct fc_list l = list_of(in_force);
	long n = fd_cut_release(cut, &l);

	fc_list_free(&l);
	return n;
}

static struct fd_cut_stats
stats(void)
{
	struct fd_cut_stats st;

	fd_cut_stats(cut, &st);
	return st;
}

static struct fd_offload_conn
conn(uint64_t fp_id)
{
	struct fd_offload_conn oc = { 0 };

	assert_int_equal(fd_offload_find(off, FD_OFFLOAD_BY_FP, fp_id, NULL, &oc, NULL), 0);
	return oc;
}

/* a connection through a DNAT: its public address 203.0.113.80, its server 198.19.0.20 */
static const struct si_st dnat4 = { AF_INET, IPPROTO_TCP, "198.18.0.20", "203.0.113.80", 40010,
				    80, IPS_ASSURED | IPS_SEEN_REPLY | IPS_CONFIRMED,
				    3 /* TCP_CONNTRACK_ESTABLISHED */, SI_BIT, "198.19.0.20", false };

/* IPsec's NAT traversal (IPv6 UDP 4500): offloaded FWD (its verdict never consulted) */
static const struct si_st nat_t6 = { AF_INET6, IPPROTO_UDP, "2001:2::11", "2001:2:1::11", 40004,
				     4500, IPS_ASSURED | IPS_SEEN_REPLY | IPS_CONFIRMED, 0, SI_BIT,
				     NULL, false };

/* a second server in si_tcp4's /24 (198.19.0.0/24), offloaded beside it */
static const struct si_st other4 = { AF_INET, IPPROTO_TCP, "198.18.0.30", "198.19.0.11", 40020,
				     80, IPS_ASSURED | IPS_SEEN_REPLY | IPS_CONFIRMED,
				     3 /* TCP_CONNTRACK_ESTABLISHED */, SI_BIT, NULL, false };

/* ---- starting points ---- */

static void
given_tcp4(void)
{
	si_offloaded(&si_tcp4, 101);	/* fast-path id 1 */
}

static void
given_udp6(void)
{
	si_offloaded(&si_udp6, 102);
}

static void
given_nat_t6(void)
{
	si_offloaded(&nat_t6, 104);
}

static void
given_dnat4(void)
{
	si_offloaded(&dnat4, 110);
}

static void
given_syn4(void)
{
	si_host_add(&si_syn4, 103);	/* not offloaded: not established yet */
}

/*
 * tcp4 judged, its update acked, its FLOW_CREATE_FP posted and not
 * answered yet (an offload in flight): the coprocessor makes it when it
 * reads the command, whatever the cut decides meanwhile.
 */
static void
given_tcp4_in_flight(void)
{
	si_hold_answers = true;
	si_offloaded(&si_tcp4, 101);
	assert_int_equal(fd_offload_find(off, FD_OFFLOAD_BY_CT, 101, si_host[0], &(struct fd_offload_conn){ 0 },
					 NULL), -ENOENT);	/* on its way; answered only to a flush that waits */
}

/* Offloaded: tcp4 (id 1) and udp6 (id 2); not: syn4. */
static void
given_three(void)
{
	si_offloaded(&si_tcp4, 101);
	si_offloaded(&si_udp6, 102);
	si_host_add(&si_syn4, 103);
}

/* MANY states, each between its own pair of ends (198.18.1.x -> 198.19.1.x, 2001:2::x -> 2001:2:1::x). */
static void
many(bool offload)
{
	for (unsigned int i = 0; i < MANY; i++) {
		bool v4 = i < MANY / 2;
		char client[48], server[48];
		struct si_st s = v4 ? si_tcp4 : si_udp6;

		if (v4) {
			snprintf(client, sizeof(client), "198.18.1.%u", i + 1);
			snprintf(server, sizeof(server), "198.19.1.%u", i + 1);
		} else {
			snprintf(client, sizeof(client), "2001:2::1:%x", i + 1);
			snprintf(server, sizeof(server), "2001:2:1::1:%x", i + 1);
		}
		s.client = client;
		s.server = server;
		s.cport = (uint16_t)(41000 + i);
		if (offload) {
			si_offloaded(&s, 1000 + i);
		} else {
			s.status = IPS_CONFIRMED;	/* the rules passed it while new: not offloaded */
			s.tcp_state = 1;		/* TCP_CONNTRACK_SYN_SENT */
			si_host_add(&s, 1000 + i);
		}
	}
}

static void
given_many_offloaded(void)
{
	many(true);
}

static void
given_many_not_offloaded(void)
{
	many(false);
}

static void
given_tcp4_cut_by_hand(void)
{
	given_tcp4();
	assert_int_equal(cut_ranges("198.19.0.10\n", FD_CUT_HAND), 1);
}

static void
given_tcp4_cut_by_conn(void)
{
	given_tcp4();
	assert_int_equal(fd_cut_conn(cut, 1, FD_CUT_CONN), 0);
}

static void
given_tcp4_cut_by_tls(void)
{
	given_tcp4();
	assert_int_equal(fd_cut_state(cut, si_host[0], FD_CUT_TLS), 1);
}

/* tcp4 (id 1) and other4 (id 2), both offloaded, both in 198.19.0.0/24 */
static void
given_tcp4_other4(void)
{
	si_offloaded(&si_tcp4, 101);
	si_offloaded(&other4, 105);
}

static void
given_tcp4_refused(void)
{
	given_tcp4();
	si_refuse = FC_CMD_CONN_MODIFY_FP_VERDICT;
}

/* ---- steps other than a cut of ranges: each returns what the call did ---- */

static long
when_conn_1(void)
{
	return fd_cut_conn(cut, 1, FD_CUT_CONN);
}

/* si_tcp4's state cut alone (a connection's trigger: fd_cut_state), as a fingerprint's is. */
static long
when_state_tcp4(void)
{
	return fd_cut_state(cut, si_host[0], FD_CUT_HAND);
}

/* a fingerprint's cut of si_tcp4's state */
static long
when_tls_tcp4(void)
{
	return fd_cut_state(cut, si_host[0], FD_CUT_TLS);
}

static long
when_list_24(void)
{
	return cut_ranges("198.19.0.0/24\n", FD_CUT_LIST);
}

/* a watched set's element over the /24 */
static long
when_set_24(void)
{
	return cut_ranges("198.19.0.0/24\n", FD_CUT_SET);
}

/* never_cut made to hold si_tcp4's server (a settings reload) */
static long
when_never_server(void)
{
	struct fc_list l = list_of("198.19.0.10\n");
	long n = fd_cut_never(cut, &l);

	fc_list_free(&l);
	return n;
}

static long
when_conn_9(void)
{
	return fd_cut_conn(cut, 9, FD_CUT_CONN);
}

static long
when_release_none(void)
{
	return release("");
}

static long
when_release_held(void)
{
	return release("198.19.0.0/24\n");
}

/* ---- what holds after ---- */

/* tcp4: marked cut by hand, dropping (its verdict DROP), its state gone. */
static void
then_tcp4_dropping(void)
{
	assert_true(conn(1).cut);
	assert_int_equal(conn(1).cut_by, FD_CUT_HAND);
	assert_int_equal(si_fp_conn(1)->verdict, FC_VERDICT_DROP);
	assert_null(si_host[0]);	/* its state killed */
}

static void
then_tcp4_untouched(void)
{
	assert_false(conn(1).cut);
	assert_int_equal(si_fp_conn(1)->verdict, FC_VERDICT_CUT_THRU);
	assert_non_null(si_host[0]);
}

/* out of the fast path and the binding */
static void
then_tcp4_out(void)
{
	assert_null(si_fp_conn(1));
	assert_int_equal(fd_offload_find(off, FD_OFFLOAD_BY_FP, 1, NULL, &(struct fd_offload_conn){ 0 }, NULL),
			 -ENOENT);
}

/* tcp4 untouched, other4 (the rest of the /24) dropping */
static void
then_other4_only(void)
{
	then_tcp4_untouched();
	assert_true(conn(2).cut);
	assert_int_equal(si_fp_conn(2)->verdict, FC_VERDICT_DROP);
}

/* given back: out of the fast path and the binding, its state killed, no DROP sent */
static void
then_tcp4_given_back(void)
{
	then_tcp4_out();
	assert_null(si_host[0]);
}

static void
then_udp6_untouched(void)
{
	assert_false(conn(1).cut);
	assert_non_null(si_host[0]);
}

static void
then_tcp4_by_conn(void)
{
	assert_true(conn(1).cut);
	assert_int_equal(conn(1).cut_by, FD_CUT_CONN);
}

static void
then_syn4_created_dropping(void)
{
	struct fc_conn_info *ci = si_fp_conn(1);

	assert_non_null(ci);
	assert_int_equal(ci->verdict, FC_VERDICT_DROP);
	assert_true(conn(1).cut);
}

/* The drops in one flush, the MANY kills in datagrams of SI_KILL_BATCH. */
static void
then_batched(void)
{
	assert_int_equal(si_counts.posted, MANY);
	assert_int_equal(si_counts.flushes, 1);
	assert_int_equal(si_counts.kill_posts, MANY);
	assert_int_equal(si_counts.datagrams, (MANY + SI_KILL_BATCH - 1) / SI_KILL_BATCH);
	for (unsigned int i = 0; i < si_counts.datagrams; i++)
		assert_int_equal(si_counts.per_datagram[i],
				 i + 1 < si_counts.datagrams ? SI_KILL_BATCH :
				 MANY - i * SI_KILL_BATCH);
	for (unsigned int i = 0; i < SI_HOST_MAX; i++)
		assert_null(si_host[i]);
}

/* The same, no command posted: each state killed on the host. */
static void
then_batched_on_host(void)
{
	assert_int_equal(si_counts.posted, 0);
	assert_int_equal(si_counts.kill_posts, MANY);
	assert_int_equal(si_counts.datagrams, (MANY + SI_KILL_BATCH - 1) / SI_KILL_BATCH);
	assert_int_equal(si_counts.per_datagram[0], SI_KILL_BATCH);
}

static void
then_released(void)
{
	assert_int_equal(stats().cut_released, 1);
	then_tcp4_out();
}

/* still cut; releasable when the addresses that hold it go */
static void
then_kept(void)
{
	assert_int_equal(stats().cut_released, 0);
	assert_true(conn(1).cut);
	assert_int_equal(fd_cut_releasable(cut), 1);
}

/* still cut, and no address's removal releases it */
static void
then_never_released(void)
{
	assert_int_equal(stats().cut_released, 0);
	assert_true(conn(1).cut);
	assert_int_equal(fd_cut_releasable(cut), 0);
}

/* ---- the rows ---- */

/* ---- a cut while a ruleset change's job runs ---- */

#define TEN_K 10000u

/* TEN_K offloaded: si_udp6 (the one to cut, fast-path id 1) and TEN_K - 1 TCP states. */
static void
given_ten_k(void)
{
	si_offloaded(&si_udp6, 102);
	for (unsigned int i = 1; i < TEN_K; i++) {
		struct si_st s = si_tcp4;

		s.cport = (uint16_t)(20000 + i);
		si_offloaded(&s, 5000 + i);
	}
}

static unsigned int updates_in_cut;

/*
 * A ruleset change and one turn of its job (TEN_K states to unmark:
 * busy on), then a cut by hand of si_udp6's far end: the cut is made in
 * the call, no update of the job's waits in front of it.
 */
static long
when_cut_mid_job(void)
{
	unsigned int before;
	long n;

	assert_int_equal(fd_offload_ruleset_changed(off), 0);
	fd_offload_events(off);
	fd_offload_work(off);
	assert_true(fd_offload_busy(off));
	si_log_reset();
	before = si_counts.updates;
	n = cut_ranges("2001:2:1::10\n", FD_CUT_HAND);
	updates_in_cut = si_counts.updates - before;
	return n;
}

static void
then_cut_mid_job(void)
{
	struct nf_conntrack *t = si_build(&si_udp6, 0);
	unsigned int turns = 0;

	assert_int_equal(updates_in_cut, 0);
	assert_null(si_host_find(t));	/* killed */
	nfct_destroy(t);
	assert_true(fd_offload_busy(off));	/* the job goes on after it */
	while (fd_offload_busy(off)) {
		assert_true(++turns < 1000);
		fd_offload_events(off);
		fd_offload_work(off);
	}
	/* the cut one made at the new revision, dropping on; the job passed it by */
	assert_int_equal(conn(TEN_K + 1).cut, true);
	assert_int_equal(si_fp_conn(TEN_K + 1)->verdict, FC_VERDICT_DROP);
	assert_int_equal(si_fp_conn(TEN_K + 1)->fw_rev, 1);
}

static const struct row {
	const char *what;
	bool hw;		/* Cut in hardware */
	void (*given)(void);
	const char *ranges;	/* a cut of these by hand, or ... */
	long (*when)(void);	/* ... this step */
	long want;		/* what it returns */
	const char *seq;	/* the commands answered and conntrack calls, in order (NULL: not checked) */
	unsigned int in_hw, on_host;	/* counted by the step */
	void (*then)(void);
	const char *never;	/* never_cut from the start (NULL: none) */
	unsigned int refused, set_warned, given_back;	/* never_cut_* counted by the step */
} rows[] = {
	/* which connections a cut picks */
	{ "offloaded IPv4, the far end the server (reply source): dropped, then killed", true,
	  given_tcp4, "198.19.0.10\n", NULL, 1,
	  "CONN_MODIFY_FP_VERDICT id=1 verdict=DROP; datagram kills=1; kill sport=40000; dump",
	  1, 0, then_tcp4_dropping, NULL, 0, 0, 0 },
	{ "a state cut while its offload is in flight: the create answered first, then dropped, killed",
	  true, given_tcp4_in_flight, NULL, when_state_tcp4, 1,
	  "FLOW_CREATE_FP sport=40000 verdict=CUT_THRU action=IPS; "
	  "CONN_MODIFY_FP_VERDICT id=1 verdict=DROP; datagram kills=1; kill sport=40000",
	  1, 0, then_tcp4_dropping, NULL, 0, 0, 0 },
	{ "a cut of ranges while an offload is in flight: the create answered first, then dropped",
	  true, given_tcp4_in_flight, "198.19.0.10\n", NULL, 1,
	  "FLOW_CREATE_FP sport=40000 verdict=CUT_THRU action=IPS; "
	  "CONN_MODIFY_FP_VERDICT id=1 verdict=DROP; datagram kills=1; kill sport=40000; dump",
	  1, 0, then_tcp4_dropping, NULL, 0, 0, 0 },
	{ "offloaded IPv6, the far end the client (original source): dropped, then killed", true,
	  given_udp6, "2001:2::/64\n", NULL, 1,
	  "CONN_MODIFY_FP_VERDICT id=1 verdict=DROP; datagram kills=1; kill sport=40001; dump",
	  1, 0, NULL, NULL, 0, 0, 0 },
	{ "offloaded FWD (IPv6 UDP 4500): its action made DROP both ways, then killed", true,
	  given_nat_t6, "2001:2:1::11\n", NULL, 1,
	  "CONN_MODIFY_FP id=1 action=DROP,DROP; datagram kills=1; kill sport=40004; dump",
	  1, 0, NULL, NULL, 0, 0, 0 },
	{ "DNAT: the far end its target (reply source): dropped, then killed", true,
	  given_dnat4, "198.19.0.20\n", NULL, 1,
	  "CONN_MODIFY_FP_VERDICT id=1 verdict=DROP; datagram kills=1; kill sport=40010; dump",
	  1, 0, NULL, NULL, 0, 0, 0 },
	{ "DNAT: its public address (original destination) no far end: untouched", true,
	  given_dnat4, "203.0.113.80\n", NULL, 0, "dump", 0, 0, NULL, NULL, 0, 0, 0 },
	{ "a connection not in the ranges: untouched", true, given_tcp4, "203.0.113.0/24\n",
	  NULL, 0, "dump", 0, 0, then_tcp4_untouched, NULL, 0, 0, 0 },
	{ "not offloaded, from conntrack's dump: created dropping, then killed", true, given_syn4,
	  "198.19.0.0/16\n", NULL, 1,
	  "dump; NHOP_PROGRAM port=1; NHOP_PROGRAM port=0; "
	  "FLOW_CREATE_FP sport=40002 verdict=DROP action=IPS; datagram kills=1; "
	  "kill sport=40002", 1, 0, then_syn4_created_dropping, NULL, 0, 0, 0 },
	{ "offloaded ones first, before the dump; the one not offloaded after", true, given_three,
	  "198.19.0.10\n2001:2::10\n", NULL, 3,
	  "CONN_MODIFY_FP_VERDICT id=1 verdict=DROP; CONN_MODIFY_FP_VERDICT id=2 verdict=DROP; "
	  "datagram kills=2; kill sport=40000; kill sport=40001; dump; "
	  /* a cut connection's placeholder next hops (fd_offload_prepare.c), once a port */
	  "NHOP_PROGRAM port=1; NHOP_PROGRAM port=0; "
	  "FLOW_CREATE_FP sport=40002 verdict=DROP action=IPS; datagram kills=1; "
	  "kill sport=40002", 3, 0, NULL, NULL, 0, 0, 0 },
	{ "a drop refused: taken out instead, killed, counted on the host", true,
	  given_tcp4_refused, "198.19.0.10\n", NULL, 1,
	  "CONN_MODIFY_FP_VERDICT refused; CONN_RECLAIM_FP id=1; datagram kills=1; "
	  "kill sport=40000; dump", 0, 1, then_tcp4_out, NULL, 0, 0, 0 },
	{ "cut already: skipped", true, given_tcp4_cut_by_hand, "198.19.0.10\n", NULL, 0, "dump",
	  0, 0, then_tcp4_dropping, NULL, 0, 0, 0 },
	/* batching */
	{ "200 offloaded: 200 drops in one flush, then kills 64 a datagram", true,
	  given_many_offloaded, "198.19.1.0/24\n2001:2::/64\n", NULL, MANY, NULL, MANY, 0,
	  then_batched, NULL, 0, 0, 0 },
	{ "200 not offloaded: 200 creations in one flush, then kills 64 a datagram", true,
	  given_many_not_offloaded, "198.19.1.0/24\n2001:2::/64\n", NULL, MANY, NULL, MANY, 0,
	  then_batched, NULL, 0, 0, 0 },
	/* Cut in hardware off */
	{ "off, offloaded: taken out, then killed", false, given_tcp4, "198.19.0.10\n", NULL, 1,
	  "CONN_RECLAIM_FP id=1; datagram kills=1; kill sport=40000; dump", 0, 1, then_tcp4_out, NULL, 0, 0, 0 },
	{ "off, not offloaded: killed", false, given_syn4, "198.18.0.10\n", NULL, 1,
	  "dump; datagram kills=1; kill sport=40002", 0, 1, NULL, NULL, 0, 0, 0 },
	{ "off, 200 not offloaded: kills 64 a datagram", false, given_many_not_offloaded,
	  "198.18.1.0/24\n2001:2::/64\n", NULL, MANY, NULL, 0, MANY, then_batched_on_host, NULL, 0, 0, 0 },
	/* one connection by its fast-path id */
	{ "by connection: its state read whole, dropped, then killed", true, given_tcp4, NULL,
	  when_conn_1, 0,
	  "get sport=40000; CONN_MODIFY_FP_VERDICT id=1 verdict=DROP; datagram kills=1; "
	  "kill sport=40000", 1, 0, then_tcp4_by_conn, NULL, 0, 0, 0 },
	{ "by connection, no such id: -ENOENT, nothing asked", true, given_tcp4, NULL, when_conn_9,
	  -ENOENT, "", 0, 0, then_tcp4_untouched, NULL, 0, 0, 0 },
	{ "by connection, cut already: -EALREADY, nothing asked", true, given_tcp4_cut_by_hand,
	  NULL, when_conn_1, -EALREADY, "", 0, 0, then_tcp4_dropping, NULL, 0, 0, 0 },
	{ "by connection, Cut in hardware off: taken out, then killed", false, given_tcp4, NULL,
	  when_conn_1, 0,
	  "get sport=40000; CONN_RECLAIM_FP id=1; datagram kills=1; kill sport=40000", 0, 1,
	  then_tcp4_out, NULL, 0, 0, 0 },
	/* while a ruleset change's unmark of 10,000 runs */
	{ "a cut while a ruleset change's job runs: made in the call, dropping at the new revision",
	  true, given_ten_k, NULL, when_cut_mid_job, 1,
	  "dump; NHOP_PROGRAM port=1; NHOP_PROGRAM port=0; "
	  "FLOW_CREATE_FP sport=40001 verdict=DROP action=IPS; datagram kills=1; "
	  "kill sport=40001", 1, 0, then_cut_mid_job, NULL, 0, 0, 0 },
	/* a release */
	{ "a release, nothing in force: the hand's cut taken out", true, given_tcp4_cut_by_hand,
	  NULL, when_release_none, 1, "CONN_RECLAIM_FP id=1", 0, 0, then_released, NULL, 0, 0, 0 },
	{ "a release, its far end still in force: kept", true, given_tcp4_cut_by_hand, NULL,
	  when_release_held, 0, "", 0, 0, then_kept, NULL, 0, 0, 0 },
	{ "a release never lets go a cut by connection", true, given_tcp4_cut_by_conn, NULL,
	  when_release_none, 0, "", 0, 0, then_never_released, NULL, 0, 0, 0 },
	{ "a release never lets go a fingerprint's (tls) cut", true, given_tcp4_cut_by_tls, NULL,
	  when_release_none, 0, "", 0, 0, then_never_released, NULL, 0, 0, 0 },
	/* never cut: each trigger against a never-cut address (the range said, the connection refused) */
	{ "never cut, by hand: the address refused, no DROP, its state kept", true, given_tcp4,
	  "198.19.0.10\n", NULL, 0, "dump", 0, 0, then_tcp4_untouched, "198.19.0.10\n", 2, 0, 0 },
	{ "never cut, a /32 inside a hand cut's /24: the rest of the /24 cut", true,
	  given_tcp4_other4, "198.19.0.0/24\n", NULL, 1,
	  "CONN_MODIFY_FP_VERDICT id=2 verdict=DROP; datagram kills=1; kill sport=40020; dump",
	  1, 0, then_other4_only, "198.19.0.10\n", 2, 0, 0 },
	{ "never cut, a list's /24 over it: the same", true, given_tcp4_other4, NULL, when_list_24,
	  1, "CONN_MODIFY_FP_VERDICT id=2 verdict=DROP; datagram kills=1; kill sport=40020; dump",
	  1, 0, then_other4_only, "198.19.0.10\n", 2, 0, 0 },
	{ "never cut, IPv6: the cut end's peer never cut, so the connection is not cut", true,
	  given_udp6, "2001:2:1::/48\n", NULL, 0, "dump", 0, 0, then_udp6_untouched,
	  "2001:2::/64\n", 1, 0, 0 },
	{ "never cut, by connection: -EPERM, its state read, nothing sent", true, given_tcp4, NULL,
	  when_conn_1, -EPERM, "get sport=40000", 0, 0, then_tcp4_untouched, "198.18.0.0/24\n",
	  1, 0, 0 },
	{ "never cut, a fingerprint's: -EPERM, nothing sent", true, given_tcp4, NULL,
	  when_tls_tcp4, -EPERM, "", 0, 0, then_tcp4_untouched, "198.19.0.10\n", 1, 0, 0 },
	{ "never cut, a watched set's element over it: warned, given back (out, killed), the rest cut",
	  true, given_tcp4_other4, NULL, when_set_24, 1,
	  "CONN_MODIFY_FP_VERDICT id=2 verdict=DROP; datagram kills=1; kill sport=40020; dump; "
	  "CONN_RECLAIM_FP id=1; kill sport=40000", 1, 0, then_tcp4_given_back, "198.19.0.10\n",
	  0, 2, 1 },
	{ "never cut, Cut in hardware off: still not cut", false, given_tcp4, "198.19.0.10\n", NULL,
	  0, "dump", 0, 0, then_tcp4_untouched, "198.19.0.10\n", 2, 0, 0 },
	/* a settings reload: what never_cut newly holds released, whoever cut it */
	{ "never_cut newly holds a hand cut's end: released", true, given_tcp4_cut_by_hand, NULL,
	  when_never_server, 1, "CONN_RECLAIM_FP id=1", 0, 0, then_released, NULL, 0, 0, 0 },
	{ "never_cut newly holds a fingerprint's cut's end: released", true,
	  given_tcp4_cut_by_tls, NULL, when_never_server, 1, "CONN_RECLAIM_FP id=1", 0, 0,
	  then_released, NULL, 0, 0, 0 },
	{ "never_cut newly holds nothing cut: nothing released", true, given_three, NULL,
	  when_never_server, 0, "", 0, 0, then_tcp4_untouched, NULL, 0, 0, 0 },
};

/* Every kill after its drop's answer; every drop answered followed by its kill. */
static void
check_order(const char *what)
{
	for (unsigned int i = 0; i < si_nseq; i++) {
		bool killed = false;

		if (si_seq[i].mark == SI_KILLED) {
			for (unsigned int j = i + 1; j < si_nseq; j++)
				if (si_seq[j].mark == SI_DROPPED && si_seq[j].sport == si_seq[i].sport)
					fail_msg("%s: sport %u killed before its drop was answered",
						 what, si_seq[i].sport);
			continue;
		}
		for (unsigned int j = i + 1; j < si_nseq; j++)
			killed |= si_seq[j].mark == SI_KILLED && si_seq[j].sport == si_seq[i].sport;
		if (!killed)
			fail_msg("%s: sport %u dropped, its state never killed", what,
				 si_seq[i].sport);
	}
}

static int
cut_open(void **state)
{
	const struct row *r = *state;
	struct fd_cut_parts parts = { .ct = si_ctio, .cmds = si_cmds, .nft = NULL,
				      .cut_in_hardware = r->hw };

	off = si_open(r->hw);
	parts.off = off;
	cut = fd_cut_open(&parts);
	assert_non_null(cut);
	if (r->never != NULL) {
		struct fc_list l = list_of(r->never);

		assert_int_equal(fd_cut_never(cut, &l), 0);
		fc_list_free(&l);
	}
	return 0;
}

static int
cut_close(void **state)
{
	(void)state;
	fd_cut_close(cut);
	si_close();
	return 0;
}

/* One row: its starting point, its step, what the step asked in order, its counts, then what holds. */
static void
test_row(void **state)
{
	const struct row *r = *state;
	struct fd_cut_stats before, after;
	unsigned int in_hw = 0, on_host = 0;
	long got;

	r->given();
	si_log_reset();
	before = stats();
	got = r->when ? r->when() : cut_ranges(r->ranges, FD_CUT_HAND);
	after = stats();
	for (int t = 0; t < FD_CUT_NTRIGGERS; t++) {
		in_hw += (unsigned int)(after.in_hardware[t] - before.in_hardware[t]);
		on_host += (unsigned int)(after.on_host[t] - before.on_host[t]);
	}
	if (got != r->want || (r->seq != NULL && strcmp(si_all_log, r->seq) != 0) ||
	    in_hw != r->in_hw || on_host != r->on_host || after.cut_failed != 0 ||
	    after.never_cut_refused - before.never_cut_refused != r->refused ||
	    after.never_cut_set - before.never_cut_set != r->set_warned ||
	    after.never_cut_given_back - before.never_cut_given_back != r->given_back ||
	    si_counts.route_gets != 0)
		fail_msg("%s:\n  returned %ld, wanted %ld\n  asked  %s\n  wanted %s\n"
			 "  in hardware %u, wanted %u; on the host %u, wanted %u; failed %lu\n"
			 "  never cut: refused %lu, wanted %u; set %lu, wanted %u; given back %lu, "
			 "wanted %u\n  neighbours asked %u, wanted 0 (a cut's ends need none)",
			 r->what, got, r->want, si_all_log, r->seq ? r->seq : "(any)",
			 in_hw, r->in_hw, on_host, r->on_host, (unsigned long)after.cut_failed,
			 (unsigned long)(after.never_cut_refused - before.never_cut_refused),
			 r->refused, (unsigned long)(after.never_cut_set - before.never_cut_set),
			 r->set_warned,
			 (unsigned long)(after.never_cut_given_back - before.never_cut_given_back),
			 r->given_back, si_counts.route_gets);
	check_order(r->what);
	if (r->then)
		r->then();
}

/*
 * fd_why: whose a connection's end is (the sets and the list as fd_watch
 * names them), its record, its frames since the cut; each source's
 * figures.  Rows: an end, the kind asked, the source wanted.
 */
static void
test_why_rows(void **state)
{
	static const char sshd[] = "198.51.100.0/24\n2001:db8:1::/48\n";
	static const char cscli[] = "203.0.113.7\n198.51.100.9\n";
	static const char drop[] = "192.0.2.0/24\n2001:db8:2::/64\n";
	static const struct {
		const char *end;
		enum fd_why_kind kind;
		int want;	/* the source's id, or FD_WHY_NONE */
	} wrows[] = {
		{ "198.51.100.20", FD_WHY_SET, 0 },
		{ "198.51.100.9", FD_WHY_SET, 0 },	/* two hold it: the first named */
		{ "203.0.113.7", FD_WHY_SET, 1 },
		{ "203.0.113.8", FD_WHY_SET, FD_WHY_NONE },
		{ "2001:db8:1:ffff::1", FD_WHY_SET, 0 },
		{ "2001:db8:2::1", FD_WHY_SET, FD_WHY_NONE },	/* the list's, not a set's */
		{ "2001:db8:2::1", FD_WHY_LIST, 2 },
		{ "192.0.2.255", FD_WHY_LIST, 2 },
		{ "198.51.100.20", FD_WHY_LIST, FD_WHY_NONE },
	};
	struct fd_why *w = fd_why_open();
	struct fc_list s0 = list_of(sshd), s1 = list_of(cscli), l0 = list_of(drop);
	struct fd_why_rec r = { .slot = 5, .trigger = FD_CUT_SET, .hw = 1, .src = 0, .when_s = 1 };
	const struct fd_why_rec *got;

	(void)state;
	assert_non_null(w);
	assert_int_equal(fd_why_source(w, FD_WHY_SET, "inet f2b-table addr-set-sshd"), 0);
	assert_int_equal(fd_why_source(w, FD_WHY_SET, "ip crowdsec crowdsec-blacklists-cscli"), 1);
	assert_int_equal(fd_why_source(w, FD_WHY_LIST, "/etc/flowcut/drop.txt"), 2);
	assert_int_equal(fd_why_source(w, FD_WHY_SET, "inet f2b-table addr-set-sshd"), 0);
	fd_why_own(w, 0, &s0);
	fd_why_own(w, 1, &s1);
	fd_why_holds(w, 2, &l0);
	assert_int_equal(fd_why_src(w, 0)->elements, 2);
	assert_int_equal(fd_why_src(w, 2)->elements, 2);
	for (size_t i = 0; i < sizeof(wrows) / sizeof(wrows[0]); i++) {
		uint8_t a[16] = { 0 }, none[16] = { 0 };
		uint8_t family = strchr(wrows[i].end, ':') ? 6 : 4;

		assert_int_equal(inet_pton(family == 4 ? AF_INET : AF_INET6, wrows[i].end, a), 1);
		print_message("why row %zu: %s\n", i, wrows[i].end);
		assert_int_equal(fd_why_owner(w, wrows[i].kind, family, none, a), wrows[i].want);
		assert_int_equal(fd_why_owner(w, wrows[i].kind, family, a, none), wrows[i].want);
	}

	/* cut while offloaded: its first reading is the base */
	assert_int_equal(fd_why_cut(w, &r), 0);
	assert_int_equal(fd_why_frames(w, 5, 100), 0);
	assert_int_equal(fd_why_frames(w, 5, 130), 0);
	assert_int_equal(fd_why_frames(w, 5, 150), 0);	/* the source's: 50, not 30 + 50 */
	got = fd_why_get(w, 5);
	assert_non_null(got);
	assert_int_equal(got->frames, 50);
	assert_int_equal(got->trigger, FD_CUT_SET);
	/* made dropping: counted from 0 */
	r = (struct fd_why_rec){ .slot = 6, .trigger = FD_CUT_LIST, .hw = 1, .src = 2, .based = 1 };
	assert_int_equal(fd_why_cut(w, &r), 0);
	assert_int_equal(fd_why_frames(w, 6, 7), 0);
	assert_int_equal(fd_why_get(w, 6)->frames, 7);
	assert_int_equal(fd_why_frames(w, 7, 1), -ENOENT);
	assert_null(fd_why_get(w, 7));
	for (uint32_t k = 100; k < 3000; k++) {	/* the table grows, the records stay */
		r = (struct fd_why_rec){ .slot = k, .trigger = FD_CUT_HAND, .src = FD_WHY_NONE };
		assert_int_equal(fd_why_cut(w, &r), 0);
	}
	assert_int_equal(fd_why_get(w, 5)->frames, 50);
	assert_int_equal(fd_why_get(w, 2999)->trigger, FD_CUT_HAND);
	assert_true(fd_why_bytes(w) >= 2 * 2902 * sizeof(struct fd_why_rec));
	assert_int_equal(fd_why_src(w, 0)->cut, 1);
	assert_int_equal(fd_why_src(w, 0)->frames, 50);
	assert_int_equal(fd_why_src(w, 1)->cut, 0);
	assert_int_equal(fd_why_src(w, 2)->cut, 1);
	assert_int_equal(fd_why_src(w, 2)->frames, 7);
	fd_why_gone(w, 0);	/* a set deleted: nothing held, its figures kept */
	assert_false(fd_why_src(w, 0)->followed);
	assert_int_equal(fd_why_src(w, 0)->elements, 0);
	assert_int_equal(fd_why_src(w, 0)->cut, 1);
	fd_why_close(w);
	fc_list_free(&l0);
}

/*
 * fd_explain: what `why ADDR`, `why-conn ID` and `triggers` answer.  A
 * watched set holds si_tcp4's server's /24 and cuts it (trigger set), a
 * list file holds si_udp6's server on its line 3 and cuts it (list),
 * never_cut holds 198.18.0.30.  Rows: the request, what the answer must
 * hold, what it must not.
 */
static void
test_explain_rows(void **state)
{
	static const struct {
		const char *addr;	/* why ADDR; NULL: why-conn id */
		uint64_t id;
		const char *has[4];
		const char *hasnt;
	} erows[] = {
		{ "198.19.0.10", 0, { "\"cut\":true", "\"name\":\"inet f2b-table addr-set-sshd\"",
				      "\"element\":\"198.19.0.0/24\"", "\"trigger\":\"set\"" },
		  "never cut" },
		{ "198.19.0.10", 0, { "\"id\":1,", "\"in_hardware\":true", "\"frames_read\":false",
				      "\"server\":\"198.19.0.10\"" }, "\"kind\":\"list\"" },
		{ "198.18.0.10", 0, { "\"cut\":true", "\"connections\":[{\"id\":1,",
				      "\"source\":{\"kind\":\"set\"", NULL }, "\"sources\":[{" },
		{ "2001:2:1::10", 0, { "\"kind\":\"list\"", "\"line\":3", "\"entry\":\"2001:2:1::10\"",
				       "\"trigger\":\"list\"" }, "\"kind\":\"set\"" },
		{ "198.19.0.99", 0, { "\"cut\":true", "\"element\":\"198.19.0.0/24\"",
				      "\"connections\":[]", NULL }, "\"trigger\"" },
		{ "203.0.113.1", 0, { "\"cut\":false", "not cut: no cut set, watched set or list",
				      "\"never_cut\":null", NULL }, "\"element\"" },
		{ "198.18.0.30", 0, { "\"cut\":false", "never cut", "\"never_cut\":\"198.18.0.30\"",
				      NULL }, "\"connections\":[{" },
		{ "2001:db8::1", 0, { "\"cut\":false", "\"sources\":[]", NULL, NULL }, "\"line\"" },
		{ NULL, 1, { "\"id\":1,", "\"trigger\":\"set\"", "\"element\":\"198.19.0.0/24\"",
			     "\"when\":\"20" }, "error" },
		{ NULL, 2, { "\"trigger\":\"list\"", "\"line\":3", NULL, NULL }, "error" },
		{ NULL, 3, { "\"cut\":false", "not cut: an end is never cut",
			     "\"never_cut\":\"198.18.0.30\"", NULL }, "\"when\"" },
		{ NULL, 99, { "error connection 99: not an offloaded connection", NULL, NULL, NULL },
		  "ok" },
		/* a fingerprint's cut (IPv6): its file and its line, as the match carried them */
		{ NULL, 4, { "\"trigger\":\"tls\"", "\"by\":\"by fingerprint\"", "\"line\":7",
			     "\"source\":{\"kind\":\"fingerprints\",\"name\":\"/etc/flowcut/ja4.txt\","
			     "\"line\":7}" }, "error" },
		{ "2001:2::40", 0, { "\"cut\":true", "\"trigger\":\"tls\"",
				     "\"name\":\"/etc/flowcut/ja4.txt\",\"line\":7}",
				     "\"sources\":[]" }, "\"kind\":\"list\"" },
		/* one cut with no file named: its line alone, no source */
		{ NULL, 5, { "\"trigger\":\"tls\"", "\"by\":\"by fingerprint\"", "\"line\":9}",
			     NULL }, "\"source\"" },
	};
	static const char lines[] = "# the drop list\n\n2001:2:1::10\n192.0.2.0/24\n";
	static const struct si_st never4 = { AF_INET, IPPROTO_TCP, "198.18.0.30", "198.51.100.1",
					     40030, 80, IPS_ASSURED | IPS_SEEN_REPLY | IPS_CONFIRMED,
					     3, SI_BIT, NULL, false };
	static const struct si_st tls6 = { AF_INET6, IPPROTO_TCP, "2001:2::40", "2001:2:1::40",
					   40040, 443, IPS_ASSURED | IPS_SEEN_REPLY | IPS_CONFIRMED,
					   3, SI_BIT, NULL, false };
	static const struct si_st tls4 = { AF_INET, IPPROTO_TCP, "198.18.0.50", "198.51.100.50",
					   40050, 443, IPS_ASSURED | IPS_SEEN_REPLY | IPS_CONFIRMED,
					   3, SI_BIT, NULL, false };
	struct fd_cut_parts parts = { .ct = si_ctio, .cmds = si_cmds, .cut_in_hardware = true };
	struct fd_why *w = fd_why_open();
	struct fc_list set = list_of("198.19.0.0/24\n"), lst = list_of("2001:2:1::10\n192.0.2.0/24\n");
	struct fc_list nv = list_of("198.18.0.30\n");
	char path[] = "/tmp/test_cut_explain_XXXXXX", ans[8192];
	int fd = mkstemp(path), src;

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, lines, sizeof(lines) - 1), (ssize_t)sizeof(lines) - 1);
	close(fd);
	off = si_open(true);
	parts.off = off;
	cut = fd_cut_open(&parts);
	assert_non_null(cut);
	assert_non_null(w);
	fd_cut_why(cut, w);
	assert_int_equal(fd_cut_never(cut, &nv), 0);
	src = fd_why_source(w, FD_WHY_SET, "inet f2b-table addr-set-sshd");
	fd_why_own(w, src, &set);
	src = fd_why_source(w, FD_WHY_LIST, path);
	fd_why_holds(w, src, &lst);
	si_offloaded(&si_tcp4, 101);	/* fast-path id 1 */
	si_offloaded(&si_udp6, 102);	/* 2 */
	si_offloaded(&never4, 103);	/* 3 */
	si_offloaded(&tls6, 104);	/* 4 */
	si_offloaded(&tls4, 105);	/* 5 */
	assert_int_equal(cut_ranges("198.19.0.0/24\n", FD_CUT_SET), 1);
	assert_int_equal(fd_cut_ranges(cut, &lst, FD_CUT_LIST), 1);
	assert_int_equal(fd_cut_conn_from(cut, 4, FD_CUT_TLS, &(struct fd_cut_cause){
						  "/etc/flowcut/ja4.txt", 7 }), 0);
	assert_int_equal(fd_cut_conn_from(cut, 5, FD_CUT_TLS, &(struct fd_cut_cause){ NULL, 9 }),
			 0);
	for (size_t i = 0; i < sizeof(erows) / sizeof(erows[0]); i++) {
		struct fd_explain_parts p = { .why = w, .cut = cut, .off = off };

		if (erows[i].addr != NULL) {
			uint8_t a[16] = { 0 };
			uint8_t family = strchr(erows[i].addr, ':') ? 6 : 4;

			assert_int_equal(inet_pton(family == 4 ? AF_INET : AF_INET6, erows[i].addr,
						   a), 1);
			fd_explain_addr(&p, family, a, ans, sizeof(ans));
		} else {
			fd_explain_conn(&p, erows[i].id, ans, sizeof(ans));
		}
		for (int k = 0; k < 4; k++)
			if (erows[i].has[k] && strstr(ans, erows[i].has[k]) == NULL)
				fail_msg("explain row %zu (%s %" PRIu64 "): no '%s' in %s", i,
					 erows[i].addr ? erows[i].addr : "conn", erows[i].id,
					 erows[i].has[k], ans);
		if (strstr(ans, erows[i].hasnt) != NULL)
			fail_msg("explain row %zu (%s %" PRIu64 "): '%s' in %s", i,
				 erows[i].addr ? erows[i].addr : "conn", erows[i].id, erows[i].hasnt,
				 ans);
	}
	/* the figures: each source's cut, its elements */
	fd_explain_triggers(&(struct fd_explain_parts){ .why = w, .cut = cut, .off = off }, ans,
			    sizeof(ans));
	assert_non_null(strstr(ans, "\"name\":\"inet f2b-table addr-set-sshd\",\"followed\":true,"
				    "\"elements\":1,\"cut\":1,\"frames\":0"));
	assert_non_null(strstr(ans, "\",\"followed\":true,\"elements\":2,\"cut\":1,"));
	assert_non_null(strstr(ans, "{\"kind\":\"fingerprints\",\"name\":\"/etc/flowcut/ja4.txt\","
				    "\"followed\":true,\"elements\":0,\"cut\":1,"));
	assert_int_equal(strncmp(ans, "ok {\"sources\":[{", 15), 0);
	assert_non_null(strstr(ans, "}\n"));
	/* a list's lines read for a `why`: the first 65,536 (the main loop's time) */
	for (int past = 0; past < 2; past++) {
		uint8_t a[4] = { 192, 0, 2, 7 };
		FILE *f = fopen(path, "w");

		assert_non_null(f);
		for (int k = 0; k < 65535 + past; k++)
			fputs("# a comment\n", f);
		fputs("192.0.2.0/24\n", f);	/* line 65,536, or 65,537 */
		assert_int_equal(fclose(f), 0);
		fd_explain_addr(&(struct fd_explain_parts){ .why = w, .cut = cut, .off = off }, 4, a,
				ans, sizeof(ans));
		if (strstr(ans, past ? "\"line\":0," : "\"line\":65536,") == NULL)
			fail_msg("why 192.0.2.7, its line at %d: %s", 65536 + past, ans);
	}
	{	/* an answer longer than the room: an error, not a part */
		uint8_t a[4] = { 198, 19, 0, 10 };

		fd_explain_addr(&(struct fd_explain_parts){ .why = w, .cut = cut, .off = off }, 4, a,
				ans, 60);
		assert_string_equal(ans, "error why 198.19.0.10: longer than an answer\n");
	}
	fd_cut_close(cut);
	si_close();
	fd_why_close(w);
	fc_list_free(&lst);
	fc_list_free(&nv);
	unlink(path);
}

/*
 * fd_explain_triggers in one answer of FC_CTL_ANS_MAX: the sources that
 * fit first, in the order named, and "sources_left" for the rest - never
 * an error for the whole.  Rows: how many sources, their names' length,
 * how many left out.
 */
static void
test_triggers_rows(void **state)
{
	static const struct {
		unsigned int nsrc;
		size_t name_len;
		long left;	/* -1: some (more than none) */
	} trows[] = {
		{ FD_WHY_SOURCES, FD_WHY_NAME_MAX - 1, -1 },	/* every source, the longest names */
		{ FD_WHY_SOURCES, 40, 0 },
		{ 10, FD_WHY_NAME_MAX - 1, 0 },
		{ 0, 0, 0 },
	};
	static char ans[FC_CTL_ANS_MAX];

	(void)state;
	for (size_t i = 0; i < sizeof(trows) / sizeof(trows[0]); i++) {
		struct fd_why *w = fd_why_open();
		json_t *doc, *srcs;
		size_t got;
		long left;

		assert_non_null(w);
		for (unsigned int k = 0; k < trows[i].nsrc; k++) {
			char name[FD_WHY_NAME_MAX];	/* unique by its number, name_len bytes */

			memset(name, 'a' + (char)(k % 26), trows[i].name_len);
			snprintf(name, sizeof(name), "/etc/flowcut/%03u", k);
			name[strlen(name)] = trows[i].name_len > 16 ? '-' : '\0';
			name[trows[i].name_len] = '\0';
			assert_int_equal(fd_why_source(w, k % 2 ? FD_WHY_SET : FD_WHY_LIST, name),
					 (int)k);
		}
		fd_explain_triggers(&(struct fd_explain_parts){ .why = w }, ans, sizeof(ans));
		if (strncmp(ans, "ok {", 4) != 0 || strlen(ans) >= sizeof(ans) ||
		    ans[strlen(ans) - 1] != '\n')
			fail_msg("triggers row %zu (%u sources of %zu): %.120s", i, trows[i].nsrc,
				 trows[i].name_len, ans);
		doc = json_loads(ans + 3, 0, NULL);
		assert_non_null(doc);
		srcs = json_object_get(doc, "sources");
		got = json_array_size(srcs);
		left = (long)json_integer_value(json_object_get(doc, "sources_left"));
		print_message("triggers row %zu: %zu sources answered, %ld left, %zu bytes\n", i,
			      got, left, strlen(ans));
		assert_true(json_is_integer(json_object_get(doc, "sources_left")));
		assert_int_equal(got + (size_t)left, trows[i].nsrc);
		if (trows[i].left >= 0)
			assert_int_equal(left, trows[i].left);
		else
			assert_true(left > 0 && got > 0);
		if (got > 0)	/* the first named first */
			assert_string_equal(json_string_value(json_object_get(json_array_get(srcs, 0),
									      "name")),
					    fd_why_src(w, 0)->name);
		json_decref(doc);
		fd_why_close(w);
	}
}

/*
 * fd_frames: a round looks at fd_why's records (the cut connections), not
 * at every offloaded one.  Rows: MANY offloaded, what is cut (by hand),
 * what is in force after (a release: NULL, none), the records looked at
 * and the counts read in the round.
 */
static void
test_frames_rows(void **state)
{
	static const struct {
		const char *what, *cut, *in_force;
		uint64_t looked, read;
	} frows[] = {
		{ "3 of 200 cut: 3 looked at", "198.19.1.1\n198.19.1.2\n2001:2:1::1:a0\n", NULL, 3, 3 },
		{ "none cut: none looked at", NULL, NULL, 0, 0 },
		{ "every one cut: each", "198.19.1.0/24\n2001:2:1::/64\n", NULL, MANY, MANY },
		{ "3 cut, 1 released: 3 looked at, 2 read", "198.19.1.1\n198.19.1.2\n198.19.1.3\n",
		  "198.19.1.1\n198.19.1.2\n", 3, 2 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(frows) / sizeof(frows[0]); i++) {
		struct fd_cut_parts parts = { .ct = si_ctio, .cmds = si_cmds,
					      .cut_in_hardware = true };
		struct fd_why *w = fd_why_open();
		struct fd_frames *f;
		int posted;

		off = si_open(true);
		parts.off = off;
		cut = fd_cut_open(&parts);
		assert_non_null(cut);
		assert_non_null(w);
		fd_cut_why(cut, w);
		many(true);
		if (frows[i].cut)
			assert_true(cut_ranges(frows[i].cut, FD_CUT_HAND) > 0);
		if (frows[i].in_force)
			assert_int_equal(release(frows[i].in_force), 1);
		f = fd_frames_open(off, &si_cmds, w);
		assert_non_null(f);
		posted = fd_frames_turn(f, 1000);
		(void)fd_cmds_flush(&si_cmds, -1);
		if (fd_frames_looked(f) != frows[i].looked || fd_frames_read(f) != frows[i].read ||
		    posted != (int)frows[i].read)
			fail_msg("frames row %zu (%s): %" PRIu64 " looked at, %d posted, %" PRIu64
				 " read; want %" PRIu64 ", %" PRIu64, i, frows[i].what,
				 fd_frames_looked(f), posted, fd_frames_read(f), frows[i].looked,
				 frows[i].read);
		fd_frames_close(f);
		fd_cut_close(cut);
		si_close();
		fd_why_close(w);
	}
}

/* ---- the connections' figures (fd_offload_conns): each step of a life ---- */

static void
c_enter(void)
{
	static const uint16_t tls[] = { 80 };	/* si_tcp4's port: made SEND_TO_IPS */

	fd_offload_tls_ports(off, tls, 1);
	given_tcp4();		/* fast-path id 1 */
	given_nat_t6();		/* id 2 */
}

static void
c_pass(void)
{
	assert_int_equal(fd_offload_mark(off, 1, FD_OFFLOAD_MARK_PASSED, 0), 0);
}

static void
c_cut(void)
{
	assert_int_equal(cut_ranges("198.19.0.10\n", FD_CUT_HAND), 1);
}

static void
c_release(void)
{
	assert_int_equal(release(""), 1);
}

static void
c_leave(void)
{
	si_event(FD_CT_DESTROY, &nat_t6, 104);
	fd_offload_events(off);
}

static void
c_cut_fwd(void)
{
	given_nat_t6();		/* id 3 */
	assert_int_equal(cut_ranges("2001:2:1::11\n", FD_CUT_HAND), 1);
}

/*
 * One binding through a connection's life, the figures after each step:
 * the cells (action, verdict) not named 0.  A step's update left out
 * (off_enter's count, mark_passed's, mark_cut's, the release's or the
 * DESTROY's forget) shows in the step's row.
 */
static void
test_conns_rows(void **state)
{
	static const struct {
		const char *what;
		void (*step)(void);
		struct { uint8_t action, verdict; uint32_t n; } cell[3];
		uint32_t cut;
	} steps[] = {
		{ "enter: IPS SEND_TO_IPS, FWD", c_enter,
		  { { FC_ACTION_IPS, FC_VERDICT_SEND_TO_IPS, 1 }, { FC_ACTION_FWD, FC_VERDICT_CUT_THRU, 1 } }, 0 },
		{ "the inspector's pass: IPS CUT_THRU", c_pass,
		  { { FC_ACTION_IPS, FC_VERDICT_CUT_THRU, 1 }, { FC_ACTION_FWD, FC_VERDICT_CUT_THRU, 1 } }, 0 },
		{ "a cut: IPS DROP, cut", c_cut,
		  { { FC_ACTION_IPS, FC_VERDICT_DROP, 1 }, { FC_ACTION_FWD, FC_VERDICT_CUT_THRU, 1 } }, 1 },
		{ "its release: gone", c_release,
		  { { FC_ACTION_FWD, FC_VERDICT_CUT_THRU, 1 } }, 0 },
		{ "the FWD one's DESTROY: none left", c_leave, { { 0, 0, 0 } }, 0 },
		{ "a FWD one cut: action DROP, cut", c_cut_fwd,
		  { { FC_ACTION_DROP, FC_VERDICT_CUT_THRU, 1 } }, 1 },
	};
	struct fd_cut_parts parts = { .ct = si_ctio, .cmds = si_cmds, .cut_in_hardware = true };

	(void)state;
	off = si_open(true);
	parts.off = off;
	cut = fd_cut_open(&parts);
	assert_non_null(cut);
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		uint32_t want[FC_ACTION_MAX][FC_VERDICT_MAX] = { { 0 } };
		struct fd_offload_conns got;

		steps[i].step();
		(void)fd_cmds_flush(&si_cmds, -1);
		for (size_t k = 0; k < 3; k++)
			want[steps[i].cell[k].action][steps[i].cell[k].verdict] += steps[i].cell[k].n;
		fd_offload_conns(off, &got);
		for (unsigned int a = 0; a < FC_ACTION_MAX; a++)
			for (unsigned int v = 0; v < FC_VERDICT_MAX; v++)
				if (got.n[a][v] != want[a][v])
					fail_msg("step %zu (%s): %s %s %u, want %u", i, steps[i].what,
						 fc_action_name(a), fc_verdict_name(v), got.n[a][v],
						 want[a][v]);
		if (got.cut != steps[i].cut)
			fail_msg("step %zu (%s): cut %u, want %u", i, steps[i].what, got.cut,
				 steps[i].cut);
	}
	fd_cut_close(cut);
	si_close();
}

int
main(void)
{
	struct CMUnitTest tests[sizeof(rows) / sizeof(rows[0]) + 5];

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		tests[i] = (struct CMUnitTest){ .name = rows[i].what, .test_func = test_row,
						.setup_func = cut_open, .teardown_func = cut_close,
						.initial_state = (void *)&rows[i] };
	tests[sizeof(rows) / sizeof(rows[0])] = (struct CMUnitTest){ .name = "why: sources, "
		"records, frames", .test_func = test_why_rows };
	tests[sizeof(rows) / sizeof(rows[0]) + 1] = (struct CMUnitTest){ .name = "why: the "
		"answers (why ADDR, why-conn ID, triggers)", .test_func = test_explain_rows };
	tests[sizeof(rows) / sizeof(rows[0]) + 2] = (struct CMUnitTest){ .name = "triggers: "
		"320 sources in one answer", .test_func = test_triggers_rows };
	tests[sizeof(rows) / sizeof(rows[0]) + 3] = (struct CMUnitTest){ .name = "frames: a "
		"round looks at the cut records only", .test_func = test_frames_rows };
	tests[sizeof(rows) / sizeof(rows[0]) + 4] = (struct CMUnitTest){ .name = "connections: "
		"the figures follow an enter, a pass, a cut, a release, a leave",
		.test_func = test_conns_rows };
	return cmocka_run_group_tests(tests, NULL, NULL);
}
