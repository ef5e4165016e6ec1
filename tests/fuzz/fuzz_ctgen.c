/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz target: flowcut-ctgen's command line and the acks it reads
 * (tools/ctgen).  The input's first byte picks: even, the rest is a
 * command line, its words split on NUL; odd, the rest is a datagram of
 * answers to a batch of CTG_BATCH_MAX messages.  Checks: no crash; a
 * command line refused says why; one accepted has its states fit (the
 * last one's ports not wrapped below the first's) and every state's
 * message built; an ack walk takes no more acks than the batch has.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>

#include "ctgen.h"
#include "fuzz.h"

static void
die(const char *what)
{
	fprintf(stderr, "fuzz_ctgen: %s\n", what);
	abort();
}

int
fuzz_init(void)
{
	return 0;
}

static void
command_line(const uint8_t *data, size_t size)
{
	static char text[4096], *argv[64];
	_Alignas(struct nlmsghdr) static char buf[CTG_MSG_MAX];
	struct ctg_opts o;
	struct fd_tuple t;
	char err[256] = "";
	int argc = 0;

	if (size >= sizeof(text))
		size = sizeof(text) - 1;
	memcpy(text, data, size);
	text[size] = '\0';
	argv[argc++] = "flowcut-ctgen";
	for (size_t at = 0; at <= size && argc < 63; at += strlen(text + at) + 1)
		argv[argc++] = text + at;
	argv[argc] = NULL;
	if (ctg_parse(&o, argc, argv, err, sizeof(err)) != 0) {
		if (err[0] == '\0')
			die("a command line refused without a reason");
		return;
	}
	if (o.batch == 0 || o.batch > CTG_BATCH_MAX || o.n > CTG_N_MAX)
		die("an accepted command line out of its bounds");
	if (o.n == 0)
		return;
	ctg_tuple(&o, o.n - 1, &t);
	if (ntohs(t.sport) < o.sport || ntohs(t.dport) < o.dport)
		die("the last state's ports wrapped: N did not fit");
	if (ctg_build(buf, sizeof(buf), &o, o.n - 1, 1) == NULL ||
	    ctg_build(buf, sizeof(buf), &o, 0, 1) == NULL)
		die("a state's message not built");
}

int
fuzz_one(const uint8_t *data, size_t size)
{
	_Alignas(struct nlmsghdr) static uint8_t answers[1 << 16];
	static struct ctg_acks a;
	int rc;

	if (size == 0)
		return 0;
	if ((data[0] & 1) == 0) {
		command_line(data + 1, size - 1);
		return 0;
	}
	memset(&a, 0, sizeof(a));
	a.first = 1;
	a.n = CTG_BATCH_MAX;
	/* aligned, as a datagram read into a buffer of its own is */
	if (size - 1 > sizeof(answers))
		size = sizeof(answers) + 1;
	memcpy(answers, data + 1, size - 1);
	rc = ctg_acks(&a, answers, size - 1);
	if (rc > (int)CTG_BATCH_MAX || (rc < 0 && rc != -EBADMSG))
		die("more acks than the batch, or an error of no kind said");
	return 0;
}

int
fuzz_seeds(const char *dir)
{
	static const char lines[][96] = {
		"\0" "1000",
		"\0" "200000\0--mark\0" "0x40000000",
		"\0" "2000000\0--src\0" "198.18.0.0/24\0--proto\0tcp\0--batch\0" "256",
		"\0" "10\0--family\0" "6\0--src\0" "2001:db8::/64\0--delete",
		"\0" "2\0--sport\0" "65535\0--dport\0" "65535",
		"\0" "10\0--src\0" "198.18.0.2/33",
		"\0" "10\0--mark",
	};
	static const size_t lens[] = { 5, 25, 52, 43, 30, 23, 10 };
	uint8_t acks[1 + 3 * 36] = { 1 };
	size_t i;

	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++)
		if (fuzz_seed_put(dir, i, lines[i], lens[i]) != 0)
			return -1;
	/* three acks: seq 1 and 2 answered 0, seq 3 EEXIST */
	for (int k = 0; k < 3; k++) {
		struct nlmsghdr nlh = { .nlmsg_len = 36, .nlmsg_type = NLMSG_ERROR,
					.nlmsg_seq = (uint32_t)k + 1 };
		struct nlmsgerr e = { .error = k == 2 ? -EEXIST : 0 };

		memcpy(acks + 1 + 36 * k, &nlh, sizeof(nlh));
		memcpy(acks + 1 + 36 * k + 16, &e, sizeof(e));
	}
	return fuzz_seed_put(dir, i, acks, sizeof(acks));
}
