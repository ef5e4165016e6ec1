/* SPDX-License-Identifier: BSD-3-Clause */
/* fc_ja: JA3 and JA4 of a ClientHello (fc_ja.h). */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "fc_ja.h"

/* The digests, fetched once a process and kept: OpenSSL's implicit fetch costs microseconds a call. */
static pthread_once_t mds_once = PTHREAD_ONCE_INIT;
static EVP_MD *md_md5, *md_sha256;

static void
mds_fetch(void)
{
	md_md5 = EVP_MD_fetch(NULL, "MD5", NULL);
	md_sha256 = EVP_MD_fetch(NULL, "SHA256", NULL);
}

int
fc_ja_ready(void)
{
	pthread_once(&mds_once, mds_fetch);
	return md_md5 != NULL && md_sha256 != NULL ? 0 : -EIO;
}

/* A string written into a fixed buffer; once full, it stays full. */
struct sb {
	char *p;
	size_t cap;
	size_t len;
	bool over;
};

static void
sb_put(struct sb *s, const char *d, size_t n)
{
	if (s->over || s->cap - s->len <= n) {	/* and room for the NUL */
		s->over = true;
		return;
	}
	memcpy(s->p + s->len, d, n);
	s->len += n;
	s->p[s->len] = '\0';
}

/* v in decimal after sep (may be ""): what "%s%u" writes, without printf's cost. */
static void
sb_dec(struct sb *s, const char *sep, unsigned int v)
{
	char t[16], *e = t + sizeof(t), *p = e;

	do
		*--p = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	while (*sep != '\0')
		*--p = *sep++;	/* sep is at most one character */
	sb_put(s, p, (size_t)(e - p));
}

static int
hex_digest(const EVP_MD *md, const char *data, size_t len, char *hex, size_t digits)
{
	static const char x[] = "0123456789abcdef";
	unsigned char d[EVP_MAX_MD_SIZE];
	unsigned int dlen = 0;

	if (md == NULL || EVP_Digest(data, len, d, &dlen, md, NULL) != 1 || dlen * 2 < digits)
		return -EIO;
	for (size_t i = 0; i < digits; i++)
		hex[i] = x[(d[i / 2] >> (i % 2 ? 0 : 4)) & 0xf];
	hex[digits] = '\0';
	return 0;
}

/* ---- JA3 ---- */

static void
ja3_list(struct sb *s, const struct fc_tls_hello *h, struct fc_tls_u16s l)
{
	const char *sep = "";

	for (unsigned int i = 0; i < l.n; i++) {
		uint16_t v = fc_tls_u16_at(h, l, i);

		if (fc_tls_is_grease(v))
			continue;
		sb_dec(s, sep, v);
		sep = "-";
	}
}

int
fc_ja3(const struct fc_tls_hello *h, char *str, size_t cap, char md5[FC_JA3_MD5_LEN + 1])
{
	struct sb s = { str, cap, 0, cap == 0 };
	const char *sep = "";

	pthread_once(&mds_once, mds_fetch);
	if (cap > 0)
		str[0] = '\0';
	sb_dec(&s, "", h->legacy_version);
	sb_put(&s, ",", 1);
	ja3_list(&s, h, h->ciphers);
	sb_put(&s, ",", 1);
	for (unsigned int i = 0; i < h->next; i++) {
		if (fc_tls_is_grease(h->ext[i]))
			continue;
		sb_dec(&s, sep, h->ext[i]);
		sep = "-";
	}
	sb_put(&s, ",", 1);
	ja3_list(&s, h, h->groups);
	sb_put(&s, ",", 1);
	sep = "";
	for (unsigned int i = 0; i < h->point_formats.len; i++) {
		sb_dec(&s, sep, fc_tls_bytes_ptr(h, h->point_formats)[i]);
		sep = "-";
	}
	if (s.over)
		return -ENOSPC;
	if (hex_digest(md_md5, str, s.len, md5, FC_JA3_MD5_LEN) != 0)
		return -EIO;
	return (int)s.len;
}

/* ---- JA4 ---- */

static const char *
ja4_version(uint16_t v)
{
	switch (v) {
	case 0x0304: return "13";
	case 0x0303: return "12";
	case 0x0302: return "11";
	case 0x0301: return "10";
	case 0x0300: return "s3";
	case 0x0002: return "s2";
	case 0xfeff: return "d1";
	case 0xfefd: return "d2";
	case 0xfefc: return "d3";
	default:     return "00";
	}
}

static bool
alnum(uint8_t c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* The first and last characters of the first ALPN value, or of its hex form. */
static void
ja4_alpn(const struct fc_tls_hello *h, char out[3])
{
	static const char x[] = "0123456789abcdef";
	struct fc_tls_bytes name;
	unsigned int pos = 0;

	if (!fc_tls_alpn_next(h, &pos, &name)) {
		memcpy(out, "00", 3);
		return;
	}
	const uint8_t *p = fc_tls_bytes_ptr(h, name);
	uint8_t first = p[0], last = p[name.len - 1];

	if (alnum(first) && alnum(last)) {
		out[0] = (char)first;
		out[1] = (char)last;
	} else {
		out[0] = x[first >> 4];
		out[1] = x[last & 0xf];
	}
	out[2] = '\0';
}

static int
u16_cmp(const void *a, const void *b)
{
	return (int)*(const uint16_t *)a - (int)*(const uint16_t *)b;
}

/* v[0, n) in ascending order: by insertion when short (a usual hello's lists), else qsort. */
static void
sort_u16s(uint16_t *v, unsigned int n)
{
	if (n > 64) {
		qsort(v, n, sizeof(*v), u16_cmp);
		return;
	}
	for (unsigned int i = 1; i < n; i++) {
		uint16_t x = v[i];
		unsigned int j = i;

		for (; j > 0 && v[j - 1] > x; j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
}

/*
 * A part of JA4 (b or c), made as 4-digit hex values joined by ',': hashed
 * (SHA-256) a chunk at a time as it is made, so that no part of any size
 * needs a buffer of its own, and appended to JA4_r when one is asked for.
 */
struct part {
	EVP_MD_CTX *md;
	struct sb *raw;		/* JA4_r, or NULL */
	size_t len;		/* the part's characters so far */
	size_t n;		/* of them in chunk, not yet hashed */
	bool failed;		/* OpenSSL failed */
	char chunk[1024];
};

static void
part_flush(struct part *p)
{
	if (p->n > 0 && EVP_DigestUpdate(p->md, p->chunk, p->n) != 1)
		p->failed = true;
	if (p->raw != NULL)
		sb_put(p->raw, p->chunk, p->n);
	p->n = 0;
}

/* The '_' before the signature algorithms. */
static void
part_underscore(struct part *p)
{
	if (p->n == sizeof(p->chunk))
		part_flush(p);
	p->chunk[p->n++] = '_';
	p->len++;
}

/* v as 4 hex digits, after a ',' unless it is the list's first. */
static void
part_hex(struct part *p, uint16_t v, bool first)
{
	static const char x[] = "0123456789abcdef";
	char *c;

	if (sizeof(p->chunk) - p->n < 5)
		part_flush(p);
	c = p->chunk + p->n;
	if (!first)
		*c++ = ',';
	c[0] = x[v >> 12];
	c[1] = x[(v >> 8) & 0xf];
	c[2] = x[(v >> 4) & 0xf];
	c[3] = x[v & 0xf];
	p->n += first ? 4 : 5;
	p->len += first ? 4 : 5;
}

/* Starts a part: 0, or -EIO. */
static int
part_start(struct part *p, EVP_MD_CTX *md, struct sb *raw)
{
	p->md = md;
	p->raw = raw;
	p->len = 0;
	p->n = 0;
	p->failed = false;
	return EVP_DigestInit_ex(md, md_sha256, NULL) == 1 ? 0 : -EIO;
}

/* Ends a part: its 12-digit hash (twelve zeros for an empty part) into out; 0 or -EIO. */
static int
part_end(struct part *p, char out[13])
{
	static const char x[] = "0123456789abcdef";
	unsigned char d[EVP_MAX_MD_SIZE];
	unsigned int dlen = 0;

	part_flush(p);
	if (p->len == 0) {
		memcpy(out, "000000000000", 13);
		return 0;
	}
	if (p->failed || EVP_DigestFinal_ex(p->md, d, &dlen) != 1 || dlen < 6)
		return -EIO;
	for (int i = 0; i < 12; i++)
		out[i] = x[(d[i / 2] >> (i % 2 ? 0 : 4)) & 0xf];
	out[12] = '\0';
	return 0;
}

/* The values of a list without GREASE, sorted, into out. */
static unsigned int
sorted_u16s(uint16_t *out, const struct fc_tls_hello *h, struct fc_tls_u16s l)
{
	unsigned int m = 0;

	for (unsigned int i = 0; i < l.n; i++) {
		uint16_t v = fc_tls_u16_at(h, l, i);

		if (!fc_tls_is_grease(v))
			out[m++] = v;
	}
	sort_u16s(out, m);
	return m;
}

/* The extensions' types without GREASE, SNI and ALPN, sorted, into out. */
static unsigned int
sorted_exts(uint16_t *out, const struct fc_tls_hello *h)
{
	unsigned int m = 0;

	for (unsigned int i = 0; i < h->next; i++) {
		uint16_t v = h->ext[i];

		if (!fc_tls_is_grease(v) && v != FC_TLS_EXT_SERVER_NAME && v != FC_TLS_EXT_ALPN)
			out[m++] = v;
	}
	sort_u16s(out, m);
	return m;
}

/* Parts b and c of h, hashed into hb and hc, and appended to raw (b '_' c) unless it is NULL. */
static int
ja4_parts(const struct fc_tls_hello *h, EVP_MD_CTX *md, struct sb *raw, char hb[13], char hc[13])
{
	/* the sorted ciphers (at most 32767: a 65534-byte list), then extensions (fewer) */
	uint16_t vals[65534 / 2];
	struct part p;
	unsigned int n;
	bool first = true;
	int rc;

	rc = part_start(&p, md, raw);
	n = sorted_u16s(vals, h, h->ciphers);
	for (unsigned int i = 0; rc == 0 && i < n; i++)
		part_hex(&p, vals[i], i == 0);
	if (rc == 0)
		rc = part_end(&p, hb);
	if (rc != 0)
		return rc;
	if (raw != NULL)
		sb_put(raw, "_", 1);

	rc = part_start(&p, md, raw);
	n = sorted_exts(vals, h);
	for (unsigned int i = 0; rc == 0 && i < n; i++)
		part_hex(&p, vals[i], i == 0);
	for (unsigned int i = 0; rc == 0 && i < h->sigalgs.n; i++) {
		uint16_t v = fc_tls_u16_at(h, h->sigalgs, i);

		if (fc_tls_is_grease(v))
			continue;
		if (first)
			part_underscore(&p);	/* no '_' when there are no signature algorithms */
		part_hex(&p, v, first);
		first = false;
	}
	return rc != 0 ? rc : part_end(&p, hc);
}

int
fc_ja4(const struct fc_tls_hello *h, char transport, char ja4[FC_JA4_LEN + 1], char *raw,
       size_t rawcap)
{
	struct sb r = { raw, rawcap, 0, rawcap == 0 };
	char alpn[3], a[11], hb[13], hc[13];	/* a with its '_', not NUL-terminated */
	unsigned int nc = 0, ne = 0;
	EVP_MD_CTX *md;
	int rc;

	if (transport != 't' && transport != 'q')
		return -EINVAL;
	pthread_once(&mds_once, mds_fetch);
	if (md_sha256 == NULL)
		return -EIO;
	for (unsigned int i = 0; i < h->ciphers.n; i++)
		nc += !fc_tls_is_grease(fc_tls_u16_at(h, h->ciphers, i));
	for (unsigned int i = 0; i < h->next; i++)
		ne += !fc_tls_is_grease(h->ext[i]);
	nc = nc > 99 ? 99 : nc;
	ne = ne > 99 ? 99 : ne;
	ja4_alpn(h, alpn);
	/* a: transport, version, d or i, two digits of each count, the ALPN's two characters */
	a[0] = transport;
	memcpy(a + 1, ja4_version(fc_tls_version(h)), 2);
	a[3] = h->has_sni ? 'd' : 'i';
	a[4] = (char)('0' + nc / 10);
	a[5] = (char)('0' + nc % 10);
	a[6] = (char)('0' + ne / 10);
	a[7] = (char)('0' + ne % 10);
	memcpy(a + 8, alpn, 2);
	a[10] = '_';
	if (raw != NULL) {
		if (rawcap > 0)
			raw[0] = '\0';
		sb_put(&r, a, 11);
	}
	md = EVP_MD_CTX_new();
	rc = md == NULL ? -EIO : ja4_parts(h, md, raw != NULL ? &r : NULL, hb, hc);
	EVP_MD_CTX_free(md);
	if (rc != 0)
		return rc;
	memcpy(ja4, a, 11);
	memcpy(ja4 + 11, hb, 12);
	ja4[23] = '_';
	memcpy(ja4 + 24, hc, 13);	/* with its NUL */
	return raw != NULL && r.over ? -ENOSPC : 0;
}
