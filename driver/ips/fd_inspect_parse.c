/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_inspect_parse: the parser asked - in this process (fi_parse, its
 * answer at once) or over the caller's channel (the answer comes to
 * fd_inspect_answer).  See fd_inspect_priv.h.
 */
#include <errno.h>
#include <string.h>

#include "fd_inspect_priv.h"
#include "fi_parse.h"
#include "fi_wire.h"

/* ---- the parser: asked, in this process or over the channel ---- */

/*
 * A question of c's parser: FI_TLS (the stream's next bytes), FI_QUIC (a
 * datagram) or FI_FORGET.  In this process (no p.ask) the parser's
 * answer at once (fc_tls_feed's, fc_quic_feed's; a whole hello's
 * fingerprints kept in c->rd); over the channel -EINPROGRESS (the answer
 * comes to fd_inspect_answer), -EBUSY (the channel is full) or
 * -ENOTCONN (no parser).
 */
int
ins_ask(struct fd_inspect *in, struct conn *c, uint8_t kind, const uint8_t *data, uint32_t len)
{
	struct reading *rd = c->rd;
	struct fi_req *r = (struct fi_req *)in->req;
	struct fi_ans a;
	int rc;

	memset(r, 0, sizeof(*r));
	r->version = FI_WIRE_VERSION;
	r->kind = kind;
	r->flags = kind != FI_FORGET && rd->seq == 0 ? FI_FIRST : 0;
	r->len = (uint16_t)len;
	r->seq = rd->seq;
	r->id = rd->id;
	_Static_assert(sizeof(c->key) == FI_CTX_LEN, "the tuple is the question's context");
	memcpy(r->ctx, &c->key, sizeof(c->key));
	if (len > 0)
		memcpy(r->data, data, len);
	if (kind != FI_FORGET)
		rd->seq++;
	in->st.asked += kind != FI_FORGET;
	if (in->local != NULL) {
		if (fi_parse_ask(in->local, r, sizeof(*r) + len, &a, NULL) != 1)
			return kind == FI_FORGET ? 0 : -EBADMSG;
		in->st.answered++;
		if (a.rc == 0) {
			memcpy(rd->ja4, a.ja4, sizeof(rd->ja4));
			memcpy(rd->ja3, a.ja3, sizeof(rd->ja3));
			memcpy(rd->sni, a.sni, sizeof(rd->sni));
		}
		return a.rc;
	}
	rc = in->p.ask(in->p.actx, r, sizeof(*r) + len);
	if (kind == FI_FORGET)
		return 0;
	if (rc == -EAGAIN) {
		in->st.asked--;
		return -EBUSY;
	}
	if (rc != 0) {
		in->st.asked--;
		return -ENOTCONN;
	}
	if (rd->asked++ == 0)
		rd->asked_at = in->now;
	return -EINPROGRESS;
}
