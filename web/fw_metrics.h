/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fw_metrics - /metrics: flowcutd's answers to `counters` and `triggers`
 * (docs/commands.md) written in Prometheus's text exposition format 0.0.4.
 * A pure function of the two documents: no I/O, any thread.
 *
 * The families (each once, its # HELP and # TYPE first):
 *   flowcut_fastpath_frames_total{outcome}   counter, every fastpath.NAME
 *   flowcut_daemon_NAME                      untyped, every flowcutd.NAME
 *                                            (the stats file mixes counts and
 *                                            levels: its names say which, the
 *                                            page does not guess a type)
 *   flowcut_port_frames_total{port,way}      counter, way to_host|to_wire|dropped
 *   flowcut_link_NAME_total                  counter, every link.NAME (refused...)
 *   flowcut_connections{kind}                gauge, kind ips|fwd|cut|dropping
 *   flowcut_gate, flowcut_ips_switch         gauge 0/1, as the coprocessor reads back
 *   flowcut_uptime_seconds, flowcut_boot_info{boot_id} 1
 *   node_nf_conntrack_entries, _entries_limit, _stat_insert_failed,
 *   _stat_drop, _stat_early_drop             gauge, node_exporter's names and types
 *   flowcut_cuts_total{trigger}              counter, the sum of sources' cut by kind
 *   flowcut_source_elements{kind,source}     gauge
 *   flowcut_source_connections_cut_total{kind,source}, flowcut_source_frames_dropped_total{kind,source}
 *   flowcut_web_flowcutd_up                  gauge: 1 when counters answered
 * A figure the document lacks is left out, never written as 0.  A NAME
 * with a byte outside [a-zA-Z0-9_] has it written as '_'; label values are
 * escaped (\\ \" \n).
 */
#ifndef FLOWCUT_FW_METRICS_H
#define FLOWCUT_FW_METRICS_H

#include <jansson.h>

#include "fw_buf.h"

/* fw_metrics_render - appended to b; counters, triggers may be NULL; 0 or -ENOMEM */
int fw_metrics_render(struct fw_buf *b, const json_t *counters, const json_t *triggers);

#endif
