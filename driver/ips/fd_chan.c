/* SPDX-License-Identifier: BSD-3-Clause */
/* fd_chan: see fd_chan.h. */
#include "fd_chan.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "fi_wire.h"

#define RETRY_MS 100		/* a connect tried again after */

struct fd_chan {
	struct fd_chan_io io;
	struct sockaddr_un addr;
	pthread_mutex_t mu;	/* fd and st, against the thread's close */
	int fd;			/* -1: not connected */
	int stopfd;		/* an eventfd: readable once stopping */
	pthread_t thread;
	struct fd_chan_stats st;
	bool said_down;		/* the outage said already */
	bool stopped;		/* its thread joined */
};

static int
try_connect(struct fd_chan *ch)
{
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	int sz = FD_CHAN_SNDBUF;

	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&ch->addr, sizeof(ch->addr)) != 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	/* the queue's bytes: past wmem_max with CAP_NET_ADMIN (flowcutd's) */
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &sz, sizeof(sz)) != 0)
		(void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	return fd;
}

/* Dropped: the socket closed (under the lock, so no ask writes to its number after), said, io.lost. */
static void
drop(struct fd_chan *ch, const char *why)
{
	pthread_mutex_lock(&ch->mu);
	close(ch->fd);
	ch->fd = -1;
	ch->st.up = false;
	ch->st.lost++;
	pthread_mutex_unlock(&ch->mu);
	fprintf(stderr, "flowcutd: inspector: %s: %s; the connections it was reading follow "
			"inspect_undecided, and new ones until it is back\n",
		ch->addr.sun_path, why);
	ch->said_down = true;
	ch->io.lost(ch->io.arg);
}

/* The answers waiting, taken at once (recvmmsg: one wake-up for a batch under a flood). */
#define BATCH 64

static void *
chan_main(void *arg)
{
	struct fd_chan *ch = arg;
	/* its own (13 KiB on its stack): two channels would not share it */
	uint8_t buf[BATCH][sizeof(struct fi_ans) + 1] __attribute__((aligned(8)));
	struct mmsghdr m[BATCH];
	struct iovec iv[BATCH];

	for (int i = 0; i < BATCH; i++) {
		iv[i] = (struct iovec){ .iov_base = buf[i], .iov_len = sizeof(buf[i]) };
		m[i] = (struct mmsghdr){ .msg_hdr = { .msg_iov = &iv[i], .msg_iovlen = 1 } };
	}
	for (;;) {
		struct pollfd p[2] = { { .fd = ch->stopfd, .events = POLLIN },
				       { .fd = ch->fd, .events = POLLIN } };
		int n;

		if (ch->fd < 0) {
			int fd = try_connect(ch);

			if (fd < 0) {
				if (!ch->said_down)
					fprintf(stderr, "flowcutd: inspector: %s: %s; TLS connections "
							"follow inspect_undecided until it answers\n",
						ch->addr.sun_path, strerror(-fd));
				ch->said_down = true;
				if (poll(p, 1, RETRY_MS) > 0)
					return NULL;	/* stopping */
				continue;
			}
			pthread_mutex_lock(&ch->mu);
			ch->fd = fd;
			ch->st.up = true;
			ch->st.connects++;
			pthread_mutex_unlock(&ch->mu);
			fprintf(stderr, "flowcutd: inspector: connected to %s\n", ch->addr.sun_path);
			ch->said_down = false;
			continue;
		}
		if (poll(p, 2, 1000) < 0 && errno != EINTR)
			return NULL;
		if (p[0].revents)
			return NULL;
		if (!p[1].revents)
			continue;
		n = recvmmsg(ch->fd, m, BATCH, MSG_DONTWAIT, NULL);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n <= 0 || m[0].msg_len == 0) {
			drop(ch, n < 0 ? strerror(errno) : "it went (its end closed)");
			continue;
		}
		for (int i = 0; i < n; i++) {
			if (m[i].msg_len == 0) {
				drop(ch, "it went (its end closed)");
				break;
			}
			if (ch->io.answer(ch->io.arg, buf[i], m[i].msg_len) != 0) {
				pthread_mutex_lock(&ch->mu);
				ch->st.bad_answers++;
				pthread_mutex_unlock(&ch->mu);
				drop(ch, "it sent what is not an answer");
				break;
			}
		}
	}
}

struct fd_chan *
fd_chan_start(const char *path, const struct fd_chan_io *io)
{
	struct fd_chan *ch;

	if (strlen(path) >= sizeof(ch->addr.sun_path)) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	ch = calloc(1, sizeof(*ch));
	if (ch == NULL)
		return NULL;
	ch->io = *io;
	ch->addr.sun_family = AF_UNIX;
	strcpy(ch->addr.sun_path, path);
	ch->fd = -1;
	ch->stopfd = eventfd(0, EFD_CLOEXEC);
	if (ch->stopfd < 0 || pthread_mutex_init(&ch->mu, NULL) != 0) {
		int e = errno;

		if (ch->stopfd >= 0)
			close(ch->stopfd);
		free(ch);
		errno = e;
		return NULL;
	}
	if ((errno = pthread_create(&ch->thread, NULL, chan_main, ch)) != 0) {
		int e = errno;

		close(ch->stopfd);
		pthread_mutex_destroy(&ch->mu);
		free(ch);
		errno = e;
		return NULL;
	}
	return ch;
}

void
fd_chan_stop(struct fd_chan *ch)
{
	uint64_t one = 1;

	if (ch == NULL || ch->stopped)
		return;
	if (write(ch->stopfd, &one, sizeof(one)) != sizeof(one))
		perror("flowcutd: inspector: its thread's stop");
	pthread_join(ch->thread, NULL);
	ch->stopped = true;
	pthread_mutex_lock(&ch->mu);
	if (ch->fd >= 0)
		close(ch->fd);
	ch->fd = -1;
	ch->st.up = false;
	pthread_mutex_unlock(&ch->mu);
}

void
fd_chan_close(struct fd_chan *ch)
{
	if (ch == NULL)
		return;
	fd_chan_stop(ch);
	close(ch->stopfd);
	pthread_mutex_destroy(&ch->mu);
	free(ch);
}

int
fd_chan_ask(struct fd_chan *ch, const void *msg, size_t len)
{
	int rc = 0;

	pthread_mutex_lock(&ch->mu);
	if (ch->fd < 0) {
		rc = -ENOTCONN;
	} else if (send(ch->fd, msg, len, MSG_DONTWAIT | MSG_NOSIGNAL) != (ssize_t)len) {
		rc = errno == EWOULDBLOCK ? -EAGAIN : -errno;
		ch->st.refused += rc == -EAGAIN;
	}
	pthread_mutex_unlock(&ch->mu);
	return rc;
}

void
fd_chan_stats(struct fd_chan *ch, struct fd_chan_stats *st)
{
	pthread_mutex_lock(&ch->mu);
	*st = ch->st;
	pthread_mutex_unlock(&ch->mu);
}

const char *
fd_chan_path(const struct fd_chan *ch)
{
	return ch->addr.sun_path;
}
