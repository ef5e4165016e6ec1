/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The rows of settings/fc_file's checks, one table for the three readers
 * of a file that can cut (test_list, test_fplist, test_settings): each
 * row makes TOP/d/f (TOP a private mkdtemp folder under /tmp) with the
 * modes, owners and kind it says, reads it with the test's own loader,
 * takes it all down again, then checks the return and that the error
 * names the path refused and why.  Rows that chown need root: skipped
 * (and said) otherwise.
 */
#ifndef FLOWCUT_TESTS_TRUST_ROWS_H
#define FLOWCUT_TESTS_TRUST_ROWS_H

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Reads `path` as the test's module does: its return (>= 0 read), err said. */
typedef long trust_load_fn(const char *path, char *err, size_t errlen);

enum trust_kind { TRUST_FILE, TRUST_SYMLINK, TRUST_FIFO, TRUST_FOLDER };
enum trust_where { TRUST_AT_NONE, TRUST_AT_FILE, TRUST_AT_DIR, TRUST_AT_TOP };

struct trust_row {
	const char *name;
	enum trust_kind kind;
	mode_t file_mode, dir_mode, top_mode;	/* 0: as made (0644, 0755, 0700) */
	uid_t file_uid, dir_uid, top_uid;	/* 0: root's; else chowned (root only) */
	int rc;					/* 0: read */
	enum trust_where where;			/* whose path the error names */
	const char *why;			/* and what it says of it */
};

static const struct trust_row trust_rows[] = {
	{ "a root file in a private folder", TRUST_FILE, 0, 0, 0, 0, 0, 0, 0, TRUST_AT_NONE, NULL },
	{ "file writable by group", TRUST_FILE, 0664, 0, 0, 0, 0, 0, -EPERM, TRUST_AT_FILE,
	  "writable by group" },
	{ "file writable by others", TRUST_FILE, 0646, 0, 0, 0, 0, 0, -EPERM, TRUST_AT_FILE,
	  "writable by others" },
	{ "file read-only for all", TRUST_FILE, 0444, 0, 0, 0, 0, 0, 0, TRUST_AT_NONE, NULL },
	{ "folder writable by group", TRUST_FILE, 0, 0775, 0, 0, 0, 0, -EPERM, TRUST_AT_DIR,
	  "writable by group" },
	{ "folder writable by others", TRUST_FILE, 0, 0777, 0, 0, 0, 0, -EPERM, TRUST_AT_DIR,
	  "writable by others" },
	{ "folder sticky and writable by others", TRUST_FILE, 0, 01777, 0, 0, 0, 0, -EPERM,
	  TRUST_AT_DIR, "writable by others" },
	{ "a folder above writable by others", TRUST_FILE, 0, 0, 0777, 0, 0, 0, -EPERM,
	  TRUST_AT_TOP, "writable by others" },
	{ "a folder above writable by group", TRUST_FILE, 0, 0, 0770, 0, 0, 0, -EPERM,
	  TRUST_AT_TOP, "writable by group" },
	{ "a folder above sticky, root's, writable by others", TRUST_FILE, 0, 0, 01777, 0, 0, 0, 0,
	  TRUST_AT_NONE, NULL },
	{ "a symbolic link to a good file", TRUST_SYMLINK, 0, 0, 0, 0, 0, 0, -ELOOP, TRUST_AT_FILE,
	  "a symbolic link" },
	{ "a FIFO", TRUST_FIFO, 0, 0, 0, 0, 0, 0, -EINVAL, TRUST_AT_FILE, "not a regular file" },
	{ "a folder", TRUST_FOLDER, 0, 0, 0, 0, 0, 0, -EISDIR, TRUST_AT_FILE, "a folder" },
	{ "file owned by uid 1000", TRUST_FILE, 0, 0, 0, 1000, 0, 0, -EPERM, TRUST_AT_FILE,
	  "owned by uid 1000" },
	{ "folder owned by uid 1000", TRUST_FILE, 0, 0, 0, 0, 1000, 0, -EPERM, TRUST_AT_DIR,
	  "owned by uid 1000" },
	{ "a folder above owned by uid 1000", TRUST_FILE, 0, 0, 0, 0, 0, 1000, -EPERM,
	  TRUST_AT_TOP, "owned by uid 1000" },
};

static void
trust_write(const char *path, const char *content)
{
	FILE *f = fopen(path, "w");

	if (f == NULL || fputs(content, f) < 0 || fclose(f) != 0) {
		fprintf(stderr, "trust_rows: writing %s: %s\n", path, strerror(errno));
		abort();
	}
}

/* Every row through `load`, each file holding `content`; the number of rows skipped. */
static unsigned int
trust_rows_run(trust_load_fn *load, const char *content)
{
	unsigned int skipped = 0;

	for (size_t i = 0; i < sizeof(trust_rows) / sizeof(trust_rows[0]); i++) {
		const struct trust_row *r = &trust_rows[i];
		char top[] = "/tmp/fc-trust-XXXXXX", dir[64], file[80], real[80], err[512] = "";
		const char *where = NULL;
		int made = 0;
		long rc;

		if ((r->file_uid || r->dir_uid || r->top_uid) && geteuid() != 0) {
			print_message("row %zu: %s: skipped (chown needs root)\n", i, r->name);
			skipped++;
			continue;
		}
		assert_non_null(mkdtemp(top));
		snprintf(dir, sizeof(dir), "%s/d", top);
		snprintf(file, sizeof(file), "%s/f", dir);
		snprintf(real, sizeof(real), "%s/real", dir);
		made = mkdir(dir, 0755) == 0;
		if (made) {
			switch (r->kind) {
			case TRUST_FILE:
				trust_write(file, content);
				break;
			case TRUST_SYMLINK:
				trust_write(real, content);
				made = symlink("real", file) == 0;
				break;
			case TRUST_FIFO:
				made = mkfifo(file, 0644) == 0;
				break;
			case TRUST_FOLDER:
				made = mkdir(file, 0755) == 0;
				break;
			}
		}
		if (made && r->file_uid)
			made = lchown(file, r->file_uid, (gid_t)-1) == 0;
		if (made && r->dir_uid)
			made = chown(dir, r->dir_uid, (gid_t)-1) == 0;
		if (made && r->top_uid)
			made = chown(top, r->top_uid, (gid_t)-1) == 0;
		/* modes set last, after the files are made and owned: no umask, no chown clears them */
		if (made && r->kind == TRUST_FILE)
			made = chmod(file, r->file_mode ? r->file_mode : 0644) == 0;
		if (made)
			made = chmod(dir, r->dir_mode ? r->dir_mode : 0755) == 0 &&
			       chmod(top, r->top_mode ? r->top_mode : 0700) == 0;
		rc = made ? load(file, err, sizeof(err)) : 0;
		/* down before any check, so a failed row leaves nothing behind */
		if (r->kind == TRUST_FOLDER)
			rmdir(file);
		else
			unlink(file);
		unlink(real);
		rmdir(dir);
		rmdir(top);
		print_message("row %zu: %s: %ld %s\n", i, r->name, rc, err);
		if (!made)
			fail_msg("row %zu: %s: not made: %s", i, r->name, strerror(errno));
		if (r->rc == 0) {
			if (rc < 0)
				fail_msg("row %zu: %s: refused: %s", i, r->name, err);
			continue;
		}
		if (rc != r->rc)
			fail_msg("row %zu: %s: %ld, not %d (%s)", i, r->name, rc, r->rc, err);
		where = r->where == TRUST_AT_FILE ? file : r->where == TRUST_AT_DIR ? dir : top;
		if (strncmp(err, where, strlen(where)) != 0 || err[strlen(where)] != ':' ||
		    strstr(err, r->why) == NULL)
			fail_msg("row %zu: %s: the error does not say \"%s: ...%s\": %s", i, r->name,
				 where, r->why, err);
	}
	return skipped;
}

#endif
