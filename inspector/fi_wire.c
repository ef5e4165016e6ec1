/* SPDX-License-Identifier: BSD-3-Clause */
/* fi_wire: see fi_wire.h. */
#include "fi_wire.h"

#include <errno.h>
#include <string.h>

_Static_assert(sizeof(struct fi_req) == 64, "struct fi_req has no padding");
_Static_assert(sizeof(struct fi_ans) % 8 == 0, "struct fi_ans has no tail padding");

static int
bad(const char **why, const char *w)
{
	if (why != NULL)
		*why = w;
	return -EBADMSG;
}

int
fi_wire_req_check(const void *msg, size_t n, const char **why)
{
	struct fi_req r;

	if (n < sizeof(r))
		return bad(why, "shorter than a question's header");
	memcpy(&r, msg, sizeof(r));
	if (r.version != FI_WIRE_VERSION)
		return bad(why, "another version (another build's flowcutd?)");
	if (r.kind != FI_TLS && r.kind != FI_QUIC && r.kind != FI_FORGET)
		return bad(why, "no such kind");
	if (r.flags & ~FI_FIRST)
		return bad(why, "unknown flags");
	if (r.len > FI_DATA_MAX)
		return bad(why, "more bytes than FI_DATA_MAX");
	if (n != sizeof(r) + r.len)
		return bad(why, "its length is not its header's and len's");
	if (r.id == 0)
		return bad(why, "id 0");
	if (r.kind == FI_FORGET && (r.len != 0 || r.flags != 0))
		return bad(why, "a forget with bytes or flags");
	if (r.kind == FI_QUIC && r.len == 0)
		return bad(why, "an empty datagram");
	return 0;
}

/* s is a NUL-ended string within cap bytes. */
static int
ended(const char *s, size_t cap)
{
	return memchr(s, '\0', cap) != NULL;
}

int
fi_wire_ans_check(const void *msg, size_t n, const char **why)
{
	struct fi_ans a;

	if (n != sizeof(a))
		return bad(why, "not an answer's length");
	memcpy(&a, msg, sizeof(a));
	if (a.version != FI_WIRE_VERSION)
		return bad(why, "another version (another build's flowcut-inspect?)");
	if (a.kind != FI_TLS && a.kind != FI_QUIC)
		return bad(why, "no such kind");
	if (a.id == 0)
		return bad(why, "id 0");
	if (!ended(a.ja4, sizeof(a.ja4)) || !ended(a.ja3, sizeof(a.ja3)) ||
	    !ended(a.sni, sizeof(a.sni)))
		return bad(why, "a string without its end");
	if (a.rc > 0)
		return bad(why, "a positive answer");
	return 0;
}
