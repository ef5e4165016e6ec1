/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fc_quicvec: the protected client Initials of RFC 9001 A.2 (QUIC version
 * 1) and RFC 9369 A.2 (version 2), 1,200 bytes each, and RFC 9001 A.2's
 * CRYPTO frame (what the first decrypts to), as hex text, for the tests of
 * inspect/fc_quic and of the inspector (tests/unit/test_quic.c,
 * tests/unit/driver/test_inspect.c, tests/fuzz/fuzz_quic.c).  tests/tls/quic-*.hex
 * hold the same Initials for the lab.
 */
#ifndef FLOWCUT_FC_QUICVEC_H
#define FLOWCUT_FC_QUICVEC_H

extern const char fc_rfc9001_client_initial[];
extern const char fc_rfc9369_client_initial[];
extern const char fc_rfc9001_crypto_frame[];

#endif
