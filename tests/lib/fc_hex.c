/* SPDX-License-Identifier: BSD-3-Clause */
/* fc_hex: see fc_hex.h. */
#include "fc_hex.h"

static int
digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

size_t
fc_hex(const char *hex, size_t n, uint8_t *out, size_t cap)
{
	if (n == 0 || n % 2 != 0 || n / 2 > cap)
		return 0;
	for (size_t i = 0; i < n / 2; i++) {
		int hi = digit(hex[2 * i]), lo = digit(hex[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return 0;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return n / 2;
}
