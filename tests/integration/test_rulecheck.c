/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_rulecheck against the real nftables: each ruleset of tests/rulecheck/
 * loaded into a network namespace of its own (unshare) and listed through
 * libnftables as flowcutd lists it (fd_rulecheck_list: terse, the verdict
 * maps' elements put in), its findings those of the committed fixture
 * (tests/lib/fc_rulecases.c) - so a change of nft's JSON is caught here;
 * and flowcutd's checker (fd_rulecheck_run) on the lab's ruleset with
 * flowcutd's real table (fd_nft_open): nothing, then what a rule added
 * after the mark brings.  Root only (skipped otherwise).
 */
#include <errno.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>
#include <nftables/libnftables.h>

#include "fc_rulecases.h"
#include "fd_nft.h"
#include "fd_rulecheck.h"

/* A namespace of its own (the one before goes with its last user), or why not. */
static const char *
fresh_netns(void)
{
	if (geteuid() != 0)
		return "not root";
	if (unshare(CLONE_NEWNET) != 0)
		return "no network namespace (unshare)";
	return NULL;
}

/* Runs nft commands (or a file, with file set); returns the handle echoed, 0 if none. */
static uint64_t
nft_do(const char *what, bool file)
{
	struct nft_ctx *nft = nft_ctx_new(NFT_CTX_DEFAULT);
	const char *out, *h;
	uint64_t handle = 0;
	int rc;

	assert_non_null(nft);
	nft_ctx_buffer_output(nft);
	nft_ctx_buffer_error(nft);
	nft_ctx_output_set_flags(nft, NFT_CTX_OUTPUT_ECHO | NFT_CTX_OUTPUT_HANDLE);
	rc = file ? nft_run_cmd_from_filename(nft, what) : nft_run_cmd_from_buffer(nft, what);
	if (rc != 0)
		fail_msg("nft %s: %s", what, nft_ctx_get_error_buffer(nft));
	out = nft_ctx_get_output_buffer(nft);
	h = out ? strstr(out, "# handle ") : NULL;
	if (h != NULL)
		handle = strtoull(h + 9, NULL, 10);
	nft_ctx_free(nft);
	return handle;
}

static bool
is(const struct fd_rulecheck_finding *f, const struct fc_rulecase_find *w)
{
	return !strcmp(fd_rulecheck_kind_name((int)f->kind), w->kind) &&
	       !strcmp(f->family, w->family) && !strcmp(f->table, w->table) &&
	       !strcmp(f->chain, w->chain) && f->handle == w->handle && !strcmp(f->what, w->what);
}

static void
expect_findings(const char *name, const struct fd_rulecheck_result *r,
		const struct fc_rulecase_find *want, size_t nwant)
{
	int bad = 0;
	char line[1024];

	for (size_t w = 0; w < nwant; w++) {
		bool hit = false;

		for (size_t i = 0; i < r->n && !hit; i++)
			hit = is(&r->f[i], &want[w]);
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
}

/* Each ruleset loaded, listed as flowcutd lists it: the fixture's findings. */
static void
test_loaded(void **state)
{
	(void)state;
	for (size_t c = 0; c < fc_nrulecases; c++) {
		const struct fc_rulecase *k = &fc_rulecases[c];
		struct fd_rulecheck_result r = { 0 };
		const char *why = fresh_netns();
		char err[512], *json;
		int rc;

		if (why != NULL) {
			fprintf(stderr, "skipped: %s\n", why);
			skip();
		}
		nft_do(k->nft, true);
		nft_do("tests/rulecheck/flowcut.nft", true);
		rc = fd_rulecheck_list(&json, err, sizeof(err));
		if (rc != 0)
			fail_msg("%s: listed: %d: %s", k->name, rc, err);
		rc = fd_rulecheck_parse(json, strlen(json), FC_RULECASE_MARK, &r, err, sizeof(err));
		if (rc != 0)
			fail_msg("%s: checked: %d: %s", k->name, rc, err);
		expect_findings(k->name, &r, k->want, k->nwant);
		fd_rulecheck_result_free(&r);
		free(json);
	}
}

static json_int_t
stat_of(json_t *st, const char *key, const char *sub)
{
	json_t *v = json_object_get(st, key);

	if (sub != NULL)
		v = json_object_get(v, sub);
	assert_true(json_is_integer(v));
	return json_integer_value(v);
}

/* flowcutd's checker: the lab's ruleset with flowcutd's real table, then a rule after the mark. */
static void
test_flowcutd(void **state)
{
	const char *why = fresh_netns();
	struct fd_rulecheck *c;
	struct fd_nft *n;
	uint64_t lim, drop;
	json_t *st;

	(void)state;
	if (why != NULL) {
		fprintf(stderr, "skipped: %s\n", why);
		skip();
	}
	nft_do("lab/ruleset.nft", true);
	n = fd_nft_open(FC_RULECASE_MARK);	/* the table as flowcutd installs it */
	assert_non_null(n);
	c = fd_rulecheck_open(FC_RULECASE_MARK);
	assert_non_null(c);
	assert_int_equal(fd_rulecheck_run(c), 0);
	nft_do("add chain inet filter late { type filter hook forward priority 200; }", false);
	lim = nft_do("add rule inet filter late limit rate over 10/second counter", false);
	drop = nft_do("add rule inet filter late ip6 nexthdr udp drop", false);
	assert_true(lim != 0 && drop != 0);
	{
		const struct fc_rulecase_find want[] = {
			{ "limit", "inet", "filter", "late", lim, "limit" },
			{ "drop after the mark", "inet", "filter", "late", drop, "drop" },
		};
		struct fd_rulecheck_result r = { 0 };
		char err[512], *json;

		assert_int_equal(fd_rulecheck_list(&json, err, sizeof(err)), 0);
		assert_int_equal(fd_rulecheck_parse(json, strlen(json), FC_RULECASE_MARK, &r, err,
						    sizeof(err)), 0);
		expect_findings("lab and a late chain", &r, want, 2);
		fd_rulecheck_result_free(&r);
		free(json);
	}
	assert_int_equal(fd_rulecheck_run(c), 2);
	assert_int_equal(fd_rulecheck_run(c), 2);	/* the same again: nothing new said */
	st = fd_rulecheck_stats_json(c);
	assert_non_null(st);
	assert_int_equal(stat_of(st, "bypassed", NULL), 2);
	assert_int_equal(stat_of(st, "checks", NULL), 3);
	assert_int_equal(stat_of(st, "failed", NULL), 0);
	assert_int_equal(stat_of(st, "kinds", "limit"), 1);
	assert_int_equal(stat_of(st, "kinds", "drop after the mark"), 1);
	assert_true(json_is_null(json_object_get(st, "error")));
	json_decref(st);
	fd_rulecheck_close(c);
	fd_nft_close(n);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_loaded),
		cmocka_unit_test(test_flowcutd),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
