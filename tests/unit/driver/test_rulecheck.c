/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_rulecheck: what offloaded connections bypass, found in rulesets as
 * the real `nft -j list ruleset` lists them (tests/rulecheck/NAME.json,
 * written from NAME.nft by make-fixtures.sh; the expected findings in
 * tests/lib/fc_rulecases.c), lab/ruleset.nft finding nothing; rows of
 * JSON written here for what this kernel cannot load (queue: no nft_queue)
 * or nft never lists (a jump loop, a verdict map listed terse); malformed
 * JSON refused with what and where.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fc_rulecases.h"
#include "fd_rulecheck.h"

static char *
slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (f == NULL)
		fail_msg("%s: cannot open (run from the source tree's top)", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	buf[n] = '\0';
	*len = (size_t)n;
	return buf;
}

/* The findings are those wanted, each once (in any order); every mismatch said. */
static void
expect_findings(const char *name, const struct fd_rulecheck_result *r,
		const struct fc_rulecase_find *want, size_t nwant)
{
	int bad = 0;
	char line[1024];

	for (size_t w = 0; w < nwant; w++) {
		bool hit = false;

		for (size_t i = 0; i < r->n && !hit; i++)
			hit = !strcmp(fd_rulecheck_kind_name((int)r->f[i].kind), want[w].kind) &&
			      !strcmp(r->f[i].family, want[w].family) &&
			      !strcmp(r->f[i].table, want[w].table) &&
			      !strcmp(r->f[i].chain, want[w].chain) &&
			      r->f[i].handle == want[w].handle && !strcmp(r->f[i].what, want[w].what);
		if (!hit) {
			fprintf(stderr, "%s: not found: %s %s %s handle %llu: %s (%s)\n", name,
				want[w].family, want[w].table, want[w].chain,
				(unsigned long long)want[w].handle, want[w].kind, want[w].what);
			bad++;
		}
	}
	if (r->n != nwant || bad) {
		for (size_t i = 0; i < r->n; i++) {
			fd_rulecheck_format(&r->f[i], line, sizeof(line));
			fprintf(stderr, "%s: found: %s\n", name, line);
		}
		fail_msg("%s: %zu findings, %zu wanted, %d of those not found", name, r->n, nwant,
			 bad);
	}
	assert_int_equal(r->more, 0);
}

/* Every fixture: its findings, and no other. */
static void
test_fixtures(void **state)
{
	(void)state;
	for (size_t c = 0; c < fc_nrulecases; c++) {
		const struct fc_rulecase *k = &fc_rulecases[c];
		struct fd_rulecheck_result r = { 0 };
		char path[256], err[512];
		size_t len;
		char *json;
		int rc;

		snprintf(path, sizeof(path), "tests/rulecheck/%s.json", k->name);
		json = slurp(path, &len);
		rc = fd_rulecheck_parse(json, len, FC_RULECASE_MARK, &r, err, sizeof(err));
		if (rc != 0)
			fail_msg("%s: %d: %s", path, rc, err);
		expect_findings(k->name, &r, k->want, k->nwant);
		fd_rulecheck_result_free(&r);
		free(json);
	}
}

/* Without flowcut's bit in any mark rule, nothing is after the mark. */
static void
test_other_bit(void **state)
{
	static const struct fc_rulecase_find none[1];
	struct fd_rulecheck_result r = { 0 };
	char err[512];
	size_t len;
	char *json = slurp("tests/rulecheck/aftermark.json", &len);

	(void)state;
	assert_int_equal(fd_rulecheck_parse(json, len, 0x1, &r, err, sizeof(err)), 0);
	expect_findings("aftermark, bit 0x1", &r, none, 0);
	fd_rulecheck_result_free(&r);
	free(json);
}

#define HEAD "{\"nftables\": [{\"table\": {\"family\": \"inet\", \"name\": \"t\", \"handle\": 1}}, "
#define MARKCHAIN                                                                                \
	"{\"chain\": {\"family\": \"inet\", \"table\": \"t\", \"name\": \"m\", \"handle\": 1, "   \
	"\"type\": \"filter\", \"hook\": \"forward\", \"prio\": 0, \"policy\": \"accept\"}}, "    \
	"{\"rule\": {\"family\": \"inet\", \"table\": \"t\", \"chain\": \"m\", \"handle\": 2, "   \
	"\"expr\": [{\"mangle\": {\"key\": {\"ct\": {\"key\": \"mark\"}}, \"value\": 1073741824}}]}}, "
#define CHAIN(name, h) \
	"{\"chain\": {\"family\": \"inet\", \"table\": \"t\", \"name\": \"" name "\", \"handle\": " #h "}}, "
#define LATE(h) \
	"{\"chain\": {\"family\": \"inet\", \"table\": \"t\", \"name\": \"late\", \"handle\": " #h ", " \
	"\"type\": \"filter\", \"hook\": \"forward\", \"prio\": 10, \"policy\": \"accept\"}}, "
#define RULE(chain, h, expr) \
	"{\"rule\": {\"family\": \"inet\", \"table\": \"t\", \"chain\": \"" chain "\", \"handle\": " #h ", " \
	"\"expr\": [" expr "]}}"

/* Rows this machine's nft cannot produce. */
static void
test_written_rows(void **state)
{
	static const struct fc_rulecase_find queue[] = {
		{ "queue", "inet", "t", "m", 3, "queue" },
	};
	static const struct fc_rulecase_find loop[] = {
		{ "drop after the mark", "inet", "t", "a", 11, "drop" },
		{ "drop after the mark", "inet", "t", "b", 12, "drop" },
	};
	static const struct fc_rulecase_find terse[] = {
		{ "drop after the mark", "inet", "t", "late", 4, "vmap @vm (its elements not listed)" },
	};
	static const struct {
		const char *name, *json;
		const struct fc_rulecase_find *want;
		size_t nwant;
	} rows[] = {
		/* `queue num 3 bypass`: this kernel has no nft_queue to load it */
		{ "queue", HEAD MARKCHAIN RULE("m", 3, "{\"queue\": {\"num\": 3, \"flags\": \"bypass\"}}")
		  "]}", queue, 1 },
		/* a -> b -> a: the kernel refuses the loop; the walk ends */
		{ "loop", HEAD MARKCHAIN LATE(3) CHAIN("a", 4) CHAIN("b", 5)
		  RULE("late", 10, "{\"jump\": {\"target\": \"a\"}}") ", "
		  RULE("a", 11, "{\"drop\": null}") ", " RULE("a", 13, "{\"jump\": {\"target\": \"b\"}}") ", "
		  RULE("b", 12, "{\"drop\": null}") ", " RULE("b", 14, "{\"goto\": {\"target\": \"a\"}}")
		  "]}", loop, 2 },
		/* a verdict map listed terse: its elements not known, it may drop */
		{ "terse vmap", HEAD "{\"map\": {\"family\": \"inet\", \"name\": \"vm\", \"table\": \"t\", "
		  "\"type\": \"inet_service\", \"handle\": 9, \"map\": \"verdict\"}}, " MARKCHAIN LATE(3)
		  RULE("late", 4, "{\"vmap\": {\"key\": {\"payload\": {\"protocol\": \"tcp\", "
		       "\"field\": \"dport\"}}, \"data\": \"@vm\"}}") "]}", terse, 1 },
		/* a rule whose jump names no chain, unknown statements and objects: skipped */
		{ "unknown", HEAD MARKCHAIN LATE(3) "{\"flowtable\": {\"name\": \"f\"}}, "
		  RULE("late", 4, "{\"jump\": {\"target\": \"nowhere\"}}, {\"xt\": {\"name\": \"x\"}}, 7")
		  "]}", NULL, 0 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct fd_rulecheck_result r = { 0 };
		char err[512];
		int rc = fd_rulecheck_parse(rows[i].json, strlen(rows[i].json), FC_RULECASE_MARK, &r,
					    err, sizeof(err));

		if (rc != 0)
			fail_msg("%s: %d: %s", rows[i].name, rc, err);
		expect_findings(rows[i].name, &r, rows[i].want, rows[i].nwant);
		fd_rulecheck_result_free(&r);
	}
}

/* Malformed or unexpected JSON: -EINVAL, and the error says what and where. */
static void
test_refused(void **state)
{
	static const struct {
		const char *json, *err;
	} rows[] = {
		{ "", "not JSON" },
		{ "{\"nftables\": [", "not JSON" },
		{ "[]", "no \"nftables\" array" },
		{ "{\"nftables\": {}}", "no \"nftables\" array" },
		{ "{\"nftables\": [7]}", "object 0: not an object of one member" },
		{ "{\"nftables\": [{\"a\": 1, \"b\": 2}]}", "object 0: not an object of one member" },
		{ HEAD "{\"chain\": {\"family\": \"inet\", \"table\": \"t\", \"handle\": 1}}]}",
		  "object 1 (chain): 'family', 'table' or 'name' is not a string" },
		{ HEAD "{\"chain\": {\"family\": \"inet\", \"table\": \"t\", \"name\": \"c\", "
		  "\"handle\": \"1\"}}]}", "object 1 (chain inet t c): 'handle' is not an integer" },
		{ HEAD "{\"chain\": {\"family\": \"inet\", \"table\": \"t\", \"name\": \"c\", \"handle\": 1, "
		  "\"hook\": \"forward\", \"prio\": \"filter\"}}]}",
		  "object 1 (chain inet t c): a base chain whose 'prio' is not an integer" },
		{ HEAD CHAIN("c", 1) CHAIN("c", 2) "{}]}", "object 2: chain inet t c listed twice" },
		{ HEAD RULE("c", 5, "") "]}",
		  "object 1 (rule handle 5): its chain inet t c is not listed before it" },
		{ HEAD CHAIN("c", 1) "{\"rule\": {\"family\": \"inet\", \"table\": \"t\", \"chain\": \"c\", "
		  "\"handle\": 5, \"expr\": {}}}]}", "object 2 (rule inet t c handle 5): 'expr' is not an array" },
		{ HEAD CHAIN("c", 1) "{\"rule\": {\"family\": \"inet\", \"table\": \"t\", \"chain\": \"c\", "
		  "\"expr\": []}}]}", "object 2 (rule in inet t c): 'handle' is not an integer" },
		{ HEAD "{\"map\": {\"family\": \"inet\", \"table\": \"t\", \"name\": \"m\", \"map\": \"verdict\", "
		  "\"elem\": 3}}]}", "object 1 (map inet t m): 'elem' is not an array" },
		{ "{\"nftables\": [], \"nftables\": []}", "not JSON" },	/* duplicate keys */
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct fd_rulecheck_result r = { 0 };
		char err[512];
		int rc = fd_rulecheck_parse(rows[i].json, strlen(rows[i].json), FC_RULECASE_MARK, &r,
					    err, sizeof(err));

		if (rc != -EINVAL || strstr(err, rows[i].err) == NULL)
			fail_msg("row %zu: %d '%s', wanted -EINVAL '%s'", i, rc, err, rows[i].err);
		fd_rulecheck_result_free(&r);
	}
}

/* The warning names family, table, chain, handle, kind and construct. */
static void
test_format(void **state)
{
	struct fd_rulecheck_finding f = { .kind = FD_RULECHECK_LIMIT, .family = "inet",
					  .table = "filter", .chain = "forward", .handle = 7,
					  .what = "limit" };
	char line[1024];

	(void)state;
	fd_rulecheck_format(&f, line, sizeof(line));
	assert_string_equal(line, "inet filter forward handle 7: limit (limit): offloaded "
			    "connections bypass it");
	f.kind = FD_RULECHECK_AFTER_MARK;
	f.handle = 0;
	snprintf(f.what, sizeof(f.what), "policy drop");
	fd_rulecheck_format(&f, line, sizeof(line));
	assert_string_equal(line, "inet filter forward its policy: drop after the mark (policy "
			    "drop): offloaded connections bypass it");
	assert_string_equal(fd_rulecheck_kind_name(FD_RULECHECK_NKINDS), "?");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixtures),
		cmocka_unit_test(test_other_bit),
		cmocka_unit_test(test_written_rows),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_format),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
