/* SPDX-License-Identifier: BSD-3-Clause */
/* fd_bell: see fd_bell.h. */
#include "fd_bell.h"

#include <errno.h>
#include <linux/futex.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define FD_BELL_WAIT_MS 500	/* the thread looks at `stop` at least this often */

struct fd_bell {
	struct lk *lk;
	int efd;
	uint32_t armed;		/* a futex: 1 while the thread may signal (the loop's to set) */
	uint32_t stop;
	pthread_t thread;
};

static void
signal_loop(struct fd_bell *b)
{
	uint64_t one = 1;

	/* EAGAIN only at a count near 2^64: readable already */
	(void)!write(b->efd, &one, sizeof(one));
}

static void *
bell_main(void *arg)
{
	struct fd_bell *b = arg;
	const struct timespec ts = { .tv_nsec = FD_BELL_WAIT_MS * 1000000L };

	while (!__atomic_load_n(&b->stop, __ATOMIC_ACQUIRE)) {
		if (!__atomic_load_n(&b->armed, __ATOMIC_ACQUIRE)) {
			/* the loop has not slept since the last signal: nothing to tell it */
			syscall(SYS_futex, &b->armed, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0);
			continue;
		}
		if (lk_host_wait(b->lk, FD_BELL_WAIT_MS)) {
			/* disarmed first: an arm in between leaves one spare turn, never a stall */
			__atomic_store_n(&b->armed, 0, __ATOMIC_RELEASE);
			signal_loop(b);
		}
	}
	return NULL;
}

struct fd_bell *
fd_bell_open(struct lk *lk)
{
	struct fd_bell *b = calloc(1, sizeof(*b));
	int err;

	if (b == NULL)
		return NULL;
	b->lk = lk;
	b->armed = 1;
	b->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (b->efd < 0) {
		err = errno;
		free(b);
		errno = err;
		return NULL;
	}
	err = pthread_create(&b->thread, NULL, bell_main, b);
	if (err != 0) {
		close(b->efd);
		free(b);
		errno = err;
		return NULL;
	}
	return b;
}

int
fd_bell_fd(const struct fd_bell *b)
{
	return b->efd;
}

void
fd_bell_clear(struct fd_bell *b)
{
	uint64_t n;

	(void)!read(b->efd, &n, sizeof(n));	/* EAGAIN: already empty */
}

void
fd_bell_arm(struct fd_bell *b)
{
	if (__atomic_exchange_n(&b->armed, 1, __ATOMIC_ACQ_REL) == 0)
		syscall(SYS_futex, &b->armed, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

void
fd_bell_ring(struct fd_bell *b)
{
	signal_loop(b);
}

void
fd_bell_close(struct fd_bell *b)
{
	if (b == NULL)
		return;
	__atomic_store_n(&b->stop, 1, __ATOMIC_RELEASE);
	fd_bell_arm(b);		/* a thread waiting to be armed wakes */
	lk_host_wake(b->lk);	/* and one on the link */
	pthread_join(b->thread, NULL);
	close(b->efd);
	free(b);
}
