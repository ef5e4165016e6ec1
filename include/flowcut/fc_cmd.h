/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * flowcut: the command channel's numbers and payloads, shared by the host
 * (flowcutd, flowcutctl) and the coprocessor (flowcut-npu).
 *
 * Command numbers are the vendor's where the model gives them; the payload
 * layouts are flowcut's.  Every payload is a fixed-size struct with explicit
 * padding (checked by _Static_assert), in the machine's own byte order: the
 * link never leaves the machine.  A command is a struct fc_cmd_hdr followed
 * by its payload; its answer a struct fc_ans_hdr followed by the answer's
 * payload.  A command whose length is not its payload's size, whose opcode
 * is unknown, or whose fields are out of range is answered with an error
 * (-EINVAL, -EBADMSG, -EOPNOTSUPP, ...) and changes nothing.
 *
 * docs/commands.md describes each command; change it with this file.
 */
#ifndef FLOWCUT_FC_CMD_H
#define FLOWCUT_FC_CMD_H

#include <stdint.h>

#include <flowcut/fc_defs.h>

/* Opcodes: vendor numbers below 64, flowcut's own from 64. */
#define FC_FOREACH_CMD(X) \
	X(FW_STATE_REV_SET, 0) \
	X(FW_CFG_PARAMS_SET, 2) \
	X(LIF_ADD_UPDATE, 3) \
	X(NHOP_PROGRAM, 6) \
	X(MFLOW_PROGRAM, 8) \
	X(MFLOW_INVALIDATE, 9) \
	X(FLOW_CREATE_FP, 10) \
	X(CONN_MODIFY_FP, 12) \
	X(CONN_MODIFY_FP_VERDICT, 13) \
	X(CONN_RECLAIM_FP, 16) \
	X(CONN_READ_BY_ID, 37) \
	X(CONN_READ_BY_KEY, 38) \
	X(CONN_READ_RANGE, 39) \
	X(LIF_READ, 40) \
	X(NHOP_READ, 41) \
	X(TABLE_STATS_READ, 42) \
	X(COUNTER_READ, 44) \
	X(COUNTER_CLEAR, 48) \
	X(FW_CFG_PARAMS_GET, 64) \
	X(CONN_REVIVE_FP, 65) \
	X(HOST_LEASE, 66) \
	X(HOST_LEASE_READ, 67) \
	X(CONN_READ_BRIEF, 68)

enum fc_cmd_op {
#define FC_CMD_ENUM_(name, num) FC_CMD_##name = num,
	FC_FOREACH_CMD(FC_CMD_ENUM_)
#undef FC_CMD_ENUM_
};

/* An opcode's name; NULL for an unknown opcode. */
static inline const char *
fc_cmd_name(unsigned int op)
{
	switch (op) {
#define FC_CMD_NAME_(name, num) case num: return #name;
	FC_FOREACH_CMD(FC_CMD_NAME_)
#undef FC_CMD_NAME_
	default: return 0;
	}
}

/*
 * Every command starts with:
 *
 *   0               16              32
 *   +---------------+---------------+
 *   |    opcode     |  payload len  |
 *   +---------------+---------------+
 *   |             tag               |   the client's; echoed in the answer
 *   +-------------------------------+
 *   |    payload (len bytes) ...
 */
struct fc_cmd_hdr {
	uint16_t op;
	uint16_t len;
	uint32_t tag;
};

/*
 * Every answer starts with:
 *
 *   0               16              32
 *   +---------------+---------------+
 *   |    opcode     |  payload len  |
 *   +---------------+---------------+
 *   |             tag               |
 *   +-------------------------------+
 *   |   rc: 0 or a negative errno   |
 *   +-------------------------------+
 *   |          (zero)               |
 *   +-------------------------------+
 *   |    payload (len bytes) ...
 */
struct fc_ans_hdr {
	uint16_t op;
	uint16_t len;
	uint32_t tag;
	int32_t rc;
	uint32_t zero;
};

/* The largest payload either way (the link's slots hold header + this). */
#define FC_CMD_MAX_PAYLOAD 1000

/* A microflow's key: the fast path's (its hash key, what fp_parse_frame
 * fills) and the wire's, one struct.  48 bytes, 8-aligned (rte_hash_crc
 * reads 8 bytes at a time); what each field holds is in fastpath/fp_parse.h:
 *
 *
 *   0                               16                              32
 *   +-------------------------------+-------------------------------+
 *   |  src address (IPv4: 4 bytes, then 12 zero)                    |
 *   +---------------------------------------------------------------+
 *   |  dst address                                                  |
 *   +---------------+---------------+---------------+---------------+
 *   | sport (net)   | dport (net)   |  port         |  vlan         |
 *   +-------+-------+---------------+---------------+---------------+
 *   | proto |family |  zero (6 bytes)                               |
 *   +-------+-------+-----------------------------------------------+
 */
struct fc_key {
	_Alignas(8) uint8_t src[16];
	uint8_t dst[16];
	uint16_t sport;
	uint16_t dport;
	uint16_t port;
	uint16_t vlan;
	uint8_t proto;
	uint8_t family;
	uint8_t zero[6];
};

/* FW_STATE_REV_SET (0):  | rev (32) |   answer: empty */
struct fc_cmd_rev {
	uint32_t rev;
};

/* FW_CFG_PARAMS_SET (2): | fw_cfg (32) |   answer: empty */
struct fc_cmd_cfg {
	uint32_t fw_cfg;
};

/* FW_CFG_PARAMS_GET (64): empty.  answer: | fw_cfg (32) | fw_rev (32) | */
struct fc_ans_cfg {
	uint32_t fw_cfg;
	uint32_t fw_rev;
};

/*
 * HOST_LEASE (66): the host renews its lease (docs/commands.md; fastpath/fp.h
 * says what a lapse does).  Client slot 0 only (flowcutd's): another
 * client is answered -EPERM.
 *
 *   +-------------------------------+-------------------------------+
 *   |  ms: the lease's length, 0 = release (a clean stop)           |
 *   +-------------------------------+-------------------------------+
 *   |  ack: the lapses the host knows of (reopens a lapsed lease)   |
 *   +---------------------------------------------------------------+
 *
 * answer, and HOST_LEASE_READ (67)'s (empty command, any client):
 *
 *   +-------+-----------------------+-------------------------------+
 *   | state |   zero (3 bytes)      |  lapses since boot            |
 *   +-------+-----------------------+-------------------------------+
 *   |  ms: the length last granted  |  left_ms: until it lapses     |
 *   +-------------------------------+-------------------------------+
 *   state: 0 none since boot, 1 held, 2 lapsed (failing closed)
 */
enum fc_lease_state {
	FC_LEASE_NONE = 0,	/* never held since boot */
	FC_LEASE_HELD = 1,	/* held: connections forward */
	FC_LEASE_LAPSED = 2,	/* lapsed or released: failing closed */
};
struct fc_cmd_lease {
	uint32_t ms;
	uint32_t ack;
};
struct fc_ans_lease {
	uint8_t state;
	uint8_t zero[3];
	uint32_t lapses;
	uint32_t ms;
	uint32_t left_ms;
};

/*
 * LIF_ADD_UPDATE (3), and the answer of LIF_READ (40):
 *
 *   +---------------+---------------+---------------+---------------+
 *   |    lif id     |     port      |     vlan      |      mtu      |
 *   +---------------+---------------+---------------+-------+-------+
 *   |                  mac (6 bytes)                | flags | zero  |
 *   +-----------------------------------------------+-------+-------+
 *   flags: 0x1 admin-disabled, 0x2 offload-disabled
 */
#define FC_LIF_ADMIN_DISABLED	0x1
#define FC_LIF_OFFLOAD_DISABLED	0x2
struct fc_cmd_lif {
	uint16_t id;
	uint16_t port;
	uint16_t vlan;
	uint16_t mtu;
	uint8_t mac[6];
	uint8_t flags;
	uint8_t zero;
};

/* LIF_READ (40): | lif id (16) | zero (16) |   answer: struct fc_cmd_lif */
struct fc_cmd_lif_read {
	uint16_t id;
	uint16_t zero;
};

/*
 * NHOP_PROGRAM (6), and the answer of NHOP_READ (41) (rev filled in):
 *
 *   +-------------------------------+---------------+---------------+
 *   |           nhop id             |     port      |     vlan      |
 *   +---------------+-------+-------+---------------+---------------+
 *   |      mtu      | flags | zero  |          dmac (6 bytes) ...
 *   +---------------+-------+-------+-------------------------------+
 *   |  ... dmac     |          smac (6 bytes)                       |
 *   +---------------+-----------------------------------------------+
 *   |         rev (answer only; zero in the command)                |
 *   +---------------------------------------------------------------+
 *   flags: 0x1 resolved; 0x2 reused: the index now names another neighbour
 *   (its revision climbs; NHOP_PROGRAM only).  Without it a new MAC is the
 *   same neighbour's, followed by the connections that use the next hop.
 */
#define FC_NHOP_RESOLVED 0x1
#define FC_NHOP_REUSED 0x2
struct fc_cmd_nhop {
	uint32_t id;
	uint16_t port;
	uint16_t vlan;
	uint16_t mtu;
	uint8_t flags;
	uint8_t zero;
	uint8_t dmac[6];
	uint8_t smac[6];
	uint32_t rev;
};

/* NHOP_READ (41): | nhop id (32) | */
struct fc_cmd_nhop_read {
	uint32_t id;
};

/*
 * FLOW_CREATE_FP (10): a connection and both microflows, all or nothing.
 *
 *   +-------+---------------+-----------------------------------------+
 *   |verdict|  zero (7 bytes)                                         |
 *   +-------+---------------------------------------------------------+
 *   |  mf[0]: key (48) | nhop (32) | action (8) | wscale (8) | timeout (16) |
 *   |  mf[1]: the same, for the reply direction                       |
 *   +-----------------------------------------------------------------+
 *   answer: | conn id (64) |
 */
struct fc_mflow_spec {
	struct fc_key key;
	uint32_t nhop;
	uint8_t action;
	uint8_t wscale;
	uint16_t timeout_s;
};
struct fc_cmd_flow_create {
	uint8_t verdict;
	uint8_t zero[7];
	struct fc_mflow_spec mf[2];
};
struct fc_ans_conn_id {
	uint64_t id;
};

/*
 * CONN_MODIFY_FP (12):
 *
 *   +---------------------------------------------------------------+
 *   |                        conn id (64)                           |
 *   +-------------------------------+-------+-------+---------------+
 *   |          mask (32)            |action0|action1|   timeout0    |
 *   +---------------+-------+-------+-------+-------+---------------+
 *   |   timeout1    |active0|active1|         zero (32)             |
 *   +---------------+-------+-------+-------------------------------+
 *   mask: 0x1 actions, 0x2 timeouts, 0x4 active flags (FC_MOD_*; the fast
 *   path's FP_MOD_* are the same bits)
 */
enum fc_mod_mask {
	FC_MOD_ACTION = 0x1,
	FC_MOD_TIMEOUT = 0x2,
	FC_MOD_ACTIVE = 0x4,
};
struct fc_cmd_conn_modify {
	uint64_t id;
	uint32_t mask;
	uint8_t action[2];
	uint16_t timeout_s[2];
	uint8_t active[2];
	uint32_t zero;
};

/* CONN_MODIFY_FP_VERDICT (13): | conn id (64) | verdict (8) | zero (56) | */
struct fc_cmd_conn_verdict {
	uint64_t id;
	uint8_t verdict;
	uint8_t zero[7];
};

/*
 * CONN_RECLAIM_FP (16), CONN_READ_BY_ID (37), CONN_REVIVE_FP (65):
 * | conn id (64) |.  MFLOW_PROGRAM (8) / MFLOW_INVALIDATE (9):
 * | conn id (64) | dir (8: 0 original, 1 reply) | zero (56) |.
 */
struct fc_cmd_conn_id {
	uint64_t id;
};
struct fc_cmd_mflow {
	uint64_t id;
	uint8_t dir;
	uint8_t zero[7];
};

/*
 * Per-direction counts (the answer of CONN_RECLAIM_FP is two of these):
 * | packets (64) | bytes (64) | last seen, ns (64) |
 */
struct fc_mflow_stats {
	uint64_t packets;
	uint64_t bytes;
	uint64_t last_seen;
};
struct fc_ans_reclaim {
	struct fc_mflow_stats mf[2];
};

/*
 * One connection, as the table reads return it:
 *
 *   +---------------------------------------------------------------+
 *   |                        conn id (64)                           |
 *   +-------+-------+-------+-------+-------------------------------+
 *   | state |verdict|reason | zero  |          fw_rev (32)          |
 *   +-------+-------+-------+-------+-------------------------------+
 *   | mf[0]: key (48) | nhop (32) | action | active | nat | zero |
 *   |        timeout (16) | zero (16) | first_fwd_us (32) | stats (24 bytes) |
 *   | mf[1]: the same                                               |
 *   +---------------------------------------------------------------+
 *   first_fwd_us: this direction's first frame forwarded to the wire, as
 *   microseconds before stats.last_seen, plus one (0: none forwarded yet;
 *   UINT32_MAX: 71 minutes or more before) - relative to a time of the
 *   record itself, so the answer keeps its size (fc_first_fwd_us,
 *   fc_first_fwd_ns); in the coprocessor's clock, as last_seen is.
 */
struct fc_mflow_info {
	struct fc_key key;
	uint32_t nhop;
	uint8_t action;
	uint8_t active;
	uint8_t nat;
	uint8_t zero;
	uint16_t timeout_s;
	uint16_t zero2;
	uint32_t first_fwd_us;
	struct fc_mflow_stats stats;
};

/* first_fwd_us for a first forwarded frame at first_ns (0: none), last seen at last_ns. */
static inline uint32_t
fc_first_fwd_us(uint64_t first_ns, uint64_t last_ns)
{
	uint64_t us;

	if (first_ns == 0)
		return 0;
	us = (last_ns > first_ns ? last_ns - first_ns : 0) / 1000u + 1u;
	return us < UINT32_MAX ? (uint32_t)us : UINT32_MAX;
}

/*
 * The first forwarded frame of a read direction, ns of the coprocessor's
 * clock (under a microsecond after it: the microseconds back from last
 * seen are whole), or 0: none forwarded yet, or too long before
 * (UINT32_MAX) to say.
 */
static inline uint64_t
fc_first_fwd_ns(const struct fc_mflow_info *mf)
{
	uint64_t back = (uint64_t)(mf->first_fwd_us - 1u) * 1000u;

	if (mf->first_fwd_us == 0 || mf->first_fwd_us == UINT32_MAX || back >= mf->stats.last_seen)
		return 0;
	return mf->stats.last_seen - back;
}
struct fc_conn_info {
	uint64_t id;
	uint8_t state;
	uint8_t verdict;
	uint8_t reason;
	uint8_t zero;
	uint32_t fw_rev;
	struct fc_mflow_info mf[2];
};

/* CONN_READ_BY_KEY (38): a struct fc_key.  answer: struct fc_conn_info */

/*
 * CONN_READ_RANGE (39): | first slot (32) | at most (32) |
 * answer: | next slot (32) | count (32) | count x struct fc_conn_info |
 * next slot is where to go on; equal to the table's size at its end.
 */
struct fc_cmd_range {
	uint32_t first;
	uint32_t max;
};
#define FC_RANGE_MAX ((FC_CMD_MAX_PAYLOAD - 8) / sizeof(struct fc_conn_info))
struct fc_ans_range {
	uint32_t next;
	uint32_t count;
	struct fc_conn_info conn[FC_RANGE_MAX];
};

/*
 * CONN_READ_BRIEF (68): | first slot (32) | end slot (32) |
 * answer: | next slot (32) | count (32) | count x struct fc_conn_brief |
 * The live connections of slots first..end-1 (end 0: to the table's end),
 * at most FC_BRIEF_MAX an answer; next slot is where to go on, equal to
 * the window's end (or the table's size) once the window is read through,
 * so disjoint windows can be read with many commands in flight.  first
 * at or past the table's size, or end past it: -ERANGE; end not 0 and not
 * past first: -EINVAL.  One connection, for a reconciliation (120 bytes,
 * 8 an answer, where CONN_READ_RANGE's fc_conn_info carries 5):
 *
 *   +---------------------------------------------------------------+
 *   |                        conn id (64)                           |
 *   +-------+-------+-------+-------+-------------------------------+
 *   | state |verdict|reason |actions|          fw_rev (32)          |
 *   +-------+-------+-------+-------+-------------------------------+
 *   |  last seen, ns (64): the newer of the two microflows'         |
 *   +---------------------------------------------------------------+
 *   |  key[0] (48): the original direction's                        |
 *   |  key[1] (48): the reply's (it carries the NAT)                |
 *   +---------------------------------------------------------------+
 *   actions: the original direction's action in the low 4 bits, the
 *   reply's in the high 4 (fc_brief_action); both are needed to tell a
 *   cut connection (both DROP) from one that drops one way.
 */
struct fc_cmd_brief {
	uint32_t first;
	uint32_t end;
};
struct fc_conn_brief {
	uint64_t id;
	uint8_t state;
	uint8_t verdict;
	uint8_t reason;
	uint8_t actions;
	uint32_t fw_rev;
	uint64_t last_seen;
	struct fc_key key[2];
};
#define FC_BRIEF_MAX ((FC_CMD_MAX_PAYLOAD - 8) / sizeof(struct fc_conn_brief))
struct fc_ans_brief {
	uint32_t next;
	uint32_t count;
	struct fc_conn_brief conn[FC_BRIEF_MAX];
};

/* The action of direction `dir` (0 original, 1 reply) a brief carries. */
static inline unsigned int
fc_brief_action(const struct fc_conn_brief *b, unsigned int dir)
{
	return dir ? b->actions >> 4 : b->actions & 0xfu;
}

/* TABLE_STATS_READ (42): empty.  answer: | conns (32) | capacity (32) | */
struct fc_ans_table_stats {
	uint32_t conns;
	uint32_t capacity;
};

/*
 * COUNTER_READ (44): empty.  answer: | count (32) | zero (32) | count x u64 |
 * in enum fc_cnt order.  COUNTER_CLEAR (48): empty, answer empty.
 */
struct fc_ans_counters {
	uint32_t count;
	uint32_t zero;
	uint64_t value[FC_CNT_MAX];
};

_Static_assert(sizeof(struct fc_cmd_hdr) == 8, "fc_cmd_hdr");
_Static_assert(sizeof(struct fc_ans_hdr) == 16, "fc_ans_hdr");
_Static_assert(sizeof(struct fc_key) == 48, "fc_key");
_Static_assert(sizeof(struct fc_cmd_lif) == 16, "fc_cmd_lif");
_Static_assert(sizeof(struct fc_cmd_lease) == 8, "fc_cmd_lease");
_Static_assert(sizeof(struct fc_ans_lease) == 16, "fc_ans_lease");
_Static_assert(sizeof(struct fc_cmd_nhop) == 28, "fc_cmd_nhop");
_Static_assert(sizeof(struct fc_mflow_spec) == 56, "fc_mflow_spec");
_Static_assert(sizeof(struct fc_cmd_flow_create) == 120, "fc_cmd_flow_create");
_Static_assert(sizeof(struct fc_cmd_conn_modify) == 24, "fc_cmd_conn_modify");
_Static_assert(sizeof(struct fc_cmd_conn_verdict) == 16, "fc_cmd_conn_verdict");
_Static_assert(sizeof(struct fc_cmd_mflow) == 16, "fc_cmd_mflow");
_Static_assert(sizeof(struct fc_mflow_info) == 88, "fc_mflow_info");
_Static_assert(sizeof(struct fc_conn_info) == 192, "fc_conn_info");
_Static_assert(sizeof(struct fc_ans_range) <= FC_CMD_MAX_PAYLOAD, "fc_ans_range");
_Static_assert(sizeof(struct fc_cmd_brief) == 8, "fc_cmd_brief");
_Static_assert(sizeof(struct fc_conn_brief) == 120, "fc_conn_brief");
_Static_assert(FC_BRIEF_MAX == 8, "fc_conn_brief: 8 an answer");
_Static_assert(sizeof(struct fc_ans_brief) <= FC_CMD_MAX_PAYLOAD, "fc_ans_brief");
_Static_assert(FC_ACTION_MAX <= 16, "an action fits fc_conn_brief's 4 bits");
_Static_assert(sizeof(struct fc_ans_counters) <= FC_CMD_MAX_PAYLOAD, "fc_ans_counters");

#endif /* FLOWCUT_FC_CMD_H */
