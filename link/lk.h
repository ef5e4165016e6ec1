/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lk: the link between host and coprocessor - what PCIe is on the
 * appliance - as one shared-memory region (a file, normally
 * /run/flowcut/link, in a directory only root may write).
 *
 * The region holds a versioned header (magic, layout version, size, the
 * coprocessor's boot id), a counters window the host reads without a
 * command, and rings: per client (LK_CLIENTS) a command and an answer
 * ring, one event ring (coprocessor to host), and frame rings up and
 * down, each frame tagged with its front port.  Doorbells (futexes in
 * the region) wake a side that sleeps; every wait has a timeout.
 *
 * Peers: only a process of the same euid; both sides check the file and
 * its directory on what they opened before they trust a byte of it.  Slot
 * 0 is the driver's; lk_attach(path, -1), the tools', takes one of
 * 1..LK_CLIENTS-1; the kernel drops a slot's lock when its holder dies.
 * A peer may write anything anywhere in the region at any time: no value
 * read from it can make this code read or write outside the region, loop
 * without bound, or block without a timeout; what fails a check is
 * counted in struct lk_stats and skipped.
 *
 * Threads: each ring has one producer and one consumer; a struct lk may be
 * used by several threads only if each ring is used by one of them (frame
 * producers on one ring take turns under a lock of their own).  Shutdown:
 * lk_close(); lk_close(NULL) does nothing.  lk_create and lk_attach return
 * NULL with errno, lk_error() saying why.  Int functions return 0 (or a
 * count) or a negative errno: -ENOBUFS a ring is full; -EAGAIN nothing to
 * take; -EMSGSIZE a message too large for a slot or a buffer; -ECONNRESET
 * the coprocessor rebooted (call lk_resync()); -EPROTO the region is not
 * a link of this version.  Design notes: link/README.md.
 */
#ifndef FLOWCUT_LK_H
#define FLOWCUT_LK_H

#include <stdbool.h>
#include <stdint.h>

#include <flowcut/fc_cmd.h>
#include <flowcut/fc_defs.h>

/* Where the coprocessor lays the link out unless told otherwise. */
#define LK_PATH "/run/flowcut/link"

#define LK_CLIENTS 4	/* slot 0 the driver's, 1..3 the tools' */
#define LK_CMD_SLOTS 256	/* 64 until LK_VERSION 6: the driver waited at the cap behind bursts */
#define LK_CMD_SLOT 1024	/* header (8) + command/answer header + payload */
#define LK_EV_SLOTS 4096
#define LK_EV_SLOT 256
#define LK_FRAME_SLOTS 2048
#define LK_FRAME_SLOT 2048
#define LK_FRAME_MAX (LK_FRAME_SLOT - 8)

/* Frame flags (frames up): why the coprocessor handed the frame up. */
#define LK_FRAME_HOST	0x0	/* the host's (kernel) queue */
#define LK_FRAME_AUX	0x1	/* the auxiliary queue */
#define LK_FRAME_INSPECT 0x2	/* for the inspector */

struct lk;

/* Everything the checks refused, per side, since create/attach. */
struct lk_stats {
	uint64_t bad_index;	/* a peer index beyond what the ring holds */
	uint64_t bad_length;	/* a slot length beyond the slot */
	uint64_t bad_message;	/* a command/answer whose header and length disagree */
	uint64_t ring_full;	/* a put refused: the ring was full */
	uint64_t frame_too_big;	/* a frame larger than a slot */
	uint64_t counters_torn;	/* the counters window kept changing under a read */
	uint64_t events_lost;	/* host: times lk_event_take said events were lost */
	uint64_t unexpected_tag; /* host: answers lk_call took that were not its command's */
};

/* A coprocessor event on the wire: struct fp_event's content. */
struct lk_event {
	uint8_t type;		/* enum fc_event_type, or LK_EV_BOOT */
	uint8_t reason;
	uint8_t zero[6];
	uint64_t id;
	uint64_t boot_id;	/* LK_EV_BOOT: the new boot id */
	struct fc_key key[2];
	struct fc_mflow_stats stats[2];
};
#define LK_EV_BOOT 100		/* the coprocessor (re)started: every table is empty */
_Static_assert(sizeof(struct lk_event) <= LK_EV_SLOT - 8, "lk_event fits a slot");

/* ---- both sides ---- */

/*
 * lk_create - the coprocessor's side: create `path` (or take it over from
 * a coprocessor that is gone), lay the region out anew with a new boot id,
 * all rings empty, and post LK_EV_BOOT on the event ring.  A host attached
 * to the old contents sees the boot id change.  The region stays locked
 * (flock) until lk_close or death.
 *
 * The directory of `path` is made (mode 0700; its parent must exist) when
 * missing; it must be owned by the caller's euid and writable by neither
 * group nor others.  The file is created O_CREAT|O_EXCL|O_NOFOLLOW, mode
 * 0600, when missing; one that is there (a coprocessor's that is gone) is
 * taken over only if it is a regular file with one link, owned by the
 * euid, with no group or other bits.
 *
 * NULL and errno, lk_error() says why: EBUSY another coprocessor holds it;
 * EPERM the directory or the file is not to be trusted (another owner,
 * group or other bits, a symbolic link, a directory or other non-regular
 * file, a second hard link); EINVAL `path` names no file; others from the
 * system (EACCES, ENOENT for a missing parent, ENOMEM...).
 */
struct lk *lk_create(const char *path);

/*
 * lk_attach - a host side: open `path` O_NOFOLLOW, check its directory
 * and the file as lk_create does (before reading a byte of it), map it,
 * check the header (magic, version, size), and claim client slot `client`
 * (0..LK_CLIENTS-1), or, when client < 0, the first free one of
 * 1..LK_CLIENTS-1 (slot 0 is the driver's).  The slot is held until
 * lk_close or death.
 *
 * NULL and errno, lk_error() says why: ENOENT (no coprocessor), EPROTO
 * (not a link of this version, or one being laid out), EBUSY (the slot,
 * or every slot 1..LK_CLIENTS-1, is held), EPERM (not to be trusted, as
 * for lk_create), EINVAL (client >= LK_CLIENTS, or no file's path).
 */
struct lk *lk_attach(const char *path, int client);

/*
 * lk_error - why this thread's last lk_create or lk_attach returned
 * NULL: the path, then what was wrong, e.g. "/run/flowcut/link: owned by
 * uid 65534, not 0" or "/dev/shm/flowcut: directory /dev/shm is writable
 * by others (mode 1777)".  A thread-local string, valid until this
 * thread's next lk_create or lk_attach; "" after one that succeeded.
 */
const char *lk_error(void);

/* lk_close - unmap; a client gives its slot back. */
void lk_close(struct lk *lk);

/* lk_client - the client slot this side holds (-1 for the coprocessor). */
int lk_client(const struct lk *lk);

/* lk_boot_id - the boot id the region carries now. */
uint64_t lk_boot_id(const struct lk *lk);
/*
 * lk_boot_ns - when the coprocessor laid the region out (its boot: the
 * tables empty, the boot id new), on its CLOCK_MONOTONIC, the clock of
 * the counters window's `when` (lk_counters_read): their difference is
 * its uptime.  0: a coprocessor that does not say.
 */
uint64_t lk_boot_ns(const struct lk *lk);

/*
 * lk_npu_pid - the process id of the coprocessor that laid the region out
 * (on this machine; a host can tell a stale region from a live one).
 */
uint32_t lk_npu_pid(const struct lk *lk);

/*
 * lk_resync - after -ECONNRESET: take the new boot id and the command,
 * answer and event rings as the rebooted coprocessor laid them out.
 * Commands in flight are lost (their answers never come).  0, or -EPROTO
 * if the region is no longer valid.  The frame rings have their own, for
 * the threads that use them: lk_frame_up_resync() and
 * lk_frame_down_resync(), after lk_boot_id() changed.
 */
int lk_resync(struct lk *lk);
int lk_frame_up_resync(struct lk *lk);
int lk_frame_down_resync(struct lk *lk);

/* lk_stats - what this side's checks have refused. */
void lk_stats(const struct lk *lk, struct lk_stats *out);

/* ---- commands: a client posts, the coprocessor answers ---- */

/*
 * lk_cmd_post - queue one command (len <= FC_CMD_MAX_PAYLOAD); nothing is
 * sent until lk_cmd_kick(), so many can go in one batch.  -ENOBUFS when
 * the ring is full, -EMSGSIZE, -ECONNRESET.
 */
int lk_cmd_post(struct lk *lk, uint16_t op, uint32_t tag, const void *payload,
		uint16_t len);
/* lk_cmd_kick - ring the coprocessor's doorbell. */
void lk_cmd_kick(struct lk *lk);

/*
 * lk_ans_take - the next answer: fills *hdr and up to `cap` payload bytes.
 * Returns 0, -EAGAIN when none is there, -EMSGSIZE when the payload is
 * larger than cap (the answer is consumed; *hdr is filled, so its tag is
 * known), -ECONNRESET.  Answers come in the order the coprocessor wrote
 * them; hdr->tag says which command each one answers.
 */
int lk_ans_take(struct lk *lk, struct fc_ans_hdr *hdr, void *payload, uint16_t cap);

/* lk_ans_wait - sleep until an answer may be there, at most timeout_ms. */
void lk_ans_wait(struct lk *lk, int timeout_ms);

/*
 * lk_call - one command and its answer: post, kick, wait up to timeout_ms.
 * Returns the answer's rc (0 or a negative errno from the coprocessor),
 * -ETIMEDOUT, or a link error.  *ans_len gets the answer's payload length.
 * For one-shot use (flowcutctl): answers to other tags met on the way (an
 * earlier call's that timed out) are consumed and counted in
 * lk_stats.unexpected_tag.  A client with many commands in flight uses
 * driver/cmd/fd_cmdq.h instead, and never lk_call on the same struct lk.
 */
int lk_call(struct lk *lk, uint16_t op, const void *payload, uint16_t len, void *ans,
	    uint16_t ans_cap, uint16_t *ans_len, int timeout_ms);

/* The coprocessor's side of the command rings. */

/*
 * lk_cmd_take - the next command of `client`: *hdr, and its payload
 * (hdr->len bytes, at most FC_CMD_MAX_PAYLOAD) in `payload`.  0, -EAGAIN,
 * -EBADMSG (a malformed slot: counted, consumed; answer it with an error
 * using the tag in *hdr when hdr->op is not 0xffff).
 */
int lk_cmd_take(struct lk *lk, unsigned int client, struct fc_cmd_hdr *hdr,
		void *payload);
/* lk_ans_put - answer on `client`'s ring.  0, -ENOBUFS, -EMSGSIZE. */
int lk_ans_put(struct lk *lk, unsigned int client, const struct fc_ans_hdr *hdr,
	       const void *payload);
/*
 * lk_ans_room - is there a free slot on `client`'s answer ring?  Take a
 * command only when there is: a command taken must be answered.
 */
bool lk_ans_room(struct lk *lk, unsigned int client);
/* lk_ans_kick - ring `client`'s doorbell. */
void lk_ans_kick(struct lk *lk, unsigned int client);

/*
 * lk_npu_wait - the coprocessor's control thread sleeps until a command
 * may be there or it is kicked (lk_npu_kick), at most timeout_ms.  `busy`
 * (NULL: none) says whether the caller has work of its own: it is asked
 * after the bell's count was read, so a kick between the caller's last
 * look and the sleep is never missed.  (Frames from the host are polled by
 * its workers.)
 */
void lk_npu_wait(struct lk *lk, int timeout_ms, bool (*busy)(void *), void *arg);
/* lk_npu_kick - wake the control thread (a worker's news: a give-back). */
void lk_npu_kick(struct lk *lk);

/* ---- events: the coprocessor posts, the host takes ---- */

/*
 * lk_event_put - 0, or -ENOBUFS: the ring is full, the event is lost and
 * the host hears so (lk_event_take's -EOVERFLOW).  Ask lk_event_room first.
 */
int lk_event_put(struct lk *lk, const struct lk_event *ev);
/* lk_event_room - how many events lk_event_put takes now (coprocessor). */
uint32_t lk_event_room(struct lk *lk);
/*
 * lk_event_take - 0, -EAGAIN, -ECONNRESET, or -EOVERFLOW once after the
 * coprocessor lost events: what the host knows may now differ from its
 * tables, and only a reconciliation tells.
 */
int lk_event_take(struct lk *lk, struct lk_event *ev);
void lk_event_kick(struct lk *lk);
void lk_event_wait(struct lk *lk, int timeout_ms);

/*
 * The host's control thread takes events and its answers; it may sleep in
 * a poll of its own (flowcutd's epoll) rather than on the link.  Another
 * thread of its then sleeps for it:
 *
 * lk_host_wait - sleeps until the event ring or this client's answer ring
 * holds something (the coprocessor rang their bells: lk_event_kick,
 * lk_ans_kick), at most timeout_ms; says whether one does.  Reads only the
 * region's indices and bells, never what the control thread keeps, so it
 * may run beside lk_event_take and lk_ans_take (driver/cmd/fd_bell.h).
 * One futex_waitv(2) on both bells; on a kernel without it, the events'
 * bell and a look every 5 ms.
 */
bool lk_host_wait(struct lk *lk, int timeout_ms);
/* lk_host_pending - does either ring hold something now?  (Any thread.) */
bool lk_host_pending(const struct lk *lk);
/* lk_host_wake - an lk_host_wait of this process returns now (to stop its thread). */
void lk_host_wake(struct lk *lk);

/* ---- frames ---- */

/* lk_frame_up_put - coprocessor: a frame to the host.  -ENOBUFS, -EMSGSIZE. */
int lk_frame_up_put(struct lk *lk, uint16_t port, uint16_t flags, const void *data,
		    uint32_t len);
void lk_frame_up_kick(struct lk *lk);
/* lk_frame_up_take - host: returns the frame's length, or -EAGAIN, -EMSGSIZE. */
int lk_frame_up_take(struct lk *lk, uint16_t *port, uint16_t *flags, void *buf,
		     uint32_t cap);
void lk_frame_up_wait(struct lk *lk, int timeout_ms);

/* lk_frame_down_put - host: a frame for port `port`.  -ENOBUFS, -EMSGSIZE. */
int lk_frame_down_put(struct lk *lk, uint16_t port, const void *data, uint32_t len);
/* lk_frame_down_count - coprocessor: how many frames wait (at least). */
uint32_t lk_frame_down_count(struct lk *lk);
/* lk_frame_down_take - coprocessor: the frame's length, or -EAGAIN. */
int lk_frame_down_take(struct lk *lk, uint16_t *port, void *buf, uint32_t cap);

/* ---- the counters window ---- */

/* lk_counters_publish - coprocessor: every counter, at `now` (ns). */
void lk_counters_publish(struct lk *lk, const uint64_t cnt[FC_CNT_MAX], uint64_t now);
/*
 * lk_counters_read - host: a consistent copy of the window.  0, or
 * -EAGAIN if it kept changing (torn by a writer that does not stop).
 */
int lk_counters_read(struct lk *lk, uint64_t cnt[FC_CNT_MAX], uint64_t *when);

/*
 * lk_wire_publish - coprocessor: the wire's figures of its first nports
 * ports (at most FC_WIRE_PORTS; include/flowcut/fc_defs.h).
 */
void lk_wire_publish(struct lk *lk, const uint64_t wire[][FC_WIRE_MAX], unsigned int nports);
/*
 * lk_wire_read - host: a consistent copy; returns how many ports are
 * filled in (0 before the coprocessor published any), or -EAGAIN.
 */
int lk_wire_read(struct lk *lk, uint64_t wire[FC_WIRE_PORTS][FC_WIRE_MAX]);

/* ---- for tests ---- */

/* lk_region - the mapped region and its size (to write garbage into). */
void *lk_region(struct lk *lk, uint32_t *size);

#endif /* FLOWCUT_LK_H */
