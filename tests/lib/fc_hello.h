/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fc_hello: TLS ClientHellos built byte by byte, as records, for the tests
 * and the fuzz seeds of inspect/fc_tls (tests/unit/test_tls.c,
 * tests/fuzz/fuzz_tls.c).  Independent of fc_tls: it writes, never reads.
 * No state; any thread.
 */
#ifndef FLOWCUT_FC_HELLO_H
#define FLOWCUT_FC_HELLO_H

#include <stddef.h>
#include <stdint.h>

struct fc_hello_spec {
	uint16_t legacy_version;	/* 0: 0x0303 */
	const uint16_t *ciphers;
	unsigned int nciphers;
	/*
	 * Extensions in the order sent.  Contents: server_name from sni,
	 * alpn from alpn (a NULL-terminated list), supported_groups,
	 * ec_point_formats, signature_algorithms and supported_versions from
	 * the lists below, key_share one share of key_share_group with
	 * key_share_len bytes, padding pad_len zeros; any other type empty.
	 */
	const uint16_t *exts;
	unsigned int nexts;
	const char *sni;
	const char *const *alpn;
	const uint16_t *groups;
	unsigned int ngroups;
	const uint8_t *point_formats;
	unsigned int npoint_formats;
	const uint16_t *sigalgs;
	unsigned int nsigalgs;
	const uint16_t *versions;
	unsigned int nversions;
	uint16_t key_share_group;
	unsigned int key_share_len;
	unsigned int pad_len;
	unsigned int record_max;	/* split into records of at most this; 0: 16384 */
};

/*
 * fc_hello_build - the records carrying the ClientHello of s, into buf.
 * Returns their length, 0 if they do not fit in cap.  *msg_len (if not
 * NULL) is set to the length of the handshake message alone.
 */
size_t fc_hello_build(const struct fc_hello_spec *s, uint8_t *buf, size_t cap, size_t *msg_len);

/*
 * fc_hello_chrome - the hello the JA4 specification takes as its example:
 * 15 ciphers and 16 extensions (with GREASE), SNI, ALPN h2 and http/1.1,
 * TLS 1.3; its JA4 is t13d1516h2_8daaf6152771_e5627efa2ab1.  With
 * key_share_len 1216 and group 0x11ec it is the post-quantum (X25519MLKEM768)
 * form, too big for one TCP segment.
 */
void fc_hello_chrome(struct fc_hello_spec *s, uint16_t key_share_group, unsigned int key_share_len);

#endif
