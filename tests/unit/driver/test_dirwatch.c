/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_dirwatch on a real inotify descriptor, in a folder of its own under
 * /tmp (removed at the end): rows of one file followed and one thing done
 * in its folder - a write and close, a rename into place, another file
 * written, a delete with and without IN_DELETE, the folder removed, a
 * folder that does not exist, a "folder" that is a file under IN_ONLYDIR,
 * bad arguments - each with the add's return, the slots reported changed
 * and whether the slot is still watched; two files of one folder,
 * sharing its watch, told apart and removed one at a time; and the queue
 * overflowed, read in bounded batches.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "fd_dirwatch.h"

static char top[64];	/* this run's folder */
/* what a row may leave in top */
static const char *const made[] = { "d/f", "d/f.tmp", "d/other", "f" };

/* top/rel written whole (made or truncated) and closed. */
static void
put(const char *rel)
{
	char p[256];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", top, rel);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "x\n", 2), 2);
	assert_int_equal(close(fd), 0);
}

static void
path_of(const char *rel, char *p, size_t len)
{
	snprintf(p, len, "%s/%s", top, rel);
}

enum act {
	ACT_NONE,
	ACT_WRITE,	/* d/f written and closed */
	ACT_RENAME,	/* d/f.tmp written, renamed to d/f */
	ACT_OTHER,	/* d/other written */
	ACT_DELETE,	/* d/f (made before the add) unlinked */
	ACT_RMDIR,	/* d/ removed (empty) */
	ACT_MKDIR_WRITE,	/* d/ made, then d/f written: after an add that failed */
};

static void
test_rows(void **state)
{
	static const struct {
		const char *what;
		const char *file;	/* under top; its folder d/ made unless `nodir` */
		bool nodir;
		bool before;		/* d/f made before the add */
		uint32_t mask;
		enum act act;
		int rc;			/* fd_dirwatch_add's */
		uint64_t changed;
		bool watched;		/* after the read */
	} rows[] = {
		{ "a write and close", "d/f", false, false, IN_CLOSE_WRITE | IN_MOVED_TO,
		  ACT_WRITE, 0, 1, true },
		{ "a rename into place", "d/f", false, false, IN_CLOSE_WRITE | IN_MOVED_TO,
		  ACT_RENAME, 0, 1, true },
		{ "another file in the folder", "d/f", false, false, IN_CLOSE_WRITE | IN_MOVED_TO,
		  ACT_OTHER, 0, 0, true },
		{ "nothing done", "d/f", false, true, IN_CLOSE_WRITE | IN_MOVED_TO,
		  ACT_NONE, 0, 0, true },
		{ "a delete, not asked for", "d/f", false, true, IN_CLOSE_WRITE | IN_MOVED_TO,
		  ACT_DELETE, 0, 0, true },
		{ "a delete, IN_DELETE asked", "d/f", false, true,
		  IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE, ACT_DELETE,
		  0, 1, true },
		{ "the folder removed", "d/f", false, false, IN_CLOSE_WRITE | IN_MOVED_TO,
		  ACT_RMDIR, 0, 0, false },
		{ "a folder missing", "d/f", true, false, IN_CLOSE_WRITE | IN_MOVED_TO,
		  ACT_MKDIR_WRITE, -ENOENT, 0, false },
		{ "a folder missing, IN_ONLYDIR", "d/f", true, false,
		  IN_CLOSE_WRITE | IN_MOVED_TO | IN_ONLYDIR, ACT_NONE, -ENOENT, 0, false },
		{ "a file as its folder, IN_ONLYDIR", "d/f/g", false, true,
		  IN_CLOSE_WRITE | IN_MOVED_TO | IN_ONLYDIR, ACT_NONE, -ENOTDIR, 0, false },
		{ "IN_Q_OVERFLOW asked (not the kernel's): a write", "d/f", false, false,
		  IN_CLOSE_WRITE | IN_MOVED_TO | IN_ONLYDIR | IN_Q_OVERFLOW, ACT_WRITE,
		  0, 1, true },
		{ "a file at the top", "f", true, false, IN_CLOSE_WRITE | IN_MOVED_TO,
		  ACT_NONE, 0, 0, true },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct fd_dirwatch *dw = fd_dirwatch_open();
		char p[256], d[256];
		uint64_t changed = 77;

		print_message("row %zu: %s\n", i, rows[i].what);
		assert_non_null(dw);
		path_of("d", d, sizeof(d));
		if (!rows[i].nodir)
			assert_int_equal(mkdir(d, 0700), 0);
		if (rows[i].before)
			put("d/f");
		path_of(rows[i].file, p, sizeof(p));
		assert_int_equal(fd_dirwatch_add(dw, 3, p, rows[i].mask), rows[i].rc);
		assert_int_equal(fd_dirwatch_watched(dw, 3), rows[i].rc == 0);
		switch (rows[i].act) {
		case ACT_NONE:
			break;
		case ACT_WRITE:
			put("d/f");
			break;
		case ACT_RENAME: {
			char t[256];

			put("d/f.tmp");
			path_of("d/f.tmp", t, sizeof(t));
			assert_int_equal(rename(t, p), 0);
			break;
		}
		case ACT_OTHER:
			put("d/other");
			break;
		case ACT_DELETE:
			assert_int_equal(unlink(p), 0);
			break;
		case ACT_RMDIR:
			assert_int_equal(rmdir(d), 0);
			break;
		case ACT_MKDIR_WRITE:
			assert_int_equal(mkdir(d, 0700), 0);
			put("d/f");
			break;
		}
		assert_int_equal(fd_dirwatch_read(dw, &changed), 0);
		assert_true(changed == rows[i].changed << 3);
		assert_int_equal(fd_dirwatch_watched(dw, 3), rows[i].watched);
		/* read again: nothing left */
		assert_int_equal(fd_dirwatch_read(dw, &changed), 0);
		assert_true(changed == 0);
		fd_dirwatch_close(dw);
		/* the folder emptied for the next row */
		for (size_t k = 0; k < sizeof(made) / sizeof(made[0]); k++) {
			path_of(made[k], p, sizeof(p));
			(void)unlink(p);
		}
		(void)rmdir(d);
	}
}

/* Two files of one folder: one watch, told apart by name, removed one at a time. */
static void
test_shared_folder(void **state)
{
	struct fd_dirwatch *dw = fd_dirwatch_open();
	char d[256], a[256], b[256];
	uint64_t changed;

	(void)state;
	assert_non_null(dw);
	path_of("s", d, sizeof(d));
	path_of("s/a", a, sizeof(a));
	path_of("s/b", b, sizeof(b));
	assert_int_equal(mkdir(d, 0700), 0);
	assert_int_equal(fd_dirwatch_add(dw, 0, a, IN_CLOSE_WRITE | IN_MOVED_TO), 0);
	assert_int_equal(fd_dirwatch_add(dw, FD_DIRWATCH_MAX - 1, b, IN_CLOSE_WRITE | IN_MOVED_TO),
			 0);
	put("s/b");
	assert_int_equal(fd_dirwatch_read(dw, &changed), 0);
	assert_true(changed == UINT64_C(1) << (FD_DIRWATCH_MAX - 1));
	put("s/a");
	put("s/b");
	assert_int_equal(fd_dirwatch_read(dw, &changed), 0);
	assert_true(changed == (1 | UINT64_C(1) << (FD_DIRWATCH_MAX - 1)));
	/* slot 0 gone: the folder's watch stays for the other */
	fd_dirwatch_remove(dw, 0);
	assert_false(fd_dirwatch_watched(dw, 0));
	assert_true(fd_dirwatch_watched(dw, FD_DIRWATCH_MAX - 1));
	put("s/a");
	put("s/b");
	assert_int_equal(fd_dirwatch_read(dw, &changed), 0);
	assert_true(changed == UINT64_C(1) << (FD_DIRWATCH_MAX - 1));
	/* the last one gone: nothing more is reported */
	fd_dirwatch_remove(dw, FD_DIRWATCH_MAX - 1);
	fd_dirwatch_remove(dw, FD_DIRWATCH_MAX - 1);	/* not in use: nothing */
	put("s/b");
	assert_int_equal(fd_dirwatch_read(dw, &changed), 0);
	assert_true(changed == 0);
	/* a slot added again follows its new path */
	assert_int_equal(fd_dirwatch_add(dw, 0, b, IN_CLOSE_WRITE), 0);
	put("s/a");
	put("s/b");
	assert_int_equal(fd_dirwatch_read(dw, &changed), 0);
	assert_true(changed == 1);
	fd_dirwatch_close(dw);
	fd_dirwatch_close(NULL);
	(void)unlink(a);
	(void)unlink(b);
	assert_int_equal(rmdir(d), 0);
}

/*
 * The queue overflowed (more files written than max_queued_events): the
 * slots that count an overflow are changed, watched or not; the other
 * is not (its own file was not written).
 */
static void
test_overflow(void **state)
{
	struct fd_dirwatch *dw = fd_dirwatch_open();
	char d[256], p[256];
	unsigned long max = 0;
	uint64_t changed;
	FILE *f = fopen("/proc/sys/fs/inotify/max_queued_events", "r");

	(void)state;
	assert_non_null(dw);
	assert_non_null(f);
	assert_int_equal(fscanf(f, "%lu", &max), 1);
	fclose(f);
	if (max > 1000000) {
		fd_dirwatch_close(dw);
		skip();		/* too many files to write here */
	}
	path_of("o", d, sizeof(d));
	assert_int_equal(mkdir(d, 0700), 0);
	path_of("o/f", p, sizeof(p));
	assert_int_equal(fd_dirwatch_add(dw, 0, p, IN_CLOSE_WRITE | IN_Q_OVERFLOW), 0);
	path_of("o/g", p, sizeof(p));
	assert_int_equal(fd_dirwatch_add(dw, 1, p, IN_CLOSE_WRITE), 0);
	path_of("none/h", p, sizeof(p));
	assert_int_equal(fd_dirwatch_add(dw, 2, p, IN_CLOSE_WRITE | IN_Q_OVERFLOW), -ENOENT);
	for (unsigned long i = 0; i < max + 16; i++) {
		char rel[32];

		snprintf(rel, sizeof(rel), "o/%lu", i);
		put(rel);
	}
	/*
	 * max events of 32 bytes (16 and a name of 16) queued, the overflow
	 * last: more than one call reads (FD_DIRWATCH_READS of 4 KiB), so the
	 * first one does not reach it
	 */
	assert_int_equal(fd_dirwatch_read(dw, &changed), 0);
	assert_true(changed == 0);
	for (int k = 0; k < 16; k++) {
		uint64_t more;

		assert_int_equal(fd_dirwatch_read(dw, &more), 0);
		changed |= more;
	}
	assert_true(changed == (1 | 1 << 2));
	fd_dirwatch_close(dw);
	for (unsigned long i = 0; i < max + 16; i++) {
		char rel[32];

		snprintf(rel, sizeof(rel), "o/%lu", i);
		path_of(rel, p, sizeof(p));
		(void)unlink(p);
	}
	assert_int_equal(rmdir(d), 0);
}

static void
test_bad_args(void **state)
{
	struct fd_dirwatch *dw = fd_dirwatch_open();
	char p[256];

	(void)state;
	assert_non_null(dw);
	path_of("f", p, sizeof(p));
	assert_int_equal(fd_dirwatch_add(dw, FD_DIRWATCH_MAX, p, IN_CLOSE_WRITE), -EINVAL);
	assert_int_equal(fd_dirwatch_add(dw, 0, NULL, IN_CLOSE_WRITE), -EINVAL);
	assert_false(fd_dirwatch_watched(dw, FD_DIRWATCH_MAX));
	assert_false(fd_dirwatch_watched(dw, 0));
	fd_dirwatch_remove(dw, FD_DIRWATCH_MAX);	/* out of range: nothing */
	assert_true(fd_dirwatch_fd(dw) >= 0);
	fd_dirwatch_close(dw);
}

static int
setup(void **state)
{
	(void)state;
	snprintf(top, sizeof(top), "/tmp/test_dirwatch.XXXXXX");
	return mkdtemp(top) == NULL ? -1 : 0;
}

static int
teardown(void **state)
{
	(void)state;
	return rmdir(top);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_shared_folder),
		cmocka_unit_test(test_overflow),
		cmocka_unit_test(test_bad_args),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
