/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_ct: conntrack's netlink, and nothing else - as conntrack-tools keeps
 * netlink.c to I/O and hands events to its modes.  It reads events (a
 * bounded batch per call) and hands each, parsed, to its owner's callback;
 * it gets, dumps and updates states (the mark by a masked update, the TCP
 * tracking flags, the timeout).  What to do with a state is the binding's
 * (fd_offload), whether it qualifies the policy's (fd_policy).
 *
 * Three netlink sockets: events (conntrack's NEW, UPDATE and DESTROY
 * groups, an 8 MiB receive buffer, non-blocking; a lost event shows as
 * -ENOBUFS), queries (libnetfilter_conntrack: GET, DUMP, UPDATE) and one
 * of libmnl's for the masked mark update this libnetfilter_conntrack
 * cannot build (CTA_MARK_MASK).  Events caused by the last two are
 * flagged `own`.
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
 * state); it is valid during the call only.  `own`: caused by one of
 * fd_ct's updates.
 */
typedef void fd_ct_event_fn(void *arg, enum fd_ct_event type, const struct nf_conntrack *ct,
			    bool own);

/* fd_ct_open - conntrack's sockets (events are handed on by fd_ct_events).  NULL and errno. */
struct fd_ct *fd_ct_open(void);
/*
 * fd_ct_parse - the conntrack event messages of one datagram (pure: what
 * fd_ct_events reads, and the fuzz target's): cb once per NEW/DELETE
 * message that parses, `own` when its sender is one of own[0..1] (our
 * sockets' port ids).  The number handed on, -ENOMEM (one not kept), or
 * -EBADMSG (a message not whole in the buffer; those before it handed on).
 */
int fd_ct_parse(const void *buf, size_t len, const uint32_t own[2], fd_ct_event_fn *cb,
		void *arg);
void fd_ct_close(struct fd_ct *c);

/* fd_ct_fd - the event socket, to poll (level-triggered: what is left stays readable). */
int fd_ct_fd(const struct fd_ct *c);

/*
 * fd_ct_events - reads at most `max` event datagrams and hands their
 * events to cb(arg, ...), as fd_ct_parse does.  Returns how many
 * datagrams it read (fewer than max: the socket is empty), -ENOBUFS when
 * the kernel dropped events (the caller reconciles), or another negative
 * errno from recv().
 */
int fd_ct_events(struct fd_ct *c, unsigned int max, fd_ct_event_fn *cb, void *arg);

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
 * holds it now; the caller destroys it.  NULL: gone, or no memory.
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
 * fd_ct_mark - the bits of `mask` in the state's mark set to those of
 * `mark`, the others untouched, in one update (CTA_MARK and CTA_MARK_MASK:
 * the kernel computes (old & ~mask) ^ mark), so no write of the ruleset's
 * between a read and a write is lost.  0 or a negative errno.
 */
int fd_ct_mark(struct fd_ct *c, const struct nf_conntrack *tuple, uint32_t mark, uint32_t mask);

/*
 * fd_ct_tcp_loosen - a TCP state made liberal both ways, its highest ACK
 * seen forgotten (see fd_offload.h).  0 or a negative errno.
 */
int fd_ct_tcp_loosen(struct fd_ct *c, const struct nf_conntrack *tuple);

/* fd_ct_timeout - the state's timeout set to `secs`.  0 or a negative errno. */
int fd_ct_timeout(struct fd_ct *c, const struct nf_conntrack *tuple, uint32_t secs);

/*
 * fd_ct_kill - the state with `tuple`'s original tuple deleted
 * (IPCTNL_MSG_CT_DELETE); its DESTROY event follows, flagged own.  0,
 * -ENOENT (gone already), or another negative errno.
 */
int fd_ct_kill(struct fd_ct *c, const struct nf_conntrack *tuple);

/*
 * Kills in batches: fd_ct_kill_post() queues a kill (IPCTNL_MSG_CT_DELETE
 * with NLM_F_ACK); fd_ct_kill_flush() sends every queued one in one
 * datagram, reads each answer, and then runs each `done(arg, rc)` with
 * what fd_ct_kill() would have returned.  A post that finds the batch full
 * (FD_CT_KILL_BATCH) flushes it first, so `done` may run inside a post.
 * Nothing is sent until a flush: the owner flushes before it waits.
 * fd_ct_kill_post returns 0, or -EINVAL (no memory, or a tuple it cannot
 * build: done will not run).
 * fd_ct_kill_flush returns how many answered, or -errno when the datagram
 * could not be sent or its answers read (each unanswered done gets that
 * error).  fd_ct_close() flushes what is queued.
 */
#define FD_CT_KILL_BATCH 64

typedef void fd_ct_done_fn(void *arg, int rc);

int fd_ct_kill_post(struct fd_ct *c, const struct nf_conntrack *tuple, fd_ct_done_fn *done,
		    void *arg);
int fd_ct_kill_flush(struct fd_ct *c);

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
	uint32_t (*established_timeout)(void *ctx, uint8_t l4proto);
	void *ctx;
};

struct fd_ct_io fd_ct_io_of(struct fd_ct *c);

#endif
