/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_ctparse: a ctnetlink state message (an event, a dump's, a GET's
 * answer) into a libnetfilter_conntrack object, with only what flowcutd
 * reads of it.
 *
 * Why not nfct_nlmsg_parse alone: at a burst of new connections the
 * library's parse was a sixth of flowcutd's time an offload (perf of
 * lab/scale.sh's drain of a million: libmnl 10.6 %, libnetfilter_conntrack
 * 7.8 %).  It parses every attribute the kernel sends (counters,
 * timestamps, the security context, labels, sequence adjustments, SCTP and
 * DCCP), each through a callback and a validation call, three nests deep
 * for each tuple.  flowcutd reads about twenty of them.  No library parses
 * a chosen subset: this walks the message once a nest, with libmnl's
 * accessors, and sets what it found with the library's own setters, so the
 * object is the library's: nfct_get_attr, nfct_copy, nfct_clone and
 * nfct_nlmsg_build on it work on what it set.
 *
 * What it sets, exactly as nfct_nlmsg_parse would (tests/integration/
 * test_ct.c compares the two on the kernel's own messages,
 * tests/unit/driver/test_ct_msg.c on messages the library builds, and
 * tests/fuzz/fuzz_ct.c on any message both take):
 *  - both tuples (CTA_TUPLE_ORIG, CTA_TUPLE_REPLY): L3 protocol (the
 *    nfgenmsg's family), addresses, L4 protocol, ports, ICMP type, code
 *    and id, the tuple's zone;
 *  - CTA_STATUS, CTA_TIMEOUT, CTA_MARK, CTA_ID, CTA_ZONE;
 *  - TCP's protoinfo: state, window scales, flags and masks;
 *  - the helper's name.
 * The master tuple is not set, but its ICMP attributes, as a reply's,
 * mark ATTR_ICMP_* with the original's values, as the library's parse
 * does.  Not set: counters, timestamps, secmark, use, the
 * security context, labels, NAT sequence adjustments, SCTP and DCCP
 * protoinfo, the helper's info.  A caller that needs one of those parses
 * with nfct_nlmsg_parse.
 *
 * Stricter than the library, never looser, on what it reads: an
 * attribute of the wrong size, a nest too short, a helper name without
 * its NUL, an ICMP type the kernel keeps no state of, TCP's protoinfo
 * beside SCTP's or DCCP's is refused (the
 * library exits the process on some of these, fuzz_nfct.h; on others it
 * reads past the attribute or its own table).  What it does not read it
 * does not look at.  Its attributes are walked to nlmsg_len, as the
 * library's (not to its 4-byte alignment, as mnl_attr_for_each).  The
 * fuzzer's finds are in tests/fuzz/regress/ct/ctparse-*.
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
