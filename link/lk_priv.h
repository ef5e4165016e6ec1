/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lk_priv: what link/'s pieces share (lk.h stays the contract): the region's
 * layout, this side's view of it (struct lk), lk_ring.c's bells and rings.
 * Calls go one way, down: lk.c -> lk_cmd.c (lk_create's BOOT event) ->
 * lk_ring.c <- lk_frame.c; lk_counters.c calls none of the others.
 */
#ifndef FLOWCUT_LK_PRIV_H
#define FLOWCUT_LK_PRIV_H

#include "lk.h"

#define LK_MAGIC 0x31545543574f4c46ull	/* "FLOWCUT1" */
#define LK_VERSION 6	/* 4: the wire's figures in the counters page; 5: BUSY_NS among them; 6: 256 command slots */
#define LK_PAGE 4096u
#define LK_READY 1u

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
lk_stat_inc(uint64_t *c)
{
	__atomic_fetch_add(c, 1, __ATOMIC_RELAXED);
}

/* ---- lk_ring.c: doorbells and rings ---- */

void lk_bell_ring(struct lk_bell *b);
void lk_bell_wait(struct lk_bell *b, int timeout_ms, bool (*idle)(struct lk *, int),
		  struct lk *lk, int arg);
int lk_ring_put(struct lk *lk, struct ring *r, uint16_t tag, uint16_t flags, const void *a,
		uint32_t alen, const void *b, uint32_t blen);
uint32_t lk_ring_avail(struct lk *lk, struct ring *r);
int lk_ring_take(struct lk *lk, struct ring *r, uint16_t *tag, uint16_t *flags, void *buf,
		 uint32_t cap);
bool lk_ring_empty(struct lk *lk, int r);

#endif
