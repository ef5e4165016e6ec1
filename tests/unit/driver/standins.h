/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * standins: the binding's parts as stand-ins, for the tests that drive it
 * without root (test_offload: the state machine; test_cut: the cut).
 *
 * - the coprocessor, as the commands see it (si_cmds): a table of slots
 *   answering each command as the fast path would (CONN_READ_BRIEF's
 *   windows and TABLE_STATS_READ too); posted commands wait
 *   for the flush, as the command client's do; a command of opcode
 *   si_refuse is refused (-EINVAL);
 * - conntrack, as fd_ct_io sees it (si_ctio): the states it holds
 *   (si_host), events queued (si_event), kills posted and sent
 *   SI_KILL_BATCH a datagram as fd_ct's are; updates and GETs posted,
 *   answered in order at their flush; a dump by mark, 8 states a
 *   datagram; the events lost as si_ct_events_lost says;
 * - the host's routes (si_rtio): 198.18/16 and 2001:2::/48 out of port 0,
 *   the rest port 1;
 * - states built as conntrack would send them (si_build: nfct_new,
 *   nfct_set_attr, no netlink).
 *
 * What the binding asks is recorded: the commands in si_cmd_log, the
 * conntrack calls in si_ct_log ("OP field=value; ..."), both in one
 * sequence in si_all_log (events read are not listed), and as marks
 * (si_seq: each drop answered and each kill, by the state's original
 * source port) with the counts of si_counts.  A state is named by its
 * original source port.  Main thread only; one binding at a time.
 */
#ifndef FLOWCUT_TESTS_STANDINS_H
#define FLOWCUT_TESTS_STANDINS_H

#include <stdbool.h>
#include <stdint.h>

#include <flowcut/fc_cmd.h>

#include "fd_cmds.h"
#include "fd_ct.h"
#include "fd_route.h"

struct fd_offload;
struct nf_conntrack;

#define SI_BIT 0x40000000u	/* the mark bit the rules set */
#define SI_LOG_MAX 8192		/* a log's room: what does not fit is left off */
#define SI_FP_SLOTS 16384		/* the coprocessor's table; CONN_READ_RANGE pages of 8 slots */
#define SI_HOST_MAX 16384		/* the states conntrack holds, and events queued */
#define SI_SEQ_MAX 2048
#define SI_KILL_BATCH FD_CT_KILL_BATCH
#define SI_DATAGRAMS_MAX 64

extern char si_cmd_log[SI_LOG_MAX], si_ct_log[SI_LOG_MAX], si_all_log[SI_LOG_MAX];

/* One mark of the sequence: a drop the coprocessor answered (0), or a state killed. */
enum si_mark { SI_DROPPED, SI_KILLED };
extern struct si_seq {
	enum si_mark mark;
	unsigned int sport;
} si_seq[SI_SEQ_MAX];
extern unsigned int si_nseq;

extern struct si_counts {
	unsigned int posted;			/* commands posted */
	unsigned int briefs;			/* CONN_READ_BRIEF answered */
	unsigned int get_posts;			/* conntrack GETs posted */
	unsigned int dump_nexts;		/* dump reads (dump_next calls) */
	unsigned int dump_datagrams_max;	/* the most datagrams one dump read asked */
	unsigned int flushes;			/* flushes that answered at least one */
	unsigned int kill_posts;		/* kills posted */
	unsigned int datagrams;			/* kill datagrams sent */
	unsigned int per_datagram[SI_DATAGRAMS_MAX];	/* the kills in each */
	unsigned int sync_cmds;			/* commands called, waited for (fd_cmds call) */
	unsigned int sync_ct;			/* conntrack's synchronous calls: get, mark, loosen, timeout, kill */
	unsigned int ct_posted;			/* updates and GETs posted */
	unsigned int updates;			/* updates answered (posted, flushed) */
	unsigned int route_gets;		/* routes asked with their neighbour (si_rtio's get) */
} si_counts;

/* si_log_reset - every log, mark and count emptied. */
void si_log_reset(void);

/* ---- the coprocessor ---- */

extern uint32_t si_fp_rev;
extern uint16_t si_refuse;	/* an opcode answered -EINVAL (0: none) */
/* posted commands wait while set, but for a flush without end (ms < 0); false at si_open */
extern bool si_hold_answers;
extern const struct fd_cmds si_cmds;

/* si_fp_conn - the connection of fast-path id `id`, or NULL. */
struct fc_conn_info *si_fp_conn(uint64_t id);
/* si_fp_add - a connection in the coprocessor's table, as a flowcutd before may have left it. */
uint64_t si_fp_add(uint64_t id, const struct fc_mflow_spec mf[2], uint8_t verdict);

/* si_fp_del - the connection gone from the table unreported (its event lost); si_fp_boot - all gone. */
void si_fp_del(uint64_t id);
void si_fp_boot(void);

/* ---- conntrack ---- */

extern struct nf_conntrack *si_host[SI_HOST_MAX];
extern const struct fd_ct_io si_ctio;
/* what si_ctio's events_lost answers (0 at si_close) */
extern uint64_t si_ct_events_lost;
/* what the next events read returns after handing the queue on (0: as usual), once */
extern int si_ct_events_rc;
/* a state the dump misses, by its original source port (0: none), as in a hash resize */
extern unsigned int si_dump_miss;
/* the binding's clock (cfg.now_ns), ns: a row moves it; si_open sets it to 1,000 s */
extern uint64_t si_now_ns;

/* si_host_find - the state conntrack holds for a tuple, or NULL. */
struct nf_conntrack **si_host_find(const struct nf_conntrack *t);
/* si_ct_kill - the stand-in's kill (recorded): 0 or -ENOENT. */
int si_ct_kill(void *ctx, const struct nf_conntrack *t);

/* ---- the routes ---- */

#define SI_IFINDEX0 10
extern const struct fd_route_io si_rtio;

/* ---- states ---- */

struct si_st {
	int family;			/* AF_INET, AF_INET6 */
	uint8_t l4;
	const char *client, *server;	/* the original tuple's source and destination */
	uint16_t cport, sport;
	uint32_t status;
	uint8_t tcp_state;
	uint32_t mark;
	const char *target;		/* the reply's source when DNAT'ed (NULL: server) */
	bool mark_only;			/* an event that only set the mark: no TCP state in it */
};

/* a TCP state through the rules (IPv4), a UDP one (IPv6), one the rules passed while it was new */
extern const struct si_st si_tcp4, si_udp6, si_syn4;

/* si_build - a state as conntrack would send it, of conntrack id `id`. */
struct nf_conntrack *si_build(const struct si_st *s, uint32_t id);
/* si_host_add - a state conntrack holds. */
void si_host_add(const struct si_st *s, uint32_t id);
/* si_event - an event queued for the binding's next read. */
void si_event(enum fd_ct_event type, const struct si_st *s, uint32_t id);

/* ---- the binding over them ---- */

extern struct fd_offload *si_off;

/*
 * si_open - the coprocessor's table emptied (ids from 1, revision 0), the
 * next hops and the binding opened over the stand-ins (two ports, the mark
 * bit SI_BIT, timeout 30 s); si_close closes them, every state and event
 * let go.
 */
struct fd_offload *si_open(bool cut_in_hardware);
/* cfg.first_frame_reads of the next si_open (false unless a row sets it) */
extern bool si_first_frame_reads;
void si_close(void);
/* si_offloaded - a state conntrack holds, offloaded: its UPDATE event read. */
void si_offloaded(const struct si_st *s, uint32_t id);
/* si_fp_event - a coprocessor event read by the binding. */
void si_fp_event(uint8_t type, uint8_t reason, uint64_t id);

#endif
