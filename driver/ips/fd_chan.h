/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_chan: flowcutd's end of the channel to flowcut-inspect, the
 * inspector's parser in a process of its own (inspector/, fi_wire): a
 * SOCK_SEQPACKET socket connected to its path, questions sent from any
 * thread without waiting, answers read by a thread of its own and
 * handed to io.answer; the socket lost (the parser killed, restarted),
 * io.lost, and connected again every 100 ms until it answers.
 *
 * Bounded: the kernel queues at most net.unix.max_dgram_qlen questions
 * (512 by default) and SO_SNDBUF bytes (FD_CHAN_SNDBUF) not yet read; a
 * question past them is refused at once (-EAGAIN), never waited for.
 */
#ifndef FLOWCUT_FD_CHAN_H
#define FLOWCUT_FD_CHAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FD_CHAN_SNDBUF (2u << 20)

struct fd_chan_io {
	/* one answer (its bytes as read); nonzero: not an answer, the socket is dropped */
	int (*answer)(void *arg, const void *msg, size_t len);
	/* the parser went: what it was reading is lost */
	void (*lost)(void *arg);
	void *arg;
};

struct fd_chan_stats {
	bool up;		/* connected now */
	uint64_t connects;	/* times connected */
	uint64_t lost;		/* times the socket was lost */
	uint64_t refused;	/* questions refused: the channel full */
	uint64_t bad_answers;	/* answers that were not (the socket dropped) */
};

struct fd_chan;

/* fd_chan_start - its thread started, connecting to path.  NULL, errno. */
struct fd_chan *fd_chan_start(const char *path, const struct fd_chan_io *io);
/*
 * fd_chan_stop - its thread stopped (no io call after it returns), the
 * socket closed: questions -ENOTCONN from now.  NULL: nothing.
 */
void fd_chan_stop(struct fd_chan *ch);
/* fd_chan_close - stopped, then freed: no thread may ask any more.  NULL: nothing. */
void fd_chan_close(struct fd_chan *ch);

/*
 * fd_chan_ask - one question, sent whole or not at all, never waiting:
 * 0, -EAGAIN (the channel full), -ENOTCONN (no parser), or another
 * negative errno.  Any thread.
 */
int fd_chan_ask(struct fd_chan *ch, const void *msg, size_t len);

void fd_chan_stats(struct fd_chan *ch, struct fd_chan_stats *st);
const char *fd_chan_path(const struct fd_chan *ch);

#endif
