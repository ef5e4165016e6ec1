/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz target: the ruleset's JSON as flowcutd's ruleset check walks it
 * (driver/nft/fd_rulecheck, fd_rulecheck_parse), with flowcut's mark bit and
 * with every bit.  Checks: no crash; 0, -EINVAL with a reason, or -ENOMEM;
 * every finding of a known kind, its names NUL-terminated, none twice;
 * the same input checked again finds the same.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fd_rulecheck.h"
#include "fuzz.h"

static void
die(const char *what)
{
	fprintf(stderr, "fuzz_rulecheck: %s\n", what);
	abort();
}

int
fuzz_init(void)
{
	return 0;
}

static int
check(const uint8_t *data, size_t size, uint32_t bit, struct fd_rulecheck_result *r)
{
	char err[512] = "";
	int rc = fd_rulecheck_parse((const char *)data, size, bit, r, err, sizeof(err));

	if (rc != 0 && rc != -EINVAL && rc != -ENOMEM)
		die("an error that is none of 0, -EINVAL, -ENOMEM");
	if (rc == -EINVAL && err[0] == '\0')
		die("JSON refused without a reason");
	for (size_t i = 0; i < r->n; i++) {
		const struct fd_rulecheck_finding *f = &r->f[i];

		if ((int)f->kind < 0 || f->kind >= FD_RULECHECK_NKINDS)
			die("a finding of no known kind");
		if (!memchr(f->family, 0, sizeof(f->family)) || !memchr(f->table, 0, sizeof(f->table)) ||
		    !memchr(f->chain, 0, sizeof(f->chain)) || !memchr(f->what, 0, sizeof(f->what)))
			die("a finding's name not terminated");
		for (size_t j = 0; j < i; j++)
			if (!memcmp(&r->f[j], f, sizeof(*f)))
				die("a finding twice");
	}
	if (r->n > FD_RULECHECK_MAX)
		die("more findings kept than FD_RULECHECK_MAX");
	return rc;
}

int
fuzz_one(const uint8_t *data, size_t size)
{
	static const uint32_t bits[] = { 0x40000000u, 0xffffffffu };

	for (size_t b = 0; b < sizeof(bits) / sizeof(bits[0]); b++) {
		struct fd_rulecheck_result r = { 0 }, again = { 0 };
		int rc = check(data, size, bits[b], &r);

		if (check(data, size, bits[b], &again) != rc || again.n != r.n ||
		    (r.n && memcmp(again.f, r.f, r.n * sizeof(*r.f))))
			die("the same input checked twice found different things");
		fd_rulecheck_result_free(&r);
		fd_rulecheck_result_free(&again);
	}
	return 0;
}

/* Small rulesets; the fixtures of tests/rulecheck/ are in the corpus too. */
int
fuzz_seeds(const char *dir)
{
#define T "{\"table\":{\"family\":\"inet\",\"name\":\"t\",\"handle\":1}},"
#define B(n, h, hook, prio, pol) "{\"chain\":{\"family\":\"inet\",\"table\":\"t\",\"name\":\"" n \
	"\",\"handle\":" #h ",\"type\":\"filter\",\"hook\":\"" hook "\",\"prio\":" #prio ",\"policy\":\"" pol "\"}}"
#define C(n, h) "{\"chain\":{\"family\":\"inet\",\"table\":\"t\",\"name\":\"" n "\",\"handle\":" #h "}}"
#define R(c, h, e) "{\"rule\":{\"family\":\"inet\",\"table\":\"t\",\"chain\":\"" c "\",\"handle\":" #h \
	",\"expr\":[" e "]}}"
#define MARK "{\"mangle\":{\"key\":{\"ct\":{\"key\":\"mark\"}},\"value\":{\"|\":[{\"ct\":{\"key\":\"mark\"}},1073741824]}}}"
	static const char *const seeds[] = {
		"{\"nftables\":[]}",
		"{\"nftables\":[" T B("m", 2, "forward", 100, "accept") "," R("m", 3, MARK) "," B("l", 4,
		  "forward", 200, "drop") "," R("l", 5, "{\"limit\":{\"rate\":1,\"per\":\"second\"}},"
		  "{\"drop\":null}") "]}",
		"{\"nftables\":[" T "{\"map\":{\"family\":\"inet\",\"table\":\"t\",\"name\":\"v\",\"map\":"
		  "\"verdict\",\"elem\":[[1,{\"jump\":{\"target\":\"s\"}}],[2,{\"drop\":null}]]}}," B("m", 2,
		  "prerouting", 0, "accept") "," C("s", 3) "," R("m", 4, MARK ",{\"vmap\":{\"key\":1,"
		  "\"data\":\"@v\"}}") "," R("s", 5, "{\"reject\":null}") "," R("s", 6, "{\"goto\":"
		  "{\"target\":\"s\"}}") "]}",
		"{\"nftables\":[" T "{\"set\":{\"family\":\"inet\",\"table\":\"t\",\"name\":\"a\",\"flags\":"
		  "[\"timeout\"]}}," B("f", 2, "forward", 0, "drop") "," R("f", 3, "{\"match\":{\"op\":\"==\","
		  "\"left\":{\"ct\":{\"key\":\"state\"}},\"right\":[\"new\",\"invalid\"]}},{\"quota\":{}}") ","
		  R("f", 4, "{\"match\":{\"op\":\"==\",\"left\":1,\"right\":\"@a\"}},{\"accept\":null}") ","
		  R("f", 5, "{\"set\":{\"op\":\"add\",\"elem\":1,\"set\":\"@a\"}},{\"meter\":{\"name\":\"m\"}},"
		  "{\"ct count\":{\"val\":1}},{\"queue\":{\"num\":1}}") "]}",
	};

	return fuzz_seed_texts(dir, seeds, sizeof(seeds) / sizeof(seeds[0]));
}
