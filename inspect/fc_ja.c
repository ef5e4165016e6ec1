/* SPDX-License-Identifier: BSD-3-Clause */
/* fc_ja: JA3 and JA4 of a ClientHello (fc_ja.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "fc_ja.h"

/* A string written into a fixed buffer; once full, it stays full. */
struct sb {
	char *p;
	size_t cap;
	size_t len;
	bool over;
};

static void
sb_add(struct sb *s, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (s->over)
		return;
	va_start(ap, fmt);
	n = vsnprintf(s->p + s->len, s->cap - s->len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= s->cap - s->len)
		s->over = true;
	else
		s->len += (size_t)n;
}

static int
hex_digest(const EVP_MD *md, const char *data, size_t len, char *hex, size_t digits)
{
	static const char x[] = "0123456789abcdef";
	unsigned char d[EVP_MAX_MD_SIZE];
	unsigned int dlen = 0;

	if (EVP_Digest(data, len, d, &dlen, md, NULL) != 1 || dlen * 2 < digits)
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
		sb_add(s, "%s%u", sep, v);
		sep = "-";
	}
}

int
fc_ja3(const struct fc_tls_hello *h, char *str, size_t cap, char md5[FC_JA3_MD5_LEN + 1])
{
	struct sb s = { str, cap, 0, cap == 0 };
	const char *sep = "";
	int rc;

	sb_add(&s, "%u,", h->legacy_version);
	ja3_list(&s, h, h->ciphers);
	sb_add(&s, ",");
	for (unsigned int i = 0; i < h->next; i++) {
		if (fc_tls_is_grease(h->ext[i]))
			continue;
		sb_add(&s, "%s%u", sep, h->ext[i]);
		sep = "-";
	}
	sb_add(&s, ",");
	ja3_list(&s, h, h->groups);
	sb_add(&s, ",");
	sep = "";
	for (unsigned int i = 0; i < h->point_formats.len; i++) {
		sb_add(&s, "%s%u", sep, fc_tls_bytes_ptr(h, h->point_formats)[i]);
		sep = "-";
	}
	if (s.over)
		return -ENOSPC;
	rc = hex_digest(EVP_md5(), str, s.len, md5, FC_JA3_MD5_LEN);
	return rc != 0 ? rc : (int)s.len;
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

/* The values of a list without GREASE (and without skip1, skip2 unless < 0), sorted. */
static unsigned int
sorted(uint16_t *out, const uint16_t *in, unsigned int n, int skip1, int skip2)
{
	unsigned int m = 0;

	for (unsigned int i = 0; i < n; i++)
		if (!fc_tls_is_grease(in[i]) && in[i] != skip1 && in[i] != skip2)
			out[m++] = in[i];
	qsort(out, m, sizeof(*out), u16_cmp);
	return m;
}

static void
hex_list(struct sb *s, const uint16_t *v, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		sb_add(s, "%s%04x", i ? "," : "", v[i]);
}

/* The 12-digit hash of a part, or twelve zeros for an empty one. */
static int
ja4_hash(const char *part, size_t len, char out[13])
{
	if (len == 0) {
		memcpy(out, "000000000000", 13);
		return 0;
	}
	return hex_digest(EVP_sha256(), part, len, out, 12);
}

int
fc_ja4(const struct fc_tls_hello *h, char transport, char ja4[FC_JA4_LEN + 1], char *raw,
       size_t rawcap)
{
	uint16_t vals[FC_TLS_HELLO_MAX / 2], sig[FC_TLS_HELLO_MAX / 2];
	char parts[FC_JA_STR_MAX], alpn[3], a[11], hb[13], hc[13];
	struct sb b = { parts, sizeof(parts), 0, false }, c;
	unsigned int nc, ne = 0, ns = 0;
	int rc;

	if (transport != 't' && transport != 'q')
		return -EINVAL;
	for (unsigned int i = 0; i < h->ciphers.n; i++)
		sig[i] = fc_tls_u16_at(h, h->ciphers, i);
	nc = sorted(vals, sig, h->ciphers.n, -1, -1);
	for (unsigned int i = 0; i < h->next; i++)
		ne += !fc_tls_is_grease(h->ext[i]);
	ja4_alpn(h, alpn);
	snprintf(a, sizeof(a), "%c%s%c%02u%02u%s", transport, ja4_version(fc_tls_version(h)),
		 h->has_sni ? 'd' : 'i', nc > 99 ? 99 : nc, ne > 99 ? 99 : ne, alpn);

	hex_list(&b, vals, nc);
	c = (struct sb){ parts + b.len + 1, sizeof(parts) - b.len - 1, 0, false };
	ne = sorted(vals, h->ext, h->next, FC_TLS_EXT_SERVER_NAME, FC_TLS_EXT_ALPN);
	hex_list(&c, vals, ne);
	for (unsigned int i = 0; i < h->sigalgs.n; i++) {
		uint16_t v = fc_tls_u16_at(h, h->sigalgs, i);

		if (!fc_tls_is_grease(v))
			sig[ns++] = v;
	}
	if (ns > 0) {
		sb_add(&c, "_");
		hex_list(&c, sig, ns);
	}
	/* FC_JA_STR_MAX holds both parts of any hello fc_tls accepts */
	rc = ja4_hash(b.p, b.len, hb);
	if (rc == 0)
		rc = ja4_hash(c.p, c.len, hc);
	if (rc != 0)
		return rc;
	snprintf(ja4, FC_JA4_LEN + 1, "%s_%s_%s", a, hb, hc);
	if (raw != NULL) {
		int n = snprintf(raw, rawcap, "%s_%.*s_%.*s", a, (int)b.len, b.p, (int)c.len, c.p);

		if (n < 0 || (size_t)n >= rawcap)
			return -ENOSPC;
	}
	return 0;
}
