/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_stats: how a room declares its counters.  Each room lists them once,
 * in an X-macro beside its stats struct, X(ROOM, NAME) a counter:
 *
 *	#define FD_ROOM_STATS(X) X(room, first) X(room, second) ...
 *	struct fd_room_stats { FD_ROOM_STATS(FD_STAT_FIELD) };
 *
 * The struct's fields are made from the list, and flowcutd publishes the
 * list (driver/report/fd_report.c FLOWCUTD_STATS: the stats document and the
 * `counters` answer, each counter under its NAME; docs/counters.md has a
 * row for each, checked by tests/run.sh), so a counter cannot be added
 * unpublished.  ROOM names the struct's member in flowcutd's own struct
 * stats.  Arrays (a figure a port, a trigger) are fields outside the list,
 * published by flowcutd as objects of their own.
 */
#ifndef FLOWCUT_FD_STATS_H
#define FLOWCUT_FD_STATS_H

#include <stdint.h>

#define FD_STAT_FIELD(room, name) uint64_t name;

#endif
