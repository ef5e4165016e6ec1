/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_inspect: see bench_inspect.h.
 *
 *   flowcut-bench inspect
 *
 * On one core, each figure beside a floor measured in the same run:
 *
 *   - TLS ClientHellos judged a second: fc_tls_init, fc_tls_feed, fc_ja4
 *     and fc_ja3, what fd_inspect's judge() runs on a whole hello, on the
 *     JA4 specification's Chrome hello and on its post-quantum form
 *     (X25519MLKEM768, a 1216-byte key share), both built by
 *     tests/lib/fc_hello.  Floors: the bare parse (fc_tls_init and
 *     fc_tls_feed) and a memcpy of the same bytes.
 *   - QUIC Initials judged a second: fc_quic_init, fc_quic_feed, fc_ja4
 *     and fc_ja3 on RFC 9001 A.2's client Initial, a new connection each
 *     time (its keys derived, as for every new DCID), and fc_quic_feed
 *     alone.  Floor: OpenSSL's own AES-128-GCM open of the same packet's
 *     payload (key, nonce and unprotected header made beforehand, one
 *     context reused): what any reader of that packet must spend.  Then
 *     what a new connection adds to it, the keys of its DCID
 *     (fc_quic_client_keys: OpenSSL's HKDF), and fc_quic_feed of the
 *     same Initial with the keys kept (as for a connection's later ones).
 *   - One datagram of 37 coalesced client Initials (1,406 bytes; each
 *     sealed here with the RFC's DCID around a PING, so that each one
 *     decrypts): what fc_quic_feed spends on it, and its answer.
 *   - The channel's cost a hello: the Chrome-like hello asked of
 *     inspector/fi_parse as flowcutd asks flowcut-inspect (an fi_wire
 *     question, a SOCK_SEQPACKET socket to a process of its own, its
 *     answer read back), one at a time (the round trip) and 64 in flight
 *     (flowcutd's way under load), beside the same question answered by
 *     fi_parse in this process (the floor: the parse and the fingerprints
 *     alone).  The difference is what the boundary costs.
 *
 * Each figure is the median of REPS runs of about RUN_NS each; a ratio is
 * of two medians.  Every measured call is checked once for its answer
 * before it is timed.
 */
#include "bench_inspect.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/evp.h>

#include "fc_hello.h"
#include "fc_hex.h"
#include "fc_ja.h"
#include "fc_quic.h"
#include "fc_quicvec.h"
#include "fc_tls.h"
#include "fi_parse.h"
#include "fi_wire.h"

#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define REPS 5
#define RUN_NS 80e6		/* a run: about 80 ms of calls */
#define COALESCED 37		/* the datagram: 37 Initials in 1.4 KB */
#define TAG_LEN 16

/* One measured call; returns its answer (0 or a negative errno). */
typedef int bench_fn(void *ctx);

static double
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int
cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* ns a call of fn: the median of REPS runs, each as many calls as take about RUN_NS. */
static double
per_call_ns(bench_fn *fn, void *ctx)
{
	double runs[REPS], t;
	uint64_t n = 1;

	for (;;) {
		t = now_ns();
		for (uint64_t i = 0; i < n; i++)
			fn(ctx);
		t = now_ns() - t;
		if (t >= RUN_NS / 16 || n >= (1ull << 40))
			break;
		n *= 2;
	}
	n = (uint64_t)((double)n * RUN_NS / (t > 1 ? t : 1)) + 1;
	for (int r = 0; r < REPS; r++) {
		t = now_ns();
		for (uint64_t i = 0; i < n; i++)
			fn(ctx);
		runs[r] = (now_ns() - t) / (double)n;
	}
	qsort(runs, REPS, sizeof(runs[0]), cmp_dbl);
	return runs[REPS / 2];
}

static const char *
rc_name(int rc)
{
	switch (rc) {
	case 0:         return "0 (a whole hello)";
	case -EAGAIN:   return "-EAGAIN";
	case -E2BIG:    return "-E2BIG";
	case -EBADMSG:  return "-EBADMSG";
	case -ENOMSG:   return "-ENOMSG";
	case -EMSGSIZE: return "-EMSGSIZE";
	case -EIO:      return "-EIO";
	default:        return "another errno";
	}
}

/* Checks fn's answer once, then times it: ns a call, or < 0 when the answer is wrong. */
static double
measure(const char *what, bench_fn *fn, void *ctx, int want)
{
	int rc = fn(ctx);

	if (rc != want) {
		fprintf(stderr, "flowcut-bench inspect: %s answered %d (%s), not %d\n", what, rc,
			rc_name(rc), want);
		return -1;
	}
	return per_call_ns(fn, ctx);
}

/* ---- TLS over TCP ---- */

struct tls_case {
	const uint8_t *rec;		/* the hello's records */
	size_t len;
	uint8_t *copy;			/* memcpy's destination */
	struct fc_tls_hello *h;
	char *str;			/* fc_ja3's string */
	size_t cap;
};

static int
tls_memcpy(void *ctx)
{
	struct tls_case *c = ctx;

	memcpy(c->copy, c->rec, c->len);
	__asm__ __volatile__("" : : "r"(c->copy) : "memory");	/* the copy is used */
	return 0;
}

static int
tls_parse(void *ctx)
{
	struct tls_case *c = ctx;

	fc_tls_init(c->h);
	return fc_tls_feed(c->h, c->rec, c->len, NULL);
}

/* As fd_inspect's judge(): the hello read, then its JA4 and its JA3. */
static int
tls_judge(void *ctx)
{
	struct tls_case *c = ctx;
	char ja4[FC_JA4_LEN + 1], md5[FC_JA3_MD5_LEN + 1];
	int rc = tls_parse(ctx);

	if (rc != 0)
		return rc;
	if (fc_ja4(c->h, 't', ja4, NULL, 0) != 0 || fc_ja3(c->h, c->str, c->cap, md5) < 0)
		return -EIO;
	return 0;
}

/* ---- QUIC ---- */

struct quic_case {
	const uint8_t *dgram;
	size_t len;
	struct fc_quic_hello *q;
	char *str;
	size_t cap;
	/* the floor: the packet's payload opened by OpenSSL alone */
	EVP_CIPHER *gcm;
	EVP_CIPHER_CTX *ctx;
	uint8_t key[16], nonce[12], aad[64];
	size_t aad_len;
	const uint8_t *ct, *tag;
	size_t ct_len;
	uint8_t *plain;
	struct fc_quic_keys kept;	/* the keys fc_quic_feed derived, for quic_feed_kept */
};

static int
quic_feed(void *ctx)
{
	struct quic_case *c = ctx;

	fc_quic_init(c->q);
	return fc_quic_feed(c->q, c->dgram, c->len);
}

/* A connection's later Initial: its keys kept from the first. */
static int
quic_feed_kept(void *ctx)
{
	struct quic_case *c = ctx;

	fc_quic_init(c->q);
	c->q->keys = c->kept;
	return fc_quic_feed(c->q, c->dgram, c->len);
}

static int
quic_keys(void *ctx)
{
	struct quic_case *c = ctx;
	uint8_t key[16], iv[12], hp[16];

	return fc_quic_client_keys(FC_QUIC_V1, c->dgram + 6, c->dgram[5], key, iv, hp);
}

static int
quic_judge(void *ctx)
{
	struct quic_case *c = ctx;
	char ja4[FC_JA4_LEN + 1], md5[FC_JA3_MD5_LEN + 1];
	int rc = quic_feed(ctx);

	if (rc != 0)
		return rc;
	if (fc_ja4(&c->q->hello, 'q', ja4, NULL, 0) != 0 ||
	    fc_ja3(&c->q->hello, c->str, c->cap, md5) < 0)
		return -EIO;
	return 0;
}

static int
quic_floor(void *ctx)
{
	struct quic_case *c = ctx;
	int n;

	if (EVP_DecryptInit_ex2(c->ctx, c->gcm, c->key, c->nonce, NULL) != 1 ||
	    EVP_DecryptUpdate(c->ctx, NULL, &n, c->aad, (int)c->aad_len) != 1 ||
	    EVP_DecryptUpdate(c->ctx, c->plain, &n, c->ct, (int)c->ct_len) != 1 ||
	    EVP_CIPHER_CTX_ctrl(c->ctx, EVP_CTRL_GCM_SET_TAG, TAG_LEN, (void *)c->tag) != 1 ||
	    EVP_DecryptFinal_ex(c->ctx, c->plain + n, &n) != 1)
		return -EBADMSG;
	return 0;
}

/* AES-128-ECB of one block (header protection's mask), by OpenSSL: 0 or -EIO. */
static int
ecb_block(const uint8_t key[16], const uint8_t in[16], uint8_t out[16])
{
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	int n = 0, ok;

	ok = c != NULL && EVP_EncryptInit_ex(c, EVP_aes_128_ecb(), NULL, key, NULL) == 1 &&
	     EVP_CIPHER_CTX_set_padding(c, 0) == 1 && EVP_EncryptUpdate(c, out, &n, in, 16) == 1 &&
	     n == 16;
	EVP_CIPHER_CTX_free(c);
	return ok ? 0 : -EIO;
}

/* A QUIC varint at p[*pos] (the packets here are whole: no bound to check past the RFC's). */
static uint64_t
varint(const uint8_t *p, size_t *pos)
{
	size_t n = (size_t)1 << (p[*pos] >> 6);
	uint64_t v = p[*pos] & 0x3f;

	for (size_t i = 1; i < n; i++)
		v = v << 8 | p[*pos + i];
	*pos += n;
	return v;
}

/* The floor's inputs from a version 1 client Initial: its header unprotected, key, nonce. */
static int
floor_make(struct quic_case *c)
{
	const uint8_t *p = c->dgram;
	uint8_t iv[12], hp[16], mask[16];
	size_t pos = 6 + p[5], pn_off, pn_len;
	uint64_t plen;

	if (fc_quic_client_keys(FC_QUIC_V1, p + 6, p[5], c->key, iv, hp) != 0)
		return -EIO;
	pos += 1 + p[pos];		/* SCID */
	pos += varint(p, &pos);		/* the token */
	plen = varint(p, &pos);
	pn_off = pos;
	if (ecb_block(hp, p + pn_off + 4, mask) != 0)
		return -EIO;
	pn_len = (size_t)((p[0] ^ mask[0]) & 3) + 1;
	c->aad_len = pn_off + pn_len;
	if (c->aad_len > sizeof(c->aad))
		return -EMSGSIZE;
	memcpy(c->aad, p, c->aad_len);
	c->aad[0] ^= mask[0] & 0x0f;
	memcpy(c->nonce, iv, 12);
	for (size_t i = 0; i < pn_len; i++) {
		c->aad[pn_off + i] ^= mask[1 + i];
		c->nonce[12 - pn_len + i] ^= c->aad[pn_off + i];
	}
	c->ct = p + pn_off + pn_len;
	c->ct_len = (size_t)plen - pn_len - TAG_LEN;
	c->tag = c->ct + c->ct_len;
	return 0;
}

/*
 * A version 1 client Initial around the frames plain[0, plen), packet
 * number pn (1 byte), sealed as RFC 9001 5 says (OpenSSL's EVP), into out:
 * its length, or 0 when OpenSSL failed.
 */
static size_t
seal_initial(const uint8_t *dcid, uint8_t dcid_len, uint8_t pn, const uint8_t *plain, size_t plen,
	     uint8_t *out)
{
	uint8_t key[16], iv[12], hp[16], mask[16];
	size_t len = 0, pn_off, rest = 1 + plen + TAG_LEN;
	EVP_CIPHER_CTX *c;
	int n = 0, ok;

	if (fc_quic_client_keys(FC_QUIC_V1, dcid, dcid_len, key, iv, hp) != 0)
		return 0;
	out[len++] = 0xc0;		/* long header, fixed bit, Initial, a 1-byte packet number */
	memcpy(out + len, "\x00\x00\x00\x01", 4);
	len += 4;
	out[len++] = dcid_len;
	memcpy(out + len, dcid, dcid_len);
	len += dcid_len;
	out[len++] = 0;			/* no SCID */
	out[len++] = 0;			/* no token */
	out[len++] = (uint8_t)(0x40 | rest >> 8);	/* Length, a 2-byte varint */
	out[len++] = (uint8_t)rest;
	pn_off = len;
	out[len++] = pn;
	iv[11] ^= pn;
	c = EVP_CIPHER_CTX_new();
	ok = c != NULL && EVP_EncryptInit_ex(c, EVP_aes_128_gcm(), NULL, key, iv) == 1 &&
	     EVP_EncryptUpdate(c, NULL, &n, out, (int)len) == 1 &&
	     EVP_EncryptUpdate(c, out + len, &n, plain, (int)plen) == 1 &&
	     EVP_EncryptFinal_ex(c, out + len + n, &n) == 1 &&
	     EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_GET_TAG, TAG_LEN, out + len + plen) == 1;
	EVP_CIPHER_CTX_free(c);
	len += plen + TAG_LEN;
	if (!ok || len < pn_off + 4 + 16 || ecb_block(hp, out + pn_off + 4, mask) != 0)
		return 0;
	out[0] ^= mask[0] & 0x0f;
	out[pn_off] ^= mask[1];
	return len;
}

/* ---- the channel (fi_wire to a process of its own) ---- */

#define IN_FLIGHT 64

struct chan_case {
	int fd;				/* flowcutd's end */
	pid_t child;
	struct fi_parse *local;		/* the floor: the same parser in this process */
	uint8_t *q;			/* the question */
	size_t qlen;
};

/* The child: flowcut-inspect's loop (fi_parse behind the socket), without the jail. */
static void
chan_child(int fd)
{
	static uint8_t buf[FI_REQ_MAX] __attribute__((aligned(8)));
	struct fi_parse *p = fi_parse_open(0);
	struct fi_ans a;
	ssize_t n;

	while (p != NULL && (n = recv(fd, buf, sizeof(buf), 0)) > 0)
		if (fi_parse_ask(p, buf, (size_t)n, &a, NULL) == 1 &&
		    send(fd, &a, sizeof(a), MSG_NOSIGNAL) != (ssize_t)sizeof(a))
			break;
	_exit(0);
}

static int
chan_local(void *ctx)
{
	struct chan_case *c = ctx;
	struct fi_ans a;

	return fi_parse_ask(c->local, c->q, c->qlen, &a, NULL) == 1 ? a.rc : -EIO;
}

/* One question, its answer read: the round trip. */
static int
chan_round(void *ctx)
{
	struct chan_case *c = ctx;
	struct fi_ans a;

	if (send(c->fd, c->q, c->qlen, 0) != (ssize_t)c->qlen ||
	    recv(c->fd, &a, sizeof(a), 0) != (ssize_t)sizeof(a) || a.ja4[0] == '\0')
		return -EIO;
	return a.rc;
}

/* IN_FLIGHT questions, then their answers: as flowcutd asks under load. */
static int
chan_batch(void *ctx)
{
	struct chan_case *c = ctx;
	struct fi_ans a;
	int rc = 0;

	for (int i = 0; i < IN_FLIGHT; i++)
		if (send(c->fd, c->q, c->qlen, 0) != (ssize_t)c->qlen)
			return -EIO;
	for (int i = 0; i < IN_FLIGHT; i++)
		if (recv(c->fd, &a, sizeof(a), 0) != (ssize_t)sizeof(a) || (rc = a.rc) != 0)
			return rc != 0 ? rc : -EIO;
	return rc;
}

static int
chan_open(struct chan_case *c, const uint8_t *hello, size_t len)
{
	struct fi_req *r;
	int sv[2], sz = 1 << 21;

	c->qlen = sizeof(*r) + len;
	c->q = calloc(1, c->qlen);
	c->local = fi_parse_open(0);
	if (c->q == NULL || c->local == NULL ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
		return -1;
	r = (struct fi_req *)c->q;
	*r = (struct fi_req){ .version = FI_WIRE_VERSION, .kind = FI_TLS, .flags = FI_FIRST,
			      .len = (uint16_t)len, .id = 1 };
	memcpy(r->data, hello, len);
	(void)setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	c->child = fork();
	if (c->child < 0)
		return -1;
	if (c->child == 0) {
		close(sv[0]);
		chan_child(sv[1]);
	}
	close(sv[1]);
	c->fd = sv[0];
	return 0;
}

static void
chan_close(struct chan_case *c)
{
	if (c->fd > 0)
		close(c->fd);	/* the child's recv ends */
	if (c->child > 0)
		waitpid(c->child, NULL, 0);
	fi_parse_close(c->local);
	free(c->q);
}

/* ---- the run ---- */

static void
tls_row(const char *name, const double ns[3], size_t bytes)
{
	printf("  %-30s %5zu %10.0f %8.0f %10.0f %8.0f %6.1fx %11.0f %7.0f %7.1fx\n", name, bytes,
	       1e9 / ns[0], ns[0], 1e9 / ns[1], ns[1], ns[0] / ns[1], 1e9 / ns[2], ns[2],
	       ns[0] / ns[2]);
}

int
bench_inspect(int argc, char **argv)
{
	static const uint8_t ping[3] = { 0x01, 0x00, 0x00 };	/* PING, PADDING, PADDING */
	static const struct {
		const char *name;
		uint16_t group;
		unsigned int share;
	} hellos[] = {
		{ "Chrome-like (X25519)", 0x001d, 32 },
		{ "post-quantum (X25519MLKEM768)", 0x11ec, 1216 },
	};
	static uint8_t rec[2][4096], copy[4096], pkt[1500], dgram[1500], plain[1500];
	static char str[FC_JA_STR_MAX];
	struct fc_tls_hello *h = malloc(sizeof(*h));
	struct fc_quic_hello *q = malloc(sizeof(*q));
	struct quic_case qc = { .q = q, .str = str, .cap = sizeof(str), .plain = plain };
	double ns[2][3], qns[5], cns, chn[3];
	struct chan_case ch = { .fd = -1 };
	size_t len[2], ilen, dlen = 0;
	int rc = 1, answer;

	(void)argv;
	if (argc != 1) {
		fprintf(stderr, "usage: flowcut-bench inspect\n");
		free(h);
		free(q);
		return 2;
	}
	qc.gcm = EVP_CIPHER_fetch(NULL, "AES-128-GCM", NULL);
	qc.ctx = EVP_CIPHER_CTX_new();
	if (h == NULL || q == NULL || qc.gcm == NULL || qc.ctx == NULL) {
		fprintf(stderr, "flowcut-bench inspect: out of memory, or OpenSSL has no AES-128-GCM\n");
		goto out;
	}

	for (int i = 0; i < 2; i++) {
		struct fc_hello_spec s;
		struct tls_case c = { .copy = copy, .h = h, .str = str, .cap = sizeof(str) };

		fc_hello_chrome(&s, hellos[i].group, hellos[i].share);
		len[i] = fc_hello_build(&s, rec[i], sizeof(rec[i]), NULL);
		c.rec = rec[i];
		c.len = len[i];
		if (len[i] == 0) {
			fprintf(stderr, "flowcut-bench inspect: the %s hello does not fit %zu bytes\n",
				hellos[i].name, sizeof(rec[i]));
			goto out;
		}
		ns[i][0] = measure("fc_tls_feed + fc_ja4 + fc_ja3", tls_judge, &c, 0);
		ns[i][1] = measure("fc_tls_feed", tls_parse, &c, 0);
		ns[i][2] = measure("memcpy", tls_memcpy, &c, 0);
		if (ns[i][0] < 0 || ns[i][1] < 0)
			goto out;
	}

	qc.len = ilen = fc_hex(fc_rfc9001_client_initial, strlen(fc_rfc9001_client_initial), pkt,
				sizeof(pkt));
	qc.dgram = pkt;
	if (qc.len == 0 || floor_make(&qc) != 0) {
		fprintf(stderr, "flowcut-bench inspect: RFC 9001 A.2's Initial could not be unprotected\n");
		goto out;
	}
	qns[0] = measure("fc_quic_feed + fc_ja4 + fc_ja3", quic_judge, &qc, 0);
	qns[1] = measure("fc_quic_feed", quic_feed, &qc, 0);
	qns[2] = measure("AES-128-GCM open (OpenSSL)", quic_floor, &qc, 0);
	qns[3] = measure("fc_quic_client_keys", quic_keys, &qc, 0);
	qc.kept = q->keys;
	qns[4] = measure("fc_quic_feed, keys kept", quic_feed_kept, &qc, 0);
	if (qns[0] < 0 || qns[1] < 0 || qns[2] < 0 || qns[3] < 0 || qns[4] < 0)
		goto out;

	for (uint8_t i = 0; i < COALESCED; i++) {
		size_t n = seal_initial(pkt + 6, pkt[5], i, ping, sizeof(ping), dgram + dlen);

		if (n == 0) {
			fprintf(stderr, "flowcut-bench inspect: OpenSSL could not seal Initial %u\n", i);
			goto out;
		}
		dlen += n;
	}
	qc.dgram = dgram;
	qc.len = dlen;
	answer = quic_feed(&qc);
	cns = measure("fc_quic_feed of 37 coalesced Initials", quic_feed, &qc, answer);

	if (chan_open(&ch, rec[0], len[0]) != 0) {
		fprintf(stderr, "flowcut-bench inspect: the channel's process: %s\n", strerror(errno));
		goto out;
	}
	chn[0] = measure("fi_parse_ask, in this process", chan_local, &ch, 0);
	chn[1] = measure("a question over the channel, its answer read", chan_round, &ch, 0);
	chn[2] = measure("64 questions over the channel, then their answers", chan_batch, &ch, 0) /
		 IN_FLIGHT;
	if (chn[0] < 0 || chn[1] < 0 || chn[2] < 0)
		goto out;

	printf("flowcut-bench inspect: one core; each figure the median of %d runs of about %.0f ms\n",
	       REPS, RUN_NS / 1e6);
	printf("TLS ClientHellos judged (fc_tls_feed, fc_ja4, fc_ja3), beside the bare parse "
	       "(fc_tls_feed) and a memcpy of the same bytes:\n");
	printf("  %-30s %5s %10s %8s %10s %8s %7s %11s %7s %8s\n", "hello", "bytes", "judged/s",
	       "ns", "parse/s", "ns", "x parse", "memcpy/s", "ns", "x memcpy");
	for (int i = 0; i < 2; i++)
		tls_row(hellos[i].name, ns[i], len[i]);
	printf("QUIC Initials judged (fc_quic_feed, fc_ja4, fc_ja3; a new connection each), beside "
	       "OpenSSL's AES-128-GCM open of the same packet's payload:\n");
	printf("  RFC 9001 A.2 client Initial (%zu bytes): judged %.0f/s (%.0f ns), fc_quic_feed "
	       "alone %.0f/s (%.0f ns); floor %.0f/s (%.0f ns); judged %.1fx floor, "
	       "fc_quic_feed %.1fx floor\n", ilen, 1e9 / qns[0], qns[0], 1e9 / qns[1],
	       qns[1], 1e9 / qns[2], qns[2], qns[0] / qns[2], qns[1] / qns[2]);
	printf("  a new connection's keys (fc_quic_client_keys, OpenSSL's HKDF): %.0f ns; "
	       "fc_quic_feed with its keys kept (a connection's later Initials): %.0f/s (%.0f ns), "
	       "%.1fx floor\n", qns[3], 1e9 / qns[4], qns[4], qns[4] / qns[2]);
	printf("One datagram of %d coalesced client Initials (%zu bytes, each a PING that "
	       "decrypts): fc_quic_feed answers %s in %.2f us (%.2fx the floor of one Initial)\n",
	       COALESCED, dlen, rc_name(answer), cns / 1e3, cns / qns[2]);
	printf("The channel to flowcut-inspect (fi_wire over SOCK_SEQPACKET to a process of its own), "
	       "the Chrome-like hello, beside fi_parse in this process:\n");
	printf("  in this process (the floor): %.0f/s (%.0f ns); one at a time over the channel: "
	       "%.0f/s (%.0f ns, %.1fx; the channel's cost %.0f ns a hello); %d in flight: %.0f/s "
	       "(%.0f ns a hello, %.1fx; its cost %.0f ns)\n", 1e9 / chn[0], chn[0], 1e9 / chn[1],
	       chn[1], chn[1] / chn[0], chn[1] - chn[0], IN_FLIGHT, 1e9 / chn[2], chn[2],
	       chn[2] / chn[0], chn[2] - chn[0]);
	rc = 0;
out:
	chan_close(&ch);
	EVP_CIPHER_CTX_free(qc.ctx);
	EVP_CIPHER_free(qc.gcm);
	free(h);
	free(q);
	return rc;
}
