/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The link (link/): round trips, batches, full rings, reboots, client
 * slots, the counters window, and garbage - in every byte of the region,
 * and while both sides run; and, as nobody against root, every way another
 * user could lay the link out or put something at its path.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <inttypes.h>
#include <libgen.h>
#include <pwd.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "fd_clock.h"
#include "lk.h"

static char dir[64], path[80];	/* the link in a directory of its own, 0700 */

static int
setup(void **state)
{
	snprintf(dir, sizeof(dir), "/dev/shm/fc-test-link-XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/link", dir);
	*state = lk_create(path);
	if (*state == NULL)
		print_error("link %s\n", lk_error());
	assert_non_null(*state);
	return 0;
}

static int
teardown(void **state)
{
	lk_close(*state);
	unlink(path);
	rmdir(dir);
	return 0;
}

/* The coprocessor's side in these tests: answer every command with its payload. */
static int
serve(struct lk *npu)
{
	int served = 0;

	for (unsigned int c = 0; c < LK_CLIENTS; c++) {
		struct fc_cmd_hdr h;
		uint8_t p[FC_CMD_MAX_PAYLOAD];
		int rc;

		while ((rc = lk_cmd_take(npu, c, &h, p)) != -EAGAIN) {
			struct fc_ans_hdr a = { .op = h.op, .tag = h.tag };

			if (rc == 0) {
				a.len = h.len;
				a.rc = h.op == 7 ? -EINVAL : 0;
			} else {
				a.rc = -EBADMSG;
			}
			if (rc == 0 || h.op != 0xffff)
				lk_ans_put(npu, c, &a, p);
			served++;
		}
		lk_ans_kick(npu, c);
	}
	return served;
}

static void
test_boot_event_and_attach(void **state)
{
	struct lk *npu = *state, *host = lk_attach(path, -1);
	struct lk_event ev;
	char none[96];

	assert_non_null(host);
	assert_int_equal(lk_client(host), 1);	/* 0 is the driver's */
	assert_int_equal(lk_boot_id(host), lk_boot_id(npu));
	/* the boot's time as the host reads it: the coprocessor's CLOCK_MONOTONIC at its layout */
	{
		struct timespec ts;
		uint64_t now;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
		assert_int_equal(lk_boot_ns(host), lk_boot_ns(npu));
		assert_true(lk_boot_ns(host) > 0 && lk_boot_ns(host) <= now);
		assert_true(now - lk_boot_ns(host) < 60000000000ull);	/* laid out by this test's setup */
	}
	assert_int_equal(lk_event_take(host, &ev), 0);
	assert_int_equal(ev.type, LK_EV_BOOT);
	assert_int_equal(ev.boot_id, lk_boot_id(npu));
	assert_int_equal(lk_event_take(host, &ev), -EAGAIN);
	lk_close(host);
	snprintf(none, sizeof(none), "%s/none", dir);
	assert_null(lk_attach(none, -1));
	assert_int_equal(errno, ENOENT);
	assert_true(strncmp(lk_error(), none, strlen(none)) == 0);
}

static void
test_batch_and_full(void **state)
{
	struct lk *npu = *state, *host = lk_attach(path, -1);
	struct fc_ans_hdr a;
	uint8_t p[FC_CMD_MAX_PAYLOAD];
	uint32_t v;

	for (uint32_t i = 0; i < LK_CMD_SLOTS; i++)
		assert_int_equal(lk_cmd_post(host, 1, i, &i, sizeof(i)), 0);
	assert_int_equal(lk_cmd_post(host, 1, 99, &v, sizeof(v)), -ENOBUFS);
	assert_int_equal(lk_cmd_post(host, 1, 99, p, FC_CMD_MAX_PAYLOAD + 1), -EMSGSIZE);
	lk_cmd_kick(host);
	assert_int_equal(serve(npu), LK_CMD_SLOTS);
	for (uint32_t i = 0; i < LK_CMD_SLOTS; i++) {
		assert_int_equal(lk_ans_take(host, &a, p, sizeof(p)), 0);
		assert_int_equal(a.tag, i);
		assert_int_equal(a.rc, 0);
		memcpy(&v, p, sizeof(v));
		assert_int_equal(v, i);
	}
	assert_int_equal(lk_ans_take(host, &a, p, sizeof(p)), -EAGAIN);
	lk_close(host);
}

struct server {
	struct lk *npu;
	int stop;
	uint64_t garbage;	/* bytes of garbage written */
	uint64_t served;
};

static void *
server_thread(void *arg)
{
	struct server *s = arg;

	while (!__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE)) {
		int n = serve(s->npu);

		s->served += (uint64_t)n;
		if (n == 0)
			lk_npu_wait(s->npu, 10, NULL, NULL);
	}
	return NULL;
}

static void
test_call_round_trip(void **state)
{
	struct server s = { .npu = *state };
	struct lk *host = lk_attach(path, 2);
	pthread_t th;
	uint32_t in = 1234, out = 0;
	uint16_t len = 0;

	assert_non_null(host);
	assert_int_equal(lk_client(host), 2);
	assert_int_equal(pthread_create(&th, NULL, server_thread, &s), 0);
	assert_int_equal(lk_call(host, 1, &in, sizeof(in), &out, sizeof(out), &len, 2000), 0);
	assert_int_equal(len, sizeof(out));
	assert_int_equal(out, 1234);
	assert_int_equal(lk_call(host, 7, &in, sizeof(in), &out, sizeof(out), &len, 2000), -EINVAL);
	assert_int_equal(lk_call(host, 1, &in, sizeof(in), &out, 2, &len, 2000), -EMSGSIZE);
	__atomic_store_n(&s.stop, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	/* nobody serves: a call times out, it does not hang */
	assert_int_equal(lk_call(host, 1, &in, sizeof(in), &out, sizeof(out), &len, 50),
			 -ETIMEDOUT);
	lk_close(host);
}

/*
 * Answers to commands lk_call did not post (an earlier call's that timed
 * out, here two of them, one too large for the call's buffer) are
 * consumed and counted, and the call still gets its own.
 */
static void
test_call_counts_other_answers(void **state)
{
	struct server s = { .npu = *state };
	struct lk *host = lk_attach(path, -1);
	uint64_t big = 0x1122334455667788ull;
	uint32_t in = 42, out = 0, small = 9;
	struct lk_stats st;
	uint16_t len = 0;
	pthread_t th;

	assert_non_null(host);
	assert_int_equal(lk_cmd_post(host, 1, 77, &big, sizeof(big)), 0);
	assert_int_equal(lk_cmd_post(host, 1, 78, &small, sizeof(small)), 0);
	assert_int_equal(serve(s.npu), 2);	/* both answers wait on the ring */
	assert_int_equal(pthread_create(&th, NULL, server_thread, &s), 0);
	assert_int_equal(lk_call(host, 1, &in, sizeof(in), &out, sizeof(out), &len, 2000), 0);
	assert_int_equal(len, sizeof(out));
	assert_int_equal(out, 42);
	lk_stats(host, &st);
	assert_int_equal(st.unexpected_tag, 2);
	__atomic_store_n(&s.stop, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	lk_close(host);
}

/* lk_event_room: what lk_event_put takes, down to 0 as the ring fills, up as the host takes. */
static void
test_event_room(void **state)
{
	struct lk *npu = *state, *host = lk_attach(path, -1);
	struct lk_event ev;
	uint32_t room, put = 0;

	assert_non_null(host);
	assert_int_equal(lk_event_room(npu), LK_EV_SLOTS - 1);	/* the BOOT */
	assert_int_equal(lk_event_take(host, &ev), 0);
	assert_int_equal(lk_event_room(npu), LK_EV_SLOTS);
	for (room = lk_event_room(npu); room > 0; room--) {
		assert_int_equal(lk_event_put(npu, &(struct lk_event){ .type = FC_EV_AGED_OUT }), 0);
		put++;
		assert_int_equal(lk_event_room(npu), room - 1);
	}
	assert_int_equal(put, LK_EV_SLOTS);
	assert_int_equal(lk_event_put(npu, &(struct lk_event){ .type = FC_EV_AGED_OUT }), -ENOBUFS);
	assert_int_equal(lk_event_room(npu), 0);
	assert_int_equal(lk_event_take(host, &ev), -EOVERFLOW);	/* the one lost, said */
	assert_int_equal(lk_event_take(host, &ev), 0);
	assert_int_equal(lk_event_take(host, &ev), 0);
	assert_int_equal(lk_event_room(npu), 2);
	lk_close(host);
}

static void
test_reboot_and_resync(void **state)
{
	struct lk *npu = *state, *host = lk_attach(path, -1), *npu2;
	struct lk_event ev;
	uint64_t old = lk_boot_id(npu), old_ns = lk_boot_ns(npu);
	uint32_t v = 5;

	assert_non_null(host);
	while (lk_event_take(host, &ev) == 0)
		;
	/* a second coprocessor while the first lives is refused, the region untouched */
	assert_null(lk_create(path));
	assert_int_equal(errno, EBUSY);
	assert_int_equal(lk_event_take(host, &ev), -EAGAIN);
	lk_close(npu);			/* the coprocessor dies... */
	npu2 = lk_create(path);		/* ...and starts again */
	assert_non_null(npu2);
	*state = npu2;			/* the teardown's */
	assert_int_not_equal(lk_boot_id(npu2), old);
	assert_true(lk_boot_ns(host) > old_ns);	/* the new boot's time, read through the old mapping */
	assert_int_equal(lk_cmd_post(host, 1, 1, &v, sizeof(v)), -ECONNRESET);
	assert_int_equal(lk_event_take(host, &ev), -ECONNRESET);
	assert_int_equal(lk_resync(host), 0);
	assert_int_equal(lk_event_take(host, &ev), 0);
	assert_int_equal(ev.type, LK_EV_BOOT);
	assert_int_equal(ev.boot_id, lk_boot_id(npu2));
	assert_int_equal(lk_cmd_post(host, 1, 1, &v, sizeof(v)), 0);
	assert_int_equal(serve(npu2), 1);
	lk_close(host);
}

/*
 * Slot 0 is the driver's: the tools' lk_attach(path, -1) takes 1..3, never
 * 0, so a flowcutctl run while flowcutd restarts cannot keep it out.  A
 * slot given back, or whose holder died without giving it back, is free.
 */
static void
test_client_slots(void **state)
{
	struct lk *c[LK_CLIENTS];
	pid_t child;
	int st;

	(void)state;
	for (int i = 1; i < LK_CLIENTS; i++) {
		assert_non_null(c[i] = lk_attach(path, -1));
		assert_int_equal(lk_client(c[i]), i);
	}
	assert_null(lk_attach(path, -1));	/* slot 0 is free, and not for it */
	assert_int_equal(errno, EBUSY);
	assert_non_null(strstr(lk_error(), "every client slot (1 to 3) is held"));
	assert_non_null(c[0] = lk_attach(path, 0));
	assert_int_equal(lk_client(c[0]), 0);
	assert_null(lk_attach(path, 0));
	assert_int_equal(errno, EBUSY);
	assert_null(lk_attach(path, 1));
	assert_int_equal(errno, EBUSY);
	assert_null(lk_attach(path, LK_CLIENTS));
	assert_int_equal(errno, EINVAL);
	lk_close(c[1]);
	c[1] = lk_attach(path, 1);
	assert_non_null(c[1]);
	/* a slot held by a process killed before it gave it back is free */
	lk_close(c[3]);
	child = fork();
	if (child == 0) {
		if (lk_attach(path, 3) == NULL)
			_exit(1);
		raise(SIGKILL);
	}
	assert_int_equal(waitpid(child, &st, 0), child);
	assert_true(WIFSIGNALED(st));
	c[3] = lk_attach(path, -1);
	assert_non_null(c[3]);
	assert_int_equal(lk_client(c[3]), 3);
	for (int i = 0; i < LK_CLIENTS; i++)
		lk_close(c[i]);
}

/*
 * A slot's holder is not told by its pid: here the holder ran as pid 1 of
 * a pid namespace of its own and is gone; in this namespace pid 1 is init,
 * alive (as a pid used again would be).  The slot is free all the same.
 */
static void
test_client_slot_pid_reused(void **state)
{
	struct lk *c;
	pid_t child;
	int st;

	(void)state;
	if (geteuid() != 0) {
		print_message("skipped: a pid namespace needs root\n");
		skip();
	}
	child = fork();
	if (child == 0) {
		pid_t init;

		if (unshare(CLONE_NEWPID) != 0)
			_exit(2);
		init = fork();
		if (init == 0)	/* pid 1 of the new namespace */
			_exit(getpid() == 1 && lk_attach(path, 3) != NULL ? 0 : 1);
		_exit(init > 0 && waitpid(init, &st, 0) == init && WIFEXITED(st) ?
		      WEXITSTATUS(st) : 3);
	}
	assert_int_equal(waitpid(child, &st, 0), child);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_int_equal(kill(1, 0), 0);	/* pid 1 lives here */
	c = lk_attach(path, 3);
	if (c == NULL)
		print_error("link %s\n", lk_error());
	assert_non_null(c);
	lk_close(c);
}

static void
test_frames_and_counters(void **state)
{
	struct lk *npu = *state, *host = lk_attach(path, -1);
	uint8_t f[LK_FRAME_SLOT + 10] = { 1, 2, 3 };
	uint64_t cnt[FC_CNT_MAX], got[FC_CNT_MAX], when;
	uint16_t port, flags;
	int n;

	assert_int_equal(lk_frame_up_put(npu, 3, LK_FRAME_INSPECT, f, 60), 0);
	assert_int_equal(lk_frame_up_put(npu, 3, 0, f, LK_FRAME_MAX + 1), -EMSGSIZE);
	n = lk_frame_up_take(host, &port, &flags, f, sizeof(f));
	assert_int_equal(n, 60);
	assert_int_equal(port, 3);
	assert_int_equal(flags, LK_FRAME_INSPECT);
	assert_int_equal(lk_frame_up_take(host, &port, &flags, f, sizeof(f)), -EAGAIN);
	assert_int_equal(lk_frame_down_put(host, 1, f, 1500), 0);
	assert_int_equal(lk_frame_down_take(npu, &port, f, sizeof(f)), 1500);
	assert_int_equal(port, 1);
	for (unsigned int i = 0; i < FC_CNT_MAX; i++)
		cnt[i] = i * 1000;
	lk_counters_publish(npu, cnt, 42);
	assert_int_equal(lk_counters_read(host, got, &when), 0);
	assert_memory_equal(got, cnt, sizeof(cnt));
	assert_int_equal(when, 42);
	/* a window stuck mid-write is reported, not waited for */
	{
		uint32_t size;
		uint32_t *seq = (uint32_t *)((uint8_t *)lk_region(host, &size) + 4096);

		*seq |= 1;
		assert_int_equal(lk_counters_read(host, got, &when), -EAGAIN);
		*seq += 1;
	}
	lk_close(host);
}

/*
 * The wire's figures: none before the coprocessor publishes (0 ports), then
 * each port's read back; a port count past FC_WIRE_PORTS in the region is
 * taken as FC_WIRE_PORTS (the copy never reads past its arrays); a seqlock
 * stuck mid-write is reported.
 */
static void
test_wire_figures(void **state)
{
	struct lk *npu = *state, *host = lk_attach(path, -1);
	uint64_t wire[3][FC_WIRE_MAX], got[FC_WIRE_PORTS][FC_WIRE_MAX];
	uint32_t size;
	uint8_t *cnt_page = (uint8_t *)lk_region(host, &size) + 4096;
	size_t off = 16 + FC_CNT_MAX * sizeof(uint64_t);	/* seq, pad, when, value[] */
	uint32_t *wire_seq = (uint32_t *)(cnt_page + off), *wire_ports = wire_seq + 1;

	assert_int_equal(lk_wire_read(host, got), 0);
	for (unsigned int p = 0; p < 3; p++)
		for (unsigned int k = 0; k < FC_WIRE_MAX; k++)
			wire[p][k] = 1000 * p + k + 1;
	lk_wire_publish(npu, wire, 3);
	assert_int_equal(lk_wire_read(host, got), 3);
	for (unsigned int p = 0; p < 3; p++)
		assert_memory_equal(got[p], wire[p], sizeof(wire[p]));
	assert_string_equal(fc_wire_name(FC_WIRE_RX_MISSED), "RX_MISSED");
	assert_null(fc_wire_name(FC_WIRE_MAX));
	assert_int_equal(*wire_ports, 3);	/* the layout the test writes into */
	*wire_ports = 1000;
	assert_int_equal(lk_wire_read(host, got), FC_WIRE_PORTS);
	*wire_seq |= 1;
	assert_int_equal(lk_wire_read(host, got), -EAGAIN);
	*wire_seq += 1;
	lk_close(host);
}

/* ---- a sleeper across a coprocessor restart ---- */

struct sleeper {
	struct lk *host;
	uint64_t woke_ms;
};

static void *
sleeper_main(void *arg)
{
	struct sleeper *s = arg;

	lk_frame_up_wait(s->host, 1500);
	s->woke_ms = fd_clock_ms();
	return NULL;
}

/*
 * The host's relay sleeps on the frames-up bell while the coprocessor dies
 * and starts again (lk_create in place zeroes the header, the bells' counts
 * with it).  After it, a frame put and rung must wake the next sleep at
 * once: a sleeper that took itself out of the new count left it one short,
 * and every later ring was missed - woken only by its timeout.
 */
static void
test_bell_across_reboot(void **state)
{
	struct lk *npu = *state, *host = lk_attach(path, 0), *npu2;
	struct sleeper s = { .host = host };
	uint8_t f[64] = { 0 };
	uint16_t port, flags;
	pthread_t t;
	uint64_t t0;

	assert_non_null(host);
	assert_int_equal(pthread_create(&t, NULL, sleeper_main, &s), 0);
	usleep(100000);			/* asleep, counted in the old header */
	lk_close(npu);
	npu2 = lk_create(path);		/* laid out again in place */
	assert_non_null(npu2);
	*state = npu2;
	pthread_join(t, NULL);		/* its timeout, or the new boot's first ring */
	assert_int_equal(lk_frame_up_resync(host), 0);
	/* the next sleep: rung 100 ms in */
	s.woke_ms = 0;
	assert_int_equal(pthread_create(&t, NULL, sleeper_main, &s), 0);
	usleep(100000);
	t0 = fd_clock_ms();
	assert_int_equal(lk_frame_up_put(npu2, 0, 0, f, sizeof(f)), 0);
	lk_frame_up_kick(npu2);
	pthread_join(t, NULL);
	print_message("# the relay's sleep woken %" PRIu64 " ms after the ring (timeout 1500)\n",
		      s.woke_ms - t0);
	assert_true(s.woke_ms - t0 < 500);
	assert_int_equal(lk_frame_up_take(host, &port, &flags, f, sizeof(f)), 64);
	lk_close(host);
}

/* Targeted garbage: a producer index far ahead, a slot length beyond its slot. */
static void
test_bad_index_and_length(void **state)
{
	struct lk *npu = *state, *host = lk_attach(path, 0);
	struct lk_stats st;
	struct fc_cmd_hdr h;
	uint8_t p[FC_CMD_MAX_PAYLOAD];
	uint32_t size, v = 1;
	uint8_t *base;
	uint32_t *prod0;

	base = lk_region(host, &size);
	prod0 = (uint32_t *)(base + 2 * 4096);	/* client 0's command ring */
	*prod0 = 0x7fffffff;
	assert_int_equal(lk_cmd_take(npu, 0, &h, p), -EAGAIN);
	lk_stats(npu, &st);
	assert_int_equal(st.bad_index, 1);
	/* a slot claiming 100000 bytes */
	lk_close(host);
	host = lk_attach(path, 0);
	assert_int_equal(lk_cmd_post(host, 1, 1, &v, sizeof(v)), 0);
	*(uint32_t *)(base + 2 * 4096 + 128 + (size_t)((*prod0 - 1) % LK_CMD_SLOTS) * LK_CMD_SLOT) =
		100000;
	assert_int_equal(lk_cmd_take(npu, 0, &h, p), -EBADMSG);
	assert_int_equal(h.op, 0xffff);
	lk_stats(npu, &st);
	assert_int_equal(st.bad_length, 1);
	/* a header that disagrees with the slot's length */
	assert_int_equal(lk_cmd_post(host, 1, 1, &v, sizeof(v)), 0);
	*(uint16_t *)(base + 2 * 4096 + 128 + (size_t)((*prod0 - 1) % LK_CMD_SLOTS) * LK_CMD_SLOT +
		      8 + 2) = 900;
	assert_int_equal(lk_cmd_take(npu, 0, &h, p), -EBADMSG);
	lk_stats(npu, &st);
	assert_int_equal(st.bad_message, 1);
	lk_close(host);
}

static uint64_t
rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Every byte of the region garbage, then every call on both sides: errors, no harm. */
static void
test_garbage_everywhere(void **state)
{
	struct lk *npu = *state, *host = lk_attach(path, -1);
	uint64_t seed = 88172645463325252ull;
	uint32_t size;
	uint8_t *base = lk_region(npu, &size);

	for (int round = 0; round < 50; round++) {
		struct lk_event ev;
		struct fc_ans_hdr a;
		struct fc_cmd_hdr h;
		uint8_t p[LK_FRAME_SLOT];
		uint64_t cnt[FC_CNT_MAX];
		uint16_t port, flags;

		for (uint32_t i = 0; i < size; i += 8) {
			uint64_t r = rnd(&seed);

			memcpy(base + i, &r, 8);
		}
		for (int i = 0; i < 100; i++) {
			serve(npu);
			lk_frame_down_take(npu, &port, p, sizeof(p));
			lk_frame_up_put(npu, 1, 0, p, 100);
			lk_event_put(npu, &(struct lk_event){ .type = FC_EV_AGED_OUT });
			lk_ans_take(host, &a, p, FC_CMD_MAX_PAYLOAD);
			lk_cmd_post(host, 1, 1, p, 10);
			lk_event_take(host, &ev);
			lk_frame_up_take(host, &port, &flags, p, sizeof(p));
			lk_frame_down_put(host, 0, p, 64);
			lk_counters_read(host, cnt, NULL);
			lk_cmd_take(npu, (unsigned int)i % LK_CLIENTS, &h, p);
		}
		lk_ans_wait(host, 0);
		lk_npu_wait(npu, 0, NULL, NULL);
		lk_resync(host);
	}
	lk_close(host);
}

/*
 * Garbage while a server thread and a client run: half the writes go to
 * the header, the counters and the rings the client uses, half anywhere.
 * Every call must come back within its timeout; nothing may crash.
 */
static void *
garbage_thread(void *arg)
{
	struct server *s = arg;
	uint64_t seed = 2463534242ull;
	uint32_t size, hot = 2 * 4096 + 2 * (LK_CMD_SLOTS * LK_CMD_SLOT + 4096) * LK_CLIENTS;
	uint8_t *base = lk_region(s->npu, &size);

	while (!__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE)) {
		uint64_t r = rnd(&seed);

		base[(r & 1 ? r % hot : r % size)] = (uint8_t)(r >> 32);
		s->garbage++;
		if ((r & 0x3ff) == 0)
			usleep(50);
	}
	return NULL;
}

static double
secs_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

static void
test_garbage_while_running(void **state)
{
	struct server s = { .npu = *state };
	struct lk *host = lk_attach(path, -1);
	pthread_t srv, junk;
	int ok = 0, err = 0;
	double worst = 0;
	struct timespec t0;

	assert_int_equal(pthread_create(&srv, NULL, server_thread, &s), 0);
	assert_int_equal(pthread_create(&junk, NULL, garbage_thread, &s), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (secs_since(&t0) < 1.5) {
		uint32_t v = (uint32_t)ok, out;
		uint16_t len;
		struct timespec c0;
		int rc;

		clock_gettime(CLOCK_MONOTONIC, &c0);
		rc = lk_call(host, 1, &v, sizeof(v), &out, sizeof(out), &len, 20);
		if (secs_since(&c0) > worst)
			worst = secs_since(&c0);
		if (rc == -ECONNRESET || rc == -EPROTO)
			lk_resync(host);
		if (rc == 0 && len == sizeof(out) && out == v)
			ok++;
		else
			err++;
	}
	__atomic_store_n(&s.stop, 1, __ATOMIC_RELEASE);
	pthread_join(srv, NULL);
	pthread_join(junk, NULL);
	print_message("%d calls answered, %d failed, %" PRIu64 " bytes of garbage, "
		      "slowest call %.3f s\n", ok, err, s.garbage, worst);
	assert_true(err > 0);		/* the garbage reached what the calls use */
	assert_true(worst < 1.0);	/* a 20 ms call never hung */
	lk_close(host);
}

/*
 * A peer that keeps filling a ring with bad slots cannot hold the taker: a
 * stress check (each take also stops after a ring's worth of slots, which
 * this machine's timing does not always put to the test).
 */
static void *
bad_slot_thread(void *arg)
{
	struct server *s = arg;
	uint32_t size;
	uint8_t *base = lk_region(s->npu, &size);
	/* the down ring: after the header and counters pages, the client rings
	 * and the event ring, the up ring */
	uint32_t off = 2 * 4096 + 2 * LK_CLIENTS * (LK_CMD_SLOTS * LK_CMD_SLOT + 4096) +
		       (LK_EV_SLOTS * LK_EV_SLOT + 4096) + (LK_FRAME_SLOTS * LK_FRAME_SLOT + 4096);
	uint32_t *prod = (uint32_t *)(base + off);
	uint32_t *cons = (uint32_t *)(base + off + 64);

	/* one bad slot at a time, as fast as the taker takes them */
	while (!__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE)) {
		uint32_t p = __atomic_load_n(prod, __ATOMIC_RELAXED);

		if (p - __atomic_load_n(cons, __ATOMIC_ACQUIRE) >= LK_FRAME_SLOTS)
			continue;
		*(uint32_t *)(base + off + 128 + (size_t)(p % LK_FRAME_SLOTS) * LK_FRAME_SLOT) =
			0xffffffff;
		__atomic_store_n(prod, p + 1, __ATOMIC_RELEASE);
		__atomic_store_n(&s->garbage, s->garbage + 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void
test_bad_slots_cannot_hold(void **state)
{
	struct server s = { .npu = *state };
	uint8_t buf[LK_FRAME_SLOT];
	double worst = 0;
	pthread_t th;
	uint16_t port;

	struct timespec t0;
	unsigned int calls = 0;

	assert_int_equal(pthread_create(&th, NULL, bad_slot_thread, &s), 0);
	while (__atomic_load_n(&s.garbage, __ATOMIC_RELAXED) == 0)
		usleep(100);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (; secs_since(&t0) < 0.5; calls++) {
		struct timespec c0;

		clock_gettime(CLOCK_MONOTONIC, &c0);
		assert_true(lk_frame_down_take(s.npu, &port, buf, sizeof(buf)) < 0);
		if (secs_since(&c0) > worst)
			worst = secs_since(&c0);
	}
	__atomic_store_n(&s.stop, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	print_message("%u takes, the slowest %.4f s, while %" PRIu64
		      " bad slots came\n", calls, worst, s.garbage);
	assert_true(worst < 0.5);
}

/* ---- trust: another user against the root sides ---- */

#define NOBODY 65534u
#define TARGET_TEXT "root's own file\n"

/*
 * The place each row is played in, made anew per row under a directory
 * of its own (0755, so nobody can reach in):
 *   root/     0700 root   - where the link belongs
 *   shm/      1777 root   - as /dev/shm
 *   nobody/   0700 nobody - another user's own
 *   grp/      0770 root   - writable by its group
 *   target    0644 root   - a file of root's a symbolic link points at
 */
static char base[64];

static void
at(char *out, size_t cap, const char *rel)
{
	snprintf(out, cap, "%s/%s", base, rel);
}

/* What the other user does first, in a child that is nobody: 0 if it could. */
typedef int (*trust_play)(void);

static int
play_file_0666(void)	/* (a): a link file of its own, for root to take */
{
	char p[128];
	int fd;

	at(p, sizeof(p), "shm/link");
	fd = open(p, O_RDWR | O_CREAT | O_EXCL, 0666);
	return fd >= 0 && fchmod(fd, 0666) == 0 && close(fd) == 0 ? 0 : 1;
}

static int
play_symlink(void)	/* (b): root's file at the link's path */
{
	char p[128], t[128];

	at(p, sizeof(p), "shm/link");
	at(t, sizeof(t), "target");
	return symlink(t, p);
}

static int
play_fake_npu_own(void)	/* (c): a region laid out, a coprocessor of its own */
{
	char p[128];
	struct lk *lk;

	at(p, sizeof(p), "nobody/link");
	lk = lk_create(p);
	if (lk == NULL)
		fprintf(stderr, "as nobody: %s\n", lk_error());
	return lk != NULL ? 0 : 1;	/* left behind as it dies: the region stays */
}

static int
play_fake_npu_shm(void)	/* (c), the region then moved to where root looks */
{
	char from[128], to[128];

	at(from, sizeof(from), "nobody/link");
	at(to, sizeof(to), "shm/link");
	return play_fake_npu_own() == 0 && rename(from, to) == 0 ? 0 : 1;
}

/* What root (this process) puts there first, for the checks one by one. */
typedef int (*trust_make)(const char *p);

static int
make_file(const char *p, mode_t mode, uid_t uid)
{
	int fd = open(p, O_RDWR | O_CREAT | O_EXCL, 0600);
	int rc = fd >= 0 && fchmod(fd, mode) == 0 && fchown(fd, uid, (gid_t)-1) == 0 ? 0 : -1;

	if (fd >= 0)
		close(fd);
	return rc;
}

static int
make_0666(const char *p)
{
	return make_file(p, 0666, 0);
}

static int
make_0640(const char *p)
{
	return make_file(p, 0640, 0);
}

static int
make_nobodys(const char *p)
{
	return make_file(p, 0600, NOBODY);
}

static int
make_hardlink(const char *p)
{
	char other[128];

	at(other, sizeof(other), "root/other-name");
	return make_file(other, 0600, 0) == 0 ? link(other, p) : -1;
}

static int
make_symlink(const char *p)
{
	char t[128];

	at(t, sizeof(t), "target");
	return symlink(t, p);
}

static int
make_dir(const char *p)
{
	return mkdir(p, 0700);
}

static int
make_fifo(const char *p)
{
	return mkfifo(p, 0600);
}

/* A region root's own coprocessor laid out, as it left it (for attach rows). */
static int
make_region(const char *p)
{
	struct lk *lk = lk_create(p);

	lk_close(lk);
	return lk != NULL ? 0 : -1;
}

struct trust_row {
	const char *name;
	trust_play play;	/* as nobody, first (NULL: none) */
	trust_make make;	/* as root, first (NULL: none) */
	const char *rel;	/* the link's path under base */
	bool attach;		/* the root side is a host (lk_attach(path, 0)), else lk_create */
	int err;		/* 0: it must work; else the errno refused with */
	const char *why;	/* what lk_error() says after the path */
};

static const struct trust_row trust_rows[] = {
	{ "(a) a 0666 file of nobody's in a world-writable directory", play_file_0666, NULL,
	  "shm/link", false, EPERM, "directory %B/shm is writable by others (mode 1777)" },
	{ "(b) nobody's symbolic link to root's file", play_symlink, NULL, "shm/link", false,
	  EPERM, "directory %B/shm is writable by others (mode 1777)" },
	{ "(c) nobody's coprocessor, in its own directory, attached", play_fake_npu_own, NULL,
	  "nobody/link", true, EPERM, "directory %B/nobody is owned by uid 65534, not 0" },
	{ "(c) nobody's coprocessor, in a world-writable directory, attached",
	  play_fake_npu_shm, NULL, "shm/link", true, EPERM,
	  "directory %B/shm is writable by others (mode 1777)" },
	{ "create: a group-writable directory", NULL, NULL, "grp/link", false, EPERM,
	  "directory %B/grp is writable by its group (mode 0770)" },
	{ "create: a symbolic link", NULL, make_symlink, "root/link", false, EPERM,
	  "a symbolic link" },
	{ "attach: a symbolic link", NULL, make_symlink, "root/link", true, EPERM,
	  "a symbolic link" },
	{ "create: a second hard link", NULL, make_hardlink, "root/link", false, EPERM,
	  "2 links, not 1 (another name reaches it)" },
	{ "attach: a second hard link", NULL, make_hardlink, "root/link", true, EPERM,
	  "2 links, not 1 (another name reaches it)" },
	{ "create: a directory", NULL, make_dir, "root/link", false, EPERM, "a directory" },
	{ "create: a FIFO (never opened)", NULL, make_fifo, "root/link", false, EPERM, "a FIFO" },
	{ "create: mode 0666", NULL, make_0666, "root/link", false, EPERM,
	  "mode 0666, group or other may access it" },
	{ "attach: mode 0666", NULL, make_0666, "root/link", true, EPERM,
	  "mode 0666, group or other may access it" },
	{ "create: mode 0640", NULL, make_0640, "root/link", false, EPERM,
	  "mode 0640, group or other may access it" },
	{ "create: a file of nobody's", NULL, make_nobodys, "root/link", false, EPERM,
	  "owned by uid 65534, not 0" },
	{ "attach: a file of nobody's", NULL, make_nobodys, "root/link", true, EPERM,
	  "owned by uid 65534, not 0" },
	{ "create: its directory made, 0700", NULL, NULL, "new/link", false, 0, NULL },
	{ "create: a stale region taken over", NULL, make_region, "root/link", false, 0, NULL },
	{ "attach: root's region", NULL, make_region, "root/link", true, 0, NULL },
};

static int
rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(p);
}

static int
trust_teardown(void **state)
{
	(void)state;
	if (base[0] != '\0')
		nftw(base, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	base[0] = '\0';
	return 0;
}

static int
trust_setup(void **state)
{
	static const struct { const char *rel; mode_t mode; uid_t uid; } dirs[] = {
		{ "root", 0700, 0 }, { "shm", 01777, 0 }, { "nobody", 0700, NOBODY },
		{ "grp", 0770, 0 },
	};
	char p[128];

	(void)state;
	base[0] = '\0';
	if (geteuid() != 0 || getpwuid(NOBODY) == NULL)
		return 0;	/* the row skips */
	snprintf(base, sizeof(base), "/dev/shm/fc-test-trust-XXXXXX");
	if (mkdtemp(base) == NULL || chmod(base, 0755) != 0)
		return -1;
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		at(p, sizeof(p), dirs[i].rel);
		if (mkdir(p, 0700) != 0 || chmod(p, dirs[i].mode) != 0 ||
		    chown(p, dirs[i].uid, (gid_t)-1) != 0)
			return trust_teardown(state), -1;
	}
	at(p, sizeof(p), "target");
	if (make_file(p, 0644, 0) != 0)
		return trust_teardown(state), -1;
	{
		FILE *f = fopen(p, "w");

		if (f == NULL || fputs(TARGET_TEXT, f) < 0 || fclose(f) != 0)
			return trust_teardown(state), -1;
	}
	return 0;
}

/* Runs `play` as nobody in a child; its exit status. */
static int
as_nobody(trust_play play)
{
	pid_t child = fork();
	int st;

	if (child == 0) {
		if (setgroups(0, NULL) != 0 || setresgid(NOBODY, NOBODY, NOBODY) != 0 ||
		    setresuid(NOBODY, NOBODY, NOBODY) != 0)
			_exit(100);
		_exit(play());
	}
	if (child < 0 || waitpid(child, &st, 0) != child || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

/* `why` with %B as the row's base directory. */
static void
expand(char *out, size_t cap, const char *why)
{
	const char *b = strstr(why, "%B");

	if (b == NULL)
		snprintf(out, cap, "%s", why);
	else
		snprintf(out, cap, "%.*s%s%s", (int)(b - why), why, base, b + 2);
}

static void
test_trust(void **state)
{
	const struct trust_row *row = *state;
	char p[128], why[192], want[400], target[128], text[64] = "";
	struct lk *lk;
	struct stat st;
	FILE *f;

	if (base[0] == '\0') {
		print_message("skipped: needs root and user nobody (uid %u)\n", NOBODY);
		skip();
	}
	at(p, sizeof(p), row->rel);
	if (row->play != NULL)
		assert_int_equal(as_nobody(row->play), 0);
	if (row->make != NULL)
		assert_int_equal(row->make(p), 0);
	lk = row->attach ? lk_attach(p, 0) : lk_create(p);
	if (row->err == 0) {
		if (lk == NULL)
			print_error("link %s\n", lk_error());
		assert_non_null(lk);
		assert_string_equal(lk_error(), "");
		assert_int_equal(stat(p, &st), 0);
		assert_int_equal(st.st_mode & 07777, 0600);
		assert_int_equal(stat(dirname(strcpy(want, p)), &st), 0);
		assert_int_equal(st.st_mode & 077, 0);
		lk_close(lk);
		return;
	}
	if (lk != NULL) {
		lk_close(lk);
		fail_msg("%s: taken (rc 0), not refused", p);
	}
	assert_int_equal(errno, row->err);
	/* the path, then the reason */
	expand(why, sizeof(why), row->why);
	snprintf(want, sizeof(want), "%s: %s", p, why);
	assert_string_equal(lk_error(), want);
	/* root's file behind a symbolic link is as it was */
	at(target, sizeof(target), "target");
	f = fopen(target, "r");
	assert_non_null(f);
	assert_non_null(fgets(text, sizeof(text), f));
	fclose(f);
	assert_string_equal(text, TARGET_TEXT);
	/* nobody's 0666 file was neither sized nor laid out */
	if (row->play == play_file_0666) {
		assert_int_equal(stat(p, &st), 0);
		assert_int_equal(st.st_size, 0);
	}
}

int
main(void)
{
	enum { ROWS = sizeof(trust_rows) / sizeof(trust_rows[0]) };
	struct CMUnitTest tests[13 + ROWS] = {
		cmocka_unit_test_setup_teardown(test_boot_event_and_attach, setup, teardown),
		cmocka_unit_test_setup_teardown(test_batch_and_full, setup, teardown),
		cmocka_unit_test_setup_teardown(test_call_round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_call_counts_other_answers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reboot_and_resync, setup, teardown),
		cmocka_unit_test_setup_teardown(test_event_room, setup, teardown),
		cmocka_unit_test_setup_teardown(test_client_slots, setup, teardown),
		cmocka_unit_test_setup_teardown(test_client_slot_pid_reused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_frames_and_counters, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wire_figures, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bell_across_reboot, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_index_and_length, setup, teardown),
		cmocka_unit_test_setup_teardown(test_garbage_everywhere, setup, teardown),
		cmocka_unit_test_setup_teardown(test_garbage_while_running, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_slots_cannot_hold, setup, teardown),
	};

	for (size_t i = 0; i < ROWS; i++)
		tests[13 + i] = (struct CMUnitTest){ .name = trust_rows[i].name,
						     .test_func = test_trust,
						     .setup_func = trust_setup,
						     .teardown_func = trust_teardown,
						     .initial_state = (void *)&trust_rows[i] };

	return cmocka_run_group_tests(tests, NULL, NULL);
}
