/* SPDX-License-Identifier: BSD-3-Clause */
/* fd_setio: see fd_setio.h. */
#include "fd_setio.h"

#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>

#include <libmnl/libmnl.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>

#include "fd_setelem.h"

#define RQ_TIMEOUT_S 60			/* a request's answer, a big transaction's included */
#define RQ_BUF (64 * 1024)

static const char *const list_sets[4] = { FC_NFT_LIST4, FC_NFT_LIST6, FC_NFT_LISTNET4,
					  FC_NFT_LISTNET6 };

struct fd_setio {
	struct mnl_socket *rq;
	char *buf;
	uint32_t seq;
};

struct fd_setio *
fd_setio_open(void)
{
	struct fd_setio *n = calloc(1, sizeof(*n));
	struct timeval tv = { .tv_sec = RQ_TIMEOUT_S };
	int one = 1;

	if (n == NULL)
		return NULL;
	n->seq = (uint32_t)time(NULL);
	n->buf = malloc(RQ_BUF);
	n->rq = mnl_socket_open2(NETLINK_NETFILTER, SOCK_CLOEXEC);
	if (n->buf == NULL || n->rq == NULL || mnl_socket_bind(n->rq, 0, MNL_SOCKET_AUTOPID) < 0 ||
	    setsockopt(mnl_socket_get_fd(n->rq), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) != 0) {
		int err = errno;

		fd_setio_close(n);
		errno = err;
		return NULL;
	}
	/* errors answer with the header only; acknowledgements are small anyway */
	(void)mnl_socket_setsockopt(n->rq, NETLINK_CAP_ACK, &one, sizeof(one));
	return n;
}

void
fd_setio_close(struct fd_setio *n)
{
	if (n == NULL)
		return;
	if (n->rq)
		mnl_socket_close(n->rq);
	free(n->buf);
	free(n);
}

int
fd_setio_family(const char *name)
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

/* A request's header and nfgenmsg in n->buf. */
static struct nlmsghdr *
rq_start(struct fd_setio *n, uint16_t type, uint16_t flags, uint8_t nfproto)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(n->buf);
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
 * Sends the request in n->buf and runs `cb` on its answers until the
 * acknowledgement or the dump's end.  0 or -errno (-EINTR: a dump the set
 * changed under; -ETIMEDOUT: no answer).
 */
static int
rq_run(struct fd_setio *n, mnl_cb_t cb, void *data)
{
	const struct nlmsghdr *req = (const struct nlmsghdr *)n->buf;
	uint32_t seq = req->nlmsg_seq, portid = mnl_socket_get_portid(n->rq);
	ssize_t len;
	int rc;

	if (mnl_socket_sendto(n->rq, req, req->nlmsg_len) < 0)
		return -errno;
	do {
		len = mnl_socket_recvfrom(n->rq, n->buf, RQ_BUF);
		if (len < 0)
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		rc = mnl_cb_run(n->buf, (size_t)len, seq, portid, cb, data);
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
set_info(struct fd_setio *n, uint8_t nfproto, const char *table, const char *set,
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
fd_setio_get(struct fd_setio *n, struct fd_setio_set *s, char *why, size_t len)
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

struct names {
	void (*each)(void *arg, const char *name);
	void *arg;
};

static int
names_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct names *nm = data;
	const struct nlattr *a;

	if (NFNL_MSG_TYPE(nlh->nlmsg_type) != NFT_MSG_NEWSET)
		return MNL_CB_OK;
	mnl_attr_for_each(a, nlh, sizeof(struct nfgenmsg))
		if (mnl_attr_get_type(a) == NFTA_SET_NAME &&
		    mnl_attr_validate(a, MNL_TYPE_NUL_STRING) == 0 &&
		    mnl_attr_get_payload_len(a) <= FD_SETIO_NAME_MAX)
			nm->each(nm->arg, mnl_attr_get_str(a));
	return MNL_CB_OK;
}

int
fd_setio_sets(struct fd_setio *n, uint8_t nfproto, const char *table,
	      void (*each)(void *arg, const char *name), void *arg)
{
	struct nlmsghdr *nlh = rq_start(n, NFT_MSG_GETSET, NLM_F_DUMP, nfproto);
	struct names nm = { .each = each, .arg = arg };

	mnl_attr_put_strz(nlh, NFTA_SET_TABLE, table);
	return rq_run(n, names_cb, &nm);
}

static int
dump_cb(const struct nlmsghdr *nlh, void *data)
{
	if (NFNL_MSG_TYPE(nlh->nlmsg_type) == NFT_MSG_NEWSETELEM &&
	    fd_setelem_gather(nlh, data) == -ENOMEM)
		return MNL_CB_ERROR;	/* errno is ENOMEM */
	return MNL_CB_OK;
}

/*
 * The set's elements gathered into acc by a GETSETELEM dump, started
 * again when the set changed under it.  0 or -errno.
 */
static int
set_dump(struct fd_setio *n, const struct fd_setio_set *s, struct fd_setelem_acc *acc)
{
	int rc = 0;

	for (int tries = 0; tries < 3; tries++) {
		struct nlmsghdr *nlh = rq_start(n, NFT_MSG_GETSETELEM, NLM_F_DUMP, s->nfproto);

		mnl_attr_put_strz(nlh, NFTA_SET_ELEM_LIST_TABLE, s->table);
		mnl_attr_put_strz(nlh, NFTA_SET_ELEM_LIST_SET, s->name);
		acc->n = acc->bad = 0;
		acc->expiring = false;
		rc = rq_run(n, dump_cb, acc);
		if (rc != -EINTR)
			break;
	}
	return rc;
}

long
fd_setio_read(struct fd_setio *n, const struct fd_setio_set *s, struct fc_list *out,
	      int64_t *expires_ms)
{
	struct fd_setelem_acc acc = { .family = s->family, .interval = s->interval };
	int rc = set_dump(n, s, &acc);
	long bad;

	if (expires_ms)
		*expires_ms = -1;
	if (rc == 0 && expires_ms && acc.expiring)
		*expires_ms = acc.expires_ms > INT64_MAX ? INT64_MAX : (int64_t)acc.expires_ms;
	bad = rc == 0 ? fd_setelem_ranges(&acc, true, out) : rc;
	fd_setelem_acc_free(&acc);
	fc_list_canon(out);
	return bad;
}

long
fd_setio_read_timed(struct fd_setio *n, const struct fd_setio_set *s,
		    struct fd_setelem_timed_list *out)
{
	struct fd_setelem_acc acc = { .family = s->family, .interval = s->interval };
	int rc = set_dump(n, s, &acc);
	long bad = rc == 0 ? fd_setelem_ranges_timed(&acc, true, out) : rc;

	fd_setelem_acc_free(&acc);
	return bad;
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

int
fd_setio_handles(struct fd_setio *n, uint64_t h[5])
{
	struct nlmsghdr *nlh = rq_start(n, NFT_MSG_GETTABLE, NLM_F_ACK, NFPROTO_INET);
	int rc;

	memset(h, 0, 5 * sizeof(h[0]));
	mnl_attr_put_strz(nlh, NFTA_TABLE_NAME, FC_NFT_TABLE);
	rc = rq_run(n, table_cb, &h[4]);
	for (unsigned int i = 0; i < 4 && rc == 0; i++) {
		struct setinfo si;

		rc = set_info(n, NFPROTO_INET, FC_NFT_TABLE, list_sets[i], &si);
		h[i] = si.handle;
	}
	return rc;
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
			rc = fd_setelem_put(b, op, NFPROTO_INET, FC_NFT_TABLE, list_sets[i], !single,
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
batch_send(struct fd_setio *n, const struct fd_setelem_batch *b)
{
	int size = b->len < (size_t)INT32_MAX / 2 ? (int)b->len + 4096 : INT32_MAX / 2, first = 0;

	if (setsockopt(mnl_socket_get_fd(n->rq), SOL_SOCKET, SO_SNDBUFFORCE, &size,
		       sizeof(size)) != 0)
		(void)setsockopt(mnl_socket_get_fd(n->rq), SOL_SOCKET, SO_SNDBUF, &size,
				 sizeof(size));
	if (mnl_socket_sendto(n->rq, b->buf, b->len) < 0)
		return -errno;
	for (;;) {
		ssize_t len = mnl_socket_recvfrom(n->rq, n->buf, RQ_BUF);
		const struct nlmsghdr *nlh = (const struct nlmsghdr *)n->buf;
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
fd_setio_lists_apply(struct fd_setio *n, const struct fc_list *del, const struct fc_list *add,
		   bool fill)
{
	struct fd_setelem_batch b = { 0 };
	int rc = fd_setelem_batch_begin(&b, n->seq + 1);

	for (unsigned int i = 0; fill && rc == 0 && i < 4; i++)
		rc = fd_setelem_put(&b, NFT_MSG_DELSETELEM, NFPROTO_INET, FC_NFT_TABLE, list_sets[i],
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
