/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_ct: conntrack's netlink, and nothing else - as conntrack-tools keeps
 * netlink.c to I/O and hands events to its modes.  It reads events (a
 * bounded batch per call) and hands each, parsed, to its owner's callback;
 * it gets, dumps and updates states (the mark by a masked update, the TCP
 * tracking flags, the timeout).  What to do with a state is the binding's
 * (fd_offload), whether it qualifies the policy's (fd_policy).
 *
 * Four netlink sockets:
 * - events: conntrack's NEW, UPDATE and DESTROY groups, non-blocking,
 *   read 32 datagrams a recvmmsg(), a receive buffer of
 *   FD_CT_EVBUF_ASK (512 MiB, SO_RCVBUFFORCE through nfnl_rcvbufsiz)
 *   doubled on each ENOBUFS up to FD_CT_EVBUF_MAX (1 GiB), as
 *   conntrack-tools' nl_resize_socket_buffer: a lost event shows as
 *   -ENOBUFS and is counted (fd_ct_events_lost);
 * - queries (libnetfilter_conntrack): fd_ct_dump, read whole;
 * - posted requests (libmnl): updates, GETs and kills in batches of
 *   FD_CT_BATCH, each its own queue and flush, and the synchronous
 *   updates, GET and kill (each one post and a flush);
 * - a dump read incrementally (fd_ct_dump_start/_next), one at a time,
 *   opened for each dump.
 * The UPDATE events our own updates cause are dropped in the kernel, by
 * a socket filter on the event socket (fd_ct_own_filter), and again
 * before they are parsed (fd_ct_parse) should one get through; our
 * DESTROYs are handed on, flagged `own`.
 *
 * Main thread only.  fd_ct_close(NULL) does nothing.  Errors are negative
 * errnos; -ENOENT from an update: the state is gone.
 */
#ifndef FLOWCUT_FD_CT_H
#define FLOWCUT_FD_CT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct nf_conntrack;
struct fd_ct;

enum fd_ct_event {
	FD_CT_UPDATE,		/* a new state, or one that changed */
	FD_CT_DESTROY,		/* a state gone */
};

/*
 * An event: `ct` carries what the kernel sent (what changed, not the whole
 * state); it is valid during the call only.  `own`: a DESTROY caused by
 * one of fd_ct's kills (fd_offload forgets a cut connection's state by it;
 * own UPDATEs are never handed on).
 */
typedef void fd_ct_event_fn(void *arg, enum fd_ct_event type, const struct nf_conntrack *ct,
			    bool own);

/* fd_ct_open - conntrack's sockets (events are handed on by fd_ct_events).  NULL and errno. */
struct fd_ct *fd_ct_open(void);
/*
 * fd_ct_parse - the conntrack event messages of one datagram (pure: what
 * fd_ct_events reads, and the fuzz target's): cb once per NEW/DELETE
 * message that parses.  A NEW whose sender (nlmsg_pid) is one of
 * own[0..1] (our sockets' port ids) is skipped unparsed: our own update
 * says nothing new, and at a million offloaded states parsing them is
 * the cost.  A DELETE of ours is handed on with `own`.  The number handed
 * on, -ENOMEM (one not kept), or -EBADMSG (a message not whole in the
 * buffer; those before it handed on).
 */
int fd_ct_parse(const void *buf, size_t len, const uint32_t own[2], fd_ct_event_fn *cb,
		void *arg);
void fd_ct_close(struct fd_ct *c);

/*
 * fd_ct_own_filter - the event socket's classic BPF program (pure; run by
 * the kernel on every event before it is queued, SO_ATTACH_FILTER; tested
 * in userspace by libpcap's bpf_filter and against the kernel): a message
 * whose nlmsg_pid is own[0] or own[1] (our sockets' port ids, not 0) and
 * whose type is ctnetlink's CT_NEW (a NEW or an UPDATE) is refused, every
 * other one kept whole.  Each of our offloads updates its state once
 * (ctnetlink reports every update to every listener, the sender's other
 * sockets too), so unfiltered the event socket queues two events a state,
 * each taking about 1,280 bytes of its buffer (an event skb's truesize,
 * measured: /proc/net/netlink's Rmem over the events queued), and a burst
 * overflows twice as soon.  One event is one datagram (ctnetlink sends
 * each in an skb of its own), so the program looks at one header only:
 *
 *   ld  [12]            nlmsg_pid, as BPF loads it: big-endian, ntohl(pid)
 *   jeq ntohl(own[0])   -> type
 *   jeq ntohl(own[1])   -> type, else keep
 *   type: ldh [4]       nlmsg_type, ntohs()
 *   jeq ntohs(CT_NEW)   -> refuse, else keep
 *   refuse: ret 0
 *   keep: ret 0xffffffff
 *
 * Hand-written: libnetfilter_conntrack's nfct_filter_attach builds its
 * program from a state's attributes (protocols, addresses, TCP states,
 * marks), and the sender's port id is no attribute of a state.  `prog`
 * holds FD_CT_FILTER_LEN instructions (struct sock_filter, linux/filter.h).
 * FD_CT_FILTER_LEN, or -EINVAL (both port ids 0: the kernel's own events
 * carry 0; one 0 is read as the other).
 */
#define FD_CT_FILTER_LEN 7
struct sock_filter;
int fd_ct_own_filter(struct sock_filter *prog, const uint32_t own[2]);

/* fd_ct_fd - the event socket, to poll (level-triggered: what is left stays readable). */
int fd_ct_fd(const struct fd_ct *c);

/*
 * fd_ct_events - reads at most `max` event datagrams and hands their
 * events to cb(arg, ...), as fd_ct_parse does.  Returns how many
 * datagrams it read (fewer than max: the socket is empty), -ENOBUFS when
 * the kernel dropped events or one could not be kept (counted in
 * fd_ct_events_lost, the buffer doubled up to FD_CT_EVBUF_MAX; the caller
 * reconciles), or another negative errno from recv().
 */
int fd_ct_events(struct fd_ct *c, unsigned int max, fd_ct_event_fn *cb, void *arg);

/*
 * The event socket's buffer, chosen from what was measured: an event
 * takes 1,280 bytes of it (its skb's truesize: /proc/net/netlink's Rmem
 * over 100,000 NEW events queued, IPv4 UDP and IPv6 TCP alike), one a
 * state now that our own updates' are filtered out.  In lab/scale.sh
 * 1000000 flowcut-ctgen makes a million states in 6.6 to 11 s while
 * flowcutd offloads 60,000 to 68,000 a second on this shared 2-core
 * machine, so up to some 550,000 events wait at once (700 MB); 64 MiB
 * asked (134 MB, 104,857 events) lost events and reconciled on every
 * such run, 256 MiB (419,430) would still.  So 512 MiB asked at open
 * (the kernel doubles it: 1 GiB, 838,860 events), and one doubling on
 * ENOBUFS to 1 GiB asked (the kernel's most, INT_MAX: 1,677,721 events,
 * a whole million-state burst with flowcutd reading none).  The memory
 * is the kernel's only while events wait (charged as they are queued),
 * nothing while the socket is read empty.
 */
#define FD_CT_EVBUF_ASK (512u << 20)
#define FD_CT_EVBUF_MAX (1024u << 20)

/*
 * fd_ct_event_buf - the event socket's receive buffer now, bytes, as the
 * kernel reports it (SO_RCVBUF: twice what was asked, the kernel's share
 * for its bookkeeping; below that without CAP_NET_ADMIN, capped by
 * net.core.rmem_max).
 */
unsigned int fd_ct_event_buf(const struct fd_ct *c);
/* fd_ct_events_lost - how often events were lost (ENOBUFS, or one not kept) since open. */
uint64_t fd_ct_events_lost(const struct fd_ct *c);

/*
 * fd_ct_drain - throws away every event queued now, unread: before a
 * dump, whose states are newer (the kernel reports ENOBUFS before the
 * older events it still holds).
 */
void fd_ct_drain(struct fd_ct *c);

/* fd_ct_tuple - a new object with only ct's original tuple and zone; NULL: no memory. */
struct nf_conntrack *fd_ct_tuple(const struct nf_conntrack *ct);
/*
 * fd_ct_tuple_of_key - the original tuple a fast-path key of the original
 * direction stands for (addresses, protocol, ports; ICMP's identifier and
 * type), zone 0; NULL: no memory.
 */
struct fc_key;
struct nf_conntrack *fd_ct_tuple_of_key(const struct fc_key *k);

/*
 * fd_ct_get - the whole state with `tuple`'s original tuple as conntrack
 * holds it now; the caller destroys it.  NULL: gone, or no memory.  One
 * fd_ct_get_post and a flush of the GET queue.
 */
struct nf_conntrack *fd_ct_get(struct fd_ct *c, const struct nf_conntrack *tuple);

/*
 * fd_ct_dump - every state, in an array the caller frees with
 * fd_ct_dump_free().  0, or -EIO when the dump did not complete or a state
 * could not be kept (what it holds is then not every state, and is
 * still returned).
 */
int fd_ct_dump(struct fd_ct *c, struct nf_conntrack ***out, size_t *n);
void fd_ct_dump_free(struct nf_conntrack **all, size_t n);

/*
 * What one update asks of a state, in one IPCTNL_MSG_CT_NEW (an update:
 * no NLM_F_CREATE), any combination of:
 * - FD_CT_UP_LOOSEN: a TCP state made liberal both ways, its highest ACK
 *   seen forgotten (CTA_PROTOINFO_TCP_FLAGS_ORIGINAL/_REPLY: flag
 *   BE_LIBERAL, mask BE_LIBERAL|MAXACK_SET; see fd_offload.h); TCP only;
 * - FD_CT_UP_TIMEOUT: the timeout set to `timeout` seconds (CTA_TIMEOUT);
 * - FD_CT_UP_MARK: the bits of `mask` in the mark set to those of `mark`,
 *   the others untouched (CTA_MARK and CTA_MARK_MASK: the kernel computes
 *   (old & ~mask) ^ mark), so no write of the ruleset's between a read and
 *   a write is lost.
 */
enum {
	FD_CT_UP_LOOSEN = 1 << 0,
	FD_CT_UP_TIMEOUT = 1 << 1,
	FD_CT_UP_MARK = 1 << 2,
};

struct fd_ct_update {
	unsigned int what;	/* FD_CT_UP_* */
	uint32_t timeout;	/* s */
	uint32_t mark, mask;
};

/* Room a posted request's message may take; fd_ct_update_msg's buf holds this much. */
#define FD_CT_MSG_MAX 512

/*
 * fd_ct_update_msg - the update message (pure, tested byte for byte):
 *
 *   | nlmsghdr (CT_NEW, REQUEST, seq) | nfgenmsg (family) |
 *   | CTA_TUPLE_ORIG {...} | [CTA_TIMEOUT] | [CTA_PROTOINFO {TCP {flags}}] |
 *   | [CTA_ZONE] | [CTA_MARK | CTA_MARK_MASK] |
 *
 * everything but the mark by nfct_nlmsg_build() (its order), the mark and
 * its mask by libmnl (this libnetfilter_conntrack has no ATTR_MARK_MASK).
 * No NLM_F_ACK: a success sends nothing back (the batch's flush acks its
 * last message only, below).  The message's length, or -EINVAL: nothing
 * asked, a loosen of a state that is not TCP, or a tuple it cannot build.
 */
int fd_ct_update_msg(void *buf, uint32_t seq, const struct nf_conntrack *tuple,
		     const struct fd_ct_update *u);

/*
 * Requests in batches: kills, updates and GETs, each kind its own queue
 * of up to FD_CT_BATCH, sent by its own flush.  A post queues one request
 * (NLM_F_ACK); the flush sends every queued one in one datagram, reads
 * each answer, and then runs each done with what that request got.  A post
 * that finds its queue full flushes it first, so done may run inside a
 * post.  Nothing is sent until a flush: the owner flushes before it waits.
 * A post returns 0, or -EINVAL (a request it cannot build: done will not
 * run).  A flush returns how many answered, or -errno when the datagram
 * could not be sent or its answers read (each unanswered done gets that
 * error).  fd_ct_close() flushes what is queued.
 *
 * - fd_ct_kill_post: IPCTNL_MSG_CT_DELETE; done(arg, rc) with what
 *   fd_ct_kill() would have returned.  Acked as the updates are (below):
 *   the batch's last alone, a kill's error whatever its flags; an ack
 *   each made a cut of 100,000 read 100,000 datagrams, a tenth of its
 *   time.  A kill sent again after lost errors answers -ENOENT if the
 *   first took (gone: killed, to every caller).
 * - fd_ct_update_post: fd_ct_update_msg's; done(arg, rc): 0, -ENOENT (the
 *   state is gone), or conntrack's error.  Not one ack an update: the
 *   batch's last message alone has NLM_F_ACK.  ctnetlink takes a request
 *   inside the sender's sendmsg (netlink_unicast -> netlink_unicast_kernel
 *   -> nfnetlink_rcv -> netlink_rcv_skb, every message of the datagram in
 *   order), and netlink_rcv_skb acks a message `if (NLM_F_ACK || err)`:
 *   an update that fails queues its nlmsgerr whatever its flags, one that
 *   works queues nothing.  So once the last one's answer is read, every
 *   error before it has been (one socket's queue is in order), and an
 *   update with none worked: 0.  An error lost (its skb found the request
 *   socket's buffer full: the socket says ENOBUFS, and the kernel drops
 *   every answer after it until the queue is read empty) leaves which
 *   update failed unknown: the batch's unanswered updates are sent again
 *   one at a time, each acked (fd_ct_replays counts such batches; each
 *   update sets the same values again).  The buffer (rmem_default) holds
 *   far more than a batch's FD_CT_BATCH errors, so this should not happen.
 *   GETs keep an ack each: the answer is the state.
 * - fd_ct_get_post: IPCTNL_MSG_CT_GET of the state with `tuple`'s original
 *   tuple; done(arg, ct, 0) with the whole state as conntrack holds it
 *   now (parsed by fd_ctparse, valid during the call only), or
 *   done(arg, NULL, rc): -ENOENT (gone), -EPROTO (answered with no state
 *   that parses), or another error.
 */
#define FD_CT_BATCH 64
#define FD_CT_KILL_BATCH FD_CT_BATCH

typedef void fd_ct_done_fn(void *arg, int rc);
/* A state read (a GET's answer, a dumped state): `ct` valid during the call only. */
typedef void fd_ct_state_fn(void *arg, const struct nf_conntrack *ct, int rc);

int fd_ct_kill_post(struct fd_ct *c, const struct nf_conntrack *tuple, fd_ct_done_fn *done,
		    void *arg);
int fd_ct_kill_flush(struct fd_ct *c);
int fd_ct_update_post(struct fd_ct *c, const struct nf_conntrack *tuple,
		      const struct fd_ct_update *u, fd_ct_done_fn *done, void *arg);
int fd_ct_update_flush(struct fd_ct *c);
int fd_ct_get_post(struct fd_ct *c, const struct nf_conntrack *tuple, fd_ct_state_fn *done,
		   void *arg);
int fd_ct_get_flush(struct fd_ct *c);
/*
 * fd_ct_replays - update batches whose errors were lost (ENOBUFS) and
 * sent again one by one, since open.  fd_ct_request_fd - the posted
 * requests' socket (a test shrinks its buffer to lose errors).
 */
uint64_t fd_ct_replays(const struct fd_ct *c);
int fd_ct_request_fd(const struct fd_ct *c);

/*
 * The synchronous updates: one fd_ct_update_post and a flush of the
 * update queue (so what is queued there goes with it).  0 or a negative
 * errno (-ENOENT: gone).
 * fd_ct_mark - FD_CT_UP_MARK: the bits of `mask` set to those of `mark`.
 * fd_ct_tcp_loosen - FD_CT_UP_LOOSEN.
 * fd_ct_timeout - FD_CT_UP_TIMEOUT, `secs`.
 */
int fd_ct_mark(struct fd_ct *c, const struct nf_conntrack *tuple, uint32_t mark, uint32_t mask);
int fd_ct_tcp_loosen(struct fd_ct *c, const struct nf_conntrack *tuple);
int fd_ct_timeout(struct fd_ct *c, const struct nf_conntrack *tuple, uint32_t secs);

/*
 * fd_ct_kill - the state with `tuple`'s original tuple deleted
 * (IPCTNL_MSG_CT_DELETE); its DESTROY event follows, flagged own.  0,
 * -ENOENT (gone already), or another negative errno.  One fd_ct_kill_post
 * and a flush of the kill queue.
 */
int fd_ct_kill(struct fd_ct *c, const struct nf_conntrack *tuple);

/*
 * A dump filtered in the kernel by mark, read a few datagrams at a time
 * on a socket of its own, never held whole.
 * fd_ct_dump_start - asks for every state whose (mark & mask) == mark
 * (ctnetlink's filter, CTA_MARK + CTA_MARK_MASK: ctnetlink_alloc_filter),
 * every state when mask is 0; a dump still being read is dropped.  0, or
 * -errno (the socket, the request not sent).
 * fd_ct_dump_next - reads at most max_datagrams (at least one, and more
 * until a state is handed on) and hands each state to cb(arg, ct, 0).
 * Returns how many states it handed on; 0 once the dump is over
 * (NLMSG_DONE read: the call that reads it returns what it handed on, the
 * next ones 0; or no dump started); a negative errno on error, the dump
 * then over: -EINTR when the kernel flagged the dump interrupted
 * (NLM_F_DUMP_INTR: the table changed under it; start again), the error
 * the kernel answered (NLMSG_ERROR, or NLMSG_DONE's), -EBADMSG (a datagram
 * that does not hold together), -ENOMEM, or recv()'s.
 */
int fd_ct_dump_start(struct fd_ct *c, uint32_t mark, uint32_t mask);
int fd_ct_dump_next(struct fd_ct *c, unsigned int max_datagrams, fd_ct_state_fn *cb, void *arg);

/* The dump's room for one datagram (libmnl's MNL_SOCKET_DUMP_SIZE). */
#define FD_CT_DUMP_BUF 32768

/*
 * fd_ct_dump_msg - the dump's request (pure): | nlmsghdr (CT_GET,
 * REQUEST|DUMP, seq) | nfgenmsg (AF_UNSPEC) | [CTA_MARK | CTA_MARK_MASK] |,
 * the filter by libnetfilter_conntrack's nfct_nlmsg_build_filter
 * (NFCT_FILTER_DUMP_MARK), left out when mask is 0; buf holds
 * FD_CT_MSG_MAX.  The message's length, or -ENOMEM.
 */
int fd_ct_dump_msg(void *buf, uint32_t seq, uint32_t mark, uint32_t mask);

/*
 * fd_ct_dump_parse - one datagram of a dump (pure: what fd_ct_dump_next
 * reads, and the fuzz target's): cb(arg, ct, 0) once per state that parses
 * (one that does not is said and skipped); *done set at NLMSG_DONE (what
 * follows it is ignored).  The number handed on, or -EINTR (a message
 * flagged NLM_F_DUMP_INTR), the kernel's error (NLMSG_ERROR, NLMSG_DONE
 * with one; -EPROTO for one that is no errno), -EBADMSG (a message not whole, or an error too short), or
 * -ENOMEM; those before the failing message were handed on.
 */
int fd_ct_dump_parse(const void *buf, size_t len, fd_ct_state_fn *cb, void *arg, bool *done);

/* fd_ct_established_timeout - conntrack's timeout of a working state of `l4proto`, s. */
uint32_t fd_ct_established_timeout(const struct fd_ct *c, uint8_t l4proto);

/*
 * struct fd_ct_io - conntrack's I/O as its users (the binding, the cut,
 * the inspector) call it: one function a call above, each returning what
 * that call returns, on `ctx`.  A function table, as struct fd_cmds is,
 * so a test stands in for conntrack without root (tests/unit/driver/test_offload.c).
 * fd_ct_io_of - the real one, on an open struct fd_ct (which must outlive
 * it).  The pure helpers (fd_ct_tuple, fd_ct_tuple_of_key, fd_ct_dump_free)
 * are called directly.
 */
struct fd_ct_io {
	int (*events)(void *ctx, unsigned int max, fd_ct_event_fn *cb, void *arg);
	void (*drain)(void *ctx);
	struct nf_conntrack *(*get)(void *ctx, const struct nf_conntrack *tuple);
	int (*dump)(void *ctx, struct nf_conntrack ***out, size_t *n);
	int (*mark)(void *ctx, const struct nf_conntrack *tuple, uint32_t mark, uint32_t mask);
	int (*tcp_loosen)(void *ctx, const struct nf_conntrack *tuple);
	int (*timeout)(void *ctx, const struct nf_conntrack *tuple, uint32_t secs);
	int (*kill)(void *ctx, const struct nf_conntrack *tuple);
	int (*kill_post)(void *ctx, const struct nf_conntrack *tuple, fd_ct_done_fn *done,
			 void *arg);
	int (*kill_flush)(void *ctx);
	int (*update_post)(void *ctx, const struct nf_conntrack *tuple,
			   const struct fd_ct_update *u, fd_ct_done_fn *done, void *arg);
	int (*update_flush)(void *ctx);
	int (*get_post)(void *ctx, const struct nf_conntrack *tuple, fd_ct_state_fn *done,
			void *arg);
	int (*get_flush)(void *ctx);
	int (*dump_start)(void *ctx, uint32_t mark, uint32_t mask);
	int (*dump_next)(void *ctx, unsigned int max_datagrams, fd_ct_state_fn *cb, void *arg);
	uint64_t (*events_lost)(void *ctx);
	uint32_t (*established_timeout)(void *ctx, uint8_t l4proto);
	void *ctx;
};

struct fd_ct_io fd_ct_io_of(struct fd_ct *c);

#endif
