/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_setio: flowcutd's requests on nftables sets, over libmnl (elements
 * on the wire: fd_setelem) - a set of the host's own ruleset looked up and
 * read whole (the watched sets), and flowcutd's list sets written.
 *
 * The list sets are in flowcutd's table `inet flowcut` (fd_nft makes them
 * and the rules that drop their members both ways): `list4`/`list6` hold
 * single addresses (hash sets: any size), `listnet4`/`listnet6` prefixes
 * and ranges (interval sets).  Apart because nft 1.0.6 reads every
 * interval set's elements whole before it adds to any interval set, and
 * the kernel's rbtree dumps in quadratic time: with a million addresses in
 * an interval set, one `nft add element` anywhere on the host took
 * 2 min 53 s here; in a hash set they cost it nothing.  They are written
 * without nft's cache: one transaction of the elements removed and added
 * (fd_setio_lists_apply).  Reading a big interval set of the host's whole
 * (fd_setio_read) pays the kernel's quadratic dump.
 *
 * One request at a time, each answered before it returns (a timeout of
 * 60 s).  Main thread only.  fd_setio_close(NULL) does nothing.
 */
#ifndef FLOWCUT_FD_SETIO_H
#define FLOWCUT_FD_SETIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <flowcut/fc_nft.h>

struct fc_list;
struct fd_setio;
struct fd_setelem_timed_list;

/* the list sets' names: FC_NFT_LIST4 ... FC_NFT_LISTNET6 (<flowcut/fc_nft.h>) */

#define FD_SETIO_NAME_MAX 64	/* a set's table and set names, NUL included */

/* A set of the host's own ruleset. */
struct fd_setio_set {
	uint8_t nfproto;		/* NFPROTO_INET, NFPROTO_IPV4, ... (fd_setio_family) */
	char table[FD_SETIO_NAME_MAX];
	char name[FD_SETIO_NAME_MAX];
	/* filled by fd_setio_get */
	uint8_t family;			/* 4 or 6: its type is ipv4_addr or ipv6_addr */
	bool interval;			/* flags interval */
};

/* fd_setio_open - a netlink socket of its own.  NULL, errno. */
struct fd_setio *fd_setio_open(void);
void fd_setio_close(struct fd_setio *io);

/* fd_setio_family - an nftables family's name ("inet", "ip", ...) as NFPROTO_*; -EINVAL. */
int fd_setio_family(const char *name);

/*
 * fd_setio_get - looks the set up, fills its family and interval flag.
 * 0; -ENOENT (no such table or set); -EMEDIUMTYPE (not an address set: a
 * map, or a type other than ipv4_addr and ipv6_addr; `why` says which);
 * or another -errno from netlink.  `why` (len bytes) always says what was
 * found, for a message naming the set.
 */
int fd_setio_get(struct fd_setio *io, struct fd_setio_set *s, char *why, size_t len);

/*
 * fd_setio_sets - the names of the sets of table `table` of family
 * `nfproto` (a GETSET dump of that table), each handed to `each` (maps
 * and sets of every type alike: fd_setio_get tells them apart) in the
 * kernel's order.  0; -ENOENT (no such table); or another -errno from
 * netlink (some may have been handed).
 */
int fd_setio_sets(struct fd_setio *io, uint8_t nfproto, const char *table,
		  void (*each)(void *arg, const char *name), void *arg);

/*
 * fd_setio_read - what the set (fd_setio_get'ed) holds, appended to `out`
 * as ranges and made canonical (a GETSETELEM dump, started again when the
 * set changed under it), and in *expires_ms (NULL: not asked) how many ms
 * are left before the first of its elements runs out (their least
 * NFTA_SET_ELEM_EXPIRATION; -1: none has a timeout), the one thing kept
 * of a set's timeouts.  Returns how many elements could not be read
 * (said by the caller), or -errno (what was read is in `out`;
 * *expires_ms is -1).
 */
long fd_setio_read(struct fd_setio *io, const struct fd_setio_set *s, struct fc_list *out,
		   int64_t *expires_ms);

/*
 * fd_setio_read_timed - fd_setio_read, each range with its own expiry
 * (fd_setelem_ranges_timed), appended to `out` as the kernel holds them
 * (not made canonical): for a set whose every element's timeout is kept
 * (fd_nft's cut sets).  How many elements could not be read, or -errno
 * (what was read is in `out`).
 */
long fd_setio_read_timed(struct fd_setio *io, const struct fd_setio_set *s,
			 struct fd_setelem_timed_list *out);

/*
 * fd_setio_handles - the handles of table inet flowcut (h[4]) and of its
 * four list sets (h[0..3], in the order list4, list6, listnet4,
 * listnet6): a table or set made again gets a new one.  0 or -errno.
 */
int fd_setio_handles(struct fd_setio *io, uint64_t h[5]);

/*
 * fd_setio_lists_apply - one transaction on the list sets: `del` removed,
 * then `add` added (each canonical; NULL: none).  With `fill` the sets
 * are emptied first and `del` is not used.  0, or -errno with what was
 * refused said on stderr (the transaction then changed nothing).
 */
int fd_setio_lists_apply(struct fd_setio *io, const struct fc_list *del,
			 const struct fc_list *add, bool fill);

#endif
