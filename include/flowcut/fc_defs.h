/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * flowcut: values both sides of the link share.
 *
 * The microflow actions, connection verdicts, configuration word bits and
 * the fast path's counters, with the vendor's names and numbers where they
 * are known (see shared/design/coprocessor-model.md).  The host (flowcutd,
 * flowcutctl) and the coprocessor (flowcut-npu, the fast path) include this
 * one header, as xdp-filter's common_kern_user.h is shared by its two
 * halves, so a number can never mean two things.
 *
 * Nothing here allocates or has state; every name carries the FC_ / fc_
 * prefix.
 */
#ifndef FLOWCUT_FC_DEFS_H
#define FLOWCUT_FC_DEFS_H

#include <stddef.h>
#include <stdint.h>

/*
 * Each list below is X(NAME, value, "name"): it makes the enum (FC_<LIST>_NAME
 * = value) and the names tools print (fc_<list>_name()), so a value and its
 * spelling are written once.  Values are the vendor's where it has them.
 */

/* Microflow action (vendor). */
#define FC_FOREACH_ACTION(X) \
	X(DROP, 0, "DROP") \
	X(FWD, 1, "FWD") \
	X(IPS, 2, "IPS") \
	X(AUX, 3, "AUX")

/* Connection verdict (vendor).  New connections are made CUT_THRU. */
#define FC_FOREACH_VERDICT(X) \
	X(SEND_TO_IPS, 0, "SEND_TO_IPS") \
	X(DROP, 1, "DROP") \
	X(CUT_THRU, 2, "CUT_THRU")

/* A fast-path connection's state, as the coprocessor reports it. */
#define FC_FOREACH_CONN_STATE(X) \
	X(FREE, 0, "free") \
	X(VALID, 1, "valid")		/* matching */ \
	X(INVALID, 2, "given-back")	/* given back; removed after the terminal time */ \
	X(RECLAIM, 3, "reclaim")	/* being removed */

/* Why a connection left the fast path (carried by events). */
#define FC_FOREACH_REASON(X) \
	X(NONE, 0, "") \
	X(TCP_FIN_SYN_RST, 1, "fin-syn-rst")	/* given back: a close or a new SYN */ \
	X(TCP_MAX_RETRANS, 2, "max-retrans")	/* given back: ten identical ACKs */ \
	X(IDLE, 3, "idle")			/* aged out: both microflows idle */ \
	X(TERMINAL, 4, "terminal")		/* removed: given back, not revived */ \
	X(FW_REV, 5, "fw-rev")			/* removed: older firewall revision */

/* What an event says happened to a connection. */
#define FC_FOREACH_EVENT(X) \
	X(AGED_OUT, 1, "aged-out")	/* removed for idleness; final counts */ \
	X(GIVEN_BACK, 2, "given-back")	/* stopped matching; removed later unless revived */ \
	X(REMOVED, 3, "removed")	/* removed (terminal time over, or older revision) */

enum fc_action {
#define X_(n, v, s) FC_ACTION_##n = v,
	FC_FOREACH_ACTION(X_)
#undef X_
	FC_ACTION_MAX
};

enum fc_verdict {
#define X_(n, v, s) FC_VERDICT_##n = v,
	FC_FOREACH_VERDICT(X_)
#undef X_
	FC_VERDICT_MAX
};

enum fc_conn_state {
#define X_(n, v, s) FC_CONN_##n = v,
	FC_FOREACH_CONN_STATE(X_)
#undef X_
	FC_CONN_STATE_MAX
};

enum fc_reason {
#define X_(n, v, s) FC_REASON_##n = v,
	FC_FOREACH_REASON(X_)
#undef X_
	FC_REASON_MAX
};

enum fc_event_type {
#define X_(n, v, s) FC_EV_##n = v,
	FC_FOREACH_EVENT(X_)
#undef X_
	FC_EV_MAX
};

/* The name of a value as the lists spell it, or "?" for one out of range. */
static inline const char *
fc_action_name(unsigned int v)
{
	static const char *const names[FC_ACTION_MAX] = {
#define X_(n, val, s) [FC_ACTION_##n] = s,
		FC_FOREACH_ACTION(X_)
#undef X_
	};

	return v < FC_ACTION_MAX && names[v] ? names[v] : "?";
}

static inline const char *
fc_verdict_name(unsigned int v)
{
	static const char *const names[FC_VERDICT_MAX] = {
#define X_(n, val, s) [FC_VERDICT_##n] = s,
		FC_FOREACH_VERDICT(X_)
#undef X_
	};

	return v < FC_VERDICT_MAX && names[v] ? names[v] : "?";
}

static inline const char *
fc_conn_state_name(unsigned int v)
{
	static const char *const names[FC_CONN_STATE_MAX] = {
#define X_(n, val, s) [FC_CONN_##n] = s,
		FC_FOREACH_CONN_STATE(X_)
#undef X_
	};

	return v < FC_CONN_STATE_MAX && names[v] ? names[v] : "?";
}

static inline const char *
fc_reason_name(unsigned int v)
{
	static const char *const names[FC_REASON_MAX] = {
#define X_(n, val, s) [FC_REASON_##n] = s,
		FC_FOREACH_REASON(X_)
#undef X_
	};

	return v < FC_REASON_MAX && names[v] ? names[v] : "?";
}

static inline const char *
fc_event_name(unsigned int v)
{
	static const char *const names[FC_EV_MAX] = {
#define X_(n, val, s) [FC_EV_##n] = s,
		FC_FOREACH_EVENT(X_)
#undef X_
	};

	return v < FC_EV_MAX && names[v] ? names[v] : "?";
}

/*
 * The configuration word fw_cfg (vendor bits).  Written whole; flowcut's
 * coprocessor also lets it be read back.  A word with any other bit set is
 * refused (-EINVAL), never silently trimmed.
 *
 * FINTRACK is the vendor's bit; its effect on the real chip is not known.
 * flowcut stores and reports it but hands every FIN to the host whatever
 * its value (the model's step 6: the host must see every close), and
 * gives the connection back with it when it is inside the window.
 */
#define FC_CFG_OFFLOAD		0x001u	/* the gate: off, every frame to host */
#define FC_CFG_TCP_SEQ_CHK	0x002u	/* out-of-window TCP segments to host */
#define FC_CFG_IPS		0x004u	/* the IPS switch: verdicts apply */
#define FC_CFG_FINTRACK		0x008u
#define FC_CFG_DROP_IF_IPS_OFF	0x800u	/* IPS microflows drop while switch off */
#define FC_CFG_ALL		(FC_CFG_OFFLOAD | FC_CFG_TCP_SEQ_CHK | FC_CFG_IPS | \
				 FC_CFG_FINTRACK | FC_CFG_DROP_IF_IPS_OFF)
#define FC_CFG_BOOT		FC_CFG_TCP_SEQ_CHK	/* 0x002 after every boot */

/* The configuration word's bits by name, for tools and logs. */
#define FC_FOREACH_CFG_BIT(X) \
	X(OFFLOAD, FC_CFG_OFFLOAD) \
	X(TCP_SEQ_CHK, FC_CFG_TCP_SEQ_CHK) \
	X(IPS, FC_CFG_IPS) \
	X(FINTRACK, FC_CFG_FINTRACK) \
	X(DROP_IF_IPS_OFF, FC_CFG_DROP_IF_IPS_OFF)


/*
 * Where a counted outcome sends the frame.  Frames from the wire satisfy
 *   RX = WIRE + HOST + IPS + DROP
 * at every instant a burst is not in flight (the fast path asserts it in
 * its tests).  Frames from the host are counted apart (KN), and so are the
 * losses the coprocessor program counts after the fast path has decided
 * (NPU: a full TX queue, a full link ring).
 */
enum fc_cnt_class {
	FC_CLS_RX,	/* received from the wire */
	FC_CLS_WIRE,	/* sent to a wire port */
	FC_CLS_HOST,	/* handed to the host (kernel, "KN") */
	FC_CLS_IPS,	/* handed to the inspector */
	FC_CLS_DROP,	/* dropped */
	FC_CLS_KN_RX,	/* received from the host */
	FC_CLS_KN_WIRE,	/* from the host, sent to the wire */
	FC_CLS_KN_DROP,	/* from the host, dropped */
	FC_CLS_NPU,	/* the coprocessor program's own, after the fast path decided */
	FC_CLS_MAX
};

/*
 * Every counter, once.  X(name, class): the enum fc_cnt (FC_CNT_<name>),
 * the name table (fc_cnt_name[]) and the class table (fc_cnt_class[]) are
 * all made from this list.  FROM_WIRE_ names follow the model's steps in
 * order; those the model names are the vendor's.
 */
#define FC_FOREACH_COUNTER(X) \
	X(FROM_WIRE_RX, FC_CLS_RX) \
	/* step 1: the ingress port */ \
	X(FROM_WIRE_DROP_LIF_UNKNOWN, FC_CLS_DROP) \
	X(FROM_WIRE_DROP_LIF_DISABLED, FC_CLS_DROP) \
	X(FROM_WIRE_TO_KN_LIF_OFFLOAD_DISABLED, FC_CLS_HOST) \
	/* step 2: the gate */ \
	X(FROM_WIRE_TO_KN_FORCED, FC_CLS_HOST) \
	/* parsing (flowcut's) */ \
	X(FROM_WIRE_TO_KN_PARSE_ERROR, FC_CLS_HOST) \
	X(FROM_WIRE_TO_KN_NON_IP, FC_CLS_HOST) \
	X(FROM_WIRE_TO_KN_IP_FRAG, FC_CLS_HOST) \
	X(FROM_WIRE_TO_KN_L2_NOT_LIF_MAC, FC_CLS_HOST) \
	/* step 3: lookup */ \
	X(FROM_WIRE_TO_KN_NON_ACCEL, FC_CLS_HOST) \
	X(FROM_WIRE_DROP_NEW_CONN_RATE, FC_CLS_DROP)	/* flowcut's */ \
	/* step 4: the microflow and its connection */ \
	X(FROM_WIRE_TO_KN_MFLOW_NOT_ACTIVE, FC_CLS_HOST) \
	X(FROM_WIRE_TO_KN_CONN_INVALID, FC_CLS_HOST) \
	X(FROM_WIRE_TO_KN_CONN_RECLAIM_PENDING, FC_CLS_HOST) \
	X(FROM_WIRE_TO_KN_FW_REV_MISMATCH, FC_CLS_HOST) \
	/* step 5: a cut connection */ \
	X(FROM_WIRE_DROP_IPS_VERDICT, FC_CLS_DROP) \
	/* step 5b: the host's lease lapsed (flowcut's) */ \
	X(FROM_WIRE_TO_KN_LEASE_LAPSED, FC_CLS_HOST) \
	/* step 6: TCP */ \
	X(FROM_WIRE_TO_KN_TCP_FIN_SYN_RST, FC_CLS_HOST) \
	X(FROM_WIRE_TO_KN_TCP_FIN_SYN_RST_OUT_OF_WINDOW, FC_CLS_HOST) \
	X(FROM_WIRE_TO_KN_TCP_SEQ_CHK_INVALID, FC_CLS_HOST) \
	X(FROM_WIRE_TO_KN_TCP_MAX_RETRANS, FC_CLS_HOST) \
	/* step 7: the action */ \
	X(FROM_WIRE_DROP_MFLOW_ACTION, FC_CLS_DROP) \
	X(FROM_WIRE_TO_KN_NHOP_UNRESOLVED, FC_CLS_HOST) \
	X(FROM_WIRE_TO_KN_NHOP_STALE, FC_CLS_HOST) \
	X(FROM_WIRE_TO_KN_TTL_EXPIRED, FC_CLS_HOST) \
	X(FROM_WIRE_TO_KN_MTU_EXCEEDED, FC_CLS_HOST) \
	X(FROM_WIRE_TO_KN_NO_HEADROOM, FC_CLS_HOST) \
	X(FROM_WIRE_TO_WIRE, FC_CLS_WIRE) \
	X(FROM_WIRE_TO_WIRE_IPS_DISABLED, FC_CLS_WIRE) \
	X(FROM_WIRE_DROP_IPS_DISABLED, FC_CLS_DROP) \
	X(FROM_WIRE_TO_WIRE_VERDICT_CUT_THRU, FC_CLS_WIRE) \
	X(FROM_WIRE_TO_IPS_INSPECT, FC_CLS_IPS) \
	X(FROM_WIRE_TO_KN_AUX, FC_CLS_HOST) \
	/* frames the host sends out of a port */ \
	X(FROM_KN_RX, FC_CLS_KN_RX) \
	X(FROM_KN_TO_WIRE, FC_CLS_KN_WIRE) \
	X(FROM_KN_DROP_LIF_UNKNOWN, FC_CLS_KN_DROP) \
	/* the coprocessor program: frames lost after the decision, events lost */ \
	X(NPU_TX_FULL, FC_CLS_NPU) \
	X(NPU_TX_NO_PORT, FC_CLS_NPU) \
	X(NPU_UP_RING_FULL, FC_CLS_NPU) \
	X(NPU_UP_TOO_BIG, FC_CLS_NPU) \
	X(NPU_DOWN_BAD, FC_CLS_NPU) \
	X(NPU_NO_MBUF, FC_CLS_NPU) \
	X(NPU_EVENT_RING_FULL, FC_CLS_NPU)

enum fc_cnt {
#define FC_CNT_ENUM_(name, cls) FC_CNT_##name,
	FC_FOREACH_COUNTER(FC_CNT_ENUM_)
#undef FC_CNT_ENUM_
	FC_CNT_MAX
};

/* A counter's name without the FC_CNT_ prefix; NULL when out of range. */
static inline const char *
fc_cnt_name(unsigned int c)
{
	static const char *const names[FC_CNT_MAX] = {
#define FC_CNT_NAME_(name, cls) [FC_CNT_##name] = #name,
		FC_FOREACH_COUNTER(FC_CNT_NAME_)
#undef FC_CNT_NAME_
	};
	return c < FC_CNT_MAX ? names[c] : NULL;
}

/* A counter's class (enum fc_cnt_class); c must be below FC_CNT_MAX. */
static inline enum fc_cnt_class
fc_cnt_class(unsigned int c)
{
	static const uint8_t classes[FC_CNT_MAX] = {
#define FC_CNT_CLASS_(name, cls) [FC_CNT_##name] = cls,
		FC_FOREACH_COUNTER(FC_CNT_CLASS_)
#undef FC_CNT_CLASS_
	};
	return (enum fc_cnt_class)classes[c];
}

/*
 * The wire's own figures, port by port, as the coprocessor's ports count
 * them (DPDK's rte_eth_stats): what no counter above can see, a frame the
 * port lost before the fast path read it or failed to send after.  For
 * port p, from the wire: RX_FRAMES = what the fast path read (its
 * FROM_WIRE_RX summed over the ports), and the sender's frames = RX_FRAMES
 * + RX_MISSED + RX_NOMBUF + RX_ERRORS + KERNEL_RX_DROPPED where the port's
 * driver and its netdev count their losses (net_af_xdp on a veth does: the
 * veth counts what its XDP program could not hand to the socket;
 * net_af_packet in DPDK 22.11 counts none: docs/counters.md).  BUSY_NS is
 * not a frame count but time: what the coprocessor's workers spent on the
 * frames the port received (the CPU a frame forwarded, idle polling
 * left out).  Published in the counters window beside the counters
 * (lk_wire_read), for the first FC_WIRE_PORTS ports.
 */
#define FC_WIRE_PORTS 8

/*
 * The front ports a host drives (flowcutd --ports), ids 0..15: each a TAP
 * of the host's and a port of the coprocessor's.  Tables indexed by port
 * in the driver (relay, next hops, the binding's MTUs) are this long.
 */
#define FC_MAX_PORTS 16
#define FC_FOREACH_WIRE(X) \
	X(RX_FRAMES)	/* received by the port and read (ipackets) */ \
	X(RX_MISSED)	/* lost by the port before they were read: its queue full (imissed) */ \
	X(RX_NOMBUF)	/* lost for want of an mbuf (rx_nombuf) */ \
	X(RX_ERRORS)	/* received in error (ierrors) */ \
	X(KERNEL_RX_DROPPED)	/* a kernel netdev under the port dropped them, not already RX_MISSED */ \
	X(TX_FRAMES)	/* sent (opackets) */ \
	X(TX_ERRORS)	/* the port failed to send (oerrors) */ \
	X(BUSY_NS)	/* the workers' time on its frames, ns: each burst read to sent (not empty polls) */

enum fc_wire {
#define FC_WIRE_ENUM_(name) FC_WIRE_##name,
	FC_FOREACH_WIRE(FC_WIRE_ENUM_)
#undef FC_WIRE_ENUM_
	FC_WIRE_MAX
};

/* A wire figure's name without the FC_WIRE_ prefix; NULL when out of range. */
static inline const char *
fc_wire_name(unsigned int w)
{
	static const char *const names[FC_WIRE_MAX] = {
#define FC_WIRE_NAME_(name) [FC_WIRE_##name] = #name,
		FC_FOREACH_WIRE(FC_WIRE_NAME_)
#undef FC_WIRE_NAME_
	};
	return w < FC_WIRE_MAX ? names[w] : NULL;
}

#endif /* FLOWCUT_FC_DEFS_H */
