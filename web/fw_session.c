/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include "fw_session.h"

static int
random_hex(char out[FW_SESSION_HEX])
{
	unsigned char r[16];

	if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
		return -1;
	for (size_t i = 0; i < sizeof(r); i++)
		snprintf(out + 2 * i, 3, "%02x", r[i]);
	explicit_bzero(r, sizeof(r));
	return 0;
}

static bool
same_ct(const char *a, const char *b, size_t n)
{
	unsigned char d = 0;

	for (size_t i = 0; i < n; i++)
		d |= (unsigned char)(a[i] ^ b[i]);
	return d == 0;
}

struct fw_session *
fw_session_new(struct fw_sessions *t, const char *secret, int64_t now_s)
{
	struct fw_session *s = NULL;
	size_t n = strlen(secret);

	if (n == 0 || n > FW_SESSION_SECRET_MAX) {
		errno = EINVAL;
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		if (secret[i] <= ' ' || secret[i] > '~') {
			errno = EINVAL;
			return NULL;
		}
	}
	for (size_t i = 0; i < FW_SESSION_MAX; i++) {
		struct fw_session *c = &t->s[i];

		if (!c->used) {
			s = c;
			break;
		}
		if (s == NULL || c->last_s < s->last_s)
			s = c;
	}
	fw_session_drop(s);
	if (random_hex(s->id) != 0 || random_hex(s->csrf) != 0) {
		fw_session_drop(s);
		return NULL;
	}
	memcpy(s->secret, secret, n + 1);
	s->last_s = now_s;
	s->used = true;
	return s;
}

struct fw_session *
fw_session_find(struct fw_sessions *t, const char *cookie, int64_t now_s)
{
	const char *p = cookie;
	char id[FW_SESSION_HEX];
	size_t klen = strlen(FW_SESSION_COOKIE);

	if (cookie == NULL)
		return NULL;
	/* "a=1; fcweb=HEX; b=2": the first fcweb= */
	for (;;) {
		while (*p == ' ' || *p == ';')
			p++;
		if (*p == '\0')
			return NULL;
		if (strncmp(p, FW_SESSION_COOKIE, klen) == 0 && p[klen] == '=')
			break;
		p = strchr(p, ';');
		if (p == NULL)
			return NULL;
	}
	p += klen + 1;
	if (strspn(p, "0123456789abcdef") != FW_SESSION_HEX - 1 ||
	    (p[FW_SESSION_HEX - 1] != '\0' && p[FW_SESSION_HEX - 1] != ';'))
		return NULL;
	memcpy(id, p, FW_SESSION_HEX - 1);
	id[FW_SESSION_HEX - 1] = '\0';
	for (size_t i = 0; i < FW_SESSION_MAX; i++) {
		struct fw_session *s = &t->s[i];

		if (!s->used || !same_ct(s->id, id, FW_SESSION_HEX - 1))
			continue;
		if (now_s - s->last_s > FW_SESSION_IDLE_S) {
			fw_session_drop(s);
			return NULL;
		}
		s->last_s = now_s;
		return s;
	}
	return NULL;
}

void
fw_session_drop(struct fw_session *s)
{
	if (s == NULL)
		return;
	explicit_bzero(s, sizeof(*s));
}

bool
fw_session_csrf_ok(const struct fw_session *s, const char *token)
{
	if (s == NULL || token == NULL || strlen(token) != FW_SESSION_HEX - 1)
		return false;
	return same_ct(s->csrf, token, FW_SESSION_HEX - 1);
}

bool
fw_session_origin_ok(const char *origin, const char *referer, const char *host)
{
	char own[300];
	size_t n;

	if (origin == NULL && referer == NULL)
		return true;
	if (host == NULL)
		return false;
	n = (size_t)snprintf(own, sizeof(own), "http://%s", host);
	if (n >= sizeof(own))
		return false;
	if (origin != NULL)
		return strcmp(origin, own) == 0;
	return strncmp(referer, own, n) == 0 && (referer[n] == '\0' || referer[n] == '/');
}

void
fw_session_fini(struct fw_sessions *t)
{
	explicit_bzero(t, sizeof(*t));
}
