/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_nft: flowcutd and the host's nftables.
 *
 * Two things: (1) a table of flowcutd's own, `inet flowcut`, with one base
 * chain on the forward hook at priority 100 - after the host's filter -
 * that sets a bit in the connection's mark on every packet the host's rules
 * let through: a connection with the bit was judged and accepted by the
 * ruleset in force.  (2) The ruleset's changes, followed over netlink
 * (NFT_MSG_NEWGEN on NFNLGRP_NFTABLES): a new generation committed by
 * anyone else means the rules changed.  The table is put back after every
 * change (a `flush ruleset` takes it away).
 *
 * Main thread only.  fd_nft_close(NULL) does nothing.
 */
#ifndef FLOWCUT_FD_NFT_H
#define FLOWCUT_FD_NFT_H

#include <stdint.h>

struct fd_nft;

/* fd_nft_open - install the table (marking `mark_bit`), follow changes.  NULL, errno. */
struct fd_nft *fd_nft_open(uint32_t mark_bit);
void fd_nft_close(struct fd_nft *n);
/* fd_nft_fd - the event socket, to poll. */
int fd_nft_fd(const struct fd_nft *n);
/* datagrams fd_nft_events() reads in one call; the rest in the next */
#define FD_NFT_EVENTS_PER_TURN 64

/*
 * fd_nft_events - reads at most FD_NFT_EVENTS_PER_TURN datagrams.  Returns
 * 1 when another process changed the ruleset (the table is in place
 * again), 0 when not, or a negative errno: -ENOBUFS means events were
 * lost, -EIO that the table could not be put back (said on stderr); treat
 * every error as a change.
 */
int fd_nft_events(struct fd_nft *n);

#endif
