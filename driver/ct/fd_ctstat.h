/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_ctstat: conntrack's own figures, as the kernel of the caller's
 * namespace keeps them - for the control socket's `counters` (the
 * page's and /metrics' conntrack entries, limit, insert_failed, drop,
 * early_drop, as node_exporter names them).
 *
 * Read from procfs, not ctnetlink's CTA_STATS_GLOBAL (a choice: one read
 * of three small files, no socket of its own for flowcutd's main loop):
 * the count and the limit are /proc/sys/net/netfilter/nf_conntrack_count
 * and _max, the per-CPU stats /proc/net/stat/nf_conntrack (a header line
 * naming the columns, then one line of hex figures a CPU), summed over
 * the CPUs, the columns found by their header's names (kernels add and
 * move columns).  A figure the kernel does not give (a column missing, a
 * file absent: no nf_conntrack loaded) is -1, never 0: the answer leaves
 * its key out.  Any thread; nothing kept.
 */
#ifndef FLOWCUT_FD_CTSTAT_H
#define FLOWCUT_FD_CTSTAT_H

#include <stddef.h>
#include <stdint.h>

/* Each figure, or -1: not given. */
struct fd_ctstat {
	int64_t entries;
	int64_t limit;
	int64_t insert_failed;
	int64_t drop;
	int64_t early_drop;
};

/*
 * fd_ctstat_parse - the text of /proc/net/stat/nf_conntrack (pure: the
 * fuzz target's): insert_failed, drop and early_drop summed over its
 * lines (those the header does not name: -1; a sum past INT64_MAX held
 * there).  0, or -EINVAL with what was wrong (no header, a line of more
 * or fewer columns than its header, a figure not hex digits alone - no
 * sign, no 0x -, or over 16) in err; then the three are -1.
 */
int fd_ctstat_parse(const char *text, size_t len, struct fd_ctstat *out, char *err,
		    size_t errlen);
/*
 * fd_ctstat_read - every figure of the kernel's procfs under `proc` (NULL:
 * "/proc"; a test's folder), those it cannot read -1; the stat file read
 * whole, however many CPUs (up to 16 MiB).  0 (some figure may
 * be -1), or -EINVAL: the stat file did not parse (err says why).
 */
int fd_ctstat_read(const char *proc, struct fd_ctstat *out, char *err, size_t errlen);

#endif
