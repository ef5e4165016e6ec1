/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What every fuzz target provides: the libFuzzer glue (libfuzzer_glue.c)
 * and the replayer (replay_main.c) call these.
 */
#ifndef FLOWCUT_FUZZ_H
#define FLOWCUT_FUZZ_H

#include <stddef.h>
#include <stdint.h>

/* fuzz_init - set up once (EAL, tables); 0 or -1. */
int fuzz_init(void);
/* fuzz_one - one input; aborts when an invariant breaks. */
int fuzz_one(const uint8_t *data, size_t size);
/* fuzz_seeds - write the seed corpus into dir; 0 or -1. */
int fuzz_seeds(const char *dir);

#endif
