/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_bell: the coprocessor's doorbells as a descriptor for flowcutd's
 * epoll, so its loop sleeps until there is work, rather than looking at
 * the link every few milliseconds.
 *
 * The coprocessor rings a futex in the link when it posts events or
 * answers (link/lk.h); flowcutd's loop sleeps in epoll_wait on its
 * sockets.  A futex cannot be polled, so a thread of this module sleeps on
 * the bells (lk_host_wait: one futex_waitv on both) and makes an eventfd
 * readable when something is there.  It then waits for the loop to arm it
 * again (fd_bell_arm, just before the loop sleeps), so a ring the loop has
 * not emptied yet does not make it spin.  Other threads of flowcutd with
 * news for the loop (the inspector's decisions) ring it too (fd_bell_ring).
 *
 * Measured (docs/measurements.md): flowcutd idle woke 196 times a second
 * on its 5 ms look at the event ring; with this, about 10 (its own 100 ms
 * wait, for the lease and the timers) plus its relay threads'.
 *
 * Threads: fd_bell_arm, fd_bell_clear and fd_bell_close are the loop's;
 * fd_bell_ring is any thread's.  Hand-written: no library turns a futex in
 * shared memory into a descriptor (a pidfd or an eventfd crosses only by
 * SCM_RIGHTS, which the link, a file in /run, has no socket for).
 */
#ifndef FLOWCUT_FD_BELL_H
#define FLOWCUT_FD_BELL_H

#include <lk.h>

struct fd_bell;

/* fd_bell_open - the thread started, armed.  NULL and errno. */
struct fd_bell *fd_bell_open(struct lk *lk);
/* fd_bell_fd - readable when the coprocessor's events or answers may wait, or when rung. */
int fd_bell_fd(const struct fd_bell *b);
/* fd_bell_clear - the loop saw fd_bell_fd readable: read it empty. */
void fd_bell_clear(struct fd_bell *b);
/*
 * fd_bell_arm - the loop is about to sleep: watch the rings again.  If
 * they hold something already, the descriptor turns readable at once.
 */
void fd_bell_arm(struct fd_bell *b);
/* fd_bell_ring - wake the loop (any thread). */
void fd_bell_ring(struct fd_bell *b);
/* fd_bell_close - the thread stopped and joined, everything freed.  NULL: nothing. */
void fd_bell_close(struct fd_bell *b);

#endif /* FLOWCUT_FD_BELL_H */
