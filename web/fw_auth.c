/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>

#include "fw_auth.h"

int
fw_auth_init(struct fw_auth *a)
{
	unsigned char r[16];

	memset(a, 0, sizeof(*a));
	if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
		return -errno;
	for (size_t i = 0; i < sizeof(r); i++)
		snprintf(a->csrf + 2 * i, 3, "%02x", r[i]);
	explicit_bzero(r, sizeof(r));
	return 0;
}

static int
add_host(struct fw_auth *a, const char *h)
{
	if (a->nhosts == FW_AUTH_HOSTS)
		return -ENOSPC;
	snprintf(a->hosts[a->nhosts++], FW_AUTH_HOST_MAX, "%s", h);
	return 0;
}

int
fw_auth_listen(struct fw_auth *a, const char *addr)
{
	const char *colon = strrchr(addr, ':');
	char local[FW_AUTH_HOST_MAX];
	int rc;

	if (colon == NULL || colon == addr || colon[1] == '\0' || strlen(addr) >= FW_AUTH_HOST_MAX)
		return -EINVAL;
	snprintf(local, sizeof(local), "localhost%s", colon);
	if ((rc = add_host(a, addr)) != 0)
		return rc;
	for (unsigned int i = 0; i + 1 < a->nhosts; i++)
		if (strcmp(a->hosts[i], local) == 0)
			return 0;	/* 127.0.0.1:P and [::1]:P: one localhost:P */
	return add_host(a, local);
}

bool
fw_auth_host_ok(const struct fw_auth *a, const char *host)
{
	if (host == NULL)
		return false;
	for (unsigned int i = 0; i < a->nhosts; i++)
		if (strcasecmp(a->hosts[i], host) == 0)
			return true;
	return false;
}

static int
b64(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	return c == '+' ? 62 : c == '/' ? 63 : -1;
}

/* RFC 4648 base64, padded, strict: the bytes decoded, or -1 */
static long
unbase64(const char *s, unsigned char *out, size_t cap)
{
	size_t n = strlen(s), o = 0;

	if (n == 0 || n % 4 != 0)
		return -1;
	for (size_t i = 0; i < n; i += 4) {
		int v[4], pad = 0;

		for (int k = 0; k < 4; k++) {
			v[k] = b64(s[i + k]);
			if (s[i + k] == '=' && i + 4 == n && k >= 2) {
				v[k] = 0;
				pad++;
			} else if (v[k] < 0 || pad > 0) {
				return -1;
			}
		}
		if (o + 3 > cap)
			return -2;
		out[o++] = (unsigned char)(v[0] << 2 | v[1] >> 4);
		out[o++] = (unsigned char)(v[1] << 4 | v[2] >> 2);
		out[o++] = (unsigned char)(v[2] << 6 | v[3]);
		o -= (size_t)pad;
	}
	return (long)o;
}

int
fw_auth_basic(const char *hdr, char *secret, size_t len, const char **why)
{
	/* user:password, the user name up to 64 bytes */
	unsigned char raw[FW_AUTH_SECRET_MAX + 64 + 4];
	const char *p;
	unsigned char *colon;
	long n;
	size_t pl;
	int rc = -EINVAL;

	secret[0] = '\0';
	*why = "";
	if (hdr == NULL) {
		*why = "no Authorization header";
		return -ENOENT;
	}
	if (strncasecmp(hdr, "Basic ", 6) != 0) {
		*why = "Authorization: not the Basic scheme";
		return -EINVAL;
	}
	for (p = hdr + 6; *p == ' '; p++)
		;
	n = unbase64(p, raw, sizeof(raw) - 1);
	if (n == -2) {
		*why = "Authorization: Basic credentials too long";
		return -E2BIG;
	}
	if (n < 0) {
		*why = "Authorization: Basic credentials not base64";
		return -EINVAL;
	}
	raw[n] = '\0';
	colon = memchr(raw, ':', (size_t)n);
	if (colon == NULL) {
		*why = "Authorization: Basic credentials without user:password";
		goto out;
	}
	pl = (size_t)(raw + n - colon - 1);
	if (pl == 0) {
		*why = "Authorization: an empty password (the operator's secret)";
		goto out;
	}
	if (pl > FW_AUTH_SECRET_MAX || pl + 1 > len) {
		*why = "Authorization: a password past 128 bytes";
		rc = -E2BIG;
		goto out;
	}
	for (size_t i = 1; i <= pl; i++) {
		if (colon[i] <= ' ' || colon[i] > '~') {
			*why = "Authorization: a password byte not printable ASCII (or a space)";
			goto out;
		}
	}
	memcpy(secret, colon + 1, pl);
	secret[pl] = '\0';
	rc = 0;
out:
	explicit_bzero(raw, sizeof(raw));
	return rc;
}

bool
fw_auth_csrf_ok(const struct fw_auth *a, const char *token)
{
	unsigned char d = 0;

	if (token == NULL || strlen(token) != FW_AUTH_HEX - 1)
		return false;
	for (size_t i = 0; i < FW_AUTH_HEX - 1; i++)
		d |= (unsigned char)(a->csrf[i] ^ token[i]);
	return d == 0;
}

bool
fw_auth_origin_ok(const char *origin, const char *referer, const char *host)
{
	char own[300];
	size_t n;

	if ((origin == NULL && referer == NULL) || host == NULL)
		return false;
	n = (size_t)snprintf(own, sizeof(own), "http://%s", host);
	if (n >= sizeof(own))
		return false;
	if (origin != NULL)
		return strcmp(origin, own) == 0;
	return strncmp(referer, own, n) == 0 && (referer[n] == '\0' || referer[n] == '/');
}
