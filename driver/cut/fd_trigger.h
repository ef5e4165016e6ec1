/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_trigger: the cuts asked of flowcutd itself - by hand and by
 * connection.  With fd_watch and the inspector's hook, every trigger of a
 * cut (fd_cut.h's FD_CUT_TRIGGERS) is in this folder or calls into it:
 *
 *   hand  an element another process adds to flowcutd's own cut4/cut6
 *         (`flowcutctl cut ADDRESS [--for S]`): fd_trigger_hand, from the
 *         element notifications fd_nft gathers (fd_nft_cut_take), or the
 *         sets read whole (fd_trigger_hand_all)                 here
 *   conn  `flowcutctl cut --conn ID` on the control socket: fd_trigger_conn,
 *         which answers it                                      here
 *   set   an element added to a watched set of the host's ruleset   fd_watch
 *   list  a line added to a watched list file                       fd_watch
 *   tls   a listed JA4 or JA3: driver/ips/fd_ips decides and calls
 *         fd_cut_conn
 *
 * What undoes a cut by an address (hand, set, list: an element removed or
 * run out, a line removed) is fd_watch's release, for all three.
 *
 * Main thread only (the cut's).  No state of its own: the cut sets are
 * fd_nft's, the cut's stats fd_cut's.
 */
#ifndef FLOWCUT_FD_TRIGGER_H
#define FLOWCUT_FD_TRIGGER_H

#include <stddef.h>
#include <stdint.h>

#include "fd_cut.h"
#include "fd_nft.h"

/*
 * fd_trigger_hand - fd_nft_events' result `nft_rc`: FD_NFT_CUT cuts what
 * was added to the cut sets (trigger hand); an error (events lost, the
 * table not put back), or an addition that could not be read whole, reads
 * both sets whole and cuts what they hold.  Each cut counted and said by
 * fd_cut.
 */
void fd_trigger_hand(struct fd_nft *nft, struct fd_cut *cut, int nft_rc);

/*
 * fd_trigger_hand_all - what the cut sets hold now, cut (at each
 * programming of the coprocessor: a flowcutd before's cuts too).  A set
 * read in part is said, and what was read cut.
 */
void fd_trigger_hand_all(struct fd_nft *nft, struct fd_cut *cut);

/*
 * fd_trigger_conn - the control socket's `cut-conn ID`: that offloaded
 * connection cut (trigger conn), and the answer (fc_ctl.h) written into
 * `ans` (cap bytes): "ok connection ID cut in hardware|on the host ...",
 * or "error connection ID: " and why (not an offloaded connection of this
 * flowcutd, cut already, an end never cut, or the errno's text).
 */
void fd_trigger_conn(struct fd_cut *cut, uint64_t id, char *ans, size_t cap);

#endif
