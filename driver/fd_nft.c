/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_nft: see fd_nft.h.  The table through libnftables; events, the
 * watched sets and the list sets through libmnl (elements: fd_setelem).
 */
#include "fd_nft.h"

#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <nftables/libnftables.h>

#include "fc_list.h"
#include "fd_setelem.h"

#define EVENTS_RCVBUF (16 << 20)	/* about 100,000 element notifications */
#define RQ_TIMEOUT_S 60			/* a request's answer, a big transaction's included */
#define RQ_BUF (64 * 1024)

static const char *const list_sets[4] = { FD_NFT_LIST4, FD_NFT_LIST6, FD_NFT_LISTNET4,
					  FD_NFT_LISTNET6 };

/* A followed set and the elements added to it in the transaction being read. */
struct followed {
	struct fd_nft_set s;
	struct fd_setelem_acc acc;
};

struct fd_nft {
	struct nft_ctx *nft;
	struct mnl_socket *nl;	/* the events */
	struct mnl_socket *rq;	/* requests: sets looked up, dumped, the list sets written */
	char *rq_buf;
	uint32_t seq;
	uint32_t mark_bit;
	bool installed;		/* the table was put in at least once */
	/* the transaction being read, until its NEWGEN */
	bool other;		/* a message not about the cut sets' elements */
	bool cut_added;		/* NEWSETELEM on cut4 or cut6 */
	bool fol_touched;	/* NEWSETELEM on a followed set */
	/* the followed sets */
	struct followed *fol;
	unsigned int nfol;
	struct fc_list added;	/* committed additions, until taken */
	bool reread;		/* some could not be read: read them whole */
	/* the list sets' handles and their table's, to know them made anew */
	uint64_t list_handle[5];
	bool lists_lost;
};

static int list_handles(struct fd_nft *n);

static int
table_install(struct fd_nft *n)
{
	char cmd[2048];
	int rc;

	/* the cut and list sets' members dropped both ways, before the mark is set */
	snprintf(cmd, sizeof(cmd),
		 "add table inet flowcut\n"
		 "add set inet flowcut " FD_NFT_CUT4 " { type ipv4_addr; flags interval, timeout; "
		 "auto-merge; }\n"
		 "add set inet flowcut " FD_NFT_CUT6 " { type ipv6_addr; flags interval, timeout; "
		 "auto-merge; }\n"
		 "add set inet flowcut " FD_NFT_LIST4 " { type ipv4_addr; }\n"
		 "add set inet flowcut " FD_NFT_LIST6 " { type ipv6_addr; }\n"
		 "add set inet flowcut " FD_NFT_LISTNET4 " { type ipv4_addr; flags interval; }\n"
		 "add set inet flowcut " FD_NFT_LISTNET6 " { type ipv6_addr; flags interval; }\n"
		 "add chain inet flowcut seen { type filter hook forward priority 100; policy accept; }\n"
		 "flush chain inet flowcut seen\n"
		 "add rule inet flowcut seen ip saddr @" FD_NFT_CUT4 " drop\n"
		 "add rule inet flowcut seen ip daddr @" FD_NFT_CUT4 " drop\n"
		 "add rule inet flowcut seen ip6 saddr @" FD_NFT_CUT6 " drop\n"
		 "add rule inet flowcut seen ip6 daddr @" FD_NFT_CUT6 " drop\n"
		 "add rule inet flowcut seen ip saddr @" FD_NFT_LIST4 " drop\n"
		 "add rule inet flowcut seen ip daddr @" FD_NFT_LIST4 " drop\n"
		 "add rule inet flowcut seen ip6 saddr @" FD_NFT_LIST6 " drop\n"
		 "add rule inet flowcut seen ip6 daddr @" FD_NFT_LIST6 " drop\n"
		 "add rule inet flowcut seen ip saddr @" FD_NFT_LISTNET4 " drop\n"
		 "add rule inet flowcut seen ip daddr @" FD_NFT_LISTNET4 " drop\n"
		 "add rule inet flowcut seen ip6 saddr @" FD_NFT_LISTNET6 " drop\n"
		 "add rule inet flowcut seen ip6 daddr @" FD_NFT_LISTNET6 " drop\n"
		 "add rule inet flowcut seen ct mark set ct mark or 0x%08x\n", n->mark_bit);
	rc = nft_run_cmd_from_buffer(n->nft, cmd);
	if (rc != 0)
		fprintf(stderr, "flowcutd: nftables: installing table inet flowcut failed: %s\n",
			nft_ctx_get_error_buffer(n->nft));
	if (rc != 0)
		return -EIO;
	n->installed = true;
	return list_handles(n);
}

struct fd_nft *
fd_nft_open(uint32_t mark_bit)
{
	struct fd_nft *n = calloc(1, sizeof(*n));
	int group = NFNLGRP_NFTABLES, one = 1, rcvbuf = EVENTS_RCVBUF;
	struct timeval tv = { .tv_sec = RQ_TIMEOUT_S };

	if (n == NULL)
		return NULL;
	n->mark_bit = mark_bit;
	n->seq = (uint32_t)time(NULL);
	n->rq_buf = malloc(RQ_BUF);
	n->rq = mnl_socket_open2(NETLINK_NETFILTER, SOCK_CLOEXEC);
	if (n->rq_buf == NULL || n->rq == NULL || mnl_socket_bind(n->rq, 0, MNL_SOCKET_AUTOPID) < 0 ||
	    setsockopt(mnl_socket_get_fd(n->rq), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) != 0)
		goto fail;
	/* errors answer with the header only; acknowledgements are small anyway */
	(void)mnl_socket_setsockopt(n->rq, NETLINK_CAP_ACK, &one, sizeof(one));
	n->nft = nft_ctx_new(NFT_CTX_DEFAULT);
	if (n->nft == NULL)
		goto fail;
	nft_ctx_buffer_output(n->nft);
	nft_ctx_buffer_error(n->nft);
	n->nl = mnl_socket_open2(NETLINK_NETFILTER, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (n->nl == NULL || mnl_socket_bind(n->nl, 0, MNL_SOCKET_AUTOPID) < 0 ||
	    mnl_socket_setsockopt(n->nl, NETLINK_ADD_MEMBERSHIP, &group, sizeof(group)) < 0)
		goto fail;
	/* room for a big change's notifications, flowcutd's own list writes among them */
	if (setsockopt(mnl_socket_get_fd(n->nl), SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf,
		       sizeof(rcvbuf)) != 0)
		(void)setsockopt(mnl_socket_get_fd(n->nl), SOL_SOCKET, SO_RCVBUF, &rcvbuf,
				 sizeof(rcvbuf));
	/* lost events must be known, not hidden: no NETLINK_NO_ENOBUFS */
	if (table_install(n) != 0) {
		errno = EIO;
		goto fail;
	}
	return n;
fail: {
	int err = errno;

	fd_nft_close(n);
	errno = err;
	return NULL;
}
}

void
fd_nft_close(struct fd_nft *n)
{
	if (n == NULL)
		return;
	if (n->installed &&
	    nft_run_cmd_from_buffer(n->nft, "delete table inet flowcut\n") != 0)
		fprintf(stderr, "flowcutd: nftables: deleting table inet flowcut: %s\n",
			nft_ctx_get_error_buffer(n->nft));
	if (n->nft)
		nft_ctx_free(n->nft);
	if (n->nl)
		mnl_socket_close(n->nl);
	if (n->rq)
		mnl_socket_close(n->rq);
	free(n->rq_buf);
	(void)fd_nft_follow(n, NULL, 0);
	fc_list_free(&n->added);
	free(n);
}

int
fd_nft_fd(const struct fd_nft *n)
{
	return mnl_socket_get_fd(n->nl);
}

struct gen {
	struct fd_nft *n;
	int result;	/* FD_NFT_* of the transactions ended */
	bool others;	/* this NEWGEN: committed by another process */
};

static int
gen_attr(const struct nlattr *a, void *data)
{
	struct gen *g = data;

	if (mnl_attr_get_type(a) == NFTA_GEN_PROC_PID &&
	    mnl_attr_validate(a, MNL_TYPE_U32) == 0 &&
	    ntohl(mnl_attr_get_u32(a)) != (uint32_t)getpid())
		g->others = true;
	return MNL_CB_OK;
}

/* One of flowcutd's own sets (cut and list sets: their elements are no ruleset change)? */
static bool
own_set(uint8_t nfproto, const char *table, const char *set)
{
	if (nfproto != NFPROTO_INET || strcmp(table, "flowcut") != 0)
		return false;
	for (unsigned int i = 0; i < 4; i++)
		if (strcmp(set, list_sets[i]) == 0)
			return true;
	return strcmp(set, FD_NFT_CUT4) == 0 || strcmp(set, FD_NFT_CUT6) == 0;
}

static struct followed *
followed_find(struct fd_nft *n, uint8_t nfproto, const char *table, const char *set)
{
	for (unsigned int i = 0; i < n->nfol; i++)
		if (n->fol[i].s.nfproto == nfproto && strcmp(n->fol[i].s.table, table) == 0 &&
		    strcmp(n->fol[i].s.name, set) == 0)
			return &n->fol[i];
	return NULL;
}

/*
 * An element message: about flowcutd's own sets, a followed set (its
 * additions gathered), or another set (a ruleset change).
 */
static void
elems_msg(struct fd_nft *n, const struct nlmsghdr *nlh, uint8_t type)
{
	const char *table, *set;
	struct followed *f;
	uint8_t nfproto;

	if (fd_setelem_head(nlh, &nfproto, &table, &set) != 0) {
		n->other = true;
		return;
	}
	if (own_set(nfproto, table, set)) {
		if (type == NFT_MSG_NEWSETELEM &&
		    (strcmp(set, FD_NFT_CUT4) == 0 || strcmp(set, FD_NFT_CUT6) == 0))
			n->cut_added = true;
	} else if ((f = followed_find(n, nfproto, table, set)) != NULL) {
		if (type == NFT_MSG_NEWSETELEM) {
			n->fol_touched = true;
			if (fd_setelem_gather(nlh, &f->acc) == -ENOMEM)
				f->acc.bad++;	/* not all of it: read whole */
		}
	} else {
		n->other = true;
	}
}

/* A transaction committed: what it added to the followed sets, paired. */
static bool
followed_commit(struct fd_nft *n)
{
	bool any = false;

	for (unsigned int i = 0; i < n->nfol; i++) {
		struct followed *f = &n->fol[i];
		size_t before = n->added.n;
		long bad;

		if (f->acc.n == 0 && f->acc.bad == 0)
			continue;
		bad = fd_setelem_ranges(&f->acc, false, &n->added);
		if (bad != 0)
			n->reread = true;
		any |= bad != 0 || n->added.n > before;
	}
	n->fol_touched = false;
	return any;
}

static void
followed_forget(struct fd_nft *n)
{
	for (unsigned int i = 0; i < n->nfol; i++)
		n->fol[i].acc.n = n->fol[i].acc.bad = 0;
	n->fol_touched = false;
}

/*
 * A transaction's messages, then its NEWGEN.  One that only added or
 * removed elements of the cut sets, the list sets or the followed sets is
 * no ruleset change (the cut follows it precisely; judging every
 * connection again would take the cut ones out of the fast path with the
 * rest); any other message from another process is.
 */
static int
gen_cb(const struct nlmsghdr *nlh, void *data)
{
	struct gen *g = data;
	uint8_t type = NFNL_MSG_TYPE(nlh->nlmsg_type);

	if (NFNL_SUBSYS_ID(nlh->nlmsg_type) != NFNL_SUBSYS_NFTABLES)
		return MNL_CB_OK;
	if (type == NFT_MSG_NEWGEN) {
		g->others = false;
		mnl_attr_parse(nlh, sizeof(struct nfgenmsg), gen_attr, data);
		if (g->others && g->n->other)
			g->result |= FD_NFT_RULESET;
		if (g->others && g->n->cut_added)
			g->result |= FD_NFT_CUT;
		if (g->n->fol_touched && followed_commit(g->n))
			g->result |= FD_NFT_WATCHED;
		g->n->other = g->n->cut_added = false;
	} else if (type == NFT_MSG_NEWSETELEM || type == NFT_MSG_DELSETELEM) {
		elems_msg(g->n, nlh, type);
	} else {
		g->n->other = true;
	}
	return MNL_CB_OK;
}

int
fd_nft_events(struct fd_nft *n)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct gen g = { .n = n };
	ssize_t len;
	int lost = 0;

	for (unsigned int k = 0; k < FD_NFT_EVENTS_PER_TURN; k++) {
		len = mnl_socket_recvfrom(n->nl, buf, sizeof(buf));
		if (len < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			if (errno == ENOBUFS) {
				lost = 1;
				continue;
			}
			return -errno;
		}
		/* gen_cb never fails; a malformed message ends this datagram only */
		(void)mnl_cb_run(buf, (size_t)len, 0, 0, gen_cb, &g);
	}
	if (lost) {
		n->other = n->cut_added = false;	/* the transaction's start may be lost */
		followed_forget(n);			/* the caller reads them whole */
		return table_install(n) != 0 ? -EIO : -ENOBUFS;
	}
	if ((g.result & FD_NFT_RULESET) && table_install(n) != 0)
		return -EIO;	/* said why; a change all the same */
	return g.result;
}

/* One element of libnftables' JSON as a line of list text: "A", "A/L" or "A-B". */
static int
elem_line(const json_t *e, char *line, size_t len)
{
	const json_t *v;

	if (json_is_object(e) && (v = json_object_get(e, "elem")) != NULL)
		e = json_object_get(v, "val");		/* with a timeout */
	if (json_is_string(e))
		return snprintf(line, len, "%s\n", json_string_value(e)) < (int)len ? 0 : -EINVAL;
	if (json_is_object(e) && (v = json_object_get(e, "prefix")) != NULL &&
	    json_is_string(json_object_get(v, "addr")) && json_is_integer(json_object_get(v, "len")))
		return snprintf(line, len, "%s/%lld\n", json_string_value(json_object_get(v, "addr")),
				(long long)json_integer_value(json_object_get(v, "len"))) < (int)len
			       ? 0 : -EINVAL;
	if (json_is_object(e) && (v = json_object_get(e, "range")) != NULL &&
	    json_array_size(v) == 2 && json_is_string(json_array_get(v, 0)) &&
	    json_is_string(json_array_get(v, 1)))
		return snprintf(line, len, "%s-%s\n", json_string_value(json_array_get(v, 0)),
				json_string_value(json_array_get(v, 1))) < (int)len ? 0 : -EINVAL;
	return -EINVAL;
}

int
fd_nft_set_parse(const char *text, struct fc_list *out)
{
	const json_t *item, *elem;
	char line[256];
	json_error_t jerr;
	json_t *doc = json_loads(text, 0, &jerr);
	size_t i, j;
	int rc = 0, skipped = 0;

	if (doc == NULL)
		return -EINVAL;
	json_array_foreach(json_object_get(doc, "nftables"), i, item) {
		json_array_foreach(json_object_get(json_object_get(item, "set"), "elem"), j, elem) {
			long bad;

			if (elem_line(elem, line, sizeof(line)) != 0) {
				skipped++;
				continue;
			}
			bad = fc_list_parse(line, strlen(line), out, NULL, NULL);
			if (bad < 0) {
				rc = (int)bad;
				break;
			}
			skipped += bad > 0;
		}
	}
	json_decref(doc);
	return rc < 0 ? rc : skipped;
}

/* One cut set's elements appended to `out`: 0, -EIO (not read), -EINVAL, -ENOMEM. */
static int
cut_set_read(struct fd_nft *n, const char *set, struct fc_list *out)
{
	char cmd[128];
	int rc = 0;

	snprintf(cmd, sizeof(cmd), "list set inet flowcut %s\n", set);
	nft_ctx_output_set_flags(n->nft, nft_ctx_output_get_flags(n->nft) | NFT_CTX_OUTPUT_JSON);
	if (nft_run_cmd_from_buffer(n->nft, cmd) != 0) {
		fprintf(stderr, "flowcutd: nftables: %s", nft_ctx_get_error_buffer(n->nft));
		rc = -EIO;
	}
	nft_ctx_output_set_flags(n->nft, nft_ctx_output_get_flags(n->nft) & ~NFT_CTX_OUTPUT_JSON);
	if (rc != 0)
		return rc;
	rc = fd_nft_set_parse(nft_ctx_get_output_buffer(n->nft), out);
	if (rc == -EINVAL)
		fprintf(stderr, "flowcutd: nftables: set %s read back is not JSON\n", set);
	else if (rc > 0)
		fprintf(stderr, "flowcutd: nftables: set %s: %d elements not an address, prefix "
			"or range: skipped\n", set, rc);
	return rc < 0 ? rc : 0;
}

int
fd_nft_cut_read(struct fd_nft *n, struct fc_list *out)
{
	int rc = cut_set_read(n, FD_NFT_CUT4, out);

	if (rc == 0)
		rc = cut_set_read(n, FD_NFT_CUT6, out);
	fc_list_canon(out);
	return rc;
}

/* ---- the watched sets and the list sets, through libmnl ---- */

int
fd_nft_family(const char *name)
{
	static const struct {
		const char *name;
		int nfproto;
	} f[] = { { "ip", NFPROTO_IPV4 }, { "ip6", NFPROTO_IPV6 }, { "inet", NFPROTO_INET },
		  { "arp", NFPROTO_ARP }, { "bridge", NFPROTO_BRIDGE }, { "netdev", NFPROTO_NETDEV } };

	for (unsigned int i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		if (strcmp(name, f[i].name) == 0)
			return f[i].nfproto;
	return -EINVAL;
}

/* A request's header and nfgenmsg in n->rq_buf. */
static struct nlmsghdr *
rq_start(struct fd_nft *n, uint16_t type, uint16_t flags, uint8_t nfproto)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(n->rq_buf);
	struct nfgenmsg *nfg;

	nlh->nlmsg_type = (NFNL_SUBSYS_NFTABLES << 8) | type;
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	nlh->nlmsg_seq = ++n->seq;
	nfg = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfg));
	nfg->nfgen_family = nfproto;
	nfg->version = NFNETLINK_V0;
	return nlh;
}

/*
 * Sends the request in n->rq_buf and runs `cb` on its answers until the
 * acknowledgement or the dump's end.  0 or -errno (-EINTR: a dump the set
 * changed under; -ETIMEDOUT: no answer).
 */
static int
rq_run(struct fd_nft *n, mnl_cb_t cb, void *data)
{
	const struct nlmsghdr *req = (const struct nlmsghdr *)n->rq_buf;
	uint32_t seq = req->nlmsg_seq, portid = mnl_socket_get_portid(n->rq);
	ssize_t len;
	int rc;

	if (mnl_socket_sendto(n->rq, req, req->nlmsg_len) < 0)
		return -errno;
	do {
		len = mnl_socket_recvfrom(n->rq, n->rq_buf, RQ_BUF);
		if (len < 0)
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		rc = mnl_cb_run(n->rq_buf, (size_t)len, seq, portid, cb, data);
	} while (rc > MNL_CB_STOP);
	return rc == MNL_CB_ERROR ? -errno : 0;
}

struct setinfo {
	uint32_t key_type, key_len, flags;
	uint64_t handle;
	bool seen;
};

static int
setinfo_attr(const struct nlattr *a, void *data)
{
	struct setinfo *si = data;
	uint16_t t = mnl_attr_get_type(a);

	if ((t == NFTA_SET_KEY_TYPE || t == NFTA_SET_KEY_LEN || t == NFTA_SET_FLAGS) &&
	    mnl_attr_validate(a, MNL_TYPE_U32) == 0)
		*(t == NFTA_SET_KEY_TYPE ? &si->key_type : t == NFTA_SET_KEY_LEN ? &si->key_len
			: &si->flags) = ntohl(mnl_attr_get_u32(a));
	else if (t == NFTA_SET_HANDLE && mnl_attr_validate(a, MNL_TYPE_U64) == 0)
		si->handle = be64toh(mnl_attr_get_u64(a));
	return MNL_CB_OK;
}

static int
setinfo_cb(const struct nlmsghdr *nlh, void *data)
{
	struct setinfo *si = data;

	if (NFNL_MSG_TYPE(nlh->nlmsg_type) == NFT_MSG_NEWSET &&
	    mnl_attr_parse(nlh, sizeof(struct nfgenmsg), setinfo_attr, si) >= 0)
		si->seen = true;
	return MNL_CB_OK;
}

/* GETSET: the set's key, flags and handle.  0 or -errno (-ENOENT: no such table or set). */
static int
set_info(struct fd_nft *n, uint8_t nfproto, const char *table, const char *set,
	 struct setinfo *si)
{
	struct nlmsghdr *nlh = rq_start(n, NFT_MSG_GETSET, NLM_F_ACK, nfproto);
	int rc;

	mnl_attr_put_strz(nlh, NFTA_SET_TABLE, table);
	mnl_attr_put_strz(nlh, NFTA_SET_NAME, set);
	memset(si, 0, sizeof(*si));
	rc = rq_run(n, setinfo_cb, si);
	return rc != 0 ? rc : si->seen ? 0 : -ENOENT;
}

int
fd_nft_set_get(struct fd_nft *n, struct fd_nft_set *s, char *why, size_t len)
{
	/* nftables' datatype numbers (src/datatype.h): 7 ipv4_addr, 8 ipv6_addr */
	enum { TYPE_IPADDR = 7, TYPE_IP6ADDR = 8 };
	struct setinfo si;
	int rc = set_info(n, s->nfproto, s->table, s->name, &si);

	if (rc == -ENOENT) {
		snprintf(why, len, "no such table or set");
		return rc;
	}
	if (rc != 0) {
		snprintf(why, len, "looking it up: %s", strerror(-rc));
		return rc;
	}
	if (si.flags & (NFT_SET_MAP | NFT_SET_OBJECT)) {
		snprintf(why, len, "a map, not a set of addresses");
		return -EMEDIUMTYPE;
	}
	if (!((si.key_type == TYPE_IPADDR && si.key_len == 4) ||
	      (si.key_type == TYPE_IP6ADDR && si.key_len == 16))) {
		snprintf(why, len, "its type is not ipv4_addr or ipv6_addr (nftables type %u, "
			 "keys of %u bytes)", si.key_type, si.key_len);
		return -EMEDIUMTYPE;
	}
	s->family = si.key_len == 4 ? 4 : 6;
	s->interval = si.flags & NFT_SET_INTERVAL;
	snprintf(why, len, "%s%s", s->family == 4 ? "ipv4_addr" : "ipv6_addr",
		 s->interval ? ", interval" : "");
	return 0;
}

static int
dump_cb(const struct nlmsghdr *nlh, void *data)
{
	if (NFNL_MSG_TYPE(nlh->nlmsg_type) == NFT_MSG_NEWSETELEM &&
	    fd_setelem_gather(nlh, data) == -ENOMEM)
		return MNL_CB_ERROR;	/* errno is ENOMEM */
	return MNL_CB_OK;
}

long
fd_nft_set_read(struct fd_nft *n, const struct fd_nft_set *s, struct fc_list *out)
{
	struct fd_setelem_acc acc = { .family = s->family, .interval = s->interval };
	long bad;
	int rc;

	/* a dump the set changed under is started again */
	for (int tries = 0; tries < 3; tries++) {
		struct nlmsghdr *nlh = rq_start(n, NFT_MSG_GETSETELEM, NLM_F_DUMP, s->nfproto);

		mnl_attr_put_strz(nlh, NFTA_SET_ELEM_LIST_TABLE, s->table);
		mnl_attr_put_strz(nlh, NFTA_SET_ELEM_LIST_SET, s->name);
		acc.n = acc.bad = 0;
		rc = rq_run(n, dump_cb, &acc);
		if (rc != -EINTR)
			break;
	}
	bad = rc == 0 ? fd_setelem_ranges(&acc, true, out) : rc;
	fd_setelem_acc_free(&acc);
	fc_list_canon(out);
	return bad;
}

int
fd_nft_follow(struct fd_nft *n, const struct fd_nft_set *s, unsigned int count)
{
	struct followed *f = count ? calloc(count, sizeof(*f)) : NULL;

	for (unsigned int i = 0; i < n->nfol; i++)
		fd_setelem_acc_free(&n->fol[i].acc);
	free(n->fol);
	n->fol = NULL;
	n->nfol = 0;
	n->fol_touched = false;
	if (count && f == NULL)
		return -ENOMEM;
	for (unsigned int i = 0; i < count; i++) {
		f[i].s = s[i];
		f[i].acc.family = s[i].family;
		f[i].acc.interval = s[i].interval;
	}
	n->fol = f;
	n->nfol = count;
	return 0;
}

int
fd_nft_followed_take(struct fd_nft *n, struct fc_list *added)
{
	bool reread = n->reread;

	n->reread = false;
	for (size_t i = 0; i < n->added.n; i++)
		if (fc_list_add(added, &n->added.r[i]) != 0) {
			n->added.n = 0;
			return -ENOMEM;
		}
	n->added.n = 0;
	fc_list_canon(added);
	return reread ? 1 : 0;
}

static int
table_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *a;

	if (NFNL_MSG_TYPE(nlh->nlmsg_type) == NFT_MSG_NEWTABLE)
		mnl_attr_for_each(a, nlh, sizeof(struct nfgenmsg))
			if (mnl_attr_get_type(a) == NFTA_TABLE_HANDLE &&
			    mnl_attr_validate(a, MNL_TYPE_U64) == 0)
				*(uint64_t *)data = be64toh(mnl_attr_get_u64(a));
	return MNL_CB_OK;
}

/*
 * The table's handle (a new table gets a new one: they count up per
 * namespace) and the four list sets' (a set made again in the table gets
 * a new one): when one changed, the sets are new and empty.  0 or -EIO.
 */
static int
list_handles(struct fd_nft *n)
{
	uint64_t h[5] = { 0 };
	struct nlmsghdr *nlh = rq_start(n, NFT_MSG_GETTABLE, NLM_F_ACK, NFPROTO_INET);
	int rc;

	mnl_attr_put_strz(nlh, NFTA_TABLE_NAME, "flowcut");
	rc = rq_run(n, table_cb, &h[4]);
	for (unsigned int i = 0; i < 4 && rc == 0; i++) {
		struct setinfo si;

		rc = set_info(n, NFPROTO_INET, "flowcut", list_sets[i], &si);
		h[i] = si.handle;
	}
	if (rc != 0) {
		fprintf(stderr, "flowcutd: nftables: table inet flowcut's list sets: %s\n",
			strerror(-rc));
		return -EIO;
	}
	if (memcmp(h, n->list_handle, sizeof(h)) != 0)
		n->lists_lost = true;
	memcpy(n->list_handle, h, sizeof(h));
	return 0;
}

bool
fd_nft_lists_lost(struct fd_nft *n)
{
	bool lost = n->lists_lost;

	n->lists_lost = false;
	return lost;
}

/* A list's ranges of one family and kind (single addresses or not), copied. */
static int
split(const struct fc_list *l, uint8_t family, bool single, struct fc_list *out)
{
	for (size_t i = 0; l && i < l->n; i++)
		if (l->r[i].family == family &&
		    (memcmp(l->r[i].lo, l->r[i].hi, 16) == 0) == single &&
		    fc_list_add(out, &l->r[i]) != 0)
			return -ENOMEM;
	return 0;
}

/* One list (del or add) into the batch, set by set. */
static int
lists_put(struct fd_setelem_batch *b, uint16_t op, const struct fc_list *l)
{
	int rc = 0;

	for (unsigned int i = 0; i < 4 && rc == 0; i++) {
		struct fc_list part = { 0 };
		bool single = i < 2;

		rc = split(l, i % 2 == 0 ? 4 : 6, single, &part);
		if (rc == 0 && part.n > 0)
			rc = fd_setelem_put(b, op, NFPROTO_INET, "flowcut", list_sets[i], !single,
					    part.r, part.n);
		fc_list_free(&part);
	}
	return rc;
}

/*
 * Sends a batch and reads its answers: errors, then the last message's
 * acknowledgement.  0, or the first error (-errno).
 */
static int
batch_send(struct fd_nft *n, const struct fd_setelem_batch *b)
{
	int size = b->len < (size_t)INT32_MAX / 2 ? (int)b->len + 4096 : INT32_MAX / 2, first = 0;

	if (setsockopt(mnl_socket_get_fd(n->rq), SOL_SOCKET, SO_SNDBUFFORCE, &size,
		       sizeof(size)) != 0)
		(void)setsockopt(mnl_socket_get_fd(n->rq), SOL_SOCKET, SO_SNDBUF, &size,
				 sizeof(size));
	if (mnl_socket_sendto(n->rq, b->buf, b->len) < 0)
		return -errno;
	for (;;) {
		ssize_t len = mnl_socket_recvfrom(n->rq, n->rq_buf, RQ_BUF);
		const struct nlmsghdr *nlh = (const struct nlmsghdr *)n->rq_buf;
		int left = (int)len;

		if (len < 0)
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		for (; mnl_nlmsg_ok(nlh, left); nlh = mnl_nlmsg_next(nlh, &left)) {
			const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);

			if (nlh->nlmsg_type != NLMSG_ERROR ||
			    mnl_nlmsg_get_payload_len(nlh) < sizeof(*e))
				continue;
			if (e->error != 0 && first == 0)
				first = e->error;
			if (nlh->nlmsg_seq == b->last_seq || nlh->nlmsg_seq == b->begin_seq)
				return first;
		}
	}
}

int
fd_nft_lists_apply(struct fd_nft *n, const struct fc_list *del, const struct fc_list *add,
		   bool fill)
{
	struct fd_setelem_batch b = { 0 };
	int rc = fd_setelem_batch_begin(&b, n->seq + 1);

	for (unsigned int i = 0; fill && rc == 0 && i < 4; i++)
		rc = fd_setelem_put(&b, NFT_MSG_DELSETELEM, NFPROTO_INET, "flowcut", list_sets[i],
				    i >= 2, NULL, 0);
	if (rc == 0 && !fill)
		rc = lists_put(&b, NFT_MSG_DELSETELEM, del);
	if (rc == 0)
		rc = lists_put(&b, NFT_MSG_NEWSETELEM, add);
	if (rc == 0)
		rc = fd_setelem_batch_end(&b);
	n->seq = b.seq;
	if (rc == 0 && b.msgs > 0) {
		rc = batch_send(n, &b);
		if (rc != 0)
			fprintf(stderr, "flowcutd: nftables: the list sets' change (%zu ranges added, "
				"%zu removed%s) refused: %s; it changed nothing\n",
				add ? add->n : 0, fill || !del ? 0 : del->n,
				fill ? ", the sets emptied first" : "", strerror(-rc));
	} else if (rc != 0) {
		fprintf(stderr, "flowcutd: nftables: the list sets' change not made: %s\n",
			strerror(-rc));
	}
	fd_setelem_batch_free(&b);
	return rc;
}
