/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fi_parse: see fi_parse.h.  The parsers are kept in a uthash by id and
 * on a list by age (the least recently asked first).
 */
#include "fi_parse.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <uthash.h>

#include "fc_ja.h"
#include "fc_quic.h"
#include "fc_tls.h"

#define STATES_DEFAULT 4096

struct state {
	UT_hash_handle hh;
	TAILQ_ENTRY(state) age;
	uint64_t id;
	uint8_t kind;
	struct fc_tls_hello *tls;	/* FI_TLS */
	struct fc_quic_hello *quic;	/* FI_QUIC */
};

struct fi_parse {
	struct state *by_id;
	TAILQ_HEAD(, state) ages;
	unsigned int max;
	struct fi_parse_stats st;
	char ja3str[FC_JA_STR_MAX];	/* fc_ja3's scratch */
};

struct fi_parse *
fi_parse_open(unsigned int max_states)
{
	struct fi_parse *p = calloc(1, sizeof(*p));

	if (p == NULL)
		return NULL;
	TAILQ_INIT(&p->ages);
	p->max = max_states ? max_states : STATES_DEFAULT;
	return p;
}

static void
state_free(struct fi_parse *p, struct state *s)
{
	HASH_DEL(p->by_id, s);
	TAILQ_REMOVE(&p->ages, s, age);
	free(s->tls);
	free(s->quic);
	free(s);
	p->st.states--;
}

void
fi_parse_reset(struct fi_parse *p)
{
	while (!TAILQ_EMPTY(&p->ages))
		state_free(p, TAILQ_FIRST(&p->ages));
}

void
fi_parse_close(struct fi_parse *p)
{
	if (p == NULL)
		return;
	fi_parse_reset(p);
	free(p);
}

/* A new parser for id (one it had let go first), the oldest let go when full.  NULL: no memory. */
static struct state *
state_new(struct fi_parse *p, uint64_t id, uint8_t kind)
{
	struct state *s;

	HASH_FIND(hh, p->by_id, &id, sizeof(id), s);
	if (s != NULL)
		state_free(p, s);
	if (p->st.states >= p->max) {
		state_free(p, TAILQ_FIRST(&p->ages));
		p->st.evicted++;
	}
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return NULL;
	if (kind == FI_TLS)
		s->tls = malloc(sizeof(*s->tls));
	else
		s->quic = malloc(sizeof(*s->quic));
	if (s->tls == NULL && s->quic == NULL) {
		free(s);
		return NULL;
	}
	if (s->tls != NULL)
		fc_tls_init(s->tls);
	else
		fc_quic_init(s->quic);
	s->id = id;
	s->kind = kind;
	HASH_ADD(hh, p->by_id, id, sizeof(s->id), s);
	TAILQ_INSERT_TAIL(&p->ages, s, age);
	p->st.states++;
	return s;
}

static void
printable(const uint8_t *b, size_t n, char *out, size_t cap)
{
	size_t o = 0;

	for (size_t i = 0; i < n && o + 1 < cap; i++)
		out[o++] = b[i] > 0x20 && b[i] < 0x7f ? (char)b[i] : '?';
	out[o] = '\0';
}

/* A whole hello's fingerprints and name into a. */
static void
fingerprint(struct fi_parse *p, const struct fc_tls_hello *h, char transport, struct fi_ans *a)
{
	p->st.hellos++;
	if (fc_ja4(h, transport, a->ja4, NULL, 0) != 0)
		a->ja4[0] = '\0';
	if (fc_ja3(h, p->ja3str, sizeof(p->ja3str), a->ja3) < 0)
		a->ja3[0] = '\0';
	if (h->has_sni)
		printable(fc_tls_bytes_ptr(h, h->sni), h->sni.len, a->sni, sizeof(a->sni));
}

int
fi_parse_ask(struct fi_parse *p, const void *msg, size_t n, struct fi_ans *a, const char **why)
{
	const struct fi_req *r = msg;
	struct state *s;
	uint64_t id;

	if (fi_wire_req_check(msg, n, why) != 0) {
		p->st.bad++;
		return -EBADMSG;
	}
	p->st.asked++;
	memcpy(&id, &r->id, sizeof(id));
	HASH_FIND(hh, p->by_id, &id, sizeof(id), s);
	if (r->kind == FI_FORGET) {
		if (s != NULL)
			state_free(p, s);
		return 0;
	}
	memset(a, 0, sizeof(*a));
	a->version = FI_WIRE_VERSION;
	a->seq = r->seq;
	a->kind = r->kind;
	a->id = id;
	memcpy(a->ctx, r->ctx, sizeof(a->ctx));
	if (r->flags & FI_FIRST) {
		s = state_new(p, id, r->kind);
		if (s == NULL) {
			a->rc = -ENOMEM;
			return 1;
		}
	} else if (s == NULL || s->kind != r->kind) {
		p->st.stale++;
		a->rc = -ESTALE;
		return 1;
	} else {
		TAILQ_REMOVE(&p->ages, s, age);
		TAILQ_INSERT_TAIL(&p->ages, s, age);
	}
	if (s->tls != NULL) {
		a->rc = fc_tls_feed(s->tls, r->data, r->len, NULL);
		if (a->rc == 0)
			fingerprint(p, s->tls, 't', a);
	} else {
		a->rc = fc_quic_feed(s->quic, r->data, r->len);
		if (a->rc == 0)
			fingerprint(p, &s->quic->hello, 'q', a);
	}
	return 1;
}

void
fi_parse_stats(const struct fi_parse *p, struct fi_parse_stats *st)
{
	*st = p->st;
}
