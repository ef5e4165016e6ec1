/* SPDX-License-Identifier: BSD-3-Clause */
/* lk: see lk.h for the contract. */
#include "lk.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
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
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define LK_MAGIC 0x31545543574f4c46ull	/* "FLOWCUT1" */
#define LK_VERSION 6	/* 4: the wire's figures in the counters page; 5: BUSY_NS among them; 6: 256 command slots */
#define LK_PAGE 4096u
#define LK_READY 1u
#define LK_COUNTER_TRIES 64
#define LK_CALL_POLLS 2000	/* looks for an answer this often (~20 us) before sleeping */

/* A doorbell: the sleeper waits on seq; the ringer wakes it only if it sleeps. */
struct lk_bell {
	uint32_t seq;
	uint32_t waiters;
};

/* The header page. */
struct lk_shm_hdr {
	uint64_t magic;
	uint32_t version;
	uint32_t size;
	uint64_t boot_id;
	uint32_t state;
	uint32_t npu_pid;
	struct lk_bell bell_npu;
	struct lk_bell bell_client[LK_CLIENTS];
	struct lk_bell bell_events;
	struct lk_bell bell_frames_up;
	uint32_t events_lost;	/* the coprocessor's: events it could not post */
	uint32_t pad;
	uint64_t boot_ns;	/* the coprocessor's CLOCK_MONOTONIC when it laid the region out */
};
_Static_assert(sizeof(struct lk_shm_hdr) <= LK_PAGE, "header fits its page");

/* The counters page: a seqlock over the values. */
struct lk_shm_counters {
	uint32_t seq;
	uint32_t pad;
	uint64_t when;
	uint64_t value[FC_CNT_MAX];
	/* the wire's figures: a seqlock of their own (published apart, as read) */
	uint32_t wire_seq;
	uint32_t wire_ports;	/* how many ports are filled in, <= FC_WIRE_PORTS */
	uint64_t wire[FC_WIRE_PORTS][FC_WIRE_MAX];
};
_Static_assert(sizeof(struct lk_shm_counters) <= LK_PAGE, "counters fit their page");

/* A ring's indices, each on its own line; the slots follow. */
struct lk_shm_ring {
	uint32_t prod;
	uint8_t pad0[60];
	uint32_t cons;
	uint8_t pad1[60];
	uint8_t slot[];
};

/* A slot: | len (32) | tag (16) | flags (16) | data (len bytes) | */
struct lk_slot {
	uint32_t len;
	uint16_t tag;
	uint16_t flags;
	uint8_t data[];
};

/* This side's private view of one ring: geometry and its own index. */
struct ring {
	struct lk_shm_ring *shm;
	uint32_t slots;		/* a power of two */
	uint32_t slot_size;
	uint32_t mine;		/* prod if we produce, cons if we consume */
};

enum { R_CMD, R_ANS = R_CMD + LK_CLIENTS, R_EVENTS = R_ANS + LK_CLIENTS, R_UP, R_DOWN, R_MAX };

struct lk {
	uint8_t *base;
	uint32_t size;
	int client;		/* -1: the coprocessor */
	uint64_t boot_id;
	uint32_t tag;
	struct lk_shm_hdr *hdr;
	struct lk_shm_counters *cnt;
	struct ring ring[R_MAX];
	struct lk_stats stats;
	int fd;			/* the region: holds the coprocessor's flock, a client's slot lock */
	uint32_t events_lost_seen;	/* the host's: events_lost when last looked */
	bool (*npu_busy)(void *);	/* lk_npu_wait's caller's work, while it waits */
	void *npu_busy_arg;
};

/* The stats are bumped by whichever thread met the trouble. */
static inline void
stat_inc(uint64_t *c)
{
	__atomic_fetch_add(c, 1, __ATOMIC_RELAXED);
}

static inline void
cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ volatile("yield");
#endif
}

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

/* ---- doorbells ---- */

static void
bell_ring(struct lk_bell *b)
{
	__atomic_fetch_add(&b->seq, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&b->waiters, __ATOMIC_SEQ_CST) != 0)
		syscall(SYS_futex, &b->seq, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

/*
 * A sleeper counts itself in b->waiters for the ringer's sake, and takes
 * itself out after.  A coprocessor that lays the region out again
 * meanwhile (lk_create in place: the header zeroed, a new boot id) has
 * zeroed that count with the rest: taking ourselves out of the new one
 * then would leave it one short for good - a sleeper the ringer thinks is
 * not there, woken only by its timeout (the host's relay and doorbell
 * threads, after every coprocessor restart).  So the count is left alone
 * when the boot id moved while we slept; at worst (our count made in the
 * new header) it stays one high, which costs the ringer a needless wake.
 */
static uint64_t
bell_enter(struct lk *lk, struct lk_bell *b)
{
	uint64_t boot = __atomic_load_n(&lk->hdr->boot_id, __ATOMIC_SEQ_CST);

	__atomic_fetch_add(&b->waiters, 1, __ATOMIC_SEQ_CST);
	return boot;
}

static void
bell_leave(struct lk *lk, struct lk_bell *b, uint64_t boot)
{
	if (__atomic_load_n(&lk->hdr->boot_id, __ATOMIC_SEQ_CST) == boot)
		__atomic_fetch_sub(&b->waiters, 1, __ATOMIC_SEQ_CST);
}

/* Sleeps until rung or timeout; `idle` says (again) whether to sleep at all. */
static void
bell_wait(struct lk_bell *b, int timeout_ms, bool (*idle)(struct lk *, int), struct lk *lk,
	  int arg)
{
	struct timespec ts = { .tv_sec = timeout_ms / 1000,
			       .tv_nsec = (long)(timeout_ms % 1000) * 1000000L };
	uint64_t boot = bell_enter(lk, b);
	uint32_t v;

	v = __atomic_load_n(&b->seq, __ATOMIC_SEQ_CST);
	if (idle(lk, arg))
		syscall(SYS_futex, &b->seq, FUTEX_WAIT, v, &ts, NULL, 0);
	bell_leave(lk, b, boot);
}

/* ---- rings ---- */

static inline struct lk_slot *
slot_at(const struct ring *r, uint32_t idx)
{
	return (struct lk_slot *)(r->shm->slot + (size_t)(idx & (r->slots - 1)) * r->slot_size);
}

/* Producer: room for one more?  A garbage consumer index counts as full. */
static int
ring_room(struct lk *lk, struct ring *r)
{
	uint32_t cons = __atomic_load_n(&r->shm->cons, __ATOMIC_ACQUIRE);
	uint32_t used = r->mine - cons;

	if (used > r->slots) {
		stat_inc(&lk->stats.bad_index);
		return -ENOBUFS;
	}
	if (used == r->slots) {
		stat_inc(&lk->stats.ring_full);
		return -ENOBUFS;
	}
	return 0;
}

static int
ring_put(struct lk *lk, struct ring *r, uint16_t tag, uint16_t flags, const void *a,
	 uint32_t alen, const void *b, uint32_t blen)
{
	struct lk_slot *s;
	int rc;

	if (alen + blen > r->slot_size - sizeof(struct lk_slot))
		return -EMSGSIZE;
	rc = ring_room(lk, r);
	if (rc != 0)
		return rc;
	s = slot_at(r, r->mine);
	s->len = alen + blen;
	s->tag = tag;
	s->flags = flags;
	memcpy(s->data, a, alen);
	if (blen)
		memcpy(s->data + alen, b, blen);
	r->mine++;
	__atomic_store_n(&r->shm->prod, r->mine, __ATOMIC_RELEASE);
	return 0;
}

/* Consumer: entries waiting; a garbage producer index empties the ring. */
static uint32_t
ring_avail(struct lk *lk, struct ring *r)
{
	uint32_t prod = __atomic_load_n(&r->shm->prod, __ATOMIC_ACQUIRE);
	uint32_t n = prod - r->mine;

	if (n > r->slots) {
		stat_inc(&lk->stats.bad_index);
		r->mine = prod;		/* nothing in it can be trusted */
		__atomic_store_n(&r->shm->cons, r->mine, __ATOMIC_RELEASE);
		return 0;
	}
	return n;
}

/*
 * Copies the next slot out (the peer may rewrite it meanwhile: we check
 * our copy, never the region).  Returns the length, -EAGAIN, -EBADMSG (a
 * bad length: consumed and counted) or -EMSGSIZE (larger than cap:
 * consumed).
 */
static int
ring_take(struct lk *lk, struct ring *r, uint16_t *tag, uint16_t *flags, void *buf,
	  uint32_t cap)
{
	struct lk_slot *s;
	uint32_t len;
	int rc;

	if (ring_avail(lk, r) == 0)
		return -EAGAIN;
	s = slot_at(r, r->mine);
	len = __atomic_load_n(&s->len, __ATOMIC_RELAXED);
	if (tag)
		*tag = s->tag;
	if (flags)
		*flags = s->flags;
	if (len > r->slot_size - sizeof(struct lk_slot)) {
		stat_inc(&lk->stats.bad_length);
		rc = -EBADMSG;
	} else if (len > cap) {
		rc = -EMSGSIZE;
	} else {
		memcpy(buf, s->data, len);
		rc = (int)len;
	}
	r->mine++;
	__atomic_store_n(&r->shm->cons, r->mine, __ATOMIC_RELEASE);
	return rc;
}

static bool
ring_empty(struct lk *lk, int r)
{
	uint32_t prod = __atomic_load_n(&lk->ring[r].shm->prod, __ATOMIC_ACQUIRE);

	return prod == lk->ring[r].mine;
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

/* A host call is refused while the region carries another boot. */
static int
host_check(struct lk *lk)
{
	if (__atomic_load_n(&lk->hdr->boot_id, __ATOMIC_ACQUIRE) != lk->boot_id ||
	    __atomic_load_n(&lk->hdr->state, __ATOMIC_ACQUIRE) != LK_READY)
		return -ECONNRESET;
	return 0;
}

/* ---- commands ---- */

int
lk_cmd_post(struct lk *lk, uint16_t op, uint32_t tag, const void *payload, uint16_t len)
{
	struct fc_cmd_hdr h = { .op = op, .len = len, .tag = tag };
	int rc = host_check(lk);

	if (rc != 0)
		return rc;
	if (len > FC_CMD_MAX_PAYLOAD)
		return -EMSGSIZE;
	return ring_put(lk, &lk->ring[R_CMD + lk->client], 0, 0, &h, sizeof(h), payload, len);
}

void
lk_cmd_kick(struct lk *lk)
{
	bell_ring(&lk->hdr->bell_npu);
}

int
lk_ans_take(struct lk *lk, struct fc_ans_hdr *hdr, void *payload, uint16_t cap)
{
	uint8_t buf[LK_CMD_SLOT];
	int n, rc = host_check(lk);

	if (rc != 0)
		return rc;
	/* at most a ring's worth of bad slots per call: a peer cannot keep us here */
	for (uint32_t i = 0; i < LK_CMD_SLOTS; i++) {
		n = ring_take(lk, &lk->ring[R_ANS + lk->client], NULL, NULL, buf, sizeof(buf));
		if (n == -EBADMSG)
			continue;	/* counted; look at the next */
		if (n < 0)
			return n;
		memcpy(hdr, buf, n < (int)sizeof(*hdr) ? (size_t)n : sizeof(*hdr));
		if ((size_t)n < sizeof(*hdr) || hdr->len != (uint32_t)n - sizeof(*hdr) ||
		    hdr->len > FC_CMD_MAX_PAYLOAD) {
			stat_inc(&lk->stats.bad_message);
			continue;
		}
		if (hdr->len > cap)
			return -EMSGSIZE;
		memcpy(payload, buf + sizeof(*hdr), hdr->len);
		return 0;
	}
	return -EAGAIN;
}

static bool
ans_idle(struct lk *lk, int client)
{
	return ring_empty(lk, R_ANS + client) && host_check(lk) == 0;
}

void
lk_ans_wait(struct lk *lk, int timeout_ms)
{
	bell_wait(&lk->hdr->bell_client[lk->client], timeout_ms, ans_idle, lk, lk->client);
}

static int64_t
ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int
lk_call(struct lk *lk, uint16_t op, const void *payload, uint16_t len, void *ans,
	uint16_t ans_cap, uint16_t *ans_len, int timeout_ms)
{
	uint32_t tag = ++lk->tag;
	int64_t deadline = ms_now() + timeout_ms;
	unsigned int polls = 0;
	int rc = lk_cmd_post(lk, op, tag, payload, len);

	if (rc != 0)
		return rc;
	lk_cmd_kick(lk);
	for (;;) {
		struct fc_ans_hdr h;
		int64_t left;

		rc = lk_ans_take(lk, &h, ans, ans_cap);
		if ((rc == 0 || rc == -EMSGSIZE) && h.tag != tag) {
			/* an older command's answer (one that timed out): counted, not ours */
			stat_inc(&lk->stats.unexpected_tag);
		} else if (rc == 0) {
			if (ans_len)
				*ans_len = h.len;
			return h.rc;
		} else if (rc != -EAGAIN) {
			return rc;
		}
		left = deadline - ms_now();
		if (left <= 0)
			return -ETIMEDOUT;
		if (rc != -EAGAIN)
			continue;
		/* an answer usually comes within microseconds: look again before sleeping */
		if (++polls < LK_CALL_POLLS) {
			cpu_relax();
			continue;
		}
		lk_ans_wait(lk, (int)(left < 100 ? left : 100));
	}
}

int
lk_cmd_take(struct lk *lk, unsigned int client, struct fc_cmd_hdr *hdr, void *payload)
{
	uint8_t buf[LK_CMD_SLOT];
	int n;

	if (client >= LK_CLIENTS)
		return -EINVAL;
	n = ring_take(lk, &lk->ring[R_CMD + client], NULL, NULL, buf, sizeof(buf));
	if (n == -EAGAIN)
		return n;
	hdr->op = 0xffff;	/* no header to answer to */
	if (n < 0)
		return -EBADMSG;
	if ((size_t)n < sizeof(*hdr)) {
		stat_inc(&lk->stats.bad_message);
		return -EBADMSG;
	}
	memcpy(hdr, buf, sizeof(*hdr));
	if (hdr->len != (uint32_t)n - sizeof(*hdr) || hdr->len > FC_CMD_MAX_PAYLOAD) {
		stat_inc(&lk->stats.bad_message);
		return -EBADMSG;
	}
	memcpy(payload, buf + sizeof(*hdr), hdr->len);
	return 0;
}

int
lk_ans_put(struct lk *lk, unsigned int client, const struct fc_ans_hdr *hdr,
	   const void *payload)
{
	if (client >= LK_CLIENTS)
		return -EINVAL;
	if (hdr->len > FC_CMD_MAX_PAYLOAD)
		return -EMSGSIZE;
	return ring_put(lk, &lk->ring[R_ANS + client], 0, 0, hdr, sizeof(*hdr), payload,
			hdr->len);
}

bool
lk_ans_room(struct lk *lk, unsigned int client)
{
	struct ring *r;
	uint32_t used;

	if (client >= LK_CLIENTS)
		return false;
	r = &lk->ring[R_ANS + client];
	used = r->mine - __atomic_load_n(&r->shm->cons, __ATOMIC_ACQUIRE);
	return used < r->slots;
}

void
lk_ans_kick(struct lk *lk, unsigned int client)
{
	if (client < LK_CLIENTS)
		bell_ring(&lk->hdr->bell_client[client]);
}

static bool
npu_idle(struct lk *lk, int unused)
{
	(void)unused;
	for (int c = 0; c < LK_CLIENTS; c++)
		if (!ring_empty(lk, R_CMD + c))
			return false;
	/* the caller's own work, looked at after the bell's count was read */
	if (lk->npu_busy != NULL && lk->npu_busy(lk->npu_busy_arg))
		return false;
	return true;	/* host frames are the workers' (they poll), not the control thread's */
}

void
lk_npu_kick(struct lk *lk)
{
	bell_ring(&lk->hdr->bell_npu);
}

void
lk_npu_wait(struct lk *lk, int timeout_ms, bool (*busy)(void *), void *arg)
{
	lk->npu_busy = busy;
	lk->npu_busy_arg = arg;
	bell_wait(&lk->hdr->bell_npu, timeout_ms, npu_idle, lk, 0);
	lk->npu_busy = NULL;
}

/* ---- events ---- */

int
lk_event_put(struct lk *lk, const struct lk_event *ev)
{
	int rc = ring_put(lk, &lk->ring[R_EVENTS], 0, 0, ev, sizeof(*ev), NULL, 0);

	if (rc != 0)	/* the host must hear of it: it reconciles */
		__atomic_fetch_add(&lk->hdr->events_lost, 1, __ATOMIC_RELEASE);
	return rc;
}

uint32_t
lk_event_room(struct lk *lk)
{
	struct ring *r = &lk->ring[R_EVENTS];
	uint32_t used = r->mine - __atomic_load_n(&r->shm->cons, __ATOMIC_ACQUIRE);

	return used < r->slots ? r->slots - used : 0;
}

int
lk_event_take(struct lk *lk, struct lk_event *ev)
{
	int n, rc = host_check(lk);
	uint32_t lost;

	if (rc != 0)
		return rc;
	lost = __atomic_load_n(&lk->hdr->events_lost, __ATOMIC_ACQUIRE);
	if (lost != lk->events_lost_seen) {
		lk->events_lost_seen = lost;
		stat_inc(&lk->stats.events_lost);
		return -EOVERFLOW;
	}
	for (uint32_t i = 0; i < LK_EV_SLOTS; i++) {
		n = ring_take(lk, &lk->ring[R_EVENTS], NULL, NULL, ev, sizeof(*ev));
		if (n == (int)sizeof(*ev))
			return 0;
		if (n == -EAGAIN)
			return n;
		if (n >= 0)
			stat_inc(&lk->stats.bad_message);	/* a wrong length: not an event */
	}
	return -EAGAIN;
}

void
lk_event_kick(struct lk *lk)
{
	bell_ring(&lk->hdr->bell_events);
}

static bool
events_idle(struct lk *lk, int unused)
{
	(void)unused;
	return ring_empty(lk, R_EVENTS) && host_check(lk) == 0;
}

void
lk_event_wait(struct lk *lk, int timeout_ms)
{
	bell_wait(&lk->hdr->bell_events, timeout_ms, events_idle, lk, 0);
}

/* ---- the host's one sleep for its control thread's rings ---- */

/*
 * Something waits on ring r: by the region's two indices alone, so any
 * thread may ask while the control thread takes from it (the layout, hence
 * r's shm pointer, is fixed from lk_attach on; `mine` is not read).
 */
static bool
ring_pending(const struct lk *lk, int r)
{
	const struct lk_shm_ring *shm = lk->ring[r].shm;

	return __atomic_load_n(&shm->prod, __ATOMIC_ACQUIRE) !=
	       __atomic_load_n(&shm->cons, __ATOMIC_ACQUIRE);
}

bool
lk_host_pending(const struct lk *lk)
{
	return ring_pending(lk, R_EVENTS) || ring_pending(lk, R_ANS + lk->client);
}

bool
lk_host_wait(struct lk *lk, int timeout_ms)
{
	struct lk_bell *ev = &lk->hdr->bell_events, *ans = &lk->hdr->bell_client[lk->client];
	struct futex_waitv w[2] = {
		{ .uaddr = (uintptr_t)&ev->seq, .flags = FUTEX_32 },	/* shared: no FUTEX_PRIVATE_FLAG */
		{ .uaddr = (uintptr_t)&ans->seq, .flags = FUTEX_32 },
	};
	struct timespec until;
	uint64_t boot, boot_ans;

	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += timeout_ms / 1000;
	until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	/* as bell_wait: counted a waiter, the counts read, then the rings looked at */
	boot = bell_enter(lk, ev);
	boot_ans = bell_enter(lk, ans);
	w[0].val = __atomic_load_n(&ev->seq, __ATOMIC_SEQ_CST);
	w[1].val = __atomic_load_n(&ans->seq, __ATOMIC_SEQ_CST);
	if (!lk_host_pending(lk) &&
	    syscall(SYS_futex_waitv, w, 2, 0, &until, CLOCK_MONOTONIC) < 0 && errno == ENOSYS) {
		/* a kernel before 5.16: the events' bell alone, the answers looked at this often */
		struct timespec ts = { .tv_nsec = 5000000L };

		syscall(SYS_futex, &ev->seq, FUTEX_WAIT, (uint32_t)w[0].val, &ts, NULL, 0);
	}
	bell_leave(lk, ans, boot_ans);
	bell_leave(lk, ev, boot);
	return lk_host_pending(lk);
}

void
lk_host_wake(struct lk *lk)
{
	bell_ring(&lk->hdr->bell_events);	/* a count its sleepers read again: harmless to the rest */
}

/* ---- frames ---- */

int
lk_frame_up_put(struct lk *lk, uint16_t port, uint16_t flags, const void *data, uint32_t len)
{
	if (len > LK_FRAME_MAX) {
		stat_inc(&lk->stats.frame_too_big);
		return -EMSGSIZE;
	}
	return ring_put(lk, &lk->ring[R_UP], port, flags, data, len, NULL, 0);
}

void
lk_frame_up_kick(struct lk *lk)
{
	bell_ring(&lk->hdr->bell_frames_up);
}

int
lk_frame_up_take(struct lk *lk, uint16_t *port, uint16_t *flags, void *buf, uint32_t cap)
{
	for (uint32_t i = 0; i < LK_FRAME_SLOTS; i++) {
		int n = ring_take(lk, &lk->ring[R_UP], port, flags, buf, cap);

		if (n != -EBADMSG)
			return n;
	}
	return -EAGAIN;
}

static bool
up_idle(struct lk *lk, int unused)
{
	(void)unused;
	return ring_empty(lk, R_UP);
}

void
lk_frame_up_wait(struct lk *lk, int timeout_ms)
{
	bell_wait(&lk->hdr->bell_frames_up, timeout_ms, up_idle, lk, 0);
}

int
lk_frame_down_put(struct lk *lk, uint16_t port, const void *data, uint32_t len)
{
	int rc;

	if (len > LK_FRAME_MAX) {
		stat_inc(&lk->stats.frame_too_big);
		return -EMSGSIZE;
	}
	rc = ring_put(lk, &lk->ring[R_DOWN], port, 0, data, len, NULL, 0);
	return rc;
}

uint32_t
lk_frame_down_count(struct lk *lk)
{
	return ring_avail(lk, &lk->ring[R_DOWN]);
}

int
lk_frame_down_take(struct lk *lk, uint16_t *port, void *buf, uint32_t cap)
{
	for (uint32_t i = 0; i < LK_FRAME_SLOTS; i++) {
		int n = ring_take(lk, &lk->ring[R_DOWN], port, NULL, buf, cap);

		if (n != -EBADMSG)
			return n;
	}
	return -EAGAIN;
}

/* ---- counters window ---- */

void
lk_counters_publish(struct lk *lk, const uint64_t cnt[FC_CNT_MAX], uint64_t now)
{
	struct lk_shm_counters *w = lk->cnt;
	uint32_t seq = __atomic_load_n(&w->seq, __ATOMIC_RELAXED) | 1;	/* odd: writing */

	__atomic_store_n(&w->seq, seq, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	for (unsigned int i = 0; i < FC_CNT_MAX; i++)
		__atomic_store_n(&w->value[i], cnt[i], __ATOMIC_RELAXED);
	__atomic_store_n(&w->when, now, __ATOMIC_RELAXED);
	__atomic_store_n(&w->seq, seq + 1, __ATOMIC_RELEASE);
}

void
lk_wire_publish(struct lk *lk, const uint64_t wire[][FC_WIRE_MAX], unsigned int nports)
{
	struct lk_shm_counters *w = lk->cnt;
	uint32_t seq = __atomic_load_n(&w->wire_seq, __ATOMIC_RELAXED) | 1;

	if (nports > FC_WIRE_PORTS)
		nports = FC_WIRE_PORTS;
	__atomic_store_n(&w->wire_seq, seq, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	for (unsigned int p = 0; p < nports; p++)
		for (unsigned int k = 0; k < FC_WIRE_MAX; k++)
			__atomic_store_n(&w->wire[p][k], wire[p][k], __ATOMIC_RELAXED);
	__atomic_store_n(&w->wire_ports, nports, __ATOMIC_RELAXED);
	__atomic_store_n(&w->wire_seq, seq + 1, __ATOMIC_RELEASE);
}

int
lk_wire_read(struct lk *lk, uint64_t wire[FC_WIRE_PORTS][FC_WIRE_MAX])
{
	struct lk_shm_counters *w = lk->cnt;

	for (int i = 0; i < LK_COUNTER_TRIES; i++) {
		uint32_t s0 = __atomic_load_n(&w->wire_seq, __ATOMIC_ACQUIRE), n;

		if (s0 & 1)
			continue;
		n = __atomic_load_n(&w->wire_ports, __ATOMIC_RELAXED);
		for (unsigned int p = 0; p < FC_WIRE_PORTS; p++)
			for (unsigned int k = 0; k < FC_WIRE_MAX; k++)
				wire[p][k] = __atomic_load_n(&w->wire[p][k], __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&w->wire_seq, __ATOMIC_RELAXED) == s0)
			return n <= FC_WIRE_PORTS ? (int)n : FC_WIRE_PORTS;	/* a bad count: what fits */
	}
	stat_inc(&lk->stats.counters_torn);
	return -EAGAIN;
}

int
lk_counters_read(struct lk *lk, uint64_t cnt[FC_CNT_MAX], uint64_t *when)
{
	struct lk_shm_counters *w = lk->cnt;

	for (int i = 0; i < LK_COUNTER_TRIES; i++) {
		uint32_t s0 = __atomic_load_n(&w->seq, __ATOMIC_ACQUIRE);

		if (s0 & 1)
			continue;
		for (unsigned int c = 0; c < FC_CNT_MAX; c++)
			cnt[c] = __atomic_load_n(&w->value[c], __ATOMIC_RELAXED);
		if (when)
			*when = __atomic_load_n(&w->when, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&w->seq, __ATOMIC_RELAXED) == s0)
			return 0;
	}
	stat_inc(&lk->stats.counters_torn);
	return -EAGAIN;
}
