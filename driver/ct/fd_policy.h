/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_policy: what the driver offloads, and how - pure functions of one
 * conntrack state (libnetfilter_conntrack's struct nf_conntrack) and the
 * settings.  No sockets, no globals, no allocation: any thread may call
 * them, and tests/unit/driver/test_policy.c holds them to a table.
 *
 *  - fd_policy_qualifies: the host accepted it and saw it work (TCP
 *    established and assured, UDP assured, ICMP echo answered), by the
 *    ruleset in force (our bit in the mark), no helper, zone 0, not dying.
 *  - fd_policy_key: one of conntrack's two tuples as a fast-path key.  The
 *    original tuple keys the frames of the original direction, the reply
 *    tuple those of the reply direction; NAT is the difference between the
 *    two (SNAT: the reply's dst is the translated source; DNAT: the reply's
 *    src is the translated destination), which the fast path derives.
 *  - fd_policy_route_dst: where a direction's frames are sent (its route);
 *    fd_policy_addr: one of a state's addresses (the cut's too).
 *  - fd_policy_action: IPS with "Cut in hardware", else FWD; a tunnel (ESP,
 *    UDP 4500 either end) always FWD.
 *  - fd_policy_inspected, fd_policy_verdict: TCP or UDP to a TLS port is the
 *    inspector's; with action IPS it is made SEND_TO_IPS (the inspector
 *    reads its ClientHello), else CUT_THRU.
 *
 * Addresses and ports in keys are in network byte order, as conntrack
 * hands them out and the fast path parses them off the wire.
 */
#ifndef FLOWCUT_FD_POLICY_H
#define FLOWCUT_FD_POLICY_H

#include <stdbool.h>
#include <stdint.h>

#include <flowcut/fc_cmd.h>
#include <libnetfilter_conntrack/libnetfilter_conntrack.h>	/* enum nf_conntrack_attr */

/* The two directions of a state; index of a FLOW_CREATE_FP's microflows. */
enum fd_dir {
	FD_DIR_ORIG = 0,
	FD_DIR_REPLY = 1,
};

/* fd_policy_qualifies - may this state be offloaded now (its path aside)? */
bool fd_policy_qualifies(const struct nf_conntrack *ct, uint32_t mark_bit);

/* fd_policy_family - 4 or 6 (the fast path's family numbers). */
int fd_policy_family(const struct nf_conntrack *ct);

/*
 * fd_policy_key - direction `dir`'s key, for frames coming in on front
 * port `port`.  ICMP echo: sport is the identifier, dport the type of the
 * direction's messages (8/0, 128/129).
 */
void fd_policy_key(const struct nf_conntrack *ct, enum fd_dir dir, uint16_t port,
		   struct fc_key *k);

/*
 * fd_policy_addr - one address of the state, attribute v4 or v6 by its
 * family: 4 or 16 bytes into out (zeros if the state has none; the
 * kernel's always have).
 */
void fd_policy_addr(const struct nf_conntrack *ct, enum nf_conntrack_attr v4,
		    enum nf_conntrack_attr v6, uint8_t out[16]);

/*
 * fd_policy_route_dst - the address direction `dir`'s frames leave
 * towards: the reply's source for the original direction (the server, or
 * the DNAT target), the original's source for the reply direction (the
 * client).  Writes 4 or 16 bytes by family.
 */
void fd_policy_route_dst(const struct nf_conntrack *ct, enum fd_dir dir, uint8_t dst[16]);

/* fd_policy_action - FC_ACTION_IPS or FC_ACTION_FWD for both microflows. */
uint8_t fd_policy_action(const struct nf_conntrack *ct, bool cut_in_hardware);

/*
 * fd_policy_inspected - is the state TCP or UDP (QUIC) to one of
 * tls_ports[0..ntls-1] (the original tuple's destination port, host
 * order)?  Its ClientHello is then the inspector's to read.
 */
bool fd_policy_inspected(const struct nf_conntrack *ct, const uint16_t *tls_ports,
			 unsigned int ntls);

/*
 * fd_policy_verdict - the verdict a connection of `action` is made with:
 * FC_VERDICT_SEND_TO_IPS when it is TCP or UDP to one of tls_ports[0..ntls-1]
 * (the original tuple's destination port: what the client sent to, before
 * any DNAT) and its action is IPS (only an IPS microflow's verdict is
 * consulted), so the coprocessor hands its frames to the inspector;
 * FC_VERDICT_CUT_THRU otherwise.  ntls 0: nothing is inspected.  Ports in
 * host order.
 */
uint8_t fd_policy_verdict(const struct nf_conntrack *ct, uint8_t action, const uint16_t *tls_ports,
			  unsigned int ntls);

#endif
