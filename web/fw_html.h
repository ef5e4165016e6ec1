/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fw_html - flowcut-web's pages, server-rendered HTML with the CSS inline
 * and no outside asset (the appliance may have no internet), readable
 * with JavaScript off; the status page's only script reloads it every two
 * seconds.  Each renderer is a pure function of flowcutd's documents
 * (docs/commands.md) and the page's own state (the process's CSRF token, a
 * message): no I/O, any thread.  A field a document lacks is shown as
 * "-", never as 0.  Every text from a document is HTML-escaped.
 *
 * Each appends a whole page to b and returns 0 or -ENOMEM (fw_buf_err).
 * csrf: the process's token (fw_auth), which every changing form carries;
 * NULL shows no changing form.  A change itself asks for the operator's
 * secret by HTTP authentication (the server's 401), so no page logs in.
 */
#ifndef FLOWCUT_FW_HTML_H
#define FLOWCUT_FW_HTML_H

#include <stdint.h>

#include <jansson.h>

#include "fw_buf.h"
#include "fw_form.h"
#include "fw_sample.h"

/* Status: last, prev `counters` answers (NULL: none yet), the points, err the sampler's */
int fw_html_status(struct fw_buf *b, const json_t *last, const json_t *prev,
		   const struct fw_point *pts, unsigned int n, const char *err, const char *csrf);

/*
 * Connections: doc a `conns` answer or NULL (err says why), q the query
 * (addr, port, state, action, from) to fill the filter form and the next
 * page's link with; msg a line to show first (a cut's outcome) or NULL.
 */
int fw_html_conns(struct fw_buf *b, const json_t *doc, const char *err, const struct fw_form *q,
		  const char *csrf, const char *msg);

/*
 * Cuts: cuts a `cuts` answer, triggers a `triggers` answer; either NULL
 * (err).  A cut's when_s (CLOCK_REALTIME seconds, flowcutd's) is shown as
 * UTC, "2026-12-01 23:20:05 UTC", and how long before `now_s` (the page's
 * wall clock): "35 s ago", "3 min ago", "2 h ago", "4 d ago" (whole
 * units down; a time ahead of now_s, flowcutd's clock ahead of the
 * page's, "0 s ago"); a when_s that is not a number, "-".
 */
int fw_html_cuts(struct fw_buf *b, const json_t *cuts, const json_t *triggers, const char *err,
		 int64_t now_s);

/*
 * Settings: doc a `settings` answer or NULL (err); refused_key's field shows
 * refused_why beside it (a save flowcutd refused), saved_key's says "saved".
 */
int fw_html_settings(struct fw_buf *b, const json_t *doc, const char *err, const char *csrf,
		     const char *refused_key, const char *refused_why, const char *saved_key);


/* A short page for an error: code and its text, what was wrong */
int fw_html_error(struct fw_buf *b, unsigned int code, const char *what);

#endif
