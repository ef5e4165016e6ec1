/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fc_ja: the fingerprints of a ClientHello read by fc_tls.
 *
 *   JA3   (Salesforce): "legacy_version,ciphers,extensions,groups,point_formats"
 *         in decimal, values joined by '-', GREASE left out of the first
 *         three lists; and the MD5 of that string.
 *   JA4   (FoxIO, JA4+ TLS client): a_b_c where
 *         a = transport ('t' TCP, 'q' QUIC), version ("13", "12", ...),
 *             'd' with a server_name extension or 'i' without, the number
 *             of ciphers and of extensions (two digits, at most 99), the
 *             first and last characters of the first ALPN value ("00"
 *             without ALPN);
 *         b = the first 12 hex digits of SHA-256 of the ciphers, sorted,
 *             as 4-digit hex joined by ',';
 *         c = the same of the extensions, sorted, without SNI (0x0000) and
 *             ALPN (0x0010), then '_' and the signature algorithms in the
 *             order sent (no '_' when there are none).
 *         GREASE is left out everywhere; an empty list hashes to
 *         "000000000000".
 *   JA4_r the same with b and c unhashed.
 * docs/fingerprints.md says more, with the examples the tests check.
 *
 * Hashes are OpenSSL's (EVP); nothing else is linked.  The two digests
 * (MD5, SHA-256) are fetched from OpenSSL's default library context once a
 * process, at the first call (pthread_once), and kept to its end: any
 * thread may call.  fc_ja4 uses about 66 KiB of stack (the sorted ciphers
 * of the largest hello), fc_ja3 less than 1 KiB.
 */
#ifndef FLOWCUT_FC_JA_H
#define FLOWCUT_FC_JA_H

#include <stddef.h>

#include "fc_tls.h"

#define FC_JA3_MD5_LEN 32	/* hex digits */
#define FC_JA4_LEN     36	/* "t13d1516h2_8daaf6152771_e5627efa2ab1" */
/* Room for any JA3 string or JA4_r of a hello of FC_TLS_HELLO_MAX bytes (about
 * 386 KiB): each byte of a list takes at most 3 characters (4 for the <=255
 * point formats). */
#define FC_JA_STR_MAX  (3 * FC_TLS_HELLO_MAX + 1024)

/*
 * fc_ja3 - the JA3 string of h into str (cap bytes, NUL-terminated) and its
 * MD5 in lowercase hex into md5.  h must be a hello fc_tls_feed() completed.
 * Returns the length of the string, -ENOSPC if cap is too small (nothing
 * is hashed), -EIO if OpenSSL could not compute the digest (or has no MD5).
 */
int fc_ja3(const struct fc_tls_hello *h, char *str, size_t cap, char md5[FC_JA3_MD5_LEN + 1]);

/*
 * fc_ja4 - JA4 of h into ja4; JA4_r into raw (rawcap bytes) unless raw is
 * NULL.  transport is 't' (TLS over TCP) or 'q' (QUIC).
 * Returns 0, -EINVAL for another transport, -ENOSPC if rawcap is too small
 * (ja4 is still written), -EIO if OpenSSL could not compute a digest.
 */
int fc_ja4(const struct fc_tls_hello *h, char transport, char ja4[FC_JA4_LEN + 1], char *raw,
	   size_t rawcap);

/*
 * fc_ja_ready - OpenSSL's digests fetched now (else on the first hello):
 * a process that will forbid itself files and system calls calls this
 * first.  0, or -EIO (no MD5 or SHA-256).
 */
int fc_ja_ready(void);

#endif
