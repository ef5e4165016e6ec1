/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * flowcutd's nftables table and its sets, by name, as flowcutd
 * (driver/nft: it makes them) and flowcutctl (ctl/: `flowcutctl cut` adds
 * to the cut sets) both name them.  Values only.
 *
 *   table  inet flowcut            the chain `seen` marks what the host's
 *                                  rules accept, after dropping these
 *                                  sets' members both ways:
 *   set    cut4 / cut6             the cuts by hand (ipv4_addr / ipv6_addr,
 *                                  interval, timeout, auto-merge)
 *          conn4 / conn6           connections cut on the host (five-tuples,
 *                                  timeout)
 *          list4 / list6           the watched lists' single addresses (hash)
 *          listnet4 / listnet6     ... their prefixes and ranges (interval)
 *          never_cut4 / never_cut6 the settings' never_cut (interval): their
 *                                  members accepted (and marked) before
 *                                  any of the drops
 *
 * The family is nftables' `inet` (NFPROTO_INET on netlink).
 */
#ifndef FLOWCUT_FC_NFT_H
#define FLOWCUT_FC_NFT_H

#define FC_NFT_FAMILY "inet"
#define FC_NFT_TABLE "flowcut"
#define FC_NFT_CUT4 "cut4"
#define FC_NFT_CUT6 "cut6"
#define FC_NFT_CONN4 "conn4"
#define FC_NFT_CONN6 "conn6"
#define FC_NFT_LIST4 "list4"
#define FC_NFT_LIST6 "list6"
#define FC_NFT_LISTNET4 "listnet4"
#define FC_NFT_LISTNET6 "listnet6"
#define FC_NFT_NEVER4 "never_cut4"
#define FC_NFT_NEVER6 "never_cut6"

/* "inet flowcut": the table as nft's commands name it */
#define FC_NFT_TABLE_NAME FC_NFT_FAMILY " " FC_NFT_TABLE

#endif
