/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fc_rulecases: the rulesets of tests/rulecheck/ (NAME.nft, each loaded
 * with flowcut.nft; lab: lab/ruleset.nft) and what driver/nft/fd_rulecheck
 * must find in each, for the unit test (their committed `nft -j list
 * ruleset`, NAME.json) and the root test (loaded into a namespace, listed
 * through libnftables).  Handles are the kernel's for that load into a
 * fresh namespace.
 */
#ifndef FLOWCUT_FC_RULECASES_H
#define FLOWCUT_FC_RULECASES_H

#include <stddef.h>
#include <stdint.h>

/* one finding: kind as fd_rulecheck_kind_name says it */
struct fc_rulecase_find {
	const char *kind, *family, *table, *chain;
	uint64_t handle;	/* 0: the chain's policy */
	const char *what;
};

struct fc_rulecase {
	const char *name;	/* tests/rulecheck/NAME.json */
	const char *nft;	/* the source loaded, before tests/rulecheck/flowcut.nft */
	const struct fc_rulecase_find *want;
	size_t nwant;
};

extern const struct fc_rulecase fc_rulecases[];
extern const size_t fc_nrulecases;

/* the mark bit flowcutd sets (driver/flowcutd.c CT_MARK_BIT) */
#define FC_RULECASE_MARK 0x40000000u

#endif
