/* SPDX-License-Identifier: BSD-3-Clause */
/* lk: the region laid out, made (lk_create), attached, synced and closed; see lk.h. */
#include "lk.h"
#include "lk_priv.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- layout: fixed by LK_VERSION ---- */

static uint32_t
ring_bytes(uint32_t slots, uint32_t slot_size)
{
	uint32_t b = (uint32_t)sizeof(struct lk_shm_ring) + slots * slot_size;

	return (b + LK_PAGE - 1) / LK_PAGE * LK_PAGE;
}

/* Lays out every ring after the header and counters pages; returns the size. */
static uint32_t
layout(struct lk *lk, uint8_t *base)
{
	uint32_t off = 2 * LK_PAGE;

	for (int r = 0; r < R_MAX; r++) {
		uint32_t slots, slot_size;

		if (r < R_EVENTS) {
			slots = LK_CMD_SLOTS;
			slot_size = LK_CMD_SLOT;
		} else if (r == R_EVENTS) {
			slots = LK_EV_SLOTS;
			slot_size = LK_EV_SLOT;
		} else {
			slots = LK_FRAME_SLOTS;
			slot_size = LK_FRAME_SLOT;
		}
		if (lk != NULL) {
			lk->ring[r].shm = (struct lk_shm_ring *)(base + off);
			lk->ring[r].slots = slots;
			lk->ring[r].slot_size = slot_size;
		}
		off += ring_bytes(slots, slot_size);
	}
	return off;
}

/* ---- set-up ---- */

/* Why this thread's last lk_create or lk_attach failed (lk_error). */
static _Thread_local char why[512];

/* Says why (path, then what was wrong), sets errno to `err`; returns -err. */
__attribute__((format(printf, 3, 4))) static int
refuse(int err, const char *path, const char *fmt, ...)
{
	size_t n = (size_t)snprintf(why, sizeof(why), "%s: ", path);
	va_list ap;

	if (n < sizeof(why)) {
		va_start(ap, fmt);
		vsnprintf(why + n, sizeof(why) - n, fmt, ap);
		va_end(ap);
	}
	errno = err;
	return -err;
}

const char *
lk_error(void)
{
	return why;
}

static const char *
file_type(mode_t m)
{
	return S_ISLNK(m) ? "a symbolic link" : S_ISDIR(m) ? "a directory" :
	       S_ISFIFO(m) ? "a FIFO" : S_ISSOCK(m) ? "a socket" :
	       S_ISCHR(m) || S_ISBLK(m) ? "a device" : "not a regular file";
}

/*
 * The directory the region lives in: owned by this side's euid and
 * writable by nobody else, so nobody else can put a file, a link or a
 * symbolic link at the path, or take ours away.
 */
static int
dir_check(int dfd, const char *path, const char *dir)
{
	struct stat st;

	if (fstat(dfd, &st) != 0)
		return refuse(errno, path, "directory %s: %s", dir, strerror(errno));
	if (st.st_uid != geteuid())
		return refuse(EPERM, path, "directory %s is owned by uid %u, not %u", dir,
			      (unsigned int)st.st_uid, (unsigned int)geteuid());
	if (st.st_mode & S_IWOTH)
		return refuse(EPERM, path, "directory %s is writable by others (mode %04o)", dir,
			      (unsigned int)(st.st_mode & 07777));
	if (st.st_mode & S_IWGRP)
		return refuse(EPERM, path, "directory %s is writable by its group (mode %04o)",
			      dir, (unsigned int)(st.st_mode & 07777));
	return 0;
}

/*
 * What was opened: a regular file with one link (no second name somebody
 * else may reach it by), owned by this side's euid, no group or other bits
 * (nobody else can have it open or mapped for writing).
 */
static int
file_check(int fd, const char *path)
{
	struct stat st;

	if (fstat(fd, &st) != 0)
		return refuse(errno, path, "%s", strerror(errno));
	if (!S_ISREG(st.st_mode))
		return refuse(EPERM, path, "%s", file_type(st.st_mode));
	if (st.st_nlink != 1)
		return refuse(EPERM, path, "%ju links, not 1 (another name reaches it)",
			      (uintmax_t)st.st_nlink);
	if (st.st_uid != geteuid())
		return refuse(EPERM, path, "owned by uid %u, not %u", (unsigned int)st.st_uid,
			      (unsigned int)geteuid());
	if (st.st_mode & 077)
		return refuse(EPERM, path, "mode %04o, group or other may access it",
			      (unsigned int)(st.st_mode & 07777));
	return 0;
}

/*
 * Opens the region file `name` in the directory `dfd` (checked).  The
 * coprocessor creates it (O_EXCL) when there is none.  An existing entry
 * is looked at before it is opened (a FIFO or a device is never opened),
 * opened O_NOFOLLOW (a symbolic link put there meanwhile fails), and
 * checked again by what was opened.
 */
static int
file_open(int dfd, const char *path, const char *name, bool create)
{
	const int flags = O_RDWR | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC;

	for (int tries = 0; tries < 2; tries++) {
		struct stat st;
		int fd;

		if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
			if (errno != ENOENT)
				return refuse(errno, path, "%s", strerror(errno));
			if (!create)
				return refuse(ENOENT, path, "no such file (is flowcut-npu running?)");
			fd = openat(dfd, name, flags | O_CREAT | O_EXCL, 0600);
			if (fd >= 0)
				return fd;
			if (errno == EEXIST)
				continue;	/* made meanwhile: look at it */
			return refuse(errno, path, "cannot create: %s", strerror(errno));
		}
		if (!S_ISREG(st.st_mode))
			return refuse(EPERM, path, "%s", file_type(st.st_mode));
		fd = openat(dfd, name, flags);
		if (fd < 0) {
			if (errno == ENOENT)
				continue;	/* gone meanwhile */
			return refuse(errno == ELOOP ? EPERM : errno, path, "%s",
				      errno == ELOOP ? "a symbolic link" : strerror(errno));
		}
		return fd;
	}
	return refuse(EAGAIN, path, "kept changing while it was opened");
}

static struct lk *
lk_map(const char *path, bool create)
{
	struct lk *lk = calloc(1, sizeof(*lk));
	uint32_t size = layout(NULL, NULL);
	char dir[PATH_MAX];
	const char *name, *slash = strrchr(path, '/');
	struct stat st;
	void *base;
	int dfd = -1, fd = -1, err;

	why[0] = '\0';
	if (lk == NULL) {
		refuse(errno, path, "%s", strerror(errno));
		return NULL;
	}
	lk->fd = -1;
	name = slash ? slash + 1 : path;
	if (slash == NULL || slash == path)
		strcpy(dir, slash ? "/" : ".");
	else if ((size_t)(slash - path) < sizeof(dir))
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	else
		name = "";
	if (*name == '\0' || strcmp(name, ".") == 0 || strcmp(name, "..") == 0) {
		refuse(EINVAL, path, "not a file's path");
		goto fail;
	}
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 && errno == ENOENT && create && mkdir(dir, 0700) == 0)
		dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		refuse(errno, path, "directory %s: %s", dir, strerror(errno));
		goto fail;
	}
	if (dir_check(dfd, path, dir) != 0)
		goto fail;
	fd = file_open(dfd, path, name, create);
	if (fd < 0 || file_check(fd, path) != 0)
		goto fail;
	/*
	 * The coprocessor holds the region locked for its life (the kernel lets
	 * go when it dies, however it dies): a second one started on the same
	 * path while the first still runs is refused, never laid over it.  A
	 * region no coprocessor holds is taken over in place: a host attached
	 * to it sees the new boot.
	 */
	if (create && flock(fd, LOCK_EX | LOCK_NB) != 0) {
		refuse(errno == EWOULDBLOCK ? EBUSY : errno, path, "%s",
		       errno == EWOULDBLOCK ? "held by a running coprocessor" : strerror(errno));
		goto fail;
	}
	if (create && ftruncate(fd, size) != 0) {
		refuse(errno, path, "cannot size to %u bytes: %s", size, strerror(errno));
		goto fail;
	}
	if (fstat(fd, &st) != 0) {
		refuse(errno, path, "fstat: %s", strerror(errno));
		goto fail;
	}
	if ((uint64_t)st.st_size != size) {
		refuse(EPROTO, path, "%ju bytes, not a link of version %u (%u bytes)",
		       (uintmax_t)st.st_size, LK_VERSION, size);
		goto fail;
	}
	base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED) {
		refuse(errno, path, "mmap: %s", strerror(errno));
		goto fail;
	}
	close(dfd);
	lk->fd = fd;	/* the locks live as long as this descriptor */
	lk->base = base;
	lk->size = size;
	lk->hdr = base;
	lk->cnt = (struct lk_shm_counters *)(lk->base + LK_PAGE);
	layout(lk, lk->base);
	return lk;
fail:
	err = errno;
	if (fd >= 0)
		close(fd);
	if (dfd >= 0)
		close(dfd);
	free(lk);
	errno = err;
	return NULL;
}

struct lk *
lk_create(const char *path)
{
	struct lk *lk = lk_map(path, true);
	struct lk_event boot = { .type = LK_EV_BOOT };
	uint64_t id = 0;

	if (lk == NULL)
		return NULL;
	lk->client = -1;
	/* not ready while laid out: an attached host sees the state drop */
	__atomic_store_n(&lk->hdr->state, 0, __ATOMIC_RELEASE);
	/* attached clients keep their slots (their locks are not in the region) */
	memset(lk->base + sizeof(uint64_t), 0, lk->size - sizeof(uint64_t));
	while (id == 0)
		if (getrandom(&id, sizeof(id), 0) != sizeof(id))
			id = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	lk->boot_id = id;
	lk->hdr->version = LK_VERSION;
	lk->hdr->size = lk->size;
	lk->hdr->boot_id = id;
	lk->hdr->npu_pid = (uint32_t)getpid();
	{
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);	/* the clock the counters window's `when` is of */
		lk->hdr->boot_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	}
	__atomic_store_n(&lk->hdr->magic, LK_MAGIC, __ATOMIC_RELEASE);
	__atomic_store_n(&lk->hdr->state, LK_READY, __ATOMIC_RELEASE);
	boot.boot_id = id;
	lk_event_put(lk, &boot);
	lk_event_kick(lk);
	return lk;
}

/* Checks the header; takes the boot id. */
static int
hdr_check(struct lk *lk)
{
	struct lk_shm_hdr *h = lk->hdr;

	if (__atomic_load_n(&h->state, __ATOMIC_ACQUIRE) != LK_READY ||
	    __atomic_load_n(&h->magic, __ATOMIC_ACQUIRE) != LK_MAGIC ||
	    h->version != LK_VERSION || h->size != lk->size)
		return -EPROTO;
	return 0;
}

/*
 * A ring we produce continues from the region's producer index; a ring we
 * consume skips what is in it (an earlier holder's, or a previous boot's).
 */
static void
ring_sync(struct lk *lk, int r, bool produce)
{
	struct lk_shm_ring *shm = lk->ring[r].shm;

	if (produce) {
		lk->ring[r].mine = __atomic_load_n(&shm->prod, __ATOMIC_ACQUIRE);
	} else {
		lk->ring[r].mine = __atomic_load_n(&shm->prod, __ATOMIC_ACQUIRE);
		__atomic_store_n(&shm->cons, lk->ring[r].mine, __ATOMIC_RELEASE);
	}
}

/* The command, answer and event rings (the control thread's). */
static int
lk_sync(struct lk *lk)
{
	int rc = hdr_check(lk);

	if (rc != 0)
		return rc;
	lk->boot_id = __atomic_load_n(&lk->hdr->boot_id, __ATOMIC_ACQUIRE);
	ring_sync(lk, R_CMD + lk->client, true);
	ring_sync(lk, R_ANS + lk->client, false);
	/* events since the boot are kept: a BOOT event is the first of them */
	lk->ring[R_EVENTS].mine = __atomic_load_n(&lk->ring[R_EVENTS].shm->cons,
						  __ATOMIC_ACQUIRE);
	lk->events_lost_seen = __atomic_load_n(&lk->hdr->events_lost, __ATOMIC_ACQUIRE);
	return 0;
}

/*
 * A client slot is held by a lock on its byte of the region file (an open
 * file description's lock, F_OFD_SETLK): the kernel lets go of it when the
 * holder closes the file or dies, however it dies, and nothing in it names
 * a process, so a pid used again, or a process in another pid namespace,
 * cannot make a free slot look held or a held one free.  Locks of this kind
 * and the coprocessor's flock do not meet.
 */
static bool
slot_claim(int fd, int client)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = client,
			    .l_len = 1 };

	return fcntl(fd, F_OFD_SETLK, &fl) == 0;
}

struct lk *
lk_attach(const char *path, int client)
{
	struct lk *lk;
	int rc;

	if (client >= LK_CLIENTS) {
		refuse(EINVAL, path, "client slot %d: there are %d (0 to %d)", client, LK_CLIENTS,
		       LK_CLIENTS - 1);
		return NULL;
	}
	lk = lk_map(path, false);
	if (lk == NULL)
		return NULL;
	lk->client = -1;
	/* slot 0 is the driver's: a tool that takes any slot never takes it */
	for (int c = client < 0 ? 1 : client; c < (client < 0 ? LK_CLIENTS : client + 1); c++)
		if (slot_claim(lk->fd, c)) {
			lk->client = c;
			break;
		}
	if (lk->client < 0) {
		if (client < 0)
			refuse(EBUSY, path, "every client slot (1 to %d) is held", LK_CLIENTS - 1);
		else
			refuse(EBUSY, path, "client slot %d is held by another process", client);
		lk_close(lk);
		errno = EBUSY;
		return NULL;
	}
	rc = lk_sync(lk);
	if (rc != 0) {
		refuse(-rc, path, "not a ready link of version %u (magic, state or size)",
		       LK_VERSION);
		lk_close(lk);
		errno = -rc;
		return NULL;
	}
	lk->ring[R_UP].mine = __atomic_load_n(&lk->ring[R_UP].shm->cons, __ATOMIC_ACQUIRE);
	ring_sync(lk, R_DOWN, true);
	getrandom(&lk->tag, sizeof(lk->tag), 0);
	return lk;
}

void
lk_close(struct lk *lk)
{
	if (lk == NULL)
		return;
	munmap(lk->base, lk->size);
	close(lk->fd);	/* a client's slot and the coprocessor's lock go with it */
	free(lk);
}

int
lk_client(const struct lk *lk)
{
	return lk->client;
}

uint64_t
lk_boot_id(const struct lk *lk)
{
	return __atomic_load_n(&lk->hdr->boot_id, __ATOMIC_ACQUIRE);
}

uint64_t
lk_boot_ns(const struct lk *lk)
{
	return __atomic_load_n(&lk->hdr->boot_ns, __ATOMIC_ACQUIRE);
}

uint32_t
lk_npu_pid(const struct lk *lk)
{
	return __atomic_load_n(&lk->hdr->npu_pid, __ATOMIC_ACQUIRE);
}

int
lk_resync(struct lk *lk)
{
	return lk_sync(lk);
}

int
lk_frame_up_resync(struct lk *lk)
{
	int rc = hdr_check(lk);

	if (rc == 0)
		ring_sync(lk, R_UP, false);
	return rc;
}

int
lk_frame_down_resync(struct lk *lk)
{
	int rc = hdr_check(lk);

	if (rc == 0)
		ring_sync(lk, R_DOWN, true);
	return rc;
}

void
lk_stats(const struct lk *lk, struct lk_stats *out)
{
	const uint64_t *in = (const uint64_t *)&lk->stats;
	uint64_t *o = (uint64_t *)out;

	for (size_t i = 0; i < sizeof(*out) / sizeof(uint64_t); i++)
		o[i] = __atomic_load_n(&in[i], __ATOMIC_RELAXED);
}

void *
lk_region(struct lk *lk, uint32_t *size)
{
	*size = lk->size;
	return lk->base;
}
