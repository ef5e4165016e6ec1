/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fc_tlscap: the TLS ClientHellos of a capture file (pcap or pcapng, read
 * with libpcap), for `flowcutctl fingerprint` and the tests.
 *
 * Every TCP flow is taken one direction at a time; each direction's byte
 * stream is put back in order (out-of-order segments held, retransmitted
 * bytes taken once) and fed to fc_tls from its first byte, so a hello that
 * spans segments or records is read whole.  A direction whose stream does
 * not start with a ClientHello (a server's, or not TLS) is dropped at its
 * first bytes.  The stream starts after the SYN, or, when the capture holds
 * no SYN for it, at the first segment with data.
 *
 * QUIC: the first UDP datagram of a flow that starts with an Initial
 * (versions 1 and 2) makes its sender the client; its Initials are read
 * by fc_quic (decrypted with the keys of their DCID) until the hello is
 * whole.  The other direction (the server's) is not read.  An Initial
 * that does not decrypt with a client's keys before any did (a server's,
 * when the capture missed the client's first; or a damaged one) is
 * counted, not reported.
 *
 * Link types: Ethernet (with up to two VLAN tags), Linux cooked (SLL and
 * SLL2, `tcpdump -i any`), raw IP, BSD loopback.  IPv4 and IPv6 (with the
 * hop-by-hop, routing and destination options headers).  Not read, and
 * counted: IP fragments, segments and datagrams cut short by the snapshot
 * length.
 *
 * Threads: each call is independent; fn is called from the caller's thread.
 */
#ifndef FLOWCUT_FC_TLSCAP_H
#define FLOWCUT_FC_TLSCAP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/time.h>

#include "fc_tls.h"

struct fc_tlscap_hello {
	int family;			/* AF_INET or AF_INET6 */
	uint8_t src[16], dst[16];	/* client, server: 4 or 16 bytes by family */
	uint16_t sport, dport;		/* host order */
	char transport;			/* 't' TCP, 'q' QUIC (JA4's first character) */
	uint64_t frame;			/* the frame (from 1) that completed it */
	struct timeval ts;		/* of that frame */
	/*
	 * 0: a valid ClientHello.  -EBADMSG, -EMSGSIZE: one that fc_tls
	 * refused (hello->err says why).  -EAGAIN: the capture ended, or the
	 * flow closed, before the hello was whole.
	 */
	int rc;
	const struct fc_tls_hello *hello;	/* valid during the call only */
};

struct fc_tlscap_stats {
	uint64_t frames;		/* frames read */
	uint64_t segments;		/* TCP segments with data */
	uint64_t fragments;		/* IP fragments, not read */
	uint64_t truncated;		/* cut short by the snapshot length, not read */
	uint64_t other;			/* not IP, not TCP, or malformed headers */
	uint64_t dropped;		/* out-of-order bytes over the holding cap */
	uint64_t quic_initials;		/* QUIC Initial datagrams of clients read */
	uint64_t quic_undecrypted;	/* first Initials that did not decrypt with a client's keys */
};

/* Called for each hello; a non-zero return stops the walk with that value. */
typedef int fc_tlscap_fn(void *arg, const struct fc_tlscap_hello *ch);

/*
 * fc_tlscap_read - walk the capture at path and call fn for each ClientHello
 * over TCP or QUIC, in the order they complete.  stats may be NULL.
 * Returns the number of hellos reported (>= 0); fn's non-zero return;
 * -EIO when libpcap cannot open or read the file; -EPROTONOSUPPORT for a
 * link type listed as unread above; -ENOMEM.  On a negative return err
 * (errlen bytes) says why.
 */
int fc_tlscap_read(const char *path, fc_tlscap_fn *fn, void *arg,
		   struct fc_tlscap_stats *stats, char *err, size_t errlen);

#endif
