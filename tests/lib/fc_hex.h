/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fc_hex: hex text into bytes, for the tests, fuzz seeds and benchmarks
 * that carry their inputs as hex (fc_quicvec's Initials, the FoxIO hellos
 * of tests/tls/foxio-ja4.txt).  Hand-written: a loop of two digits a
 * byte; libc has none that refuses a non-digit.
 */
#ifndef FLOWCUT_FC_HEX_H
#define FLOWCUT_FC_HEX_H

#include <stddef.h>
#include <stdint.h>

/*
 * fc_hex - the n characters of hex (two a byte, either case) into out:
 * the bytes written, or 0 when n is 0 or odd, a character is no hex
 * digit, or out's cap bytes are too few.
 */
size_t fc_hex(const char *hex, size_t n, uint8_t *out, size_t cap);

#endif
