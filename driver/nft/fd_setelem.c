/* SPDX-License-Identifier: BSD-3-Clause */
/* fd_setelem: see fd_setelem.h. */
#include "fd_setelem.h"

#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <libmnl/libmnl.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>

#include <flowcut/fc_grow.h>

#define ELEMS_PER_MSG 1024	/* at most 48 bytes each: the nest stays under 64 KiB */
#define MSG_ROOM (72 * 1024)	/* one element message at most, headers and names included */
#define UDATA_FLAGS 1		/* nft's NFTNL_UDATA_SET_ELEM_FLAGS: a u32 */
#define UDATA_OPEN 0x1		/* ... NFTNL_SET_ELEM_F_INTERVAL_OPEN */

static unsigned int
alen(uint8_t family)
{
	return family == 4 ? 4 : 16;
}

/* ---- reading ---- */

struct head {
	const char *table, *set;
	const struct nlattr *elems;
};

static int
head_attr(const struct nlattr *a, void *data)
{
	struct head *h = data;

	switch (mnl_attr_get_type(a)) {
	case NFTA_SET_ELEM_LIST_TABLE:
		if (mnl_attr_validate(a, MNL_TYPE_NUL_STRING) == 0)
			h->table = mnl_attr_get_str(a);
		break;
	case NFTA_SET_ELEM_LIST_SET:
		if (mnl_attr_validate(a, MNL_TYPE_NUL_STRING) == 0)
			h->set = mnl_attr_get_str(a);
		break;
	case NFTA_SET_ELEM_LIST_ELEMENTS:
		if (mnl_attr_validate(a, MNL_TYPE_NESTED) == 0)
			h->elems = a;
		break;
	}
	return MNL_CB_OK;
}

/* An element message's header and top attributes: 0 or -EINVAL. */
static int
head_parse(const struct nlmsghdr *nlh, uint8_t *nfproto, struct head *h)
{
	const struct nfgenmsg *nfg;
	uint8_t type = NFNL_MSG_TYPE(nlh->nlmsg_type);

	memset(h, 0, sizeof(*h));
	if (nlh->nlmsg_len < sizeof(*nlh) || NFNL_SUBSYS_ID(nlh->nlmsg_type) != NFNL_SUBSYS_NFTABLES ||
	    (type != NFT_MSG_NEWSETELEM && type != NFT_MSG_DELSETELEM) ||
	    mnl_nlmsg_get_payload_len(nlh) < sizeof(*nfg))
		return -EINVAL;
	nfg = mnl_nlmsg_get_payload(nlh);
	*nfproto = nfg->nfgen_family;
	if (mnl_attr_parse(nlh, sizeof(*nfg), head_attr, h) < 0 || h->table == NULL ||
	    h->set == NULL)
		return -EINVAL;
	return 0;
}

int
fd_setelem_head(const struct nlmsghdr *nlh, uint8_t *nfproto, const char **table,
		const char **set)
{
	struct head h;

	if (head_parse(nlh, nfproto, &h) != 0)
		return -EINVAL;
	*table = h.table;
	*set = h.set;
	return 0;
}

/* One element's attributes. */
struct elem {
	const struct nlattr *key, *key_end, *flags, *udata, *expiration;
	bool bad_expiration;	/* there, but not a u64 */
};

static int
elem_attr(const struct nlattr *a, void *data)
{
	struct elem *e = data;

	switch (mnl_attr_get_type(a)) {
	case NFTA_SET_ELEM_KEY:
		if (mnl_attr_validate(a, MNL_TYPE_NESTED) == 0)
			e->key = a;
		break;
	case NFTA_SET_ELEM_KEY_END:
		if (mnl_attr_validate(a, MNL_TYPE_NESTED) == 0)
			e->key_end = a;
		break;
	case NFTA_SET_ELEM_FLAGS:
		if (mnl_attr_validate(a, MNL_TYPE_U32) == 0)
			e->flags = a;
		break;
	case NFTA_SET_ELEM_USERDATA:
		e->udata = a;
		break;
	case NFTA_SET_ELEM_EXPIRATION:
		if (mnl_attr_validate(a, MNL_TYPE_U64) == 0)
			e->expiration = a;
		else
			e->bad_expiration = true;
		break;
	}
	return MNL_CB_OK;
}

/* A key's NFTA_DATA_VALUE of exactly n bytes into out: 0 or -EINVAL. */
static int
key_value(const struct nlattr *key, unsigned int n, uint8_t out[16])
{
	const struct nlattr *a;

	memset(out, 0, 16);
	mnl_attr_for_each_nested(a, key)
		if (mnl_attr_get_type(a) == NFTA_DATA_VALUE) {
			if (mnl_attr_get_payload_len(a) != n)
				return -EINVAL;
			memcpy(out, mnl_attr_get_payload(a), n);
			return 0;
		}
	return -EINVAL;
}

/* nft's user data: is the element's "open" flag set (a range to the last address)? */
static bool
udata_open(const struct nlattr *udata)
{
	const uint8_t *p, *end;

	if (udata == NULL)
		return false;
	p = mnl_attr_get_payload(udata);
	end = p + mnl_attr_get_payload_len(udata);
	while (end - p >= 2 && end - p - 2 >= p[1]) {
		if (p[0] == UDATA_FLAGS && p[1] == 4) {
			uint32_t f;

			memcpy(&f, p + 2, 4);	/* nft writes it in host order */
			return f & UDATA_OPEN;
		}
		p += 2 + p[1];
	}
	return false;
}

/* One element as an item, its expiration with it: 0, or -EINVAL (it cannot be read). */
static int
item_read(const struct nlattr *le, const struct fd_setelem_acc *acc, struct fd_setelem_item *it)
{
	struct elem e = { 0 };
	unsigned int n = alen(acc->family);
	uint32_t flags;

	if (mnl_attr_get_type(le) != NFTA_LIST_ELEM ||
	    mnl_attr_validate(le, MNL_TYPE_NESTED) != 0 ||
	    mnl_attr_parse_nested(le, elem_attr, &e) < 0 || e.key == NULL || e.bad_expiration)
		return -EINVAL;
	it->expires_ms = -1;
	if (e.expiration) {
		uint64_t ms = be64toh(mnl_attr_get_u64(e.expiration));

		it->expires_ms = ms > INT64_MAX ? INT64_MAX : (int64_t)ms;
	}
	flags = e.flags ? ntohl(mnl_attr_get_u32(e.flags)) : 0;
	if ((flags & NFT_SET_ELEM_CATCHALL) || key_value(e.key, n, it->key) != 0)
		return -EINVAL;
	if (e.key_end) {
		if (key_value(e.key_end, n, it->last) != 0 || memcmp(it->key, it->last, 16) > 0)
			return -EINVAL;
		it->kind = FD_SETELEM_RANGE;
	} else if (flags & NFT_SET_ELEM_INTERVAL_END) {
		if (!acc->interval)
			return -EINVAL;
		it->kind = FD_SETELEM_END;
	} else {
		it->kind = acc->interval && udata_open(e.udata) ? FD_SETELEM_OPEN : FD_SETELEM_START;
	}
	return 0;
}

static int
acc_push(struct fd_setelem_acc *acc, const struct fd_setelem_item *it)
{
	struct fd_setelem_item *a = fc_grow(acc->it, &acc->cap, acc->n, sizeof(*a), 64);

	if (a == NULL)
		return -ENOMEM;
	acc->it = a;
	acc->it[acc->n++] = *it;
	return 0;
}

int
fd_setelem_gather(const struct nlmsghdr *nlh, struct fd_setelem_acc *acc)
{
	const struct nlattr *le;
	uint8_t nfproto;
	struct head h;

	if (head_parse(nlh, &nfproto, &h) != 0 || h.elems == NULL)
		return -EINVAL;
	mnl_attr_for_each_nested(le, h.elems) {
		struct fd_setelem_item it;

		if (item_read(le, acc, &it) != 0) {
			acc->bad++;
			continue;
		}
		if (acc_push(acc, &it) != 0)
			return -ENOMEM;
		if (it.expires_ms >= 0 &&
		    (!acc->expiring || (uint64_t)it.expires_ms < acc->expires_ms)) {
			acc->expiring = true;
			acc->expires_ms = (uint64_t)it.expires_ms;
		}
	}
	return 0;
}

/* Sorted by key; at one key an end first (it closes the range below). */
static int
item_cmp(const void *a, const void *b)
{
	const struct fd_setelem_item *x = a, *y = b;
	int c = memcmp(x->key, y->key, 16);

	if (c != 0)
		return c;
	return (x->kind != FD_SETELEM_END) - (y->kind != FD_SETELEM_END);
}

/* Where a paired range goes: fn(arg, family, first, last, its expiry), 0 or -ENOMEM. */
typedef int range_fn(void *arg, uint8_t family, const uint8_t *lo, const uint8_t *hi,
		     int64_t expires_ms);

static int
range_put(void *arg, uint8_t family, const uint8_t *lo, const uint8_t *hi, int64_t expires_ms)
{
	struct fc_range r = { .family = family };

	(void)expires_ms;
	memcpy(r.lo, lo, 16);
	memcpy(r.hi, hi, 16);
	return fc_list_add(arg, &r);
}

static int
timed_put(void *arg, uint8_t family, const uint8_t *lo, const uint8_t *hi, int64_t expires_ms)
{
	struct fd_setelem_timed_list *l = arg;
	struct fd_setelem_timed *t;

	t = fc_grow(l->t, &l->cap, l->n, sizeof(*t), 16);
	if (t == NULL)
		return -ENOMEM;
	l->t = t;
	t = &l->t[l->n++];
	memset(t, 0, sizeof(*t));
	t->r.family = family;
	memcpy(t->r.lo, lo, 16);
	memcpy(t->r.hi, hi, 16);
	t->expires_ms = expires_ms;
	return 0;
}

/* key - 1 (key is not 0), n bytes big-endian. */
static void
before(const uint8_t *key, unsigned int n, uint8_t out[16])
{
	memcpy(out, key, 16);
	for (int i = (int)n - 1; i >= 0 && out[i]-- == 0; i--)
		;
}

static bool
is_zero(const uint8_t *k)
{
	static const uint8_t zero[16];

	return memcmp(k, zero, 16) == 0;
}

/* fd_setelem_ranges' pairing, each range handed to fn. */
static long
pair(struct fd_setelem_acc *acc, bool whole, range_fn *fn, void *arg)
{
	unsigned int n = alen(acc->family);
	const struct fd_setelem_item *pending = NULL;
	uint8_t top[16] = { 0 }, hi[16];
	long bad = (long)acc->bad;
	int rc = 0;

	memset(top, 0xff, n);
	if (acc->n > 1)
		qsort(acc->it, acc->n, sizeof(acc->it[0]), item_cmp);
	for (size_t i = 0; i < acc->n && rc == 0; i++) {
		const struct fd_setelem_item *it = &acc->it[i];

		switch (it->kind) {
		case FD_SETELEM_RANGE:
			rc = fn(arg, acc->family, it->key, it->last, it->expires_ms);
			break;
		case FD_SETELEM_START:
		case FD_SETELEM_OPEN:
			if (!acc->interval) {
				rc = fn(arg, acc->family, it->key, it->key, it->expires_ms);
				break;
			}
			if (pending != NULL)
				bad++;	/* a start with another start before its end */
			pending = it;
			break;
		default:	/* FD_SETELEM_END */
			if (pending != NULL) {
				before(it->key, n, hi);
				rc = fn(arg, acc->family, pending->key, hi,
					pending->expires_ms >= 0 ? pending->expires_ms
								 : it->expires_ms);
				pending = NULL;
			} else if (!whole && !is_zero(it->key)) {
				bad++;	/* its start is not among these */
			}
			break;
		}
	}
	if (rc == 0 && pending != NULL) {
		if (whole || pending->kind == FD_SETELEM_OPEN)
			rc = fn(arg, acc->family, pending->key, top, pending->expires_ms);
		else
			bad++;
	}
	acc->n = 0;
	acc->bad = 0;
	acc->expiring = false;
	acc->expires_ms = 0;
	return rc != 0 ? rc : bad;
}

long
fd_setelem_ranges(struct fd_setelem_acc *acc, bool whole, struct fc_list *out)
{
	return pair(acc, whole, range_put, out);
}

long
fd_setelem_ranges_timed(struct fd_setelem_acc *acc, bool whole,
			struct fd_setelem_timed_list *out)
{
	return pair(acc, whole, timed_put, out);
}

void
fd_setelem_timed_free(struct fd_setelem_timed_list *l)
{
	free(l->t);
	memset(l, 0, sizeof(*l));
}

void
fd_setelem_acc_free(struct fd_setelem_acc *acc)
{
	free(acc->it);
	acc->it = NULL;
	acc->n = acc->cap = 0;
	acc->bad = 0;
	acc->expiring = false;
	acc->expires_ms = 0;
}

/* ---- writing ---- */

static int
room(struct fd_setelem_batch *b, size_t need)
{
	if (b->cap - b->len < need) {
		size_t cap = b->cap ? b->cap : 256 * 1024;
		char *n;

		while (cap - b->len < need)
			cap *= 2;
		n = realloc(b->buf, cap);
		if (n == NULL)
			return -ENOMEM;
		b->buf = n;
		b->cap = cap;
	}
	return 0;
}

/* A message's header and nfgenmsg at the batch's end. */
static struct nlmsghdr *
msg_start(struct fd_setelem_batch *b, uint16_t type, uint16_t flags, uint8_t family, uint16_t res)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(b->buf + b->len);
	struct nfgenmsg *nfg;

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	nlh->nlmsg_seq = b->seq++;
	nfg = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfg));
	nfg->nfgen_family = family;
	nfg->version = NFNETLINK_V0;
	nfg->res_id = htons(res);
	return nlh;
}

static int
batch_mark(struct fd_setelem_batch *b, uint16_t type)
{
	struct nlmsghdr *nlh;

	if (room(b, 64) != 0)
		return -ENOMEM;
	nlh = msg_start(b, type, 0, AF_UNSPEC, NFNL_SUBSYS_NFTABLES);
	b->len += nlh->nlmsg_len;
	return 0;
}

int
fd_setelem_batch_begin(struct fd_setelem_batch *b, uint32_t seq)
{
	b->len = 0;
	b->msgs = 0;
	b->seq = seq;
	b->begin_seq = seq;
	return batch_mark(b, NFNL_MSG_BATCH_BEGIN);
}

int
fd_setelem_batch_end(struct fd_setelem_batch *b)
{
	if (b->msgs > 0)
		((struct nlmsghdr *)(b->buf + b->last_off))->nlmsg_flags |= NLM_F_ACK;
	return batch_mark(b, NFNL_MSG_BATCH_END);
}

void
fd_setelem_batch_free(struct fd_setelem_batch *b)
{
	free(b->buf);
	memset(b, 0, sizeof(*b));
}

/* One element: its key, and INTERVAL_END or the open mark. */
static void
elem_put(struct nlmsghdr *nlh, const uint8_t *key, unsigned int n, bool end, bool open)
{
	struct nlattr *le = mnl_attr_nest_start(nlh, NFTA_LIST_ELEM), *k;

	k = mnl_attr_nest_start(nlh, NFTA_SET_ELEM_KEY);
	mnl_attr_put(nlh, NFTA_DATA_VALUE, n, key);
	mnl_attr_nest_end(nlh, k);
	if (end)
		mnl_attr_put_u32(nlh, NFTA_SET_ELEM_FLAGS, htonl(NFT_SET_ELEM_INTERVAL_END));
	if (open) {
		uint8_t ud[6] = { UDATA_FLAGS, 4 };
		uint32_t f = UDATA_OPEN;

		memcpy(ud + 2, &f, 4);
		mnl_attr_put(nlh, NFTA_SET_ELEM_USERDATA, sizeof(ud), ud);
	}
	mnl_attr_nest_end(nlh, le);
}

/* hi + 1 into out, n bytes big-endian; false when hi is the last address. */
static bool
after(const uint8_t *hi, unsigned int n, uint8_t out[16])
{
	int i;

	memcpy(out, hi, 16);
	for (i = (int)n - 1; i >= 0 && ++out[i] == 0; i--)
		;
	return i >= 0;
}

/* One message's worth of ranges from r[*i]; returns the message. */
static struct nlmsghdr *
msg_put(struct fd_setelem_batch *b, uint16_t op, uint8_t nfproto, const char *table,
	const char *set, bool interval, const struct fc_range *r, size_t n, size_t *i)
{
	struct nlmsghdr *nlh = msg_start(b, (NFNL_SUBSYS_NFTABLES << 8) | op,
					 op == NFT_MSG_NEWSETELEM ? NLM_F_CREATE : 0, nfproto, 0);
	struct nlattr *list;
	unsigned int elems = 0;

	mnl_attr_put_strz(nlh, NFTA_SET_ELEM_LIST_TABLE, table);
	mnl_attr_put_strz(nlh, NFTA_SET_ELEM_LIST_SET, set);
	if (n == 0)
		return nlh;	/* DELSETELEM without elements: the set emptied */
	list = mnl_attr_nest_start(nlh, NFTA_SET_ELEM_LIST_ELEMENTS);
	for (; *i < n && elems + 2 <= ELEMS_PER_MSG; (*i)++) {
		unsigned int k = alen(r[*i].family);
		uint8_t end[16];

		if (!interval) {
			elem_put(nlh, r[*i].lo, k, false, false);
			elems++;
		} else if (after(r[*i].hi, k, end)) {
			elem_put(nlh, r[*i].lo, k, false, false);
			elem_put(nlh, end, k, true, false);
			elems += 2;
		} else {
			elem_put(nlh, r[*i].lo, k, false, true);	/* to the last address */
			elems++;
		}
	}
	mnl_attr_nest_end(nlh, list);
	return nlh;
}

int
fd_setelem_put(struct fd_setelem_batch *b, uint16_t op, uint8_t nfproto, const char *table,
	       const char *set, bool interval, const struct fc_range *r, size_t n)
{
	size_t i = 0, len0 = b->len;
	uint32_t seq0 = b->seq, last_seq0 = b->last_seq;
	size_t last_off0 = b->last_off;
	unsigned int msgs0 = b->msgs;

	if ((op != NFT_MSG_NEWSETELEM && op != NFT_MSG_DELSETELEM) ||
	    (n == 0 && op != NFT_MSG_DELSETELEM) || strlen(table) >= NFT_TABLE_MAXNAMELEN ||
	    strlen(set) >= NFT_SET_MAXNAMELEN)
		return -EINVAL;
	for (size_t j = 0; j < n; j++)
		if ((r[j].family != 4 && r[j].family != 6) || r[j].family != r[0].family ||
		    memcmp(r[j].lo, r[j].hi, 16) > 0 ||
		    (!interval && memcmp(r[j].lo, r[j].hi, 16) != 0))
			return -EINVAL;
	do {
		struct nlmsghdr *nlh;

		if (room(b, MSG_ROOM) != 0) {
			b->len = len0, b->seq = seq0, b->last_seq = last_seq0;
			b->last_off = last_off0, b->msgs = msgs0;
			return -ENOMEM;
		}
		b->last_off = b->len;
		nlh = msg_put(b, op, nfproto, table, set, interval, r, n, &i);
		b->last_seq = nlh->nlmsg_seq;
		b->len += nlh->nlmsg_len;
		b->msgs++;
	} while (i < n);
	return 0;
}
