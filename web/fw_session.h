/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fw_session - who may change things through flowcut-web: the sessions
 * the login form makes, their CSRF tokens, and the same-origin check.
 *
 * A session is a random 128-bit id (getrandom), sent as the cookie
 * "fcweb=HEX32; HttpOnly; SameSite=Strict; Path=/", with the operator's
 * secret held against it in memory only (never written anywhere: wiped
 * with explicit_bzero on logout, on an idle hour, on fw_session_fini) and
 * a CSRF token of its own (another 128 random bits) every changing form
 * carries as a hidden field; the token is compared in constant time.
 * flowcut-web does not judge the secret: flowcutd does, on each change
 * (t18-proto.md); a wrong one is refused there and the page says so.
 *
 * At most FW_SESSION_MAX sessions; a new one past that takes the slot of
 * the one idle longest.  The clock is the caller's (seconds, monotonic),
 * so a test turns an hour in a line.
 *
 * One thread at a time per table (flowcut-web's server: a mutex of its
 * own around calls).
 */
#ifndef FLOWCUT_FW_SESSION_H
#define FLOWCUT_FW_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FW_SESSION_MAX 16
#define FW_SESSION_IDLE_S 3600
#define FW_SESSION_SECRET_MAX 128
#define FW_SESSION_HEX 33		/* 32 hex digits and NUL */
#define FW_SESSION_COOKIE "fcweb"

struct fw_session {
	bool used;
	char id[FW_SESSION_HEX];
	char csrf[FW_SESSION_HEX];
	char secret[FW_SESSION_SECRET_MAX + 1];
	int64_t last_s;
	/* what the last change said, shown once by the next page (fw_http) */
	char note_key[65];
	char note[512];
	bool note_refused;
};

struct fw_sessions {
	struct fw_session s[FW_SESSION_MAX];
};

/*
 * fw_session_new - a session holding secret (1..FW_SESSION_SECRET_MAX
 * printable bytes): the new session, or NULL and errno EINVAL (a secret
 * empty, too long, or with a byte that is not printable ASCII: it goes on
 * a request line) or the errno of getrandom.
 */
struct fw_session *fw_session_new(struct fw_sessions *t, const char *secret, int64_t now_s);

/*
 * fw_session_find - the session whose id the Cookie header value names
 * (NULL cookie: none), touched (its idle clock restarts); NULL when none,
 * or when it was idle past FW_SESSION_IDLE_S (then dropped).
 */
struct fw_session *fw_session_find(struct fw_sessions *t, const char *cookie, int64_t now_s);

/* fw_session_drop - the session gone, its secret wiped; NULL does nothing */
void fw_session_drop(struct fw_session *s);

/* fw_session_csrf_ok - token equals s's CSRF token (constant time) */
bool fw_session_csrf_ok(const struct fw_session *s, const char *token);

/*
 * fw_session_origin_ok - a changing request's Origin (or, without one,
 * Referer) is this server's own: "http://HOST" with HOST the request's
 * Host header, a Referer starting with it and then '/' or its end.  Both
 * missing: true (a browser sends Origin on every POST it makes; curl
 * without one carries no cookie of a victim's).  Host missing: false.
 */
bool fw_session_origin_ok(const char *origin, const char *referer, const char *host);

void fw_session_fini(struct fw_sessions *t);

#endif
