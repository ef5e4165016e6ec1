/* SPDX-License-Identifier: BSD-3-Clause */
/* The frame fuzz target's parts, shared with its replay and seed makers. */
#ifndef FLOWCUT_FUZZ_FRAME_H
#define FLOWCUT_FUZZ_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fp_parse.h"

#define FUZZ_LIF0_MAC { 2, 0, 0, 0, 0, 1 }
#define FUZZ_LIF1_MAC { 2, 0, 0, 0, 0, 2 }
#define FUZZ_VLAN 10

/* fuzz_frame_init - EAL and a small table; 0 or -1. */
int fuzz_frame_init(void);
/* fuzz_frame_one - one input; aborts on a broken invariant. */
int fuzz_frame_one(const uint8_t *data, size_t size);
/* fuzz_key - the table's keys, for the seed maker. */
void fuzz_key(int family, uint8_t proto, bool nat, struct fp_key *k0, struct fp_key *k1);

#endif
