/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_dirwatch: files followed through their folders' inotify watches, for
 * the driver's three readers of a file that may change under it: the
 * settings file (flowcutd.c), the watched fingerprints (fd_ips), the
 * watched lists (fd_watch).  A file is watched through its folder, not
 * itself: an editor or a tool often saves by writing a new file and
 * renaming it into place, which a watch on the old file would not see.
 *
 * One inotify descriptor (non-blocking, close-on-exec) and up to
 * FD_DIRWATCH_MAX slots, each a file: its folder's watch, the events that
 * count, and its name in the folder.  Files of one folder share its watch
 * (the kernel's: one a folder per descriptor; the last add's events hold
 * for all of them).  fd_dirwatch_read() says which slots' files changed;
 * the caller reads them again.  A folder that goes (removed, unmounted)
 * takes its watch with it: the slot is no longer watched
 * (fd_dirwatch_watched), and may be added again when the folder is back.
 *
 * One thread at a time per fd_dirwatch; fd_dirwatch_close() ends it.
 */
#ifndef FLOWCUT_FD_DIRWATCH_H
#define FLOWCUT_FD_DIRWATCH_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/inotify.h>

#define FD_DIRWATCH_MAX 64	/* slots: bits of fd_dirwatch_read's mask */
#define FD_DIRWATCH_READS 64	/* read()s of 4 KiB at most per fd_dirwatch_read */

struct fd_dirwatch;

/* fd_dirwatch_open - no slot in use.  NULL and errno (inotify_init1's, ENOMEM). */
struct fd_dirwatch *fd_dirwatch_open(void);

/* fd_dirwatch_close - the descriptor closed (its watches with it); NULL does nothing. */
void fd_dirwatch_close(struct fd_dirwatch *dw);

/* fd_dirwatch_fd - the descriptor, readable when an event is queued (for epoll). */
int fd_dirwatch_fd(const struct fd_dirwatch *dw);

/*
 * fd_dirwatch_add - slot `slot` follows `path`: what it held is removed
 * first (fd_dirwatch_remove), then `path`'s folder is watched for `mask`
 * (inotify's IN_* events and flags, e.g. IN_CLOSE_WRITE | IN_MOVED_TO,
 * IN_ONLYDIR), and an event of that watch naming the file's last
 * component is the file's change.  IN_Q_OVERFLOW in `mask` (not given to
 * the kernel): an overflow of the queue counts as a change too, the
 * events lost may have been the file's - whether the folder is watched
 * or not.
 *
 * basename(3) and dirname(3) split `path` ("" is "." in "."; a name
 * longer than NAME_MAX, which no file can have, is kept cut to it).
 * 0; -EINVAL (slot not below FD_DIRWATCH_MAX, path NULL), or
 * inotify_add_watch()'s -errno (-ENOENT: the folder does not exist yet,
 * -ENOTDIR, -EACCES, -ENOSPC: the user's watches all used): the slot is
 * in use, its file not watched, and only an overflow reports it.
 */
int fd_dirwatch_add(struct fd_dirwatch *dw, unsigned int slot, const char *path, uint32_t mask);

/*
 * fd_dirwatch_remove - slot `slot` in use no more; its folder's watch
 * removed when no other slot shares it.  A slot not in use: nothing.
 */
void fd_dirwatch_remove(struct fd_dirwatch *dw, unsigned int slot);

/* fd_dirwatch_watched - is slot `slot`'s folder watched (added, and not gone since)? */
bool fd_dirwatch_watched(const struct fd_dirwatch *dw, unsigned int slot);

/*
 * fd_dirwatch_read - the events queued, read without blocking (at most
 * FD_DIRWATCH_READS read()s: what is left stays queued, the descriptor
 * readable, for the next call): *changed gets bit i set for each slot i
 * whose file changed (a named event of its watch, or an overflow it
 * counts), 0 when none.  A folder gone leaves its slots unwatched.
 * 0, or read()'s -errno (other than -EAGAIN: nothing queued is 0); what
 * was read before it is in *changed.
 */
int fd_dirwatch_read(struct fd_dirwatch *dw, uint64_t *changed);

#endif
