/* SPDX-License-Identifier: BSD-3-Clause */
/* fc_rulecases: see fc_rulecases.h. */
#include "fc_rulecases.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static const struct fc_rulecase_find perpacket[] = {
	{ "limit", "inet", "filter", "forward", 7, "limit" },
	{ "quota", "inet", "filter", "forward", 8, "quota" },
	{ "ct count", "inet", "filter", "forward", 9, "ct count" },
	{ "set updated from the packet path", "inet", "filter", "forward", 10, "add @seen4" },
	{ "set updated from the packet path", "inet", "filter", "forward", 11, "update @seen4" },
	{ "set updated from the packet path", "inet", "filter", "forward", 12, "delete @seen6" },
	{ "meter", "inet", "filter", "forward", 14, "meter flood" },
	{ "limit", "ip6", "pre", "pre", 2, "limit" },
	{ "quota", "netdev", "edge", "in", 2, "quota" },
};

static const struct fc_rulecase_find timeouts[] = {
	{ "allow set with element timeouts", "inet", "filter", "forward", 9, "!= @allow6 drop" },
	{ "allow set with element timeouts", "inet", "filter", "forward", 10, "@allow4 accept" },
	{ "allow set with element timeouts", "inet", "filter", "forward", 12, "@guests4 jump" },
};

static const struct fc_rulecase_find aftermark[] = {
	{ "drop after the mark", "inet", "late", "forward", 7, "reject" },
	{ "drop after the mark", "inet", "late", "forward", 8, "vmap @ports" },
	{ "drop after the mark", "inet", "late", "sub", 14, "reject" },
	{ "drop after the mark", "inet", "late", "forward", 11, "vmap {...}" },
	{ "drop after the mark", "inet", "late", "web", 16, "drop" },
	{ "drop after the mark", "inet", "late", "forward", 0, "policy drop" },
	{ "drop after the mark", "inet", "late", "post", 17, "drop" },
	{ "drop after the mark", "ip6", "late6", "forward", 2, "drop" },
};

static const struct fc_rulecase_find ownmark[] = {
	{ "drop after the mark", "ip", "own", "forward", 8, "drop" },
	{ "drop after the mark", "ip", "own", "more", 10, "reject" },
	{ "drop after the mark", "ip6", "own6", "pre", 5, "drop" },
};

const struct fc_rulecase fc_rulecases[] = {
	{ "lab", "lab/ruleset.nft", NULL, 0 },
	{ "perpacket", "tests/rulecheck/perpacket.nft", perpacket, N(perpacket) },
	{ "timeouts", "tests/rulecheck/timeouts.nft", timeouts, N(timeouts) },
	{ "aftermark", "tests/rulecheck/aftermark.nft", aftermark, N(aftermark) },
	{ "ownmark", "tests/rulecheck/ownmark.nft", ownmark, N(ownmark) },
};

const size_t fc_nrulecases = N(fc_rulecases);
