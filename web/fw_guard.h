/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fw_guard - who holds flowcut-web's connections, and for how long, so
 * that no local user can lock the operator out: on the loopback every
 * client is one address, and MHD's idle timeout restarts on any byte.
 *
 * A connection's client is the local uid that owns its other end
 * (sock_diag, asked once as it opens), or its address for a peer not on
 * this machine (an IPv6 one by its /64).  A connection "waits" while no
 * request of it is being answered.  The bounds, enforced as each opens:
 *   - one that waited past FW_GUARD_REQUEST_MS for its request to be
 *     whole goes (also looked for every FW_GUARD_SWEEP_MS);
 *   - a client past FW_GUARD_PER_CLIENT: its own oldest waiting one goes;
 *   - past FW_GUARD_OPEN in all: the oldest waiting one of the client
 *     holding the most goes.
 * When nothing waits to go, or it has no client (FW_GUARD_CLIENTS full),
 * the new one is marked over: its request is 503, the connection closed.
 * A costly read (one that asks flowcutd) takes a token of its client's
 * bucket, costly_per_s a second, twice that at once; without one, 429.
 *
 * Lifetime: fw_guard_init, then fw_guard_fini after MHD's daemons stopped;
 * an entry lives from fw_guard_open to fw_guard_close.  A connection goes
 * by shutdown(2) on the guard's own dup of its socket: no descriptor
 * reused under MHD is ever shut.  Threads: any of MHD's; one mutex.
 * Returns: fw_guard_init 0, or -errno without its netlink socket (said on
 * stderr; clients are then told by address alone); fw_guard_open an
 * entry, or NULL (not guarded: MHD's own limits stand).
 *
 * Design notes (the lock-out, the netlink answer, why by hand, clocks):
 * web/README.md.
 */
#ifndef FLOWCUT_FW_GUARD_H
#define FLOWCUT_FW_GUARD_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define FW_GUARD_MAX 2048		/* entries: MHD's limit, both addresses */
#define FW_GUARD_CLIENTS 256		/* clients remembered (their buckets) */
#define FW_GUARD_PER_CLIENT 128	/* connections a client may hold (a browser: 6) */
#define FW_GUARD_OPEN 512		/* ... all clients together (flowcut-web raises its descriptors' limit) */
#define FW_GUARD_REQUEST_MS 5000	/* a request whole within this of its wait's start */
#define FW_GUARD_COSTLY_PER_S 10	/* costly reads a second a client (the default) */
#define FW_GUARD_SWEEP_MS 500		/* the deadline's own sweep */

struct mnl_socket;

/* A client: a local uid, or an address (not on this machine). */
struct fw_guard_client {
	int kind;			/* 0 a uid, 4 or 6 an address */
	uid_t uid;
	uint8_t addr[16];
	unsigned int open;		/* its connections counted (not going) */
	double tokens;			/* costly reads it may make now */
	uint64_t refill_ms;		/* the tokens' time */
	uint64_t seen_ms;		/* its last connection's opening */
};

struct fw_guard_conn {
	int fd;				/* our dup of its socket; -1: a free entry */
	int client;			/* index in clients */
	uint64_t since_ms;		/* its wait's start */
	bool answering;			/* a request of it is being answered */
	bool going;			/* shut: MHD closes it */
	bool over;			/* no room was made for it: its request is 503 */
};

struct fw_guard_stats {
	uint64_t opened;
	uint64_t let_go_deadline;	/* waited past FW_GUARD_REQUEST_MS */
	uint64_t let_go_client;		/* its client past FW_GUARD_PER_CLIENT */
	uint64_t let_go_open;		/* past FW_GUARD_OPEN */
	uint64_t over;			/* no room: 503 */
	uint64_t costly_refused;	/* 429 */
	uint64_t uid_unknown;		/* the peer's owner not found: its address stands */
};

struct fw_guard {
	pthread_mutex_t mu;
	pthread_cond_t stop_cv;
	pthread_t sweeper;
	bool sweeping, stop;
	struct mnl_socket *nl;		/* NETLINK_SOCK_DIAG; NULL: addresses only */
	uint32_t seq;
	struct fw_guard_conn conns[FW_GUARD_MAX];
	struct fw_guard_client clients[FW_GUARD_CLIENTS];
	unsigned int nclients;
	unsigned int open;		/* entries counted (not going) */
	unsigned int costly_per_s;	/* a client's costly reads a second (burst: twice) */
	struct fw_guard_stats st;
};

/*
 * fw_guard_init - an empty guard and its netlink socket, costly reads
 * bounded at costly_per_s a second a client: 0; without the socket
 * (-errno said on stderr) clients are told by address alone.
 */
int fw_guard_init(struct fw_guard *g, unsigned int costly_per_s);
/* fw_guard_fini - its thread stopped, every dup closed (after MHD's daemons stopped) */
void fw_guard_fini(struct fw_guard *g);

/*
 * fw_guard_open - connection fd (MHD's) opened at now_ms: its entry, the
 * bounds enforced (others may go; it may be marked over), or NULL when
 * the table is full or its socket cannot be dup'd (it is not guarded:
 * MHD's own limits stand).
 */
struct fw_guard_conn *fw_guard_open(struct fw_guard *g, int fd, uint64_t now_ms);

/* fw_guard_answering - e's request is whole: it no longer waits */
void fw_guard_answering(struct fw_guard *g, struct fw_guard_conn *e);

/* fw_guard_answered - e's request answered: it waits for its next from now_ms */
void fw_guard_answered(struct fw_guard *g, struct fw_guard_conn *e, uint64_t now_ms);

/* fw_guard_close - e closed (MHD's): its dup closed, its entry free (NULL: nothing) */
void fw_guard_close(struct fw_guard *g, struct fw_guard_conn *e);

/* fw_guard_costly - a costly read on e (NULL: allowed): true, a token taken; false, 429 */
bool fw_guard_costly(struct fw_guard *g, struct fw_guard_conn *e, uint64_t now_ms);

/* fw_guard_stats - a copy of the counters */
void fw_guard_stats(struct fw_guard *g, struct fw_guard_stats *st);

/* fw_guard_now_ms - CLOCK_MONOTONIC in ms */
uint64_t fw_guard_now_ms(void);

#endif
