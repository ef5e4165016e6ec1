/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fw_req - the control requests flowcut-web builds from what a browser
 * sent (include/flowcut/fc_ctl.h, docs/commands.md): words separated by
 * one space, a request's last byte '\n'.  Every value is checked before
 * it is put on the line, so no field can add a word or a line of its own
 * (a space or a newline in a filter would be a second filter, or a second
 * request after "auth").  A pure function each; any thread.
 *
 * Each writes the request into out (cap bytes, NUL-terminated) and returns
 * 0, or -EINVAL with err naming the field and what was wrong, or
 * -EMSGSIZE past cap.
 */
#ifndef FLOWCUT_FW_REQ_H
#define FLOWCUT_FW_REQ_H

#include <stddef.h>

#include "fw_form.h"

#define FW_REQ_CONNS_PAGE 50	/* rows a page asks (the protocol's bound: 100) */

/* "conns FROM N [addr=A] [port=P] [state=S] [action=A]\n" from q's fields (q may be NULL) */
int fw_req_conns(const struct fw_form *q, char *out, size_t cap, char *err, size_t errlen);

/* "cut-conn ID\n", id decimal */
int fw_req_cut(const char *id, char *out, size_t cap, char *err, size_t errlen);

/*
 * "settings-set KEY VALUE\n", or for a list (list true) "settings-set KEY\n"
 * and a line a value (a textarea's lines, \r\n or \n, blank ones skipped;
 * none: the list cleared).  KEY is [a-z0-9_]; a single value holds no
 * newline.
 */
int fw_req_set(const char *key, const char *value, int list, char *out, size_t cap, char *err,
	       size_t errlen);

#endif
