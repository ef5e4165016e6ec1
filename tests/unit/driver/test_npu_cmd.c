/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The coprocessor's command decoder (npu/npu_cmd.c) and its events onto
 * the link (npu/npu_ev.c), on a real fast path and a real link region.
 *
 * CONN_READ_BRIEF as rows: a window, the end bound, a full answer, to the
 * table's end, an empty table, a full table's last slot, and the bad
 * windows (past the table, reversed, empty, a short payload); every brief
 * answered is held against CONN_READ_BY_ID of the same connection.
 *
 * The sweep's events as rows: with the host's lease held, a sweep against
 * a full (or nearly full) event ring removes nothing it has not reported,
 * and goes on once the host has read; without a lease (lapsed, or none
 * since boot) it still sweeps, and the events lost are counted.
 */
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <rte_memory.h>

#include "fc_eal.h"
#include "fc_frame.h"
#include "fp.h"
#include "lk.h"
#include "npu_cmd.h"
#include "npu_ev.h"

#define SLOTS 64
#define NS 1000000000ull
#define FILLER_ID 0xf111e5ull	/* the events the test itself puts on the ring */

static struct fp *fp;		/* each row's own, made by setup, destroyed by teardown */
static struct lk *npu, *host;	/* the events rows' link */
static char dir[64], path[80];

static int
setup(void **state)
{
	struct fp_params p = { .max_conns = SLOTS, .max_nhops = 4, .max_workers = 1,
			       .socket_id = SOCKET_ID_ANY, .name = "testnpucmd" };

	(void)state;
	fp = fp_create(&p);
	return fp == NULL ? -1 : 0;
}

static int
teardown(void **state)
{
	(void)state;
	lk_close(host);
	lk_close(npu);
	host = npu = NULL;
	if (dir[0] != '\0') {
		unlink(path);
		rmdir(dir);
		dir[0] = '\0';
	}
	fp_destroy(fp);
	fp = NULL;
	return 0;
}

/*
 * Connection i (made at `now`, idle timeout 1 s both ways): UDP, IPv4 for
 * even i, IPv6 for odd; the reply from another address (a DNAT) for every
 * third; actions FWD both ways, but DROP one way and IPS the other for
 * every fifth.
 */
static fp_conn_id
conn_make(unsigned int i, uint64_t now)
{
	struct fp_conn_spec s = { .verdict = FC_VERDICT_CUT_THRU };
	fp_conn_id id;
	char src[64];

	if (i % 2 == 0) {
		snprintf(src, sizeof(src), "198.18.0.%u", i + 1);
		fc_key4(&s.mf[0].key, IPPROTO_UDP, src, (uint16_t)(10000 + i), "198.19.0.1", 53);
	} else {
		snprintf(src, sizeof(src), "2001:db8::%x", i + 1);
		fc_key6(&s.mf[0].key, IPPROTO_UDP, src, (uint16_t)(10000 + i), "2001:db8:1::1", 53);
	}
	fp_key_reverse(&s.mf[0].key, &s.mf[1].key);
	s.mf[1].key.port = 1;
	if (i % 3 == 0)
		s.mf[1].key.src[3] ^= 0x40;	/* the server the client did not name */
	for (int d = 0; d < 2; d++) {
		s.mf[d].action = FC_ACTION_FWD;
		s.mf[d].timeout_s = 1;
	}
	if (i % 5 == 0) {
		s.mf[0].action = FC_ACTION_DROP;
		s.mf[1].action = FC_ACTION_IPS;
	}
	assert_int_equal(fp_conn_create(fp, &s, now, &id), 0);
	return id;
}

static int
exec(uint16_t op, const void *payload, uint16_t len, void *ans, uint16_t *alen)
{
	struct fc_cmd_hdr h = { .op = op, .len = len, .tag = 7 };
	struct fc_ans_hdr a;

	npu_cmd_exec(&(struct npu_cmd_env){ .fp = fp }, &h, payload, 5 * NS, &a, ans);
	assert_int_equal(a.tag, 7);
	assert_int_equal(a.op, op);
	if (a.rc != 0)
		assert_int_equal(a.len, 0);
	*alen = a.len;
	return a.rc;
}

/* ---- CONN_READ_BRIEF ---- */

struct brief_row {
	const char *name;
	unsigned int conns;	/* made first, in slots 0..conns-1 */
	uint32_t first, end;
	uint16_t len;		/* the payload's length; 0: the command's */
	int rc;
	uint32_t count;		/* connections answered, from slot `from` on */
	uint32_t from;
	uint32_t next;
};

static const struct brief_row brief_rows[] = {
	{ "brief: a window", 20, 4, 10, 0, 0, 6, 4, 10 },
	{ "brief: the end bound, a window past the connections", 20, 30, 40, 0, 0, 0, 0, 40 },
	{ "brief: the end bound cuts a window short", 20, 18, 19, 0, 0, 1, 18, 19 },
	{ "brief: a full answer, the window read on from next", 20, 2, 16, 0, 0, 8, 2, 10 },
	{ "brief: a full answer to the table's end", 20, 0, 0, 0, 0, 8, 0, 8 },
	{ "brief: to the table's end", 20, 16, 0, 0, 0, 4, 16, SLOTS },
	{ "brief: an empty table", 0, 0, 0, 0, 0, 0, 0, SLOTS },
	{ "brief: a full table's last slot", SLOTS, SLOTS - 1, SLOTS, 0, 0, 1, SLOTS - 1, SLOTS },
	{ "brief: first past the table", 20, SLOTS, 0, 0, -ERANGE, 0, 0, 0 },
	{ "brief: first far past the table", 20, 0xffffffff, 0, 0, -ERANGE, 0, 0, 0 },
	{ "brief: end past the table", 20, 0, SLOTS + 1, 0, -ERANGE, 0, 0, 0 },
	{ "brief: end before first", 20, 10, 5, 0, -EINVAL, 0, 0, 0 },
	{ "brief: end at first (an empty window)", 20, 10, 10, 0, -EINVAL, 0, 0, 0 },
	{ "brief: a short payload", 20, 0, 0, 4, -EBADMSG, 0, 0, 0 },
};

static void
brief_check(const struct fc_conn_brief *b, fp_conn_id id)
{
	struct fc_cmd_conn_id c = { .id = id };
	_Alignas(8) uint8_t buf[FC_CMD_MAX_PAYLOAD];
	const struct fc_conn_info *ci = (const struct fc_conn_info *)buf;
	uint16_t alen;
	uint64_t s0, s1;

	assert_int_equal(exec(FC_CMD_CONN_READ_BY_ID, &c, sizeof(c), buf, &alen), 0);
	assert_int_equal(b->id, id);
	assert_int_equal(b->state, ci->state);
	assert_int_equal(b->verdict, ci->verdict);
	assert_int_equal(b->reason, ci->reason);
	assert_int_equal(b->fw_rev, ci->fw_rev);
	assert_int_equal(fc_brief_action(b, 0), ci->mf[0].action);
	assert_int_equal(fc_brief_action(b, 1), ci->mf[1].action);
	assert_memory_equal(&b->key[0], &ci->mf[0].key, sizeof(b->key[0]));
	assert_memory_equal(&b->key[1], &ci->mf[1].key, sizeof(b->key[1]));
	s0 = ci->mf[0].stats.last_seen;
	s1 = ci->mf[1].stats.last_seen;
	assert_int_equal(b->last_seen, s0 > s1 ? s0 : s1);
}

static void
test_brief(void **state)
{
	const struct brief_row *r = *state;
	struct fc_cmd_brief c = { .first = r->first, .end = r->end };
	_Alignas(8) uint8_t buf[FC_CMD_MAX_PAYLOAD];
	const struct fc_ans_brief *a = (const struct fc_ans_brief *)buf;
	fp_conn_id ids[SLOTS];
	uint16_t alen;
	int rc;

	for (unsigned int i = 0; i < r->conns; i++)
		ids[i] = conn_make(i, 1 * NS);
	/* one cut: its verdict carried too */
	if (r->conns > 5)
		assert_int_equal(fp_conn_verdict_set(fp, ids[5], FC_VERDICT_DROP), 0);
	rc = exec(FC_CMD_CONN_READ_BRIEF, &c, r->len ? r->len : sizeof(c), buf, &alen);
	assert_int_equal(rc, r->rc);
	if (rc == 0) {
		assert_int_equal(alen, offsetof(struct fc_ans_brief, conn) +
				 a->count * sizeof(struct fc_conn_brief));
		assert_int_equal(a->count, r->count);
		assert_int_equal(a->next, r->next);
		for (uint32_t k = 0; k < a->count; k++)
			brief_check(&a->conn[k], ids[r->from + k]);
	}
}

/* A whole table, read window after window from each answer's next: every connection once. */
static void
test_brief_whole_table(void **state)
{
	unsigned int seen[SLOTS] = { 0 }, n = 0;
	fp_conn_id ids[SLOTS];

	(void)state;
	for (unsigned int i = 0; i < 45; i++)
		ids[i] = conn_make(i, 1 * NS);
	for (uint32_t w = 0; w < SLOTS; w += 16) {
		struct fc_cmd_brief c = { .first = w, .end = w + 16 };

		while (c.first < c.end) {
			_Alignas(8) uint8_t buf[FC_CMD_MAX_PAYLOAD];
			const struct fc_ans_brief *a = (const struct fc_ans_brief *)buf;
			uint16_t alen;

			assert_int_equal(exec(FC_CMD_CONN_READ_BRIEF, &c, sizeof(c), buf, &alen), 0);
			assert_true(a->next > c.first && a->next <= c.end);
			for (uint32_t k = 0; k < a->count; k++) {
				for (unsigned int j = 0; j < 45; j++)
					if (ids[j] == a->conn[k].id)
						seen[j]++;
				n++;
			}
			c.first = a->next;
		}
	}
	assert_int_equal(n, 45);
	for (unsigned int j = 0; j < 45; j++)
		assert_int_equal(seen[j], 1);
}

/* ---- the sweep's events ---- */

enum lease { NONE, HELD, LAPSED };

struct ev_row {
	const char *name;
	enum lease lease;
	bool rev_bump;		/* a new revision (REMOVED) instead of idleness (AGED_OUT) */
	int room;		/* left on the event ring before the sweep; -1: the ring empty */
	bool then_read;		/* the host reads everything, and the next turn sweeps again */
	unsigned int removed;	/* connections gone after it all */
	uint64_t lost;		/* events npu_ev_post said it lost */
};

#define EV_CONNS 20

static const struct ev_row ev_rows[] = {
	{ "events: lease held, ring full: nothing removed", HELD, false, 0, false, 0, 0 },
	{ "events: lease held, room for 5: 5 removed, each reported", HELD, false, 5, false, 5, 0 },
	{ "events: lease held, ring empty: all removed", HELD, false, -1, false, EV_CONNS, 0 },
	{ "events: lease held, a new revision, room for 3: 3 removed", HELD, true, 3, false, 3, 0 },
	{ "events: lease held, ring full, then read: the rest next turn", HELD, false, 0, true,
	  EV_CONNS, 0 },
	{ "events: lease lapsed, ring full: still swept, every loss counted", LAPSED, false, 0,
	  false, EV_CONNS, EV_CONNS },
	{ "events: lease lapsed, room for 5: swept, 15 lost", LAPSED, true, 5, false, EV_CONNS,
	  EV_CONNS - 5 },
	{ "events: no lease since boot, ring full: still swept", NONE, false, 0, false, EV_CONNS,
	  EV_CONNS },
};

/* Takes every event; records the connections the AGED_OUT and REMOVED name. */
static void
host_read(struct lk *h, fp_conn_id *gone, unsigned int *ngone)
{
	struct lk_event ev;
	int rc;

	while ((rc = lk_event_take(h, &ev)) == 0 || rc == -EOVERFLOW) {
		if (rc != 0 || ev.id == FILLER_ID || ev.type == LK_EV_BOOT)
			continue;
		if (ev.type == FC_EV_AGED_OUT || ev.type == FC_EV_REMOVED)
			gone[(*ngone)++] = ev.id;
	}
	assert_int_equal(rc, -EAGAIN);
}

static void
test_events(void **state)
{
	const struct ev_row *r = *state;
	fp_conn_id ids[EV_CONNS], gone[4 * EV_CONNS];
	unsigned int ngone = 0;
	uint64_t now = 100 * NS, lost;

	snprintf(dir, sizeof(dir), "/dev/shm/fc-test-npucmd-XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/link", dir);
	npu = lk_create(path);
	assert_non_null(npu);
	host = lk_attach(path, 0);
	assert_non_null(host);
	host_read(host, gone, &ngone);	/* the BOOT */

	for (unsigned int i = 0; i < EV_CONNS; i++)
		ids[i] = conn_make(i, 1 * NS);	/* idle since 1 s, timeout 1 s */
	if (r->rev_bump)
		fp_fw_rev_set(fp, 9);
	if (r->lease == HELD)
		assert_int_equal(fp_lease_renew(fp, now - NS, 10000, 0, NULL), 0);
	if (r->lease == LAPSED) {
		assert_int_equal(fp_lease_renew(fp, 1 * NS, 1000, 0, NULL), 0);
		assert_true(fp_lease_tick(fp, now));
	}
	if (r->room >= 0)
		while (lk_event_room(npu) > (uint32_t)r->room)
			assert_int_equal(lk_event_put(npu, &(struct lk_event){
				.type = FC_EV_GIVEN_BACK, .id = FILLER_ID }), 0);

	lost = npu_ev_post(fp, npu, now, SLOTS);
	if (r->then_read) {
		assert_int_equal(fp_conn_count(fp), EV_CONNS);	/* waited for room */
		host_read(host, gone, &ngone);
		lost += npu_ev_post(fp, npu, now + NS, SLOTS);
	}
	host_read(host, gone, &ngone);

	assert_int_equal(EV_CONNS - fp_conn_count(fp), r->removed);
	assert_int_equal(lost, r->lost);
	/* with the lease held, every connection gone was reported, once */
	for (unsigned int i = 0; i < EV_CONNS; i++) {
		unsigned int told = 0;

		for (unsigned int k = 0; k < ngone; k++)
			told += gone[k] == ids[i];
		if (fp_conn_get(fp, ids[i], &(struct fp_conn_info){ 0 }) == 0)
			assert_int_equal(told, 0);
		else if (r->lease == HELD)
			assert_int_equal(told, 1);
	}
	if (r->lease == HELD)
		assert_int_equal(ngone, r->removed);
	else
		assert_int_equal(ngone + r->lost, r->removed);

}

static int
group_setup(void **state)
{
	(void)state;
	return fc_eal_init("test_npu_cmd", 64);
}

int
main(void)
{
	enum { NB = sizeof(brief_rows) / sizeof(brief_rows[0]),
	       NE = sizeof(ev_rows) / sizeof(ev_rows[0]) };
	struct CMUnitTest tests[NB + NE + 1];
	size_t n = 0;

	for (size_t i = 0; i < NB; i++)
		tests[n++] = (struct CMUnitTest){ .name = brief_rows[i].name, .test_func = test_brief,
						  .setup_func = setup, .teardown_func = teardown,
						  .initial_state = (void *)&brief_rows[i] };
	tests[n++] = (struct CMUnitTest){ .name = "brief: a whole table in windows of 16",
					  .test_func = test_brief_whole_table,
					  .setup_func = setup, .teardown_func = teardown };
	for (size_t i = 0; i < NE; i++)
		tests[n++] = (struct CMUnitTest){ .name = ev_rows[i].name, .test_func = test_events,
						  .setup_func = setup, .teardown_func = teardown,
						  .initial_state = (void *)&ev_rows[i] };
	return cmocka_run_group_tests(tests, group_setup, NULL);
}
