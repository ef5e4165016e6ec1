/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_inspect: see fd_inspect.h; docs/fingerprints.md says what it reads
 * and why.  This file: the main thread's side - the inspector opened,
 * tuned, given its ports and list, its decisions and figures taken, and
 * closed.  Its other files, and which calls which: fd_inspect_priv.h.
 */
#include "fd_inspect.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include <flowcut/fc_defs.h>

#include "fc_frag.h"
#include "fd_inspect_priv.h"
#include "fi_parse.h"
#include "fi_wire.h"

/* IP fragments: Linux's own wait for the rest of a datagram (ipfrag_time), and what may be held */
#define FRAG_TIMEOUT_MS 30000u
#define FRAG_DATAGRAMS 1024u
#define FRAG_BYTES (16u << 20)

static const char *const why_names[FD_INSPECT_NWHY] = {
#define FD_INSPECT_WHY_NAME_(n, s, u) [FD_INSPECT_##n] = s,
	FD_INSPECT_WHYS(FD_INSPECT_WHY_NAME_)
#undef FD_INSPECT_WHY_NAME_
};

static const bool why_undecided[FD_INSPECT_NWHY] = {
#define FD_INSPECT_WHY_U_(n, s, u) [FD_INSPECT_##n] = (u),
	FD_INSPECT_WHYS(FD_INSPECT_WHY_U_)
#undef FD_INSPECT_WHY_U_
};

static const char *const frame_names[FD_INSPECT_NFRAME] = {
#define FD_INSPECT_FRAME_NAME_(n, s) [FD_INSPECT_F_##n] = s,
	FD_INSPECT_FRAMES(FD_INSPECT_FRAME_NAME_)
#undef FD_INSPECT_FRAME_NAME_
};

const char *
fd_inspect_why_name(enum fd_inspect_why w)
{
	return (unsigned int)w < FD_INSPECT_NWHY ? why_names[w] : "?";
}

bool
fd_inspect_why_undecided(enum fd_inspect_why w)
{
	return (unsigned int)w < FD_INSPECT_NWHY && why_undecided[w];
}

const char *
fd_inspect_frame_name(enum fd_inspect_frame_cnt f)
{
	return (unsigned int)f < FD_INSPECT_NFRAME ? frame_names[f] : "?";
}

/* ---- the main thread's side ---- */

static void
params_fill(struct fd_inspect_params *p)
{
	p->max_conns = p->max_conns ? p->max_conns : 1024;
	p->per_source = p->per_source ? p->per_source : (p->max_conns + 7) / 8;
	p->max_entries = p->max_entries ? p->max_entries : 65536;
	p->max_bytes = p->max_bytes ? p->max_bytes : (size_t)256 << 20;
	p->quic_per_sec = p->quic_per_sec ? p->quic_per_sec : 5000;
	p->hold_ms = p->hold_ms ? p->hold_ms : 2000;
	p->read_ms = p->read_ms ? p->read_ms : 120000;
	p->linger_ms = p->linger_ms ? p->linger_ms : 10000;
	p->queue = p->queue ? p->queue : 4096;
	p->answer_ms = p->answer_ms ? p->answer_ms : 1000;
}

struct fd_inspect *
fd_inspect_open(const struct fd_inspect_params *p)
{
	struct fd_inspect *in = calloc(1, sizeof(*in));

	if (in == NULL)
		return NULL;
	if (p != NULL)
		in->p = *p;
	params_fill(&in->p);
	for (int l = 0; l < NLISTS; l++)
		TAILQ_INIT(&in->lists[l].q);
	in->max_cut = (in->p.max_entries + 3) / 4;
	in->src_entries = (in->p.max_entries + 15) / 16;
	in->src_cut = (in->max_cut + 15) / 16;
	in->qcap = in->p.queue;
	in->quic_tokens = in->p.quic_per_sec;
	in->frag = fc_frag_open(&(struct fc_frag_params){ .max_datagrams = FRAG_DATAGRAMS,
							  .max_bytes = FRAG_BYTES,
							  .timeout_ms = FRAG_TIMEOUT_MS });
	in->q = calloc(in->qcap, sizeof(*in->q));
	in->table = calloc(TABLE_SIZE, sizeof(*in->table));
	in->ghosts = calloc(GHOSTS, sizeof(*in->ghosts));
	in->req = malloc(FI_REQ_MAX);
	if (in->p.ask == NULL)
		in->local = fi_parse_open(in->p.max_conns + in->p.max_conns / 4);
	if (in->q == NULL || in->table == NULL || in->ghosts == NULL || in->frag == NULL ||
	    in->req == NULL || (in->p.ask == NULL && in->local == NULL) ||
	    pthread_mutex_init(&in->mu, NULL) != 0) {
		fi_parse_close(in->local);
		free(in->req);
		fc_frag_close(in->frag);
		free(in->q);
		free(in->table);
		free(in->ghosts);
		free(in);
		errno = ENOMEM;
		return NULL;
	}
	return in;
}

void
fd_inspect_close(struct fd_inspect *in)
{
	if (in == NULL)
		return;
	for (int l = 0; l < NLISTS; l++)
		while (!TAILQ_EMPTY(&in->lists[l].q))
			ins_conn_free(in, TAILQ_FIRST(&in->lists[l].q));
	fc_fplist_free(&in->watched);
	fc_frag_close(in->frag);
	fi_parse_close(in->local);
	free(in->req);
	pthread_mutex_destroy(&in->mu);
	free(in->q);
	free(in->table);
	free(in->ghosts);
	free(in);
}

void
fd_inspect_tune(struct fd_inspect *in, uint32_t hold_ms, uint32_t read_ms, bool undecided_cut)
{
	pthread_mutex_lock(&in->mu);
	in->p.hold_ms = hold_ms;
	in->p.read_ms = read_ms;
	in->p.undecided_cut = undecided_cut;
	params_fill(&in->p);
	pthread_mutex_unlock(&in->mu);
}

void
fd_inspect_ports(struct fd_inspect *in, const uint16_t *ports, unsigned int n)
{
	uint64_t bits[65536 / 64] = { 0 };

	for (unsigned int i = 0; i < n; i++)
		bits[ports[i] / 64] |= 1ull << (ports[i] % 64);
	pthread_mutex_lock(&in->mu);
	for (unsigned int w = 0; w < 65536 / 64; w++)
		__atomic_store_n(&in->ports[w], bits[w], __ATOMIC_RELAXED);
	__atomic_store_n(&in->nports, n, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&in->mu);
}

void
fd_inspect_watch(struct fd_inspect *in, struct fc_fplist *l)
{
	struct fc_fplist old;

	pthread_mutex_lock(&in->mu);
	old = in->watched;
	in->watched = *l;
	pthread_mutex_unlock(&in->mu);
	*l = (struct fc_fplist){ 0 };
	fc_fplist_free(&old);
}

int
fd_inspect_take(struct fd_inspect *in, struct fd_inspect_decision *d)
{
	int got = 0;

	pthread_mutex_lock(&in->mu);
	if (in->qlen > 0) {
		*d = in->q[in->qhead];
		in->qhead = (in->qhead + 1) % in->qcap;
		in->qlen--;
		got = 1;
	}
	pthread_mutex_unlock(&in->mu);
	return got;
}

bool
fd_inspect_holds(const struct fd_inspect *in)
{
	return __atomic_load_n(&in->nentries, __ATOMIC_RELAXED) != 0;
}

uint64_t
fd_inspect_queued(const struct fd_inspect *in)
{
	return __atomic_load_n(&in->queued, __ATOMIC_ACQUIRE);
}

uint8_t
fd_inspect_verdict(struct fd_inspect *in, const struct fd_tuple *k)
{
	const struct conn *c;
	uint8_t v;

	pthread_mutex_lock(&in->mu);
	c = ins_conn_find(in, k);
	v = c != NULL && c->state == C_PASSED ? FC_VERDICT_CUT_THRU : FC_VERDICT_SEND_TO_IPS;
	pthread_mutex_unlock(&in->mu);
	return v;
}

void
fd_inspect_forget(struct fd_inspect *in, const struct fd_tuple *k)
{
	struct conn *c;

	pthread_mutex_lock(&in->mu);
	c = ins_conn_find(in, k);
	if (c != NULL && c->state == C_CUT)
		ins_conn_free(in, c);
	pthread_mutex_unlock(&in->mu);
}

void
fd_inspect_stats(struct fd_inspect *in, struct fd_inspect_stats *out)
{
	pthread_mutex_lock(&in->mu);
	*out = in->st;
	out->frames[FD_INSPECT_F_PASSED] = __atomic_load_n(&in->st.frames[FD_INSPECT_F_PASSED],
							   __ATOMIC_RELAXED);
	out->reading = in->lists[L_READING].n;
	out->entries = in->nentries;
	pthread_mutex_unlock(&in->mu);
}
