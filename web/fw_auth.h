/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fw_auth - who may change things through flowcut-web: HTTP Basic
 * authentication per request, a CSRF token per process, the same-origin
 * check of a POST and the Host check of every request.
 *
 * No cookie holds a secret.  A change carries the operator's secret as
 * the password of "Authorization: Basic" (the user name is ignored).
 * flowcut-web does not judge the secret (flowcutd does: the `auth` line of
 * include/flowcut/fc_ctl.h, docs/commands.md): fw_auth_basic only takes
 * it out of the header, into the caller's buffer, which the caller wipes
 * (explicit_bzero) once the request is sent; the decoded bytes are wiped
 * here.
 *
 * CSRF is guarded twice: every change form carries the process's token
 * (128 bits of getrandom at fw_auth_init, compared in constant time), and
 * every POST must name this origin in Origin (or, without one, Referer).
 * A request's Host must be one of the --listen addresses as written
 * ("127.0.0.1:9842", "[::1]:9842") or "localhost:PORT" of one of their
 * ports; others are 421.
 *
 * The calls return 0 or a negative errno, or a bool, as each says beside
 * it.  fw_auth_init and fw_auth_listen from one thread, before the server
 * runs; the checks from any thread (they read only).
 *
 * Design notes (no cookie, why its own parser, DNS rebinding):
 * web/README.md.
 */
#ifndef FLOWCUT_FW_AUTH_H
#define FLOWCUT_FW_AUTH_H

#include <stdbool.h>
#include <stddef.h>

#define FW_AUTH_SECRET_MAX 128		/* the password's bytes, at most */
#define FW_AUTH_HEX 33			/* the CSRF token: 32 hex digits and NUL */
#define FW_AUTH_HOSTS 16		/* Host values accepted (two a --listen) */
#define FW_AUTH_HOST_MAX 64		/* "[v6]:PORT" and NUL */
#define FW_AUTH_CHALLENGE "Basic realm=\"flowcut\", charset=\"UTF-8\""

struct fw_auth {
	char csrf[FW_AUTH_HEX];
	char hosts[FW_AUTH_HOSTS][FW_AUTH_HOST_MAX];
	unsigned int nhosts;
};

/* fw_auth_init - a fresh CSRF token, no Host yet: 0, or -errno of getrandom */
int fw_auth_init(struct fw_auth *a);

/*
 * fw_auth_listen - accept the Host values of the listen address addr
 * ("ADDR:PORT", as --listen takes it): addr itself and "localhost:PORT".
 * 0; -EINVAL addr without ":PORT" or longer than FW_AUTH_HOST_MAX - 1;
 * -ENOSPC past FW_AUTH_HOSTS.
 */
int fw_auth_listen(struct fw_auth *a, const char *addr);

/* fw_auth_host_ok - host (the Host header; NULL: false) is one accepted (case-insensitive) */
bool fw_auth_host_ok(const struct fw_auth *a, const char *host);

/*
 * fw_auth_basic - the password of an Authorization header value
 * ("Basic BASE64(user:password)", the scheme case-insensitive) into
 * secret (len bytes, at least FW_AUTH_SECRET_MAX + 1).  0; -ENOENT hdr
 * NULL (no header); -EINVAL with why (a static text) for a scheme not
 * Basic, base64 that is not, no ':', an empty password, or a byte of it
 * not printable ASCII or a space (it goes on a request line); -E2BIG a
 * password past FW_AUTH_SECRET_MAX.  On an error secret is "".
 */
int fw_auth_basic(const char *hdr, char *secret, size_t len, const char **why);

/* fw_auth_csrf_ok - token is a's CSRF token (constant time; NULL: false) */
bool fw_auth_csrf_ok(const struct fw_auth *a, const char *token);

/*
 * fw_auth_origin_ok - a POST's Origin (or, without one, Referer) is this
 * server's own: "http://HOST" with HOST the request's Host header, a
 * Referer starting with it and then '/' or its end.  Both missing, or Host
 * missing: false (every browser sends Origin on a POST; a script says
 * -H Origin:).
 */
bool fw_auth_origin_ok(const char *origin, const char *referer, const char *host);

#endif
