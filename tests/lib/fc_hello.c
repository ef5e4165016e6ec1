/* SPDX-License-Identifier: BSD-3-Clause */
/* fc_hello: ClientHellos built byte by byte (fc_hello.h). */
#include <string.h>

#include "fc_hello.h"

#define MSG_MAX 65536

struct out {
	uint8_t *p;
	size_t len;
	size_t cap;
	int over;
};

static void
put(struct out *o, const void *d, size_t n)
{
	if (o->over || o->cap - o->len < n) {
		o->over = 1;
		return;
	}
	memcpy(o->p + o->len, d, n);
	o->len += n;
}

static void
put8(struct out *o, unsigned int v)
{
	uint8_t b = (uint8_t)v;

	put(o, &b, 1);
}

static void
put16(struct out *o, unsigned int v)
{
	put8(o, v >> 8);
	put8(o, v);
}

/* Reserve a length of n bytes; patch() writes it once the contents are in. */
static size_t
hold(struct out *o, unsigned int n)
{
	size_t at = o->len;

	while (n--)
		put8(o, 0);
	return at;
}

static void
patch(struct out *o, size_t at, unsigned int n)
{
	size_t v = o->len - at - n;

	for (unsigned int i = 0; !o->over && i < n; i++)
		o->p[at + i] = (uint8_t)(v >> (8 * (n - 1 - i)));
}

static void
ext_body(struct out *o, const struct fc_hello_spec *s, uint16_t type)
{
	size_t at;

	switch (type) {
	case 0x0000:
		at = hold(o, 2);
		put8(o, 0);
		put16(o, (unsigned int)strlen(s->sni));
		put(o, s->sni, strlen(s->sni));
		patch(o, at, 2);
		break;
	case 0x0010:
		at = hold(o, 2);
		for (const char *const *a = s->alpn; *a != NULL; a++) {
			put8(o, (unsigned int)strlen(*a));
			put(o, *a, strlen(*a));
		}
		patch(o, at, 2);
		break;
	case 0x000a:
		put16(o, 2 * s->ngroups);
		for (unsigned int i = 0; i < s->ngroups; i++)
			put16(o, s->groups[i]);
		break;
	case 0x000b:
		put8(o, s->npoint_formats);
		put(o, s->point_formats, s->npoint_formats);
		break;
	case 0x000d:
		put16(o, 2 * s->nsigalgs);
		for (unsigned int i = 0; i < s->nsigalgs; i++)
			put16(o, s->sigalgs[i]);
		break;
	case 0x002b:
		put8(o, 2 * s->nversions);
		for (unsigned int i = 0; i < s->nversions; i++)
			put16(o, s->versions[i]);
		break;
	case 0x0033:
		put16(o, 4 + s->key_share_len);
		put16(o, s->key_share_group);
		put16(o, s->key_share_len);
		for (unsigned int i = 0; i < s->key_share_len; i++)
			put8(o, i * 7);
		break;
	case 0x0015:
		for (unsigned int i = 0; i < s->pad_len; i++)
			put8(o, 0);
		break;
	default:
		break;
	}
}

size_t
fc_hello_build(const struct fc_hello_spec *s, uint8_t *buf, size_t cap, size_t *msg_len)
{
	static __thread uint8_t msg[MSG_MAX];
	struct out m = { msg, 0, sizeof(msg), 0 }, r = { buf, 0, cap, 0 };
	size_t at, exts, rmax = s->record_max ? s->record_max : 16384;

	put8(&m, 1);
	at = hold(&m, 3);
	put16(&m, s->legacy_version ? s->legacy_version : 0x0303);
	for (unsigned int i = 0; i < 32; i++)
		put8(&m, 0xa0 + i);
	put8(&m, 32);
	for (unsigned int i = 0; i < 32; i++)
		put8(&m, 0x50 + i);
	put16(&m, 2 * s->nciphers);
	for (unsigned int i = 0; i < s->nciphers; i++)
		put16(&m, s->ciphers[i]);
	put8(&m, 1);
	put8(&m, 0);
	exts = hold(&m, 2);
	for (unsigned int i = 0; i < s->nexts; i++) {
		size_t e;

		put16(&m, s->exts[i]);
		e = hold(&m, 2);
		ext_body(&m, s, s->exts[i]);
		patch(&m, e, 2);
	}
	patch(&m, exts, 2);
	patch(&m, at, 3);
	if (m.over)
		return 0;
	for (size_t off = 0; off < m.len; off += rmax) {
		size_t n = m.len - off < rmax ? m.len - off : rmax;

		put8(&r, 22);
		put16(&r, off == 0 ? 0x0301 : 0x0303);
		put16(&r, (unsigned int)n);
		put(&r, msg + off, n);
	}
	if (msg_len != NULL)
		*msg_len = m.len;
	return r.over ? 0 : r.len;
}

void
fc_hello_chrome(struct fc_hello_spec *s, uint16_t key_share_group, unsigned int key_share_len)
{
	static const uint16_t ciphers[] = { 0x4a4a, 0x1301, 0x1302, 0x1303, 0xc02b, 0xc02f,
					    0xc02c, 0xc030, 0xcca9, 0xcca8, 0xc013, 0xc014,
					    0x009c, 0x009d, 0x002f, 0x0035 };
	static const uint16_t exts[] = { 0x2a2a, 0x0000, 0x0017, 0xff01, 0x000a, 0x000b,
					 0x0023, 0x0010, 0x0005, 0x000d, 0x0012, 0x0033,
					 0x002d, 0x002b, 0x001b, 0x0015, 0x4469, 0x3a3a };
	static const uint16_t groups[] = { 0x8a8a, 0x001d, 0x0017, 0x0018 };
	static const uint8_t pf[] = { 0 };
	static const uint16_t sigalgs[] = { 0x0403, 0x0804, 0x0401, 0x0503, 0x0805, 0x0501,
					    0x0806, 0x0601 };
	static const uint16_t versions[] = { 0x7a7a, 0x0304, 0x0303 };
	static const char *const alpn[] = { "h2", "http/1.1", NULL };

	*s = (struct fc_hello_spec){
		.ciphers = ciphers, .nciphers = 16, .exts = exts, .nexts = 18,
		.sni = "www.example.com", .alpn = alpn, .groups = groups, .ngroups = 4,
		.point_formats = pf, .npoint_formats = 1, .sigalgs = sigalgs, .nsigalgs = 8,
		.versions = versions, .nversions = 3, .key_share_group = key_share_group,
		.key_share_len = key_share_len, .pad_len = 32,
	};
}
