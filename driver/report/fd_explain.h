/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_explain: the control socket's `why ADDR`, `why-conn ID` and
 * `triggers` answered from what the cut keeps (fd_why.h), the cut's
 * never-cut list, the cut sets and the binding's table - the "why".
 *
 * Each answer is one JSON object on one line (fc_ctl.h: "ok TEXT\n"), as
 * `status`'s: flowcutctl prints it as text, or as it is with --json.  A
 * list's line is found by reading that file's lines again when asked (one
 * line parsed at a time by fc_list_parse: the file as it is now; a line
 * changed since the cut is not the one that cut it), so a cut keeps no
 * line and no text (fd_why.h: 32 B a connection); the first 65,536 lines
 * only (the main loop's: a line past them reads as line 0, "not in the
 * first 65,536 lines").  A fingerprint's cut (tls) says "by fingerprint",
 * its list line ("line", kept in the record: fd_cut_conn_from) and the
 * watched_fingerprints file that matched ("source": {"kind":
 * "fingerprints", "name": its path, "line"}) when the record names it;
 * the fingerprint itself is not kept (its line is read in the file, and
 * flowcutd's log line of the cut says it).
 *
 * Frames dropped since the cut: as fd_why_frames last set them (fd_frames:
 * 256 cut connections a second, so a count is at most ceil(cut / 256) s
 * old); `frames_read` says whether a reader feeds them (false: each reads
 * 0, "not read yet").
 *
 * Main thread only (the cut's).
 */
#ifndef FLOWCUT_FD_EXPLAIN_H
#define FLOWCUT_FD_EXPLAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

struct fd_why;
struct fd_cut;
struct fd_offload;
struct fd_nft;

/* What the answers read; each the caller's (nft may be NULL: the cut sets not read). */
struct fd_explain_parts {
	const struct fd_why *why;
	const struct fd_cut *cut;
	struct fd_offload *off;
	struct fd_nft *nft;
	bool frames_read;	/* a reader feeds fd_why_frames */
};

/*
 * fd_explain_addr - `why ADDR` (family 4 or 6, 4 or 16 bytes): "ok {...}"
 * naming the never-cut entry that holds it (never_cut: RANGE, or null),
 * the cut sets' elements that hold it (hand), each watched set (its
 * element) and list (its line and entry) that holds it, and the cut
 * connections with an end at it (trigger, source, when, in hardware,
 * frames); "cut": whether anything cuts it, "why" a sentence.  Or "error
 * why ADDR: " and what failed.
 */
void fd_explain_addr(const struct fd_explain_parts *p, uint8_t family, const uint8_t *addr,
		     char *ans, size_t cap);

/*
 * fd_explain_conn - `why-conn ID`: "ok {...}" with the connection's
 * record (trigger, source and its element or line, when, in hardware,
 * frames), or "cut":false and why (an end never cut: its entry; nothing
 * cuts it); "error connection ID: not an offloaded connection ...".
 */
void fd_explain_conn(const struct fd_explain_parts *p, uint64_t id, char *ans, size_t cap);

/*
 * fd_explain_sources - each source's figures (fd_why_src), a JSON array
 * of {"kind","name","followed","elements","cut","frames"} (flowcutd.json's
 * `triggers`); NULL: no memory.  fd_explain_triggers - `triggers`'s
 * answer: {"sources": [...], "sources_left": N, "frames_read": B,
 * "record_bytes": N}.  The sources that fit in `cap` (FC_CTL_ANS_MAX, 64
 * KiB) first, in the order they were named, and "sources_left" the number
 * that did not fit (0: every one): 320 sources with names of
 * FD_WHY_NAME_MAX bytes are some 90 KB, and an answer is one message.  A
 * choice: cut short and said, not a second request for the rest - the
 * request's form stays, and flowcutd.json's `triggers` has them all.
 */
/* fd_explain_range - the range of canonical `l` (may be NULL) that holds the address, or NULL. */
struct fc_list;
struct fc_range;
const struct fc_range *fd_explain_range(const struct fc_list *l, uint8_t family,
					const uint8_t *addr);

json_t *fd_explain_sources(const struct fd_why *w);
void fd_explain_triggers(const struct fd_explain_parts *p, char *ans, size_t cap);
/*
 * fd_explain_answer - "ok JSON\n" of `doc` (taken: freed here) in `ans`,
 * or "error WHAT: ...\n" when it is NULL (no memory) or longer than `cap`:
 * the control socket's answer of a read, as fd_explain's, fd_page's and
 * flowcutd's counters write it.
 */
void fd_explain_answer(json_t *doc, const char *what, char *ans, size_t cap);

#endif
