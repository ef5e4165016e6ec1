/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_nft: see fd_nft.h.  The table through libnftables, events through
 * libmnl (elements: fd_setelem), requests on sets through fd_setio.
 */
#include "fd_nft.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <netinet/in.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <nftables/libnftables.h>

#include "fc_list.h"
#include "fd_clock.h"
#include "fd_setelem.h"
#include "fd_setio.h"
#include "fd_tuple.h"

/* the longest element timeout kept as is (nftables' own bound is about 49 days) */
#define FD_NFT_EXPIRES_MAX_MS (10ll * 365 * 24 * 3600 * 1000)

#define EVENTS_RCVBUF (16 << 20)	/* about 100,000 element notifications */

/* the cut sets, as fd_setio reads them */
static const struct fd_setio_set cut_sets[2] = {
	{ .nfproto = NFPROTO_INET, .table = FC_NFT_TABLE, .name = FC_NFT_CUT4, .family = 4,
	  .interval = true },
	{ .nfproto = NFPROTO_INET, .table = FC_NFT_TABLE, .name = FC_NFT_CUT6, .family = 6,
	  .interval = true },
};

static const char *const list_sets[4] = { FC_NFT_LIST4, FC_NFT_LIST6, FC_NFT_LISTNET4,
					  FC_NFT_LISTNET6 };

/* A followed set and the elements added to it in the transaction being read. */
struct followed {
	struct fd_setio_set s;
	struct fd_setelem_acc acc;
	uint64_t due_ms;	/* the soonest expiry added (CLOCK_MONOTONIC), until taken; 0 none */
	struct fc_list added;	/* what it added, until fd_nft_followed_added takes it */
};

struct fd_nft {
	struct nft_ctx *nft;
	struct mnl_socket *nl;	/* the events */
	struct fd_setio *io;	/* requests: sets looked up, read, the list sets written */
	uint32_t mark_bit;
	/* the transaction being read, until its NEWGEN */
	bool other;		/* a message not about the cut sets' elements */
	bool cut_added;		/* NEWSETELEM on cut4 or cut6 */
	struct fd_setelem_acc cut_acc[2];	/* ... their elements (cut4, cut6) */
	struct fc_list cut_new;	/* what others added to the cut sets, committed, until taken */
	bool cut_reread;	/* some of it could not be read: read the sets whole */
	/* conn4/conn6 elements queued (fd_nft_block), as nft commands */
	char *block;
	size_t block_len, block_cap;
	unsigned int nblock;
	bool fol_touched;	/* NEWSETELEM on a followed set */
	/* the followed sets */
	struct followed *fol;
	unsigned int nfol;
	struct fc_list added;	/* committed additions, until taken */
	bool reread;		/* some could not be read: read them whole */
	/* the list sets' handles and their table's, to know them made anew */
	uint64_t list_handle[5];
	bool lists_lost;
	struct fc_list never;	/* never_cut4/never_cut6's, as fd_nft_never was last given */
	bool never_given;	/* so: put in with the table (before: a flowcutd before's kept) */
	/*
	 * The cut sets as last read, to put back when the table is made anew
	 * (fd_nft.h, 8): each range (its family says its set), when it expires.
	 */
	struct kept_cut {
		struct fc_range r;
		uint64_t deadline_ms;	/* CLOCK_MONOTONIC; 0: no timeout */
	} *kept;
	size_t nkept;
	uint64_t next_due_ms;	/* the earliest deadline kept, 0: none (fd_nft_cut_expired) */
	uint64_t expiry_look_ms;	/* when the sets were last read for an expiry */
	bool cut_changed;	/* NEWSETELEM or DELSETELEM on a cut set, anyone's */
	bool removed;		/* DELSETELEM on a cut set or a followed set (FD_NFT_UNCUT) */
	bool keep_stale;	/* so: read the cut sets into `kept` again */
};

static void cut_keep_restore(struct fd_nft *n);
static int never_put(struct fd_nft *n);
static void cut_keep_read(struct fd_nft *n);

/*
 * The handles of the table and its list sets: when one changed, the sets
 * are new and empty.  0 or -EIO.
 */
static int
list_handles(struct fd_nft *n)
{
	uint64_t h[5];
	int rc = fd_setio_handles(n->io, h);

	if (rc != 0) {
		fprintf(stderr, "flowcutd: nftables: table " FC_NFT_TABLE_NAME "'s list sets: %s\n",
			strerror(-rc));
		return -EIO;
	}
	if (memcmp(h, n->list_handle, sizeof(h)) != 0) {
		n->lists_lost = true;
		cut_keep_restore(n);	/* the cut sets are new too */
	}
	memcpy(n->list_handle, h, sizeof(h));
	return 0;
}

/* the template's commands, on the table's names (<flowcut/fc_nft.h>) */
#define SET "add set " FC_NFT_TABLE_NAME " "
#define RULE "add rule " FC_NFT_TABLE_NAME " seen "

static int
table_install(struct fd_nft *n)
{
	char cmd[4096];
	int rc;

	/* the cut and list sets' members dropped both ways, before the mark is set */
	snprintf(cmd, sizeof(cmd),
		 "add table " FC_NFT_TABLE_NAME "\n"
		 SET FC_NFT_CUT4 " { type ipv4_addr; flags interval, timeout; auto-merge; }\n"
		 SET FC_NFT_CUT6 " { type ipv6_addr; flags interval, timeout; auto-merge; }\n"
		 SET FC_NFT_CONN4 " { type ipv4_addr . inet_proto . inet_service . ipv4_addr . "
		 "inet_service; flags timeout; }\n"
		 SET FC_NFT_CONN6 " { type ipv6_addr . inet_proto . inet_service . ipv6_addr . "
		 "inet_service; flags timeout; }\n"
		 SET FC_NFT_LIST4 " { type ipv4_addr; }\n"
		 SET FC_NFT_LIST6 " { type ipv6_addr; }\n"
		 SET FC_NFT_LISTNET4 " { type ipv4_addr; flags interval; }\n"
		 SET FC_NFT_LISTNET6 " { type ipv6_addr; flags interval; }\n"
		 SET FC_NFT_NEVER4 " { type ipv4_addr; flags interval; }\n"
		 SET FC_NFT_NEVER6 " { type ipv6_addr; flags interval; }\n"
		 "add chain " FC_NFT_TABLE_NAME " seen { type filter hook forward priority 100; "
		 "policy accept; }\n"
		 "flush chain " FC_NFT_TABLE_NAME " seen\n"
		 /* never cut: accepted, and marked as the host's rules accepted it, first */
		 RULE "ip saddr @" FC_NFT_NEVER4 " ct mark set ct mark or 0x%08x accept\n"
		 RULE "ip daddr @" FC_NFT_NEVER4 " ct mark set ct mark or 0x%08x accept\n"
		 RULE "ip6 saddr @" FC_NFT_NEVER6 " ct mark set ct mark or 0x%08x accept\n"
		 RULE "ip6 daddr @" FC_NFT_NEVER6 " ct mark set ct mark or 0x%08x accept\n"
		 RULE "ip saddr @" FC_NFT_CUT4 " drop\n"
		 RULE "ip daddr @" FC_NFT_CUT4 " drop\n"
		 RULE "ip6 saddr @" FC_NFT_CUT6 " drop\n"
		 RULE "ip6 daddr @" FC_NFT_CUT6 " drop\n"
		 RULE "ip saddr . meta l4proto . th sport . ip daddr . th dport @" FC_NFT_CONN4
		 " drop\n"
		 RULE "ip6 saddr . meta l4proto . th sport . ip6 daddr . th dport @" FC_NFT_CONN6
		 " drop\n"
		 RULE "ip saddr @" FC_NFT_LIST4 " drop\n"
		 RULE "ip daddr @" FC_NFT_LIST4 " drop\n"
		 RULE "ip6 saddr @" FC_NFT_LIST6 " drop\n"
		 RULE "ip6 daddr @" FC_NFT_LIST6 " drop\n"
		 RULE "ip saddr @" FC_NFT_LISTNET4 " drop\n"
		 RULE "ip daddr @" FC_NFT_LISTNET4 " drop\n"
		 RULE "ip6 saddr @" FC_NFT_LISTNET6 " drop\n"
		 RULE "ip6 daddr @" FC_NFT_LISTNET6 " drop\n"
		 RULE "ct mark set ct mark or 0x%08x\n", n->mark_bit, n->mark_bit, n->mark_bit,
		 n->mark_bit, n->mark_bit);
#undef SET
#undef RULE
	rc = nft_run_cmd_from_buffer(n->nft, cmd);
	if (rc != 0)
		fprintf(stderr, "flowcutd: nftables: installing table " FC_NFT_TABLE_NAME
			" failed: %s\n", nft_ctx_get_error_buffer(n->nft));
	if (rc != 0)
		return -EIO;
	if (n->never_given)
		(void)never_put(n);	/* said */
	return list_handles(n);
}

/* never_cut4/never_cut6 flushed and filled with n->never, one transaction: 0 or -EIO (said). */
static int
never_put(struct fd_nft *n)
{
	char *cmd = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&cmd, &len);
	int rc;

	if (f == NULL) {
		fprintf(stderr, "flowcutd: nftables: never_cut's sets not written: %s\n",
			strerror(errno));
		return -EIO;
	}
	fprintf(f, "flush set " FC_NFT_TABLE_NAME " " FC_NFT_NEVER4 "\n"
		"flush set " FC_NFT_TABLE_NAME " " FC_NFT_NEVER6 "\n");
	for (size_t i = 0; i < n->never.n; i++) {
		char elem[100];

		fprintf(f, "add element " FC_NFT_TABLE_NAME " %s { %s }\n",
			n->never.r[i].family == 4 ? FC_NFT_NEVER4 : FC_NFT_NEVER6,
			fc_range_format(&n->never.r[i], elem, sizeof(elem)));
	}
	if (fclose(f) != 0 || cmd == NULL) {
		fprintf(stderr, "flowcutd: nftables: never_cut's sets not written: no memory\n");
		free(cmd);
		return -EIO;
	}
	rc = nft_run_cmd_from_buffer(n->nft, cmd);
	if (rc != 0)
		fprintf(stderr, "flowcutd: nftables: never_cut's sets (%zu ranges) not written: %s",
			n->never.n, nft_ctx_get_error_buffer(n->nft));
	free(cmd);
	return rc != 0 ? -EIO : 0;
}

int
fd_nft_never(struct fd_nft *n, const struct fc_list *l)
{
	struct fc_list copy = { 0 }, before = n->never;

	for (size_t i = 0; i < l->n; i++)
		if (fc_list_add(&copy, &l->r[i]) != 0) {
			fc_list_free(&copy);
			return -ENOMEM;
		}
	n->never = copy;
	n->never_given = true;
	if (never_put(n) != 0) {
		n->never = before;	/* what the sets still hold */
		fc_list_free(&copy);
		return -EIO;
	}
	fc_list_free(&before);
	return 0;
}

struct fd_nft *
fd_nft_open(uint32_t mark_bit)
{
	struct fd_nft *n = calloc(1, sizeof(*n));
	int group = NFNLGRP_NFTABLES, rcvbuf = EVENTS_RCVBUF;

	if (n == NULL)
		return NULL;
	n->mark_bit = mark_bit;
	n->io = fd_setio_open();
	if (n->io == NULL)
		goto fail;
	for (int i = 0; i < 2; i++)
		n->cut_acc[i] = (struct fd_setelem_acc){ .family = cut_sets[i].family,
							 .interval = true };
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
	cut_keep_read(n);	/* a flowcutd before may have left it, holding cuts */
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
	/* the table stays: what it drops stays dropped (fd_nft.h, 7) */
	free(n->block);
	free(n->kept);
	for (int i = 0; i < 2; i++)
		fd_setelem_acc_free(&n->cut_acc[i]);
	fc_list_free(&n->cut_new);
	fc_list_free(&n->never);
	if (n->nft)
		nft_ctx_free(n->nft);
	if (n->nl)
		mnl_socket_close(n->nl);
	fd_setio_close(n->io);
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
	if (nfproto != NFPROTO_INET || strcmp(table, FC_NFT_TABLE) != 0)
		return false;
	for (unsigned int i = 0; i < 4; i++)
		if (strcmp(set, list_sets[i]) == 0)
			return true;
	return strcmp(set, FC_NFT_CUT4) == 0 || strcmp(set, FC_NFT_CUT6) == 0;
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
		if (strcmp(set, FC_NFT_CUT4) == 0 || strcmp(set, FC_NFT_CUT6) == 0) {
			struct fd_setelem_acc *acc = &n->cut_acc[strcmp(set, FC_NFT_CUT6) == 0];

			n->cut_changed = true;
			if (type == NFT_MSG_NEWSETELEM) {
				n->cut_added = true;
				if (fd_setelem_gather(nlh, acc) == -ENOMEM)
					acc->bad++;	/* not all of it: read whole */
			} else {
				n->removed = true;
			}
		}
	} else if ((f = followed_find(n, nfproto, table, set)) != NULL) {
		if (type == NFT_MSG_DELSETELEM)
			n->removed = true;
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
		if (f->acc.expiring) {	/* as of now: the kernel said it at the commit */
			uint64_t due = fd_clock_ms() + f->acc.expires_ms;

			if (f->due_ms == 0 || due < f->due_ms)
				f->due_ms = due;
		}
		bad = fd_setelem_ranges(&f->acc, false, &n->added);
		if (bad != 0)
			n->reread = true;
		for (size_t k = before; k < n->added.n; k++)	/* this set's, for fd_why */
			if (fc_list_add(&f->added, &n->added.r[k]) != 0)
				n->reread = true;
		any |= bad != 0 || n->added.n > before;
	}
	n->fol_touched = false;
	return any;
}

/*
 * A transaction committed: what it added to the cut sets, paired, kept
 * for fd_nft_cut_take when another process committed it (flowcutd's own,
 * the sets put back, cuts nothing new), else dropped.
 */
static void
cut_commit(struct fd_nft *n, bool others)
{
	for (int i = 0; i < 2; i++) {
		struct fd_setelem_acc *acc = &n->cut_acc[i];

		if (!others) {
			acc->n = acc->bad = 0;
			acc->expiring = false;
		} else if (fd_setelem_ranges(acc, false, &n->cut_new) != 0) {
			n->cut_reread = true;
		}
	}
}

static void
followed_forget(struct fd_nft *n)
{
	for (unsigned int i = 0; i < n->nfol; i++) {
		n->fol[i].acc.n = n->fol[i].acc.bad = 0;
		n->fol[i].acc.expiring = false;
	}
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
		if (g->n->cut_added)
			cut_commit(g->n, g->others);
		if (g->n->fol_touched && followed_commit(g->n))
			g->result |= FD_NFT_WATCHED;
		if (g->n->cut_changed)
			g->n->keep_stale = true;
		if (g->n->removed)
			g->result |= FD_NFT_UNCUT;
		g->n->other = g->n->cut_added = g->n->cut_changed = g->n->removed = false;
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
		/* the transaction's start may be lost */
		n->other = n->cut_added = n->cut_changed = n->removed = false;
		cut_commit(n, false);			/* the caller reads them whole */
		followed_forget(n);
		if (table_install(n) != 0)
			return -EIO;
		cut_keep_read(n);
		return -ENOBUFS;
	}
	if ((g.result & FD_NFT_RULESET) && table_install(n) != 0)
		return -EIO;	/* said why; a change all the same */
	if (n->keep_stale)
		cut_keep_read(n);
	return g.result;
}

/*
 * Both cut sets read whole (fd_setio's GETSETELEM dumps), each range with
 * its expiry, appended to `out`: 0 or -errno (a set not read; what was
 * read is in `out`).  Elements that could not be read are said and skipped.
 */
static int
cut_sets_read(struct fd_nft *n, struct fd_setelem_timed_list *out)
{
	for (int i = 0; i < 2; i++) {
		long bad = fd_setio_read_timed(n->io, &cut_sets[i], out);

		if (bad < 0) {
			fprintf(stderr, "flowcutd: nftables: set " FC_NFT_TABLE_NAME " %s not read: "
				"%s\n", cut_sets[i].name, strerror((int)-bad));
			return (int)bad;
		}
		if (bad > 0)
			fprintf(stderr, "flowcutd: nftables: set " FC_NFT_TABLE_NAME " %s: %ld "
				"elements not read or not paired: skipped\n", cut_sets[i].name, bad);
	}
	return 0;
}

/*
 * Reads the cut sets into `kept`, what a `flush ruleset` would take: what
 * cut4 and cut6 hold, each range with when it expires.  A set that
 * cannot be read leaves `kept` as it was, and is read at the next change.
 */
static void
cut_keep_read(struct fd_nft *n)
{
	struct fd_setelem_timed_list t = { 0 };
	uint64_t now = fd_clock_ms();
	struct kept_cut *k;
	int rc = cut_sets_read(n, &t);

	k = rc == 0 && t.n > 0 ? calloc(t.n, sizeof(*k)) : NULL;
	if (rc == 0 && t.n > 0 && k == NULL)
		rc = -ENOMEM;
	if (rc < 0) {
		fprintf(stderr, "flowcutd: nftables: the cut sets not read to be kept (%s); "
			"read at their next change\n", strerror(-rc));
		fd_setelem_timed_free(&t);
		return;
	}
	n->next_due_ms = 0;
	for (size_t i = 0; i < t.n; i++) {
		int64_t ms = t.t[i].expires_ms;

		if (ms > FD_NFT_EXPIRES_MAX_MS)
			ms = FD_NFT_EXPIRES_MAX_MS;	/* a bound: no wrap into the past */
		k[i].r = t.t[i].r;
		k[i].deadline_ms = ms >= 0 ? now + (uint64_t)ms : 0;
		if (k[i].deadline_ms != 0 &&
		    (n->next_due_ms == 0 || k[i].deadline_ms < n->next_due_ms))
			n->next_due_ms = k[i].deadline_ms;
	}
	free(n->kept);
	n->kept = k;
	n->nkept = t.n;
	n->keep_stale = false;
	fd_setelem_timed_free(&t);
}

/* Is this range kept? */
static bool
kept_has(const struct fd_nft *n, const struct kept_cut *e)
{
	for (size_t i = 0; i < n->nkept; i++)
		if (memcmp(&n->kept[i].r, &e->r, sizeof(e->r)) == 0)
			return true;
	return false;
}

/* how often the cut sets are read while an element is in its last second */
#define EXPIRY_LOOK_MS 100

int
fd_nft_cut_expired(struct fd_nft *n)
{
	uint64_t now = fd_clock_ms();
	struct kept_cut *due;
	size_t ndue = 0;
	int gone = 0;

	if (n->next_due_ms == 0 || now < n->next_due_ms ||
	    now < n->expiry_look_ms + EXPIRY_LOOK_MS)
		return 0;
	n->expiry_look_ms = now;
	due = calloc(n->nkept, sizeof(*due));
	if (due == NULL)
		return 1;	/* no memory to tell: say it may have, the caller reads whole */
	for (size_t i = 0; i < n->nkept; i++)
		if (n->kept[i].deadline_ms != 0 && n->kept[i].deadline_ms <= now)
			due[ndue++] = n->kept[i];
	cut_keep_read(n);	/* read anew: what ran out is not listed */
	for (size_t i = 0; i < ndue && !gone; i++)
		gone = !kept_has(n, &due[i]);
	free(due);
	return gone;
}

/*
 * The table was made anew (a `flush ruleset`, or `delete table inet
 * flowcut` while flowcutd runs): the cut sets put back as they were, the
 * elements whose timeout has not run out with what is left of it.  One
 * transaction; said.
 */
static void
cut_keep_restore(struct fd_nft *n)
{
	uint64_t now = fd_clock_ms();
	char *cmd = NULL;
	size_t len = 0, put = 0;
	FILE *f;

	if (n->nkept == 0)
		return;
	f = open_memstream(&cmd, &len);
	if (f == NULL) {
		fprintf(stderr, "flowcutd: nftables: the cut sets not put back after the table "
			"was taken: %s\n", strerror(errno));
		return;
	}
	for (size_t i = 0; i < n->nkept; i++) {
		const struct kept_cut *e = &n->kept[i];
		char elem[100];

		if (e->deadline_ms != 0 && e->deadline_ms <= now)
			continue;	/* its time ran out meanwhile */
		fprintf(f, "add element " FC_NFT_TABLE_NAME " %s { %s",
			e->r.family == 4 ? FC_NFT_CUT4 : FC_NFT_CUT6,
			fc_range_format(&e->r, elem, sizeof(elem)));
		if (e->deadline_ms != 0)
			fprintf(f, " timeout %" PRIu64 "ms", e->deadline_ms - now);
		fprintf(f, " }\n");
		put++;
	}
	if (fclose(f) != 0 || cmd == NULL) {
		fprintf(stderr, "flowcutd: nftables: the cut sets not put back after the table "
			"was taken: no memory\n");
		free(cmd);
		return;
	}
	if (put > 0 && nft_run_cmd_from_buffer(n->nft, cmd) != 0)
		fprintf(stderr, "flowcutd: nftables: the cut sets not put back after the table "
			"was taken: %s", nft_ctx_get_error_buffer(n->nft));
	else if (put > 0)
		printf("flowcutd: table " FC_NFT_TABLE_NAME " was taken (flush ruleset?): made again, its "
		       "cut sets put back (%zu element%s)\n", put, put == 1 ? "" : "s");
	fflush(stdout);
	free(cmd);
}

int
fd_nft_cut_read(struct fd_nft *n, struct fc_list *out)
{
	struct fd_setelem_timed_list t = { 0 };
	int rc = cut_sets_read(n, &t);

	for (size_t i = 0; i < t.n; i++)
		if (fc_list_add(out, &t.t[i].r) != 0) {
			rc = -ENOMEM;
			break;
		}
	fd_setelem_timed_free(&t);
	fc_list_canon(out);
	return rc;
}

/*
 * What was gathered (`from`, emptied) appended to `added`, canonical, and
 * whether some could not be read (`*reread`, cleared): 0, 1 (read whole),
 * or -ENOMEM.  fd_nft_cut_take's and fd_nft_followed_take's.
 */
static int
take(struct fc_list *from, bool *reread, struct fc_list *added)
{
	bool again = *reread;

	*reread = false;
	for (size_t i = 0; i < from->n; i++)
		if (fc_list_add(added, &from->r[i]) != 0) {
			from->n = 0;
			return -ENOMEM;
		}
	from->n = 0;
	fc_list_canon(added);
	return again ? 1 : 0;
}

int
fd_nft_cut_take(struct fd_nft *n, struct fc_list *added)
{
	return take(&n->cut_new, &n->cut_reread, added);
}

/* the elements of one transaction: its text stays small enough to parse at once */
#define FD_NFT_BLOCK_BATCH 512

/* One direction's element: "add element inet flowcut conn4 { A . 17 . P . B . Q timeout 120s }". */
static int
block_put(struct fd_nft *n, int family, uint8_t proto, const uint8_t *a, uint16_t ap,
	  const uint8_t *b, uint16_t bp)
{
	char as[INET6_ADDRSTRLEN], bs[INET6_ADDRSTRLEN], line[256];
	int af = family == 4 ? AF_INET : AF_INET6, len;

	if (inet_ntop(af, a, as, sizeof(as)) == NULL || inet_ntop(af, b, bs, sizeof(bs)) == NULL)
		return -EINVAL;
	len = snprintf(line, sizeof(line), "add element " FC_NFT_TABLE_NAME " %s { %s . %u . %u . %s . %u "
		       "timeout %us }\n", family == 4 ? FC_NFT_CONN4 : FC_NFT_CONN6, as, proto, ap,
		       bs, bp, FD_NFT_CONN_TIMEOUT_S);
	if (len < 0 || (size_t)len >= sizeof(line))
		return -EINVAL;
	if (n->block_len + (size_t)len + 1 > n->block_cap) {
		size_t cap = n->block_cap ? n->block_cap * 2 : 16384;
		char *p = realloc(n->block, cap);

		if (p == NULL)
			return -ENOMEM;
		n->block = p;
		n->block_cap = cap;
	}
	memcpy(n->block + n->block_len, line, (size_t)len + 1);
	n->block_len += (size_t)len;
	return 0;
}

int
fd_nft_block(struct fd_nft *n, const struct fd_tuple *c)
{
	size_t len = n->block_len;
	uint16_t cport = ntohs(c->sport), sport = ntohs(c->dport);	/* client's, server's */
	int rc;

	if ((c->proto != IPPROTO_TCP && c->proto != IPPROTO_UDP) ||
	    (c->family != 4 && c->family != 6))
		return -EINVAL;
	if (n->nblock >= FD_NFT_BLOCK_BATCH)
		(void)fd_nft_block_flush(n);	/* said if it failed */
	rc = block_put(n, c->family, c->proto, c->src, cport, c->dst, sport);
	if (rc == 0)
		rc = block_put(n, c->family, c->proto, c->dst, sport, c->src, cport);
	if (rc != 0) {
		n->block_len = len;	/* both directions or neither */
		return rc;
	}
	n->nblock++;
	return 0;
}

int
fd_nft_block_flush(struct fd_nft *n)
{
	int rc = 0;

	if (n->block_len == 0)
		return 0;
	if (nft_run_cmd_from_buffer(n->nft, n->block) != 0) {
		fprintf(stderr, "flowcutd: nftables: %u connections cut on the host not put in "
			"%s/%s: %s", n->nblock, FC_NFT_CONN4, FC_NFT_CONN6,
			nft_ctx_get_error_buffer(n->nft));
		rc = -EIO;
	}
	n->block_len = 0;
	n->nblock = 0;
	return rc;
}
int
fd_nft_follow(struct fd_nft *n, const struct fd_setio_set *s, unsigned int count)
{
	struct followed *f = count ? calloc(count, sizeof(*f)) : NULL;

	for (unsigned int i = 0; i < n->nfol; i++) {
		fd_setelem_acc_free(&n->fol[i].acc);
		fc_list_free(&n->fol[i].added);
	}
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
	return take(&n->added, &n->reread, added);
}

int
fd_nft_followed_added(struct fd_nft *n, const struct fd_setio_set *s, struct fc_list *added)
{
	struct followed *f = followed_find(n, s->nfproto, s->table, s->name);

	*added = (struct fc_list){ 0 };
	if (f == NULL)
		return -ENOENT;
	*added = f->added;
	f->added = (struct fc_list){ 0 };
	return 0;
}

uint64_t
fd_nft_followed_due(struct fd_nft *n, const struct fd_setio_set *s)
{
	struct followed *f = followed_find(n, s->nfproto, s->table, s->name);
	uint64_t due;

	if (f == NULL)
		return 0;
	due = f->due_ms;
	f->due_ms = 0;
	return due;
}

struct fd_setio *
fd_nft_io(struct fd_nft *n)
{
	return n->io;
}

bool
fd_nft_lists_lost(struct fd_nft *n)
{
	bool lost = n->lists_lost;

	n->lists_lost = false;
	return lost;
}

