/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_why: what a cut connection keeps for `flowcutctl why`, and the
 * figures of each trigger's source (`flowcutctl triggers`, flowcutd.json).
 *
 * A source is a watched set ("inet f2b-table addr-set-sshd"), a watched
 * list file or a fingerprints file (their paths), named by fd_watch or
 * fd_cut and kept for flowcutd's life (FD_WHY_SOURCES at most): a set
 * deleted stays a source, followed false, its figures kept.  What a
 * source holds is pointed at, not copied (fd_why_holds), or moved in
 * (fd_why_own).  A cut connection's source is the first, in the order
 * named, that holds either end (fd_why_owner); a fingerprints file holds
 * no addresses.
 *
 * A record of 32 bytes is kept for each cut connection, keyed by the
 * binding entry's slot, written over by the next cut in that slot, never
 * freed one by one.  A record whose entry is no longer cut is stale: the
 * caller checks the binding (cut, cut_by) before it believes one.  `when`
 * is the wall clock (CLOCK_REALTIME seconds); `line` a fingerprint's list
 * line (0 for the others).  Frames dropped count from the first reading
 * after the cut (fd_why_frames), or from 0 when the caller set `based`.
 *
 * Main thread only (the cut's).  fd_why_open gives an empty table;
 * fd_why_close(NULL) does nothing.  Errors are negative errnos, beside
 * each call.
 *
 * Design notes: driver/cut/README.md.
 */
#ifndef FLOWCUT_FD_WHY_H
#define FLOWCUT_FD_WHY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fc_list.h"

#define FD_WHY_SOURCES 320	/* sources named at most (256 + 16 + 16, and room) */
#define FD_WHY_NONE 0xffff	/* a record's source: none (hand, conn, or not found) */
#define FD_WHY_NAME_MAX 192

enum fd_why_kind {
	FD_WHY_SET,	/* a watched set: "FAMILY TABLE SET" */
	FD_WHY_LIST,	/* a watched list file: its path */
	FD_WHY_FINGERPRINTS,	/* a watched_fingerprints file: its path (fd_cut names it) */
};

struct fd_why_rec {
	uint32_t slot;		/* the binding entry's slot (the key) */
	uint32_t when_s;	/* the cut's wall clock, seconds since 1970 */
	uint32_t line;		/* tls: the fingerprint's list line; else 0 */
	uint16_t src;		/* the source (fd_why_source), or FD_WHY_NONE */
	uint8_t trigger;	/* fd_cut's enum fd_cut_trigger */
	uint8_t hw : 1;		/* dropping on the coprocessor */
	uint8_t based : 1;	/* frames: its base was read */
	uint8_t used : 1;	/* the table's slot holds a record */
	uint64_t base;		/* the packets at the cut (based), or 0 */
	uint64_t frames;	/* dropped since the cut, as last read */
};
_Static_assert(sizeof(struct fd_why_rec) == 32, "a record's bytes, said in the header");

/* One source's figures. */
struct fd_why_src {
	enum fd_why_kind kind;
	char name[FD_WHY_NAME_MAX];
	bool followed;		/* looked at and held now (a set there, a list read) */
	uint64_t elements;	/* ranges it holds now */
	uint64_t cut;		/* connections it cut, since flowcutd started */
	uint64_t frames;	/* frames dropped for them since (as last read) */
};

struct fd_why;

/* fd_why_open - an empty table.  NULL, errno. */
struct fd_why *fd_why_open(void);
void fd_why_close(struct fd_why *w);

/*
 * fd_why_source - the source of `kind` named `name` (found, or added):
 * its id, -E2BIG (FD_WHY_SOURCES named already), -ENAMETOOLONG.
 */
int fd_why_source(struct fd_why *w, enum fd_why_kind kind, const char *name);
/*
 * fd_why_holds - source `src` holds `l` from now on (canonical; not
 * copied: it must stay until the next call; NULL: not followed, nothing).
 */
void fd_why_holds(struct fd_why *w, int src, const struct fc_list *l);
/*
 * fd_why_own - source `src` holds `l` from now on, moved in (`l` emptied;
 * what it held before freed): a set's elements as read.  fd_why_add -
 * and `add` besides (copied; canonical after): what was added to it since.
 * 0, or -ENOMEM (fd_why_add: what it held stays).
 */
void fd_why_own(struct fd_why *w, int src, struct fc_list *l);
int fd_why_add(struct fd_why *w, int src, const struct fc_list *add);
/* fd_why_gone - source `src` is not followed now (what it held freed; its figures kept). */
void fd_why_gone(struct fd_why *w, int src);
/* What source `src` holds now (NULL: nothing). */
const struct fc_list *fd_why_held(const struct fd_why *w, int src);

/*
 * fd_why_owner - the first source of `kind` that holds either of the two
 * ends (4 or 16 bytes each, by family): its id, or FD_WHY_NONE.
 */
int fd_why_owner(const struct fd_why *w, enum fd_why_kind kind, uint8_t family,
		 const uint8_t *a, const uint8_t *b);

/*
 * fd_why_cut - a connection cut: its record in slot `slot` (one there
 * before written over), its source's cut counted.  0, or -ENOMEM (not
 * kept: `why` will not know it; the source's count still counted).
 */
int fd_why_cut(struct fd_why *w, const struct fd_why_rec *r);

/* fd_why_get - the record of slot `slot`, or NULL. */
const struct fd_why_rec *fd_why_get(const struct fd_why *w, uint32_t slot);
/*
 * fd_why_next - an iteration over the records: `*at` starts at 0; the
 * next record from it (and *at past it), or NULL at the end.  Work per
 * record (the table is at most 4 times them), not per offloaded
 * connection; a record written meanwhile may or may not come, and one
 * the table's growth moved may come twice or not at all in that walk.
 */
const struct fd_why_rec *fd_why_next(const struct fd_why *w, uint32_t *at);

/*
 * fd_why_frames - the coprocessor's packets of slot `slot`'s connection,
 * read now: its frames since the cut, and its source's.  -ENOENT: no record.
 */
int fd_why_frames(struct fd_why *w, uint32_t slot, uint64_t packets);

/* fd_why_nsources - how many sources are named; fd_why_src - one (NULL past them). */
unsigned int fd_why_nsources(const struct fd_why *w);
const struct fd_why_src *fd_why_src(const struct fd_why *w, int src);

/* fd_why_bytes - the records' memory, bytes (the table). */
size_t fd_why_bytes(const struct fd_why *w);

#endif
