/* SPDX-License-Identifier: BSD-3-Clause */
/* fd_relay: see fd_relay.h. */
#include "fd_relay.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "fd_clock.h"

#define FD_RELAY_BATCH 64	/* frames from one TAP before the next one's turn */
#define FD_RELAY_IDLE_MS 1000	/* the longest sleep: fd_relay_stop wakes both threads */

struct fd_relay {
	struct lk *lk;
	int taps[FC_MAX_PORTS];
	unsigned int nports;
	int epfd;
	int stopfd;		/* an eventfd in epfd: readable once fd_relay_stop is called */
	int stop;
	pthread_t up, down;
	struct fd_relay_hook hook;	/* frame NULL: none */
	struct fd_relay_stats st;
};

/* Counted from the relay's threads and the inspector's answers' (fd_relay_to_host). */
static void
add(uint64_t *c, uint64_t n)
{
	__atomic_fetch_add(c, n, __ATOMIC_RELAXED);
}

void
fd_relay_to_host(struct fd_relay *r, uint16_t port, const void *buf, uint32_t len)
{
	if (port >= r->nports)
		add(&r->st.up_bad_port, 1);
	else if (write(r->taps[port], buf, len) == (ssize_t)len)
		add(&r->st.to_host[port], 1);
	else
		add(&r->st.up_tap_full, 1);
}

static void *
up_main(void *arg)
{
	struct fd_relay *r = arg;
	uint64_t boot = lk_boot_id(r->lk), ticked = 0;
	uint8_t buf[LK_FRAME_SLOT];

	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		uint16_t port, flags;
		int n;

		uint32_t every = r->hook.tick == NULL ? FD_RELAY_IDLE_MS
				 : r->hook.tick_ms != NULL ? r->hook.tick_ms(r->hook.arg) : 20;

		if (every > FD_RELAY_IDLE_MS)
			every = FD_RELAY_IDLE_MS;
		if (r->hook.tick != NULL && fd_clock_coarse_ms() - ticked >= every) {
			ticked = fd_clock_coarse_ms();
			r->hook.tick(r->hook.arg, r);
		}
		/* a new boot: take the ring as it is laid out now (again, until ready) */
		if (lk_boot_id(r->lk) != boot && lk_frame_up_resync(r->lk) == 0)
			boot = lk_boot_id(r->lk);
		n = lk_frame_up_take(r->lk, &port, &flags, buf, sizeof(buf));
		if (n == -EAGAIN) {
			lk_frame_up_wait(r->lk, (int)every);
			continue;
		}
		if (n < 0)
			continue;	/* counted by the link */
		if (r->hook.frame != NULL &&
		    r->hook.frame(r->hook.arg, r, port, flags, buf, (uint32_t)n))
			continue;	/* the hook's */
		if ((flags & LK_FRAME_INSPECT) && r->hook.frame == NULL)
			add(&r->st.inspect_dropped, 1);
		else
			fd_relay_to_host(r, port, buf, (uint32_t)n);
	}
	return NULL;
}

static void *
down_main(void *arg)
{
	struct fd_relay *r = arg;
	uint64_t boot = lk_boot_id(r->lk);
	uint8_t buf[LK_FRAME_SLOT];

	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		struct epoll_event ev[FC_MAX_PORTS];
		/* a frame, or the stop: a new boot is looked for before any frame is put */
		int n = epoll_wait(r->epfd, ev, FC_MAX_PORTS, FD_RELAY_IDLE_MS);

		if (lk_boot_id(r->lk) != boot && lk_frame_down_resync(r->lk) == 0)
			boot = lk_boot_id(r->lk);
		for (int i = 0; i < n; i++) {
			unsigned int port = ev[i].data.u32;
			ssize_t len = 0;

			if (port == FC_MAX_PORTS)
				continue;	/* the stop */
			/*
			 * A bounded batch from each TAP in turn, so one busy port
			 * does not starve the others; what is left (level-triggered)
			 * is reported again at once.
			 */
			for (int k = 0; k < FD_RELAY_BATCH &&
			     (len = read(r->taps[port], buf, sizeof(buf))) > 0; k++) {
				if (lk_frame_down_put(r->lk, (uint16_t)port, buf, (uint32_t)len) == 0)
					add(&r->st.from_host[port], 1);
				else
					add(&r->st.down_ring_full, 1);
			}
		}
	}
	return NULL;
}

struct fd_relay *
fd_relay_start(struct lk *lk, const int *taps, unsigned int nports,
	       const struct fd_relay_hook *hook)
{
	struct fd_relay *r;
	int err;

	if (nports == 0 || nports > FC_MAX_PORTS) {
		errno = EINVAL;
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (r == NULL)
		return NULL;
	r->lk = lk;
	r->nports = nports;
	if (hook != NULL)
		r->hook = *hook;
	memcpy(r->taps, taps, nports * sizeof(int));
	r->stopfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	r->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (r->epfd < 0 || r->stopfd < 0 ||
	    epoll_ctl(r->epfd, EPOLL_CTL_ADD, r->stopfd,
		      &(struct epoll_event){ .events = EPOLLIN, .data.u32 = FC_MAX_PORTS }) != 0)
		goto fail;
	for (unsigned int p = 0; p < nports; p++) {
		struct epoll_event ev = { .events = EPOLLIN, .data.u32 = p };

		if (epoll_ctl(r->epfd, EPOLL_CTL_ADD, taps[p], &ev) != 0)
			goto fail;
	}
	err = pthread_create(&r->up, NULL, up_main, r);
	if (err == 0) {
		err = pthread_create(&r->down, NULL, down_main, r);
		if (err != 0) {
			__atomic_store_n(&r->stop, 1, __ATOMIC_RELEASE);
			lk_frame_up_kick(r->lk);
			pthread_join(r->up, NULL);
		}
	}
	if (err != 0) {
		errno = err;
		goto fail;
	}
	return r;
fail:
	err = errno;
	if (r->epfd >= 0)
		close(r->epfd);
	if (r->stopfd >= 0)
		close(r->stopfd);
	free(r);
	errno = err;
	return NULL;
}

void
fd_relay_stop(struct fd_relay *r)
{
	if (r == NULL)
		return;
	__atomic_store_n(&r->stop, 1, __ATOMIC_RELEASE);
	lk_frame_up_kick(r->lk);	/* the up thread's bell: a count it reads again, no frame */
	(void)!write(r->stopfd, &(uint64_t){ 1 }, sizeof(uint64_t));
	pthread_join(r->up, NULL);
	pthread_join(r->down, NULL);
	close(r->epfd);
	close(r->stopfd);
	free(r);
}

void
fd_relay_stats(const struct fd_relay *r, struct fd_relay_stats *out)
{
	const uint64_t *in = (const uint64_t *)&r->st;
	uint64_t *o = (uint64_t *)out;

	for (size_t i = 0; i < sizeof(*out) / sizeof(uint64_t); i++)
		o[i] = __atomic_load_n(&in[i], __ATOMIC_RELAXED);
}
