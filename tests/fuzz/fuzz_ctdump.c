/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz target: a conntrack dump's datagrams as flowcutd reads them
 * (driver/ct/fd_ct: fd_ct_dump_parse, driver/ct/fd_ctparse under it;
 * fuzz_ct compares that parse with the library's).  Checks: no crash or overread (ASan); every
 * state handed on is one, with rc 0; a count that is what was handed on;
 * an error that is a negative errno; nothing handed on after NLMSG_DONE.
 * fd_ctparse never exits; fuzz_nfct.h is here for the seeds' builder.
 * Seeds: states (IPv4, IPv6) then the end, the end with an error, the
 * kernel's error, an interrupted dump.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fd_ct.h"
#include "fuzz.h"
#include "fuzz_nfct.h"

struct seen {
	unsigned int n;
};

static void
die(const char *what)
{
	fprintf(stderr, "fuzz_ctdump: %s\n", what);
	abort();
}

static void
on_state(void *arg, const struct nf_conntrack *ct, int rc)
{
	struct seen *s = arg;

	if (ct == NULL || rc != 0)
		die("a state handed on that is none");
	(void)nfct_get_attr_u32(ct, ATTR_MARK);
	s->n++;
}

int
fuzz_init(void)
{
	return 0;
}

int
fuzz_one(const uint8_t *data, size_t size)
{
	/* aligned, as a datagram received into the dump's buffer is */
	void *buf = malloc(size ? size : 1);
	struct seen s = { 0 };
	bool done = false;
	int rc;

	if (buf == NULL)
		return 0;
	memcpy(buf, data, size);
	rc = fd_ct_dump_parse(buf, size, on_state, &s, &done);
	free(buf);
	if (rc >= 0 && (unsigned int)rc != s.n)
		die("the count is not what was handed on");
	if (rc < 0 && rc < -4095)
		die("an error that is no errno");
	return 0;
}

/* The end of a dump: NLMSG_DONE with the dump's error. */
static size_t
done_msg(void *buf, int err)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);

	nlh->nlmsg_type = NLMSG_DONE;
	nlh->nlmsg_flags = NLM_F_MULTI;
	memcpy(mnl_nlmsg_put_extra_header(nlh, sizeof(int)), &err, sizeof(err));
	return nlh->nlmsg_len;
}

/* The kernel's error. */
static size_t
error_msg(void *buf, int err)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct nlmsgerr *e = mnl_nlmsg_put_extra_header(nlh, sizeof(*e));

	nlh->nlmsg_type = NLMSG_ERROR;
	e->error = err;
	return nlh->nlmsg_len;
}

int
fuzz_seeds(const char *dir)
{
	uint8_t buf[4096] __attribute__((aligned(4)));
	size_t len;
	int rc = 0;

	/* two states and the end */
	memset(buf, 0, sizeof(buf));
	len = MNL_ALIGN(fuzz_nfct_state_msg(buf, 4, IPCTNL_MSG_CT_NEW, 0, NLM_F_MULTI));
	len += MNL_ALIGN(fuzz_nfct_state_msg(buf + len, 6, IPCTNL_MSG_CT_NEW, 0, NLM_F_MULTI));
	len += done_msg(buf + len, 0);
	rc |= fuzz_seed_put(dir, 0, buf, len);
	/* a state, the end with the dump's error */
	memset(buf, 0, sizeof(buf));
	len = MNL_ALIGN(fuzz_nfct_state_msg(buf, 6, IPCTNL_MSG_CT_NEW, 0, NLM_F_MULTI));
	len += done_msg(buf + len, -ENOBUFS);
	rc |= fuzz_seed_put(dir, 1, buf, len);
	/* the kernel's error */
	memset(buf, 0, sizeof(buf));
	rc |= fuzz_seed_put(dir, 2, buf, error_msg(buf, -EPERM));
	/* an interrupted dump */
	memset(buf, 0, sizeof(buf));
	len = MNL_ALIGN(fuzz_nfct_state_msg(buf, 4, IPCTNL_MSG_CT_NEW, 0, NLM_F_MULTI));
	len += fuzz_nfct_state_msg(buf + len, 4, IPCTNL_MSG_CT_NEW, 0,
				   NLM_F_MULTI | NLM_F_DUMP_INTR);
	rc |= fuzz_seed_put(dir, 3, buf, len);
	return rc ? -1 : 0;
}
