/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fw_graph - the status page's five-minute graph, drawn by flowcut-web
 * itself as inline SVG (no outside library, no script): frames a second to
 * the wire, to the host and dropped, one polyline each, a gap where a
 * point has no rate, a log-free linear axis from 0 to the largest rate
 * seen (a tick at it and at its half), time on x from -5 min to now.
 * A pure function of the points (fw_sample); any thread.
 */
#ifndef FLOWCUT_FW_GRAPH_H
#define FLOWCUT_FW_GRAPH_H

#include "fw_buf.h"
#include "fw_sample.h"

#define FW_GRAPH_W 900
#define FW_GRAPH_H 240

/* fw_graph_svg - "<svg ...>...</svg>" appended to b (pts oldest first) */
void fw_graph_svg(struct fw_buf *b, const struct fw_point *pts, unsigned int n);

#endif
