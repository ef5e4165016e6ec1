/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_offload: the binding's state machine (driver/offload) driven without
 * root.  Its conntrack I/O (struct fd_ct_io), its routes (struct
 * fd_route_io) and its commands (struct fd_cmds) are stand-ins (standins.h,
 * shared with test_cut) that record what the binding asks, and answer as
 * conntrack, the host's routes and the coprocessor would; the next hops
 * are the real fd_nhop over the
 * stand-in commands, the states real libnetfilter_conntrack objects
 * (nfct_new, nfct_set_attr: no netlink).  Each row brings the binding to a
 * starting point (`given`), takes one step (`when`), and says the commands
 * that step must post (opcode and key fields, in order) and the conntrack
 * calls it must make.  The timeouts: every way out of the fast path sets
 * its state back to P - idle (the rows' connections were last seen IDLE s
 * before the stand-in clock, si_now_ns), an offload sets T_long, 12 h on
 * it is extended, and nothing is done per connection while nothing is
 * due.  The same against the real conntrack and fast path,
 * as root: tests/integration/test_driver.c.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <libnetfilter_conntrack/libnetfilter_conntrack.h>

#include <flowcut/fc_cmd.h>

#include "fd_offload.h"
#include "fd_offload_cut.h"
#include "standins.h"

static struct fd_offload *off;

static struct fd_offload_stats
stats(void)
{
	struct fd_offload_stats st;

	fd_offload_stats(off, &st);
	return st;
}

/* ---- the rows ---- */

#define S 1000000000ull		/* ns */
#define P_TCP 432000u		/* the stand-in's fd_ct_established_timeout */
#define P_UDP 120u
#define IDLE 10u		/* the idle time the rows' last-seen times say, s */

/* si_tcp4's original key (port 0), as the fast path's events carry it */
static const struct fc_key tcp4_key = { .src = { 198, 18, 0, 10 }, .dst = { 198, 19, 0, 10 },
					.sport = 0x409c /* htons(40000) */, .dport = 0x5000,
					.proto = IPPROTO_TCP, .family = 4 };

/* A coprocessor event, its connection last seen IDLE s ago. */
static void
fp_event_idle(uint8_t type, uint8_t reason, uint64_t id, const struct fc_key *k)
{
	struct lk_event ev = { .type = type, .reason = reason, .id = id };

	ev.stats[0].last_seen = si_now_ns - IDLE * S - 5;
	ev.stats[1].last_seen = si_now_ns - 40 * S;
	if (k != NULL)
		ev.key[0] = *k;
	fd_offload_fp_event(off, &ev);
}

/* The fast path's connection `id` last seen IDLE s ago (its reclaim's final counts). */
static void
seen_idle(uint64_t id)
{
	si_fp_conn(id)->mf[1].stats.last_seen = si_now_ns - IDLE * S;
}

/* The state conntrack holds of `s`, its timeout as conntrack would say it. */
static void
host_timeout(const struct si_st *s, uint32_t secs)
{
	struct nf_conntrack *t = si_build(s, 0);

	nfct_set_attr_u32(*si_host_find(t), ATTR_TIMEOUT, secs);
	nfct_destroy(t);
}

static uint32_t
host_timeout_now(const struct si_st *s)
{
	struct nf_conntrack *t = si_build(s, 0);
	uint32_t secs = nfct_get_attr_u32(*si_host_find(t), ATTR_TIMEOUT);

	nfct_destroy(t);
	return secs;
}

static void
given_tcp4(void)
{
	si_offloaded(&si_tcp4, 101);
}

static void
given_udp6(void)
{
	si_offloaded(&si_udp6, 102);
}

/* si_tcp4 offloaded, its connection last seen IDLE s ago */
static void
given_tcp4_seen(void)
{
	si_offloaded(&si_tcp4, 101);
	seen_idle(1);
}

/* A revival the coprocessor refuses. */
static void
given_tcp4_revive_refused(void)
{
	si_offloaded(&si_tcp4, 101);
	si_refuse = FC_CMD_CONN_REVIVE_FP;
}

/* The idle timeout set to 300 s: above UDP's P. */
static void
given_idle_300(void)
{
	fd_offload_settings(off, true, 300);
}

/* A state a flowcutd before offloaded (on T_long), no entry of ours, no connection. */
static void
given_tcp4_long_unknown(void)
{
	si_host_add(&si_tcp4, 101);
	host_timeout(&si_tcp4, P_TCP + 86400);
}

/*
 * Marked, still on T_long, closing (it qualifies no more): a flowcutd
 * before offloaded it and died.  (One whose bit was cleared too is not in
 * the dump by mark: it keeps T_long, at most a day more.)
 */
static const struct si_st tcp4_unmarked = { AF_INET, IPPROTO_TCP, "198.18.0.10", "198.19.0.10",
					    40010, 80, IPS_ASSURED | IPS_SEEN_REPLY |
					    IPS_CONFIRMED, 5 /* FIN_WAIT */, SI_BIT | 0x5, NULL, false };

static void
given_unmarked_long(void)
{
	si_host_add(&tcp4_unmarked, 110);
	host_timeout(&tcp4_unmarked, P_TCP + 86400);
}

#define MANY 1000

/* MANY TCP states offloaded, each its own client port (41000 on) */
static void
given_many(void)
{
	for (unsigned int i = 0; i < MANY; i++) {
		struct si_st st = si_tcp4;

		st.cport = (uint16_t)(41000 + i);
		si_offloaded(&st, 1000 + i);
	}
	assert_int_equal(stats().offloaded, MANY);
}

static void
given_tcp4_and_syn4(void)
{
	si_offloaded(&si_tcp4, 101);
	si_host_add(&si_syn4, 103);	/* not offloaded: not established yet */
}

/* Cut in hardware: its drop answered, marked cut, its state killed. */
static void
given_tcp4_cut(void)
{
	si_offloaded(&si_tcp4, 101);
	si_fp_conn(1)->verdict = FC_VERDICT_DROP;
	assert_int_equal(fd_offload_mark(off, 1, FD_OFFLOAD_MARK_CUT, 0), 0);
	assert_int_equal(si_ct_kill(NULL, si_host[0]), 0);
	si_event(FD_CT_DESTROY, &si_tcp4, 101);
	fd_offload_events(off);
}

/* The fast path holds one connection this binding never made, forwarding; conntrack the TCP state. */
static void
given_stale_and_tcp4(void)
{
	struct fc_mflow_spec mf[2] = { { .action = FC_ACTION_FWD }, { .action = FC_ACTION_FWD } };

	si_fp_add(7, mf, FC_VERDICT_CUT_THRU);
	si_host_add(&si_tcp4, 101);
}

/* A flowcutd before this one cut a connection: dropping both ways, its state long killed. */
static void
given_dropping_from_before(void)
{
	struct fc_mflow_spec mf[2] = { { .action = FC_ACTION_DROP }, { .action = FC_ACTION_DROP } };

	mf[0].key = (struct fc_key){ .src = { 198, 18, 0, 10 }, .dst = { 198, 19, 0, 10 },
				     .sport = htons(40009), .dport = htons(80),
				     .proto = IPPROTO_TCP, .family = 4 };
	mf[1].key = (struct fc_key){ .src = { 198, 19, 0, 10 }, .dst = { 198, 18, 0, 10 },
				     .sport = htons(80), .dport = htons(40009), .port = 1,
				     .proto = IPPROTO_TCP, .family = 4 };
	si_fp_add(9, mf, FC_VERDICT_DROP);
}

static void when_destroy(void);

/* ---- offloads in batches ---- */

/* si_tcp4 judged, its update acked, FLOW_CREATE_FP posted and not answered yet: pending */
static void
given_tcp4_pending(void)
{
	si_hold_answers = true;
	si_offloaded(&si_tcp4, 101);
	assert_int_equal(stats().offloaded, 0);
	assert_int_equal(fd_offload_find(off, FD_OFFLOAD_BY_CT, 101, si_host[0], &(struct fd_offload_conn){ 0 }, NULL),
			 -ENOENT);	/* not in the fast path yet */
}

/* The coprocessor refuses FLOW_CREATE_FP. */
static void
given_create_refused(void)
{
	si_refuse = FC_CMD_FLOW_CREATE_FP;
}

/* A state through the rules that no event has brought yet (its event queued, not read). */
static void
given_tcp4_event_queued(void)
{
	si_host_add(&si_tcp4, 101);
	si_event(FD_CT_UPDATE, &si_tcp4, 101);
}

/* One TCP state offloaded (IPv4): the next hops of both ports programmed. */
static void
given_hops(void)
{
	struct si_st st = si_tcp4;

	st.cport = 40100;
	si_offloaded(&st, 100);
}

/*
 * si_tcp4 handed in (its update posted, not sent), its state deleted before
 * the turn's flush and its DESTROY unread: the update's error (fd_ct.h:
 * errors only, no ack for a success) is all that tells.
 */
static void
when_update_fails(void)
{
	struct nf_conntrack **h;

	si_host_add(&si_tcp4, 101);
	assert_int_equal(fd_offload_try(off, si_host[0]), 0);
	h = si_host_find(si_host[0]);
	nfct_destroy(*h);
	*h = NULL;
	fd_offload_work(off);	/* the turn's flush: -ENOENT, no create */
}

/* A DESTROY read while its create is in flight, then the answer. */
static void
when_destroy_then_answer(void)
{
	when_destroy();		/* read while the create is in flight */
	assert_int_equal(stats().removed, 0);
	si_hold_answers = false;	/* the turn's end answers */
}

/* An UPDATE of si_tcp4 showing FIN_WAIT: it closed on the host (its FIN before its offload). */
static void
when_fin_wait(void)
{
	struct si_st st = si_tcp4;

	st.tcp_state = 4;	/* TCP_CONNTRACK_FIN_WAIT */
	si_event(FD_CT_UPDATE, &st, 101);
	fd_offload_events(off);
}

/*
 * An UPDATE of si_tcp4 showing CLOSE 2 s after its offload: a spoofed RST
 * the coprocessor judged outside the window went to the host alone, and
 * the host's state (liberal, its highest ACK forgotten) took it.
 */
static void
when_closed_later(void)
{
	struct si_st st = si_tcp4;

	si_now_ns += 2 * S;
	st.tcp_state = 7;	/* TCP_CONNTRACK_CLOSE */
	si_event(FD_CT_UPDATE, &st, 101);
	fd_offload_events(off);
}

/* A new state of si_tcp4's tuple (its cut one's key held, dropping), through the rules. */
static void
when_tcp4_anew(void)
{
	si_offloaded(&si_tcp4, 201);
}

/*
 * A ruleset change between the event's queueing and its read: the event
 * shows the old rules' bit, the state has none now.  Then the new rules
 * set it again: its next event, read with the socket read empty once
 * since, is judged as it is.
 */
static void
when_ruleset_between(void)
{
	assert_int_equal(fd_offload_ruleset_changed(off), 0);
	si_log_reset();
	fd_offload_events(off);
}

static void
when_tcp4_offloaded(void)
{
	si_offloaded(&si_tcp4, 101);
}

/* A mark-only UPDATE (the rules passed it again): no TCP state in it. */
static void
when_mark_only(void)
{
	struct si_st ev = si_tcp4;

	ev.mark_only = true;
	si_host_add(&si_tcp4, 101);
	si_event(FD_CT_UPDATE, &ev, 101);
	fd_offload_events(off);
}

/* 1,000 NEW events (TCP, IPv4), one read, one turn. */
static void
when_thousand_new(void)
{
	for (unsigned int i = 0; i < MANY; i++) {
		struct si_st st = si_tcp4;

		st.cport = (uint16_t)(41000 + i);
		si_host_add(&st, 1000 + i);
		si_event(FD_CT_UPDATE, &st, 1000 + i);
	}
	fd_offload_events(off);
}

static void
when_destroy(void)
{
	struct nf_conntrack **h = si_host_find(si_host[0]);

	nfct_destroy(*h);
	*h = NULL;
	si_event(FD_CT_DESTROY, &si_tcp4, 101);
	fd_offload_events(off);
}

static void
when_given_back_stalled(void)
{
	si_fp_event(FC_EV_GIVEN_BACK, FC_REASON_TCP_MAX_RETRANS, 1);
}

static void
when_aged_out(void)
{
	si_fp_event(FC_EV_AGED_OUT, FC_REASON_IDLE, 1);
}

static void
when_closed_idle(void)
{
	fp_event_idle(FC_EV_GIVEN_BACK, FC_REASON_TCP_FIN_SYN_RST, 1, NULL);
}

static void
when_stalled_idle(void)
{
	fp_event_idle(FC_EV_GIVEN_BACK, FC_REASON_TCP_MAX_RETRANS, 1, NULL);
}

static void
when_aged_out_idle(void)
{
	fp_event_idle(FC_EV_AGED_OUT, FC_REASON_IDLE, 1, NULL);
}

/* A front port's MTU changed: every connection's path, looked at again. */
static void
when_mtu_change(void)
{
	struct fd_rt_change c = { .what = FD_RT_LINK, .ifindex = SI_IFINDEX0, .mtu = 1400 };

	fd_offload_rt_change(off, &c);
	fd_offload_paths(off);
}

/* An AGED_OUT from a flowcutd before: connection 77, si_tcp4's key. */
static void
when_orphan_aged_out(void)
{
	fp_event_idle(FC_EV_AGED_OUT, FC_REASON_IDLE, 77, &tcp4_key);
}

/* A REMOVED for an old revision from a flowcutd before: its leave fixed the state up. */
static void
when_orphan_removed_old_rev(void)
{
	fp_event_idle(FC_EV_REMOVED, FC_REASON_FW_REV, 77, &tcp4_key);
}

static void
when_udp6_offloaded(void)
{
	si_offloaded(&si_udp6, 102);
}

/* The clock to 12 h after the offload: due then, not 1 ms before. */
static void
when_half_a_day(void)
{
	si_now_ns += 43200 * S - 1000000;
	fd_offload_work(off);
	assert_string_equal(si_ct_log, "");
	si_now_ns += 1000000;
	fd_offload_work(off);
}

/* 10 s of turns, 10 ms each, nothing changing. */
static void
when_ten_seconds(void)
{
	for (unsigned int t = 0; t < 1000; t++) {
		si_now_ns += 10000000;
		fd_offload_events(off);
		fd_offload_work(off);
	}
}

static void
when_enobufs(void)
{
	si_ct_events_rc = -ENOBUFS;
	fd_offload_events(off);
}

/* Turns of the loop's binding jobs (events, then work) until none has work left. */
static unsigned int
turn_until_idle(void)
{
	unsigned int turns = 0;

	while (fd_offload_busy(off)) {
		assert_true(++turns < 100000);
		fd_offload_events(off);
		fd_offload_work(off);
	}
	return turns;
}

/* A ruleset change, and the loop turned until its job is done. */
static void
when_revision(void)
{
	assert_int_equal(fd_offload_ruleset_changed(off), 0);
	turn_until_idle();
}

static void
when_resync(void)
{
	fd_offload_resync(off);
	fd_offload_sync_finish(off);
}

static void
then_reclaimed_at_answer(void)
{
	assert_int_equal(stats().removed, 1);
	assert_int_equal(stats().offloaded, 0);
	assert_null(si_fp_conn(1));
	assert_int_equal(fd_offload_find(off, FD_OFFLOAD_BY_FP, 1, NULL, &(struct fd_offload_conn){ 0 }, NULL), -ENOENT);
}

static void
then_refused_put_right(void)
{
	assert_int_equal(stats().refused, 1);
	assert_int_equal(stats().offloaded, 0);
	assert_int_equal(host_timeout_now(&si_tcp4), P_TCP);	/* not left on T_long */
	assert_int_equal(nfct_get_attr_u32(si_host[0], ATTR_MARK) & SI_BIT, SI_BIT);	/* bit kept */
}

/* Taken out: no create, nothing in the fast path or the binding. */
static void
then_update_failed_out(void)
{
	struct nf_conntrack *t = si_build(&si_tcp4, 101);

	assert_int_equal(stats().offloaded, 0);
	assert_int_equal(stats().refused, 0);
	assert_null(si_fp_conn(1));
	assert_int_equal(fd_offload_find(off, FD_OFFLOAD_BY_CT, 101, t, &(struct fd_offload_conn){ 0 }, NULL), -ENOENT);
	assert_false(fd_offload_busy(off));	/* no flight left */
	nfct_destroy(t);
}

static void
then_closed_out(void)
{
	assert_int_equal(fd_offload_find(off, FD_OFFLOAD_BY_FP, 1, NULL, &(struct fd_offload_conn){ 0 }, NULL), -ENOENT);
	assert_null(si_fp_conn(1));
	assert_int_equal(stats().left, 1);
	assert_int_equal(host_timeout_now(&si_tcp4), P_TCP);
}

static void
then_cut_kept_not_created_over(void)
{
	struct fd_offload_conn oc;

	assert_int_equal(fd_offload_find(off, FD_OFFLOAD_BY_FP, 1, NULL, &oc, NULL), 0);
	assert_true(oc.cut);
	assert_int_equal(si_fp_conn(1)->verdict, FC_VERDICT_DROP);
	assert_int_equal(stats().refused, 1);
	assert_int_equal(host_timeout_now(&si_tcp4), P_TCP);
}

static void
then_not_on_old_bit(void)
{
	assert_int_equal(stats().offloaded, 0);
	/*
	 * The new rules pass it: its next event, the first read since the
	 * unmark job ended, is still judged by GET (GET mode ends with that
	 * read, empty after it), and offloaded on the new bit.
	 */
	nfct_set_attr_u32(si_host[0], ATTR_MARK, si_tcp4.mark);
	si_log_reset();
	si_event(FD_CT_UPDATE, &si_tcp4, 101);
	fd_offload_events(off);
	assert_string_equal(si_ct_log,
			    "get sport=40000; update sport=40000 what=0x3 timeout=518400 mark=0 mask=0");
	assert_int_equal(stats().offloaded, 1);
}

static void
then_offloaded_no_sync(void)
{
	assert_int_equal(stats().offloaded, 1);
	assert_int_equal(si_counts.sync_ct, 0);
	assert_int_equal(si_counts.ct_posted, 1 + (si_ct_log[0] == 'g'));
}

static void
then_thousand_no_round_trip(void)
{
	struct fd_offload_stats st = stats();
	struct si_st last = si_tcp4;

	last.cport = 41000 + MANY - 1;
	assert_int_equal(st.offloaded, MANY + 1);
	assert_int_equal(si_counts.sync_ct, 0);
	assert_int_equal(si_counts.sync_cmds, 0);
	assert_int_equal(si_counts.ct_posted, MANY);	/* one update each, no GET */
	assert_int_equal(si_counts.posted, MANY);	/* one create each */
	assert_int_equal(si_counts.flushes, 1);		/* answered together */
	assert_int_equal(host_timeout_now(&last), P_TCP + 86400);
}

static void
then_removed(void)
{
	assert_int_equal(stats().removed, 1);
	assert_int_equal(fd_offload_find(off, FD_OFFLOAD_BY_FP, 1, NULL, &(struct fd_offload_conn){ 0 }, NULL), -ENOENT);
}

static void
then_revived(void)
{
	struct fd_offload_conn oc;

	assert_int_equal(stats().revived, 1);
	assert_int_equal(fd_offload_find(off, FD_OFFLOAD_BY_FP, 1, NULL, &oc, NULL), 0);
}

static void
then_let_go(void)
{
	assert_int_equal(fd_offload_find(off, FD_OFFLOAD_BY_FP, 1, NULL, &(struct fd_offload_conn){ 0 }, NULL), -ENOENT);
	assert_int_equal(nfct_get_attr_u32(si_host[0], ATTR_MARK) & SI_BIT, 0);	/* back through the rules */
}

static void
then_left_once(void)
{
	assert_int_equal(stats().left, 1);
	assert_int_equal(fd_offload_find(off, FD_OFFLOAD_BY_FP, 1, NULL, &(struct fd_offload_conn){ 0 }, NULL), -ENOENT);
}

static void
then_let_go_left(void)
{
	then_let_go();
	then_left_once();
}

static void
then_moved(void)
{
	assert_int_equal(stats().rerouted, 1);
	then_let_go_left();
}

static void
then_resync_left(void)
{
	assert_int_equal(stats().left, 1);
	assert_int_equal(stats().resync_taken_out, 1);
	assert_int_equal(host_timeout_now(&si_tcp4), P_TCP + 86400);	/* offloaded again */
}

static void
then_orphan_fixed(void)
{
	assert_int_equal(stats().left, 1);
	assert_int_equal(host_timeout_now(&si_tcp4), P_TCP - IDLE);
	assert_int_equal(nfct_get_attr_u32(si_host[0], ATTR_MARK) & SI_BIT, 0);
}

static void
then_still_offloaded(void)
{
	struct fd_offload_conn oc;

	assert_int_equal(stats().left, 0);
	assert_int_equal(fd_offload_find(off, FD_OFFLOAD_BY_FP, 1, NULL, &oc, NULL), 0);
	assert_int_equal(host_timeout_now(&si_tcp4), P_TCP + 86400);
}

static void
then_nothing_left(void)
{
	assert_int_equal(stats().left, 0);
	assert_int_equal(host_timeout_now(&si_tcp4), P_TCP + 86400);
}

static void
then_long_and_clamped(void)
{
	assert_int_equal(stats().offloaded, 1);
	assert_int_equal(host_timeout_now(&si_udp6), P_UDP + 86400);
	assert_int_equal(si_fp_conn(1)->mf[0].timeout_s, P_UDP);
	assert_int_equal(si_fp_conn(1)->mf[1].timeout_s, P_UDP);
}

static void
then_extended(void)
{
	assert_int_equal(stats().extended, 1);
	/* and due again 12 h on, not before */
	si_log_reset();
	si_now_ns += 43200 * S - 1000000;
	fd_offload_work(off);
	assert_string_equal(si_ct_log, "");
	si_now_ns += 1000000;
	fd_offload_work(off);
	assert_int_equal(stats().extended, 2);
}

static void
then_no_work(void)
{
	assert_int_equal(si_counts.posted, 0);
	assert_int_equal(stats().extended, 0);
	assert_int_equal(stats().offloaded, MANY);
}

static void
then_enobufs_counted(void)
{
	assert_int_equal(stats().ct_events_lost, 1);
	assert_int_equal(stats().resyncs, 1);
}

static void
then_unmarked_fixed(void)
{
	assert_int_equal(stats().left, 1);
	assert_int_equal(host_timeout_now(&tcp4_unmarked), P_TCP);
}

static void
then_judged_again(void)
{
	assert_int_equal(stats().rev_bumps, 1);
	assert_int_equal(si_fp_rev, 1);
	assert_int_equal(fd_offload_find(off, FD_OFFLOAD_BY_FP, 1, NULL, &(struct fd_offload_conn){ 0 }, NULL), -ENOENT);
	for (unsigned int i = 0; i < 2; i++)
		assert_int_equal(nfct_get_attr_u32(si_host[i], ATTR_MARK) & ~SI_BIT,
				 nfct_get_attr_u32(si_host[i], ATTR_MARK));
	assert_int_equal(nfct_get_attr_u32(si_host[1], ATTR_MARK), 0x700);	/* the rules' own bits kept */
}

static void
then_resynced(void)
{
	struct fd_offload_conn oc;

	assert_null(si_fp_conn(7));
	assert_int_equal(fd_offload_find(off, FD_OFFLOAD_BY_FP, 1, NULL, &oc, NULL), 0);
	assert_false(oc.cut);
	assert_int_equal(stats().resyncs, 1);
}

static void
then_kept(void)
{
	struct fd_offload_conn oc;

	assert_int_equal(fd_offload_find(off, FD_OFFLOAD_BY_FP, 1, NULL, &oc, NULL), -ENOENT);	/* the stale one */
	assert_int_equal(fd_offload_find(off, FD_OFFLOAD_BY_FP, 2, NULL, &oc, NULL), 0);	/* made again */
	assert_true(oc.cut);
	assert_int_equal(oc.action, FC_ACTION_DROP);
	assert_int_equal(si_fp_conn(2)->fw_rev, 1);
}

static void
then_adopted(void)
{
	struct fd_offload_conn oc;

	assert_int_equal(stats().cut_adopted, 1);
	assert_int_equal(fd_offload_find(off, FD_OFFLOAD_BY_FP, 9, NULL, &oc, NULL), 0);
	assert_true(oc.cut);
	assert_int_equal(oc.cut_by, FD_OFFLOAD_CUT_BY_UNKNOWN);
	assert_non_null(si_fp_conn(9));	/* dropping on */
}

/* ---- the resync's rows: differences found, nothing else touched ---- */

/* the 32 windows' first reads, posted together, each refused */
#define REFUSED4 "CONN_READ_BRIEF refused; CONN_READ_BRIEF refused; CONN_READ_BRIEF refused; " \
		 "CONN_READ_BRIEF refused; "
#define REFUSED32 REFUSED4 REFUSED4 REFUSED4 REFUSED4 REFUSED4 REFUSED4 REFUSED4 REFUSED4

/* si_tcp4 offloaded, then its state gone with its DESTROY lost */
static void
given_destroy_lost(void)
{
	struct nf_conntrack **h;

	si_offloaded(&si_tcp4, 101);
	h = si_host_find(si_host[0]);
	nfct_destroy(*h);
	*h = NULL;
}

/* si_tcp4 qualifies, its UPDATE lost: not offloaded */
static void
given_update_lost(void)
{
	si_host_add(&si_tcp4, 101);
}

/* si_tcp4 offloaded, its connection gone from the fast path, the AGED_OUT lost */
static void
given_aged_out_lost(void)
{
	si_offloaded(&si_tcp4, 101);
	si_fp_del(1);
}

/* si_tcp4 offloaded; the dump misses its state (a hash resize) */
static void
given_dump_misses(void)
{
	si_offloaded(&si_tcp4, 101);
	si_dump_miss = 40000;
}

/* si_tcp4 offloaded, then the coprocessor booted: its table empty */
static void
given_booted(void)
{
	si_offloaded(&si_tcp4, 101);
	si_fp_boot();
}

/* si_tcp4 offloaded, seen IDLE s ago; the brief read refused (an older coprocessor) */
static void
given_brief_refused(void)
{
	si_offloaded(&si_tcp4, 101);
	seen_idle(1);
	si_refuse = FC_CMD_CONN_READ_BRIEF;
}

/* si_tcp4 offloaded, si_udp6 qualifying: a DESTROY and a NEW come while the dump is read */
static void
given_tcp4_udp6_host(void)
{
	si_offloaded(&si_tcp4, 101);
}

static void
when_events_mid_dump(void)
{
	struct nf_conntrack **h;

	fd_offload_resync(off);
	assert_true(fd_offload_sync_step(off));	/* F: 32 windows read */
	assert_true(fd_offload_sync_step(off));	/* F read through: the dump begun */
	assert_true(fd_offload_sync_step(off));	/* C: its datagrams (si_tcp4 stamped) */
	h = si_host_find(si_host[0]);		/* then si_tcp4 goes, si_udp6 comes */
	nfct_destroy(*h);
	*h = NULL;
	si_event(FD_CT_DESTROY, &si_tcp4, 101);
	si_host_add(&si_udp6, 102);
	si_event(FD_CT_UPDATE, &si_udp6, 102);
	fd_offload_events(off);
	fd_offload_sync_finish(off);
}

/* MANY offloaded, a resync over turns: each step's calls counted */
static unsigned int steps, most_briefs, most_gets, most_posts;

static void
when_resync_steps(void)
{
	bool more;

	fd_offload_resync(off);
	steps = most_briefs = most_gets = most_posts = 0;
	do {
		struct si_counts before = si_counts;

		more = fd_offload_sync_step(off);
		steps++;
		if (si_counts.briefs - before.briefs > most_briefs)
			most_briefs = si_counts.briefs - before.briefs;
		if (si_counts.get_posts - before.get_posts > most_gets)
			most_gets = si_counts.get_posts - before.get_posts;
		if (si_counts.posted - before.posted > most_posts)
			most_posts = si_counts.posted - before.posted;
		fd_offload_events(off);		/* turns go on: events read between steps */
	} while (more && steps < 100000);
}

static void
then_gone_reclaimed(void)
{
	assert_int_equal(stats().removed, 1);
	assert_null(si_fp_conn(1));
	assert_int_equal(stats().resync_taken_out, 0);
}

static void
then_offloaded_anew(void)
{
	struct fd_offload_conn oc;

	assert_int_equal(fd_offload_find(off, FD_OFFLOAD_BY_FP, 1, NULL, &oc, NULL), 0);
	assert_int_equal(host_timeout_now(&si_tcp4), P_TCP + 86400);
	assert_int_equal(stats().resync_taken_out, 0);
}

static void
then_made_again(void)
{
	struct fd_offload_conn oc;

	assert_int_equal(fd_offload_find(off, FD_OFFLOAD_BY_FP, 1, NULL, &oc, NULL), -ENOENT);
	assert_int_equal(fd_offload_find(off, FD_OFFLOAD_BY_FP, 2, NULL, &oc, NULL), 0);
	assert_int_equal(host_timeout_now(&si_tcp4), P_TCP + 86400);
	assert_int_equal(stats().resync_taken_out, 0);
}

static void
then_untouched(void)
{
	then_still_offloaded();
	assert_int_equal(stats().resync_taken_out, 0);
	assert_int_equal(stats().resyncs, 1);
}

static void
then_taken_out_whole(void)
{
	then_resync_left();
	assert_non_null(si_fp_conn(2));
}

static void
then_mid_dump(void)
{
	struct fd_offload_conn oc;

	assert_int_equal(stats().removed, 1);	/* by its DESTROY */
	assert_int_equal(fd_offload_find(off, FD_OFFLOAD_BY_FP, 1, NULL, &oc, NULL), -ENOENT);
	assert_int_equal(fd_offload_find(off, FD_OFFLOAD_BY_FP, 2, NULL, &oc, NULL), 0);	/* by its event, kept */
	assert_non_null(si_fp_conn(2));
	assert_int_equal(stats().resync_taken_out, 0);
}

static void
then_bounded(void)
{
	assert_true(steps > 3);
	assert_true(most_briefs <= 32);
	assert_true(si_counts.dump_datagrams_max <= 64);
	assert_true(most_gets <= 64);
	assert_true(most_posts <= 64);
	assert_int_equal(stats().offloaded, MANY);
	assert_int_equal(stats().resync_taken_out, 0);
	assert_int_equal(stats().removed, 0);
	for (unsigned int i = 1; i <= MANY; i++)
		assert_non_null(si_fp_conn(i));
	assert_null(strstr(si_cmd_log, "RECLAIM"));
}

/* ---- a million's shape, at 10,000: the jobs spread over turns ---- */

#define TEN_K 10000u
/* of them offloaded, the rest marked, not offloaded (no event); 7,997 leaves leave a turn 195
 * updates, and the dump's next datagram (8 states) straddles it: 5 carried */
#define TEN_K_OFF 7997u
#define K_PORT 20000u		/* state i's client port: K_PORT + i */

static const struct si_st *
ten_k_state(unsigned int i, struct si_st *st)
{
	*st = si_tcp4;
	st->cport = (uint16_t)(K_PORT + i);
	return st;
}

static void
given_ten_k(void)
{
	struct si_st st;

	for (unsigned int i = 0; i < TEN_K; i++) {
		if (i < TEN_K_OFF)
			si_offloaded(ten_k_state(i, &st), 5000 + i);
		else
			si_host_add(ten_k_state(i, &st), 5000 + i);
	}
	assert_int_equal(stats().offloaded, TEN_K_OFF);
}

static void
given_ten_k_offloaded(void)
{
	struct si_st st;

	for (unsigned int i = 0; i < TEN_K; i++)
		si_offloaded(ten_k_state(i, &st), 5000 + i);
	assert_int_equal(stats().offloaded, TEN_K);
}

static struct nf_conntrack **
ten_k_host(unsigned int i)
{
	struct si_st st;
	struct nf_conntrack *t = si_build(ten_k_state(i, &st), 0), **h = si_host_find(t);

	nfct_destroy(t);
	assert_non_null(h);
	return h;
}

/* The most updates one turn posted, and the turns, of the last when_revision_ten_k. */
static unsigned int most_a_turn, turns_taken;

/*
 * A ruleset change over TEN_K states, the loop turned until its job is
 * done.  Mid-job, two states ask to be offloaded: OLD (not offloaded,
 * its bit the old rules', not cleared yet) during the leaves, and NEW
 * (offloaded, left in the first turn) marked again by the new rules once
 * the dump by the bit has passed it.
 */
#define OLD (TEN_K - 1)
#define NEW 0u
static void
when_revision_ten_k(void)
{
	uint64_t offloaded = stats().offloaded;
	bool new_asked = false;
	struct si_st st;

	assert_int_equal(fd_offload_ruleset_changed(off), 0);
	/* the revision first, before any turn: nothing the old rules judged forwards */
	assert_string_equal(si_cmd_log, "FW_CFG_PARAMS_GET; FW_STATE_REV_SET rev=1");
	assert_int_equal(si_fp_rev, 1);
	assert_int_equal(si_counts.updates, 0);
	assert_true(fd_offload_busy(off));
	most_a_turn = turns_taken = 0;
	while (fd_offload_busy(off)) {
		unsigned int before = si_counts.updates;

		assert_true(++turns_taken < 1000);
		if (turns_taken == 2)
			si_event(FD_CT_UPDATE, ten_k_state(OLD, &st), 5000 + OLD);
		if (!new_asked && si_counts.updates > TEN_K_OFF) {	/* the dump is past slot 0 */
			struct nf_conntrack **h = ten_k_host(NEW);

			nfct_set_attr_u32(*h, ATTR_MARK, nfct_get_attr_u32(*h, ATTR_MARK) | SI_BIT);
			si_event(FD_CT_UPDATE, ten_k_state(NEW, &st), 5000 + NEW);
			new_asked = true;
		}
		fd_offload_events(off);
		fd_offload_work(off);
		if (si_counts.updates - before > most_a_turn)
			most_a_turn = si_counts.updates - before;
		if (si_counts.updates < TEN_K)	/* bits left to clear: nothing offloaded */
			assert_int_equal(stats().offloaded, offloaded);
	}
	assert_true(new_asked);
}

static void
then_ten_k_judged_again(void)
{
	struct fd_offload_stats st = stats();

	assert_true(most_a_turn <= FD_OFFLOAD_UPDATES_PER_TURN);
	assert_true(turns_taken >= TEN_K / FD_OFFLOAD_UPDATES_PER_TURN);
	/* each once: the leaves, then the bits; then NEW's offload (its T_long, posted) */
	assert_int_equal(si_counts.updates, TEN_K + 1);
	assert_int_equal(st.left, TEN_K_OFF);
	for (unsigned int i = 0; i < TEN_K; i++) {
		uint32_t mark = nfct_get_attr_u32(*ten_k_host(i), ATTR_MARK);

		assert_int_equal(mark & ~SI_BIT, 0x5);	/* the rules' own bits kept */
		assert_int_equal(!!(mark & SI_BIT), i == NEW);
	}
	/* NEW, through the new rules: offloaded (T_long); OLD, its old bit cleared: not */
	assert_int_equal(st.offloaded, TEN_K_OFF + 1);
	assert_int_equal(nfct_get_attr_u32(*ten_k_host(NEW), ATTR_TIMEOUT), P_TCP + 86400);
	assert_int_equal(nfct_get_attr_u32(*ten_k_host(OLD), ATTR_TIMEOUT), 0);
	assert_int_equal(fd_offload_find(off, FD_OFFLOAD_BY_FP, TEN_K_OFF + 1, NULL, &(struct fd_offload_conn){ 0 },
					    NULL), 0);
}

/* A front port's MTU changed over TEN_K offloaded: every one moved, 4,096 looked at a turn. */
static void
when_mtu_change_ten_k(void)
{
	struct fd_rt_change c = { .what = FD_RT_LINK, .ifindex = SI_IFINDEX0, .mtu = 1400 };
	uint64_t want = 0;

	fd_offload_rt_change(off, &c);
	assert_int_equal(stats().rerouted, 0);	/* noted: the job's, in the turns */
	turns_taken = 0;
	while (fd_offload_busy(off)) {
		assert_true(++turns_taken < 100);
		fd_offload_events(off);
		fd_offload_work(off);
		want += FD_OFFLOAD_PATHS_PER_TURN;
		assert_int_equal(stats().rerouted, want < TEN_K ? want : TEN_K);
	}
}

static void
then_ten_k_moved(void)
{
	assert_int_equal(turns_taken, (TEN_K + FD_OFFLOAD_PATHS_PER_TURN - 1) /
				      FD_OFFLOAD_PATHS_PER_TURN);
	assert_int_equal(stats().rerouted, TEN_K);
}

/* ---- the table's layout (driver/offload/fd_offload_table.c) ---- */

/* si_tcp4 and si_udp6 DNAT'd: the reply's source the target, not the server */
static const struct si_st *
dnat(int family)
{
	static struct si_st t4, t6;

	t4 = si_tcp4;
	t4.target = "198.19.0.99";
	t6 = si_udp6;
	t6.target = "2001:2:1::99";
	return family == AF_INET ? &t4 : &t6;
}

static void
given_dnat4(void)
{
	si_offloaded(dnat(AF_INET), 101);
}

static void
given_dnat6(void)
{
	si_offloaded(dnat(AF_INET6), 102);
}

/* The entry's tuple as rebuilt is the state's original tuple; its ends the target and the client. */
static void
then_dnat_right(int family)
{
	const struct si_st *s = dnat(family);
	struct nf_conntrack *want = si_build(s, 0), *got = NULL;
	struct fd_offload_conn c;
	uint8_t target[16] = { 0 }, client[16] = { 0 };
	int af = family == AF_INET ? AF_INET : AF_INET6;

	assert_int_equal(stats().extended, 1);	/* its tuple found its state 12 h on */
	assert_int_equal(fd_offload_find(off, FD_OFFLOAD_BY_FP, 1, NULL, &c, &got), 0);
	assert_non_null(got);
	assert_int_equal(nfct_cmp(got, want, NFCT_CMP_ORIG), 1);
	assert_int_equal(nfct_get_attr_u16(got, ATTR_ZONE), 0);
	assert_int_equal(inet_pton(af, s->target, target), 1);
	assert_int_equal(inet_pton(af, s->client, client), 1);
	assert_memory_equal(c.ends[0], target, family == AF_INET ? 4 : 16);
	assert_memory_equal(c.ends[1], client, family == AF_INET ? 4 : 16);
	assert_int_equal(fd_offload_find(off, FD_OFFLOAD_BY_CT, 101 + (family != AF_INET), got, &c, NULL), 0);
	nfct_destroy(got);
	nfct_destroy(want);
}

static void
then_dnat4_right(void)
{
	then_dnat_right(AF_INET);
}

static void
then_dnat6_right(void)
{
	then_dnat_right(AF_INET6);
}

/* DNAT'd state i (IPv4): its own client port */
static struct si_st
dnat_st(unsigned int i)
{
	struct si_st st = *dnat(AF_INET);

	st.cport = (uint16_t)(42000 + i);
	return st;
}

#define DNATS 4

static void
given_dnats(void)
{
	for (unsigned int i = 0; i < DNATS; i++) {
		struct si_st st = dnat_st(i);

		si_offloaded(&st, 200 + i);
	}
}

/* The first one destroyed: the last side record moves into its hole. */
static void
when_first_dnat_destroyed(void)
{
	struct si_st st = dnat_st(0);
	struct nf_conntrack *t = si_build(&st, 0), **h = si_host_find(t);

	nfct_destroy(t);
	assert_non_null(h);
	si_event(FD_CT_DESTROY, &st, nfct_get_attr_u32(*h, ATTR_ID));
	nfct_destroy(*h);
	*h = NULL;
	fd_offload_events(off);
}

/* The others' ends still the target and the client (their side records found). */
static void
then_dnats_right(void)
{
	uint8_t target[16] = { 0 }, client[16] = { 0 };
	struct fd_offload_conn c;

	assert_int_equal(inet_pton(AF_INET, dnat(AF_INET)->target, target), 1);
	assert_int_equal(inet_pton(AF_INET, dnat(AF_INET)->client, client), 1);
	for (unsigned int i = 0; i < DNATS; i++) {
		struct si_st st = dnat_st(i);
		struct nf_conntrack *t = si_build(&st, 0);
		int rc = fd_offload_find(off, FD_OFFLOAD_BY_CT, 200 + i, t, &c, NULL);

		nfct_destroy(t);
		if (i == 0) {
			assert_int_equal(rc, -ENOENT);
			continue;
		}
		assert_int_equal(rc, 0);
		assert_memory_equal(c.ends[0], target, 4);
		assert_memory_equal(c.ends[1], client, 4);
	}
}

/* state i of the many: its own client port and id */
static struct si_st
many_st(unsigned int i)
{
	struct si_st st = si_tcp4;

	st.cport = (uint16_t)(41000 + i);
	return st;
}

/*
 * Nine in ten of the MANY destroyed (tombstones in both indexes), as many
 * offloaded anew (the table grown past them), over several rounds.
 */
static void
when_churn(void)
{
	for (unsigned int round = 0; round < 4; round++) {
		for (unsigned int i = 0; i < MANY; i++) {
			struct si_st st = many_st(i);
			struct nf_conntrack **h, *t;

			if (i % 10 == 0)
				continue;	/* kept through every round */
			t = si_build(&st, 0);
			h = si_host_find(t);
			nfct_destroy(t);
			assert_non_null(h);
			si_event(FD_CT_DESTROY, &st, nfct_get_attr_u32(*h, ATTR_ID));
			nfct_destroy(*h);
			*h = NULL;
		}
		fd_offload_events(off);
		for (unsigned int i = 0; i < MANY; i++) {
			struct si_st st = many_st(i);

			if (i % 10 != 0)
				si_offloaded(&st, 10000 * (round + 1) + i);
		}
	}
}

/* Every one found by state and by fast-path id; none of the destroyed found. */
static void
then_all_found(void)
{
	struct fd_offload_stats st = stats();
	struct fd_offload_conn c;
	unsigned int found = 0;

	assert_int_equal(st.offloaded, MANY * 5 - MANY / 10 * 4);
	assert_int_equal(st.removed, (MANY - MANY / 10) * 4);
	for (unsigned int i = 0; i < MANY; i++) {
		struct si_st s = many_st(i);
		struct nf_conntrack *t = si_build(&s, 0);
		uint32_t id = i % 10 == 0 ? 1000 + i : 40000 + i;

		assert_int_equal(fd_offload_find(off, FD_OFFLOAD_BY_CT, id, t, &c, NULL), 0);
		assert_int_equal(c.ct_id, id);
		assert_int_equal(fd_offload_find(off, FD_OFFLOAD_BY_FP, c.fp_id, NULL, &c, NULL), 0);
		assert_int_equal(c.ct_id, id);
		if (i % 10 != 0)	/* the rounds before: gone from both */
			assert_int_equal(fd_offload_find(off, FD_OFFLOAD_BY_CT, 30000 + i, t, &c, NULL), -ENOENT);
		nfct_destroy(t);
		found++;
	}
	assert_int_equal(found, MANY);
	/* the first rounds' ids: gone */
	assert_int_equal(fd_offload_find(off, FD_OFFLOAD_BY_FP, 2, NULL, &c, NULL), -ENOENT);
}

static const struct row {
	const char *what;
	void (*given)(void);
	void (*when)(void);
	const char *cmds;	/* what `when` posts, in order (NULL: neither log checked) */
	const char *ct;		/* and asks of conntrack (events read are not listed) */
	void (*then)(void);
} rows[] = {
	{ "a DESTROY: out of the fast path at once", given_tcp4, when_destroy,
	  "CONN_RECLAIM_FP id=1", "", then_removed },
	{ "a give-back for a stalled sender: revived", given_tcp4, when_given_back_stalled,
	  "CONN_REVIVE_FP id=1", "", then_revived },
	{ "a give-back on a close: let go, its bit cleared, P - idle, its highest ACK forgotten",
	  given_tcp4, when_closed_idle, "",
	  "update sport=40000 what=0x7 timeout=431990 mark=0 mask=0x40000000", then_let_go_left },
	{ "a give-back not revived (refused): let go, its bit cleared, P - idle",
	  given_tcp4_revive_refused, when_stalled_idle, "CONN_REVIVE_FP refused",
	  "update sport=40000 what=0x7 timeout=431990 mark=0 mask=0x40000000", then_let_go_left },
	{ "an idle timeout (aged out, IPv6 UDP): let go, its bit cleared, P - idle", given_udp6,
	  when_aged_out_idle, "", "update sport=40001 what=0x6 timeout=110 mark=0 mask=0x40000000",
	  then_let_go_left },
	{ "aged out, idle unknown (no last-seen times): P", given_udp6, when_aged_out, "",
	  "update sport=40001 what=0x6 timeout=120 mark=0 mask=0x40000000", then_let_go_left },
	{ "a path change (a port's MTU): taken out, its bit cleared, P - idle from the reclaim",
	  given_tcp4_seen, when_mtu_change, "CONN_RECLAIM_FP id=1",
	  "get sport=40000; update sport=40000 what=0x7 timeout=431990 mark=0 mask=0x40000000; "
	  "get sport=40000", then_moved },
	{ "a revision: a new one first, the offloaded forgotten (P), every bit cleared",
	  given_tcp4_and_syn4, when_revision, "FW_CFG_PARAMS_GET; FW_STATE_REV_SET rev=1",
	  "update sport=40000 what=0x7 timeout=432000 mark=0 mask=0x40000000; "
	  "dump_start mark=0 mask=0; "
	  "update sport=40002 what=0x4 timeout=0 mark=0 mask=0x40000000", then_judged_again },
	{ "a resync: a connection nobody knows reclaimed, what conntrack holds offloaded",
	  given_stale_and_tcp4, when_resync,
	  "FW_CFG_PARAMS_GET; TABLE_STATS_READ; NHOP_PROGRAM port=1; NHOP_PROGRAM port=0; "
	  "CONN_RECLAIM_FP id=7; FLOW_CREATE_FP sport=40000 verdict=CUT_THRU action=IPS",
	  "dump_start mark=0x40000000 mask=0x40000000; get sport=0; "
	  "update sport=40000 what=0x3 timeout=518400 mark=0 mask=0", then_resynced },
	{ "a resync with nothing different: nothing reclaimed, nothing updated",
	  given_tcp4_seen, when_resync, "FW_CFG_PARAMS_GET; TABLE_STATS_READ",
	  "dump_start mark=0x40000000 mask=0x40000000", then_untouched },
	{ "a restart: a marked state on T_long not offloaded (a flowcutd before's): P",
	  given_unmarked_long, when_resync, "FW_CFG_PARAMS_GET; TABLE_STATS_READ",
	  "dump_start mark=0x40000000 mask=0x40000000; "
	  "update sport=40010 what=0x3 timeout=432000 mark=0 mask=0", then_unmarked_fixed },
	{ "a resync after a lost DESTROY: not in the dump, gone by GET, reclaimed",
	  given_destroy_lost, when_resync, "FW_CFG_PARAMS_GET; TABLE_STATS_READ; CONN_RECLAIM_FP id=1",
	  "dump_start mark=0x40000000 mask=0x40000000; get sport=40000", then_gone_reclaimed },
	{ "a resync after a lost UPDATE: a qualifying state offloaded",
	  given_update_lost, when_resync,
	  "FW_CFG_PARAMS_GET; TABLE_STATS_READ; NHOP_PROGRAM port=1; NHOP_PROGRAM port=0; "
	  "FLOW_CREATE_FP sport=40000 verdict=CUT_THRU action=IPS",
	  "dump_start mark=0x40000000 mask=0x40000000; update sport=40000 what=0x3 timeout=518400 mark=0 mask=0", then_offloaded_anew },
	{ "a resync after a lost AGED_OUT: the entry the fast path lacks made again",
	  given_aged_out_lost, when_resync,	/* the table empty now: as after a boot */
	  "FW_CFG_PARAMS_GET; TABLE_STATS_READ; NHOP_PROGRAM port=1; NHOP_PROGRAM port=0; "
	  "FLOW_CREATE_FP sport=40000 verdict=CUT_THRU action=IPS",
	  "dump_start mark=0x40000000 mask=0x40000000; update sport=40000 what=0x3 timeout=518400 mark=0 mask=0", then_made_again },
	{ "a resync: a state the dump missed, alive by GET, kept",
	  given_dump_misses, when_resync, "FW_CFG_PARAMS_GET; TABLE_STATS_READ",
	  "dump_start mark=0x40000000 mask=0x40000000; get sport=40000", then_untouched },
	{ "a resync after a boot: nothing reclaimed, the next hops programmed again",
	  given_booted, when_resync,
	  "FW_CFG_PARAMS_GET; TABLE_STATS_READ; NHOP_PROGRAM port=1; NHOP_PROGRAM port=0; "
	  "FLOW_CREATE_FP sport=40000 verdict=CUT_THRU action=IPS",
	  "dump_start mark=0x40000000 mask=0x40000000; update sport=40000 what=0x3 timeout=518400 mark=0 mask=0", then_made_again },
	{ "a resync where the brief read is refused: the whole table taken out (P - idle), offloaded again",
	  given_brief_refused, when_resync,
	  "FW_CFG_PARAMS_GET; TABLE_STATS_READ; " REFUSED32 "CONN_READ_RANGE first=0; "
	  "CONN_RECLAIM_FP id=1; CONN_READ_RANGE first=8; NHOP_PROGRAM port=1; NHOP_PROGRAM port=0; "
	  "FLOW_CREATE_FP sport=40000 verdict=CUT_THRU action=IPS",
	  "dump_start mark=0x40000000 mask=0x40000000; "
	  "update sport=40000 what=0x3 timeout=431990 mark=0 mask=0; "
	  "update sport=40000 what=0x3 timeout=518400 mark=0 mask=0", then_taken_out_whole },
	{ "a DESTROY and a new qualifying state while the dump is read: out, and offloaded, kept",
	  given_tcp4_udp6_host, when_events_mid_dump, NULL, NULL, then_mid_dump },
	{ "1,000 offloaded, a resync over turns: each step bounded, nothing reclaimed",
	  given_many, when_resync_steps, NULL, NULL, then_bounded },
	{ "an orphan AGED_OUT (a flowcutd before's): its state on T_long fixed up, P - idle",
	  given_tcp4_long_unknown, when_orphan_aged_out, "",
	  "get sport=40000; update sport=40000 what=0x7 timeout=431990 mark=0 mask=0x40000000",
	  then_orphan_fixed },
	{ "an old AGED_OUT for a tuple offloaded anew: no update", given_tcp4,
	  when_orphan_aged_out, "", "get sport=40000", then_still_offloaded },
	{ "an orphan REMOVED of an old revision: not looked at", given_tcp4_long_unknown,
	  when_orphan_removed_old_rev, "", "", then_nothing_left },
	{ "the offload: T_long (P + 1 d), the fast path's idle timeout clamped to P",
	  given_idle_300, when_udp6_offloaded,
	  "NHOP_PROGRAM port=1; NHOP_PROGRAM port=0; "
	  "FLOW_CREATE_FP sport=40001 verdict=CUT_THRU action=IPS",
	  "update sport=40001 what=0x2 timeout=86520 mark=0 mask=0", then_long_and_clamped },
	{ "still offloaded 12 h on: T_long again, once, and again 12 h later", given_udp6,
	  when_half_a_day, "", "timeout sport=40001 secs=86520", then_extended },
	{ "1,000 offloaded, 10 s with nothing changing: no command, no conntrack call", given_many,
	  when_ten_seconds, "", "", then_no_work },
	{ "conntrack's ENOBUFS: counted (ct_events_lost), reconciled", given_tcp4, when_enobufs,
	  NULL, NULL, then_enobufs_counted },
	{ "a cut kept across a revision: read back, made again dropping at the new one",
	  given_tcp4_cut, when_revision,
	  "FW_CFG_PARAMS_GET; FW_STATE_REV_SET rev=1; CONN_READ_BY_ID id=1; "
	  "FLOW_CREATE_FP sport=40000 verdict=DROP action=DROP",
	  "dump_start mark=0 mask=0", then_kept },
	{ "a DESTROY while the create is in flight: marked, reclaimed at the answer",
	  given_tcp4_pending, when_destroy_then_answer,
	  "FLOW_CREATE_FP sport=40000 verdict=CUT_THRU action=IPS; CONN_RECLAIM_FP id=1", "",
	  then_reclaimed_at_answer },
	{ "an update that fails (the state deleted, its DESTROY unread): taken out, no create",
	  NULL, when_update_fails, "NHOP_PROGRAM port=1; NHOP_PROGRAM port=0",
	  "update sport=40000 what=0x3 timeout=518400 mark=0 mask=0", then_update_failed_out },
	{ "a create refused: the state's T_long put right (P), its bit kept", given_create_refused,
	  when_tcp4_offloaded, "NHOP_PROGRAM port=1; NHOP_PROGRAM port=0; FLOW_CREATE_FP refused",
	  "update sport=40000 what=0x3 timeout=518400 mark=0 mask=0; "
	  "update sport=40000 what=0x3 timeout=432000 mark=0 mask=0", then_refused_put_right },
	{ "an UPDATE showing TCP past ESTABLISHED (closed on the host): taken out, its state left",
	  given_tcp4, when_fin_wait, "CONN_RECLAIM_FP id=1",
	  "update sport=40000 what=0x7 timeout=432000 mark=0 mask=0x40000000", then_closed_out },
	{ "an UPDATE showing TCP CLOSE 2 s after the offload (a spoofed RST the coprocessor refused): "
	  "kept, in the fast path", given_tcp4, when_closed_later, "", "", then_still_offloaded },
	{ "a key a cut connection holds: not created over (refused), T_long put right",
	  given_tcp4_cut, when_tcp4_anew, "FLOW_CREATE_FP sport=40000: -EEXIST",
	  "update sport=40000 what=0x3 timeout=518400 mark=0 mask=0; "
	  "update sport=40000 what=0x3 timeout=432000 mark=0 mask=0",
	  then_cut_kept_not_created_over },
	{ "GET mode: an event with the old rules' bit read after a ruleset change: not offloaded",
	  given_tcp4_event_queued, when_ruleset_between, "",
	  /* judged by GET, noted while the bits are cleared, read again once they are */
	  "get sport=40000; dump_start mark=0 mask=0; "
	  "update sport=40000 what=0x4 timeout=0 mark=0 mask=0x40000000; get sport=40000",
	  then_not_on_old_bit },
	{ "an event with status, mark and TCP state: judged as it is, no GET", NULL,
	  when_tcp4_offloaded, "NHOP_PROGRAM port=1; NHOP_PROGRAM port=0; "
	  "FLOW_CREATE_FP sport=40000 verdict=CUT_THRU action=IPS",
	  "update sport=40000 what=0x3 timeout=518400 mark=0 mask=0", then_offloaded_no_sync },
	{ "a mark-only UPDATE (no TCP state): one posted GET, judged in its answer", NULL,
	  when_mark_only, "NHOP_PROGRAM port=1; NHOP_PROGRAM port=0; "
	  "FLOW_CREATE_FP sport=40000 verdict=CUT_THRU action=IPS",
	  "get sport=40000; update sport=40000 what=0x3 timeout=518400 mark=0 mask=0",
	  then_offloaded_no_sync },
	{ "1,000 NEW events in one turn: no synchronous round trip, one update and one create each",
	  given_hops, when_thousand_new, NULL, NULL, then_thousand_no_round_trip },
	{ "a ruleset change over 10,000 states: the revision bumped first, the unmark spread over "
	  "turns of at most 256, every bit cleared, a state the new rules pass mid-job offloaded, "
	  "one the old rules passed not", given_ten_k, when_revision_ten_k, NULL, NULL,
	  then_ten_k_judged_again },
	{ "a path change over 10,000 offloaded: looked at 4,096 a turn, every one moved",
	  given_ten_k_offloaded, when_mtu_change_ten_k, NULL, NULL, then_ten_k_moved },
	{ "a cut adopted after a restart: a dropping connection kept, not reclaimed",
	  given_dropping_from_before, when_resync, "FW_CFG_PARAMS_GET; TABLE_STATS_READ",
	  "dump_start mark=0x40000000 mask=0x40000000", then_adopted },
	{ "a DNAT'd connection (IPv4): its tuple rebuilt from its key finds its state 12 h on, "
	  "its ends the target and the client", given_dnat4, when_half_a_day, "",
	  "timeout sport=40000 secs=518400", then_dnat4_right },
	{ "a DNAT'd connection (IPv6): its tuple rebuilt from its key finds its state 12 h on, "
	  "its ends the target and the client", given_dnat6, when_half_a_day, "",
	  "timeout sport=40001 secs=86520", then_dnat6_right },
	{ "4 DNAT'd connections, the first destroyed: the last's side record moved into its "
	  "place, the others' ends still the target and the client", given_dnats,
	  when_first_dnat_destroyed, NULL, NULL, then_dnats_right },
	{ "1,000 offloaded, nine in ten destroyed and offloaded anew 4 times (tombstones, growth): "
	  "every one found by state and by id", given_many, when_churn, NULL, NULL, then_all_found },

};

static int
bind_open(void **state)
{
	(void)state;
	off = si_open(true);
	return 0;
}

static int
bind_close(void **state)
{
	(void)state;
	si_close();
	return 0;
}

/* One row: its starting point, its step, what the step must have asked, then what holds. */
static void
test_row(void **state)
{
	const struct row *r = *state;

	if (r->given != NULL)
		r->given();
	si_log_reset();
	r->when();
	fd_offload_work(off);	/* the turn's end: what was posted goes (off_flush) */
	if (r->cmds != NULL && (strcmp(si_cmd_log, r->cmds) != 0 || strcmp(si_ct_log, r->ct) != 0))
		fail_msg("%s:\n  commands  %s\n    wanted  %s\n  conntrack %s\n     wanted %s",
			 r->what, si_cmd_log, r->cmds, si_ct_log, r->ct);
	r->then();
}

int
main(void)
{
	struct CMUnitTest tests[sizeof(rows) / sizeof(rows[0])];

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		tests[i] = (struct CMUnitTest){ .name = rows[i].what, .test_func = test_row,
						.setup_func = bind_open, .teardown_func = bind_close,
						.initial_state = (void *)&rows[i] };
	return cmocka_run_group_tests(tests, NULL, NULL);
}
