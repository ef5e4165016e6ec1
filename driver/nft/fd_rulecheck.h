/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_rulecheck: the constructs of the host's ruleset that an offloaded
 * connection bypasses - a limit, a quota, a `ct count`, a set or meter
 * updated from the packet path, a queue to userspace, an allow set whose
 * elements time out, a drop after flowcut's mark bit is set.  Once
 * offloaded, a connection's frames never reach the host's rules again.
 * docs/settings.md lists each, why, and what an operator can do.
 *
 * Two layers:
 *  - fd_rulecheck_parse: pure.  The ruleset as libnftables' JSON (`nft -j
 *    list ruleset`, with or without -t) and the mark bit in, the findings
 *    out: family, table, chain, rule handle and construct of each.  No
 *    I/O, no globals: any thread.
 *  - fd_rulecheck_open/run/close: flowcutd's checker.  fd_rulecheck_run
 *    lists the ruleset through libnftables (terse, the verdict maps'
 *    elements put in), checks it, and says on stderr each finding that
 *    the check before did not have (one line each, and one line of the
 *    count when the findings changed).  What cannot be listed or read is
 *    said, counted, and the findings before are kept.  Main thread only;
 *    fd_rulecheck_close(NULL) does nothing.
 *
 * Walked: the chains a forwarded packet goes through (the ip, ip6, inet
 * and netdev base chains of the forwarding hooks, not those of type nat)
 * and every chain they jump or go to.  flowcutd's own table is no
 * finding.
 *
 * Design notes (what is walked, what "after the mark" and a drop are):
 * driver/nft/README.md.
 */
#ifndef FLOWCUT_FD_RULECHECK_H
#define FLOWCUT_FD_RULECHECK_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/* The kinds of finding: X(enum suffix, name in the warning and the docs). */
#define FD_RULECHECK_KINDS(X)                                   \
	X(LIMIT, "limit")                                       \
	X(QUOTA, "quota")                                       \
	X(CT_COUNT, "ct count")                                 \
	X(SET_UPDATE, "set updated from the packet path")       \
	X(METER, "meter")                                       \
	X(TIMEOUT_SET, "allow set with element timeouts")       \
	X(QUEUE, "queue")                                       \
	X(AFTER_MARK, "drop after the mark")

enum fd_rulecheck_kind {
#define FD_RULECHECK_ENUM(e, s) FD_RULECHECK_##e,
	FD_RULECHECK_KINDS(FD_RULECHECK_ENUM)
#undef FD_RULECHECK_ENUM
	FD_RULECHECK_NKINDS
};

/* fd_rulecheck_kind_name - "limit", ...; "?" for a value out of range. */
const char *fd_rulecheck_kind_name(int kind);

/* nftables names are 256 bytes at most with their NUL (NFT_NAME_MAXLEN) */
#define FD_RULECHECK_NAME 256

/* One construct offloaded frames bypass. */
struct fd_rulecheck_finding {
	enum fd_rulecheck_kind kind;
	char family[8];			/* "ip", "ip6", "inet", "netdev" */
	char table[FD_RULECHECK_NAME];
	char chain[FD_RULECHECK_NAME];
	uint64_t handle;		/* the rule's; 0: the chain's policy */
	char what[FD_RULECHECK_NAME + 32];	/* "limit", "add @seen4", "vmap @vm", "policy drop" */
};

/* findings kept by one check; the rest counted in `more` */
#define FD_RULECHECK_MAX 1024
#define FD_RULECHECK_MAX_TEXT "1024"

/* What one check found: each distinct finding once, in the order walked. */
struct fd_rulecheck_result {
	struct fd_rulecheck_finding *f;	/* malloc'd; fd_rulecheck_result_free */
	size_t n, cap;
	size_t more;			/* findings past FD_RULECHECK_MAX */
};

/*
 * fd_rulecheck_parse - the findings of the ruleset `json` (`len` bytes,
 * libnftables' JSON; no NUL needed) for `mark_bit`, appended to `out`
 * (zeroed by the caller the first time).  Returns 0, -EINVAL (not JSON, or
 * JSON not shaped as nft lists a ruleset: `err` says what and where,
 * e.g. "object 7 (rule): 'handle' is not an integer"; what was found
 * before it is in `out`), or -ENOMEM.  Objects it does not know
 * (flowtables, elements, ...) and statements it does not know are
 * skipped.
 */
int fd_rulecheck_parse(const char *json, size_t len, uint32_t mark_bit,
		       struct fd_rulecheck_result *out, char *err, size_t errlen);

/* fd_rulecheck_result_free - frees out->f, zeroes *out. */
void fd_rulecheck_result_free(struct fd_rulecheck_result *out);

/*
 * fd_rulecheck_format - one finding as the warning flowcutd says:
 * "inet filter forward handle 10: limit (limit): offloaded connections
 * bypass it".  Returns snprintf's.
 */
int fd_rulecheck_format(const struct fd_rulecheck_finding *f, char *buf, size_t len);

/*
 * fd_rulecheck_list - the ruleset as libnftables lists it now: JSON,
 * terse, with the elements of each verdict map put in.  Returns 0 and a
 * malloc'd NUL-terminated *json (the caller frees it), -EIO (libnftables
 * refused: its message in `err`), -EINVAL (its output did not parse), or
 * -ENOMEM.
 */
int fd_rulecheck_list(char **json, char *err, size_t errlen);

struct fd_rulecheck;

/* fd_rulecheck_open - flowcutd's checker for `mark_bit`.  NULL, errno (ENOMEM). */
struct fd_rulecheck *fd_rulecheck_open(uint32_t mark_bit);
void fd_rulecheck_close(struct fd_rulecheck *c);

/*
 * fd_rulecheck_run - list, check, say what is new (above).  Returns the
 * number of findings, or a negative errno (fd_rulecheck_list's or
 * fd_rulecheck_parse's: said on stderr, counted; the last findings stay).
 */
int fd_rulecheck_run(struct fd_rulecheck *c);

/*
 * fd_rulecheck_stats_json - {"bypassed": findings of the last good check,
 * "checks": N, "failed": N, "error": the last failure's text or null,
 * "kinds": {"limit": n, ...}}; NULL when out of memory.  The caller owns it.
 */
json_t *fd_rulecheck_stats_json(const struct fd_rulecheck *c);

#endif
