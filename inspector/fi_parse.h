/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fi_parse: the parsing side of the inspector - a parser a connection,
 * kept by the asker's id, fed the questions of fi_wire and answering
 * them: fc_tls (TLS over TCP) or fc_quic (QUIC Initials, decrypted), and
 * for a whole hello fc_ja's JA4 and JA3 and its server name.  Pure of
 * I/O: flowcut-inspect runs it behind its socket; flowcutd's unit tests,
 * fuzz target and benchmark run it in their own process (fd_inspect's
 * "local" parser).
 *
 * Bounded: at most max_states parsers, the least recently asked let go
 * first (its next question answered -ESTALE).  One thread.
 */
#ifndef FLOWCUT_FI_PARSE_H
#define FLOWCUT_FI_PARSE_H

#include <stddef.h>
#include <stdint.h>

#include "fi_wire.h"

struct fi_parse_stats {
	uint64_t asked;		/* questions taken (forgets too) */
	uint64_t bad;		/* questions refused (fi_wire_req_check) */
	uint64_t hellos;	/* whole hellos fingerprinted */
	uint64_t evicted;	/* parsers let go for room */
	uint64_t stale;		/* questions for an id not known (-ESTALE) */
	unsigned int states;	/* parsers now */
};

struct fi_parse;

/* fi_parse_open - no parser yet; max_states 0: 4096.  NULL, errno. */
struct fi_parse *fi_parse_open(unsigned int max_states);
void fi_parse_close(struct fi_parse *p);
/* fi_parse_reset - every parser let go (a new asker). */
void fi_parse_reset(struct fi_parse *p);

/*
 * fi_parse_ask - one question of n bytes.  1 and *a (the answer to send),
 * 0 (a forget: no answer), or -EBADMSG with why (nothing changed).
 */
int fi_parse_ask(struct fi_parse *p, const void *msg, size_t n, struct fi_ans *a,
		 const char **why);

void fi_parse_stats(const struct fi_parse *p, struct fi_parse_stats *st);

#endif
