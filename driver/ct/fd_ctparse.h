/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_ctparse: a ctnetlink state message (an event, a dump's, a GET's
 * answer) into a libnetfilter_conntrack object, with only what flowcutd
 * reads of it: faster than nfct_nlmsg_parse, and the object is the
 * library's (nfct_get_attr, nfct_copy, nfct_clone and nfct_nlmsg_build
 * work on what it set).
 *
 * What it sets, exactly as nfct_nlmsg_parse would: both tuples (L3
 * protocol, addresses, L4 protocol, ports, ICMP type, code and id, the
 * tuple's zone); CTA_STATUS, CTA_TIMEOUT, CTA_MARK, CTA_ID, CTA_ZONE;
 * TCP's protoinfo (state, window scales, flags and masks); the helper's
 * name.  The master tuple is not set (its ICMP attributes mark
 * ATTR_ICMP_* with the original's values, as the library's parse does).
 * Not set: counters, timestamps, secmark, use, the security context,
 * labels, NAT sequence adjustments, SCTP and DCCP protoinfo, the helper's
 * info.  A caller that needs one of those parses with nfct_nlmsg_parse.
 *
 * Stricter than the library, never looser: a message it refuses may be
 * one the library takes (or exits the process on).
 *
 * No state of its own: any thread, on an object the caller owns.
 *
 * Design notes (why, and what it refuses): driver/ct/README.md.
 */
#ifndef FLOWCUT_FD_CTPARSE_H
#define FLOWCUT_FD_CTPARSE_H

struct nlmsghdr;
struct nf_conntrack;

/*
 * fd_ctparse_msg - nlh's state into ct, fresh from nfct_new() (a reused
 * one would keep what this message does not set, and the ICMP setters
 * read its family).  0, or -1: the
 * message is shorter than its nfgenmsg, or an attribute read is
 * malformed (ct then holds part of it: not to be used).  nlh's length is
 * trusted to lie within its buffer (fd_nl_walk's, mnl_nlmsg_ok).
 */
int fd_ctparse_msg(const struct nlmsghdr *nlh, struct nf_conntrack *ct);

#endif
