/* SPDX-License-Identifier: BSD-3-Clause */
/* fd_dirwatch: see fd_dirwatch.h. */
#include "fd_dirwatch.h"

#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct slot {
	bool used;
	int wd;			/* its folder's watch, or -1 */
	uint32_t mask;		/* as added, IN_Q_OVERFLOW included */
	char name[256];		/* its name in the folder (NAME_MAX) */
};

struct fd_dirwatch {
	int fd;
	struct slot s[FD_DIRWATCH_MAX];
};

struct fd_dirwatch *
fd_dirwatch_open(void)
{
	struct fd_dirwatch *dw = calloc(1, sizeof(*dw));

	if (dw == NULL)
		return NULL;
	dw->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (dw->fd < 0) {
		int err = errno;

		free(dw);
		errno = err;
		return NULL;
	}
	for (unsigned int i = 0; i < FD_DIRWATCH_MAX; i++)
		dw->s[i].wd = -1;
	return dw;
}

void
fd_dirwatch_close(struct fd_dirwatch *dw)
{
	if (dw == NULL)
		return;
	close(dw->fd);
	free(dw);
}

int
fd_dirwatch_fd(const struct fd_dirwatch *dw)
{
	return dw->fd;
}

void
fd_dirwatch_remove(struct fd_dirwatch *dw, unsigned int slot)
{
	struct slot *s;
	bool shared = false;

	if (slot >= FD_DIRWATCH_MAX || !dw->s[slot].used)
		return;
	s = &dw->s[slot];
	for (unsigned int i = 0; i < FD_DIRWATCH_MAX && s->wd >= 0; i++)
		if (i != slot && dw->s[i].used && dw->s[i].wd == s->wd)
			shared = true;
	if (s->wd >= 0 && !shared)
		(void)inotify_rm_watch(dw->fd, s->wd);	/* a folder gone took it with it */
	*s = (struct slot){ .wd = -1 };
}

int
fd_dirwatch_add(struct fd_dirwatch *dw, unsigned int slot, const char *path, uint32_t mask)
{
	char copy[4096];
	struct slot *s;

	if (slot >= FD_DIRWATCH_MAX || path == NULL)
		return -EINVAL;
	fd_dirwatch_remove(dw, slot);
	s = &dw->s[slot];
	s->used = true;
	s->mask = mask;
	snprintf(copy, sizeof(copy), "%s", path);
	snprintf(s->name, sizeof(s->name), "%s", basename(copy));
	snprintf(copy, sizeof(copy), "%s", path);
	s->wd = inotify_add_watch(dw->fd, dirname(copy), mask & ~(uint32_t)IN_Q_OVERFLOW);
	return s->wd < 0 ? -errno : 0;
}

bool
fd_dirwatch_watched(const struct fd_dirwatch *dw, unsigned int slot)
{
	return slot < FD_DIRWATCH_MAX && dw->s[slot].used && dw->s[slot].wd >= 0;
}

/* One event: the slots it changes, in *changed; a gone watch's slots unwatched. */
static void
event(struct fd_dirwatch *dw, const struct inotify_event *ev, uint64_t *changed)
{
	for (unsigned int i = 0; i < FD_DIRWATCH_MAX; i++) {
		struct slot *s = &dw->s[i];

		if (!s->used)
			continue;
		if ((ev->mask & IN_Q_OVERFLOW) && (s->mask & IN_Q_OVERFLOW))
			*changed |= UINT64_C(1) << i;
		if (s->wd < 0 || ev->wd != s->wd)
			continue;
		if (ev->len && strcmp(ev->name, s->name) == 0)
			*changed |= UINT64_C(1) << i;
		if (ev->mask & IN_IGNORED)
			s->wd = -1;	/* the folder went: it may be added again when back */
	}
}

int
fd_dirwatch_read(struct fd_dirwatch *dw, uint64_t *changed)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));

	*changed = 0;
	for (int k = 0; k < FD_DIRWATCH_READS; k++) {
		ssize_t n = read(dw->fd, buf, sizeof(buf));

		if (n < 0)
			return errno == EAGAIN ? 0 : -errno;
		if (n == 0)
			return 0;
		for (char *p = buf; p + sizeof(struct inotify_event) <= buf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)p;

			event(dw, ev, changed);	/* whole: the kernel gives whole events */
			p += sizeof(*ev) + ev->len;
		}
	}
	return 0;
}
