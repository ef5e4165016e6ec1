/* SPDX-License-Identifier: BSD-3-Clause */
#include <stddef.h>

#include "fw_graph.h"

#define LEFT 70
#define BOTTOM 24
#define TOP 10

static const struct {
	const char *name, *colour;
	size_t off;
} lines[] = {
	{"to the wire", "#2b7bb9", offsetof(struct fw_point, wire)},
	{"to the host", "#e08a00", offsetof(struct fw_point, host)},
	{"dropped", "#c0392b", offsetof(struct fw_point, dropped)},
};

static double
val(const struct fw_point *p, size_t off)
{
	return *(const double *)((const char *)p + off);
}

static void
human(struct fw_buf *b, double v)
{
	if (v >= 1e9)
		fw_buf_printf(b, "%.3gG", v / 1e9);
	else if (v >= 1e6)
		fw_buf_printf(b, "%.3gM", v / 1e6);
	else if (v >= 1e3)
		fw_buf_printf(b, "%.3gk", v / 1e3);
	else
		fw_buf_printf(b, "%.3g", v);
}

void
fw_graph_svg(struct fw_buf *b, const struct fw_point *pts, unsigned int n)
{
	const double pw = FW_GRAPH_W - LEFT - 10, ph = FW_GRAPH_H - TOP - BOTTOM;
	double max = 0;

	for (unsigned int i = 0; i < n; i++)
		for (size_t l = 0; l < 3; l++)
			if (pts[i].ok && val(&pts[i], lines[l].off) > max)
				max = val(&pts[i], lines[l].off);
	if (max < 10)
		max = 10;
	fw_buf_printf(b, "<svg class=\"graph\" role=\"img\" aria-label=\"frames a second, last five minutes\" "
		      "viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" xmlns=\"http://www.w3.org/2000/svg\">\n",
		      FW_GRAPH_W, FW_GRAPH_H, FW_GRAPH_W, FW_GRAPH_H);
	fw_buf_printf(b, "<rect x=\"%d\" y=\"%d\" width=\"%.0f\" height=\"%.0f\" fill=\"#fafafa\" stroke=\"#ccc\"/>\n",
		      LEFT, TOP, pw, ph);
	for (int t = 0; t <= 2; t++) {
		double y = TOP + ph - ph * t / 2.0;

		fw_buf_printf(b, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
			      "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" font-size=\"12\">",
			      LEFT, y, LEFT + pw, y, LEFT - 6, y + 4);
		human(b, max * t / 2.0);
		fw_buf_str(b, "/s</text>\n");
	}
	for (int m = 0; m < 5; m++)
		fw_buf_printf(b, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" font-size=\"12\">-%d min</text>\n",
			      LEFT + pw * m / 5.0, FW_GRAPH_H - 6, 5 - m);
	fw_buf_printf(b, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"end\" font-size=\"12\">now</text>\n",
		      LEFT + pw, FW_GRAPH_H - 6);
	/* x: a point's place by its age against the newest, 300 s wide */
	for (size_t l = 0; l < 3; l++) {
		int open = 0;

		for (unsigned int i = 0; i < n; i++) {
			double age = (double)(pts[n - 1].t_ms - pts[i].t_ms) / 1000.0;
			double x = LEFT + pw * (1.0 - age / 300.0), y;

			if (!pts[i].ok || x < LEFT) {
				if (open)
					fw_buf_str(b, "\"/>\n");
				open = 0;
				continue;
			}
			y = TOP + ph - ph * val(&pts[i], lines[l].off) / max;
			if (!open)
				fw_buf_printf(b, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"",
					      lines[l].colour);
			fw_buf_printf(b, "%.1f,%.1f ", x, y);
			open = 1;
		}
		if (open)
			fw_buf_str(b, "\"/>\n");
	}
	for (size_t l = 0; l < 3; l++)
		fw_buf_printf(b, "<rect x=\"%.0f\" y=\"%d\" width=\"12\" height=\"4\" fill=\"%s\"/>"
			      "<text x=\"%.0f\" y=\"%d\" font-size=\"12\">%s</text>\n",
			      LEFT + 10 + 130.0 * l, TOP + 10, lines[l].colour, LEFT + 26 + 130.0 * l,
			      TOP + 15, lines[l].name);
	if (n == 0)
		fw_buf_printf(b, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\" font-size=\"14\">no samples yet</text>\n",
			      LEFT + pw / 2, TOP + ph / 2);
	fw_buf_str(b, "</svg>\n");
}
