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
 * calls it must make.  The same against the real conntrack and fast path,
 * as root: tests/integration/test_driver.c.
 */
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
	assert_int_equal(fd_offload_mark_cut(off, 1, 0), 0);
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
when_given_back_close(void)
{
	si_fp_event(FC_EV_GIVEN_BACK, FC_REASON_TCP_FIN_SYN_RST, 1);
}

static void
when_aged_out(void)
{
	si_fp_event(FC_EV_AGED_OUT, FC_REASON_IDLE, 1);
}

static void
when_revision(void)
{
	assert_int_equal(fd_offload_ruleset_changed(off), 0);
}

static void
when_resync(void)
{
	fd_offload_resync(off);
}

static void
then_removed(void)
{
	assert_int_equal(stats().removed, 1);
	assert_int_equal(fd_offload_find_fp(off, 1, &(struct fd_offload_conn){ 0 }, NULL), -ENOENT);
}

static void
then_revived(void)
{
	struct fd_offload_conn oc;

	assert_int_equal(stats().revived, 1);
	assert_int_equal(fd_offload_find_fp(off, 1, &oc, NULL), 0);
}

static void
then_let_go(void)
{
	assert_int_equal(fd_offload_find_fp(off, 1, &(struct fd_offload_conn){ 0 }, NULL), -ENOENT);
	assert_int_equal(nfct_get_attr_u32(si_host[0], ATTR_MARK) & SI_BIT, 0);	/* back through the rules */
}

static void
then_judged_again(void)
{
	assert_int_equal(stats().rev_bumps, 1);
	assert_int_equal(si_fp_rev, 1);
	assert_int_equal(fd_offload_find_fp(off, 1, &(struct fd_offload_conn){ 0 }, NULL), -ENOENT);
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
	assert_int_equal(fd_offload_find_fp(off, 1, &oc, NULL), 0);
	assert_false(oc.cut);
	assert_int_equal(stats().resyncs, 1);
}

static void
then_kept(void)
{
	struct fd_offload_conn oc;

	assert_int_equal(fd_offload_find_fp(off, 1, &oc, NULL), -ENOENT);	/* the stale one */
	assert_int_equal(fd_offload_find_fp(off, 2, &oc, NULL), 0);	/* made again */
	assert_true(oc.cut);
	assert_int_equal(oc.action, FC_ACTION_DROP);
	assert_int_equal(si_fp_conn(2)->fw_rev, 1);
}

static void
then_adopted(void)
{
	struct fd_offload_conn oc;

	assert_int_equal(stats().cut_adopted, 1);
	assert_int_equal(fd_offload_find_fp(off, 9, &oc, NULL), 0);
	assert_true(oc.cut);
	assert_int_equal(oc.cut_by, FD_OFFLOAD_CUT_BY_UNKNOWN);
	assert_non_null(si_fp_conn(9));	/* dropping on */
}

static const struct row {
	const char *what;
	void (*given)(void);
	void (*when)(void);
	const char *cmds;	/* what `when` posts, in order */
	const char *ct;		/* and asks of conntrack (events read are not listed) */
	void (*then)(void);
} rows[] = {
	{ "a DESTROY: out of the fast path at once", given_tcp4, when_destroy,
	  "CONN_RECLAIM_FP id=1", "", then_removed },
	{ "a give-back for a stalled sender: revived", given_tcp4, when_given_back_stalled,
	  "CONN_REVIVE_FP id=1", "", then_revived },
	{ "a give-back on a close: let go, its bit cleared, its highest ACK forgotten", given_tcp4,
	  when_given_back_close, "",
	  "mark sport=40000 mark=0 mask=0x40000000; tcp_loosen sport=40000", then_let_go },
	{ "an idle timeout (aged out, IPv6 UDP): let go, its bit cleared", given_udp6, when_aged_out,
	  "", "mark sport=40001 mark=0 mask=0x40000000", then_let_go },
	{ "a revision: a new one first, the offloaded forgotten, every bit cleared",
	  given_tcp4_and_syn4, when_revision, "FW_CFG_PARAMS_GET; FW_STATE_REV_SET rev=1",
	  "tcp_loosen sport=40000; dump; mark sport=40000 mark=0 mask=0x40000000; "
	  "mark sport=40002 mark=0 mask=0x40000000", then_judged_again },
	{ "a resync: what the fast path holds taken out, what conntrack holds offloaded",
	  given_stale_and_tcp4, when_resync,
	  "CONN_READ_RANGE first=0; CONN_RECLAIM_FP id=7; CONN_READ_RANGE first=8; "
	  "NHOP_PROGRAM port=1; NHOP_PROGRAM port=0; "
	  "FLOW_CREATE_FP sport=40000 verdict=CUT_THRU action=IPS",
	  "drain; dump; tcp_loosen sport=40000", then_resynced },
	{ "a cut kept across a revision: read back, made again dropping at the new one",
	  given_tcp4_cut, when_revision,
	  "FW_CFG_PARAMS_GET; FW_STATE_REV_SET rev=1; CONN_READ_BY_ID id=1; "
	  "FLOW_CREATE_FP sport=40000 verdict=DROP action=DROP", "dump", then_kept },
	{ "a cut adopted after a restart: a dropping connection kept, not reclaimed",
	  given_dropping_from_before, when_resync,
	  "CONN_READ_RANGE first=0; CONN_READ_RANGE first=8", "drain; dump", then_adopted },
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

	r->given();
	si_log_reset();
	r->when();
	if (strcmp(si_cmd_log, r->cmds) != 0 || strcmp(si_ct_log, r->ct) != 0)
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
