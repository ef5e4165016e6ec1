/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fw_sample - flowcut-web's sampler: a thread of its own asks flowcutd
 * `counters` once a second (fw_ctl, one request a second whatever the
 * browsers do) and keeps the last FW_SAMPLE_N points - five minutes of
 * frames a second to the wire, to the host and dropped (the sums of the
 * answer's ports[]; a figure the ports do not carry - flowcutd sends
 * to_host alone, its coprocessor counts by outcome - is the sum of the
 * fast path's outcomes: FROM_*_TO_WIRE* to the wire, FROM_*_DROP_*
 * dropped) - and the last two answers (and the last answer to
 * `triggers`, asked in the same second: two requests a second in all), from which every counter's
 * rate follows (fw_sample_rate).  The status page and /metrics read what
 * it keeps and ask flowcutd nothing themselves.
 *
 * A rate is the difference of two answers over their time_ms; a counter
 * that went back (flowcutd or the coprocessor restarted) or a missing one
 * has no rate, and no point is drawn for it (the graph shows a gap, never
 * a made-up 0).
 *
 * fw_sample_push and the readers are for any thread (a mutex);
 * fw_sample_start/stop from one.  fw_sample_fini frees what is kept.
 */
#ifndef FLOWCUT_FW_SAMPLE_H
#define FLOWCUT_FW_SAMPLE_H

#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#define FW_SAMPLE_N 300

struct fw_point {
	int64_t t_ms;		/* the answer's time_ms */
	bool ok;		/* false: no rate (a gap) */
	double wire, host, dropped;	/* frames a second */
};

struct fw_sample {
	pthread_mutex_t lock;
	json_t *last, *prev;	/* the last two answers, or NULL */
	json_t *triggers;	/* the last answer to triggers, or NULL */
	struct fw_point pts[FW_SAMPLE_N];
	unsigned int n, head;	/* head: the next slot */
	char err[256];		/* the last ask's failure, "" when it answered */
	/* the thread: it sleeps on wake (CLOCK_MONOTONIC) between two asks,
	 * so fw_sample_stop ends it at once, not at its next second */
	const char *ctl_path;
	pthread_t thread;
	pthread_cond_t wake;
	bool running;
	bool stop;		/* under lock */
};

void fw_sample_init(struct fw_sample *s);
void fw_sample_fini(struct fw_sample *s);

/* fw_sample_push - one `counters` answer (a reference is taken) */
void fw_sample_push(struct fw_sample *s, json_t *doc);
/* fw_sample_triggers_push - a `triggers` answer (a reference taken); get: a new reference or NULL */
void fw_sample_triggers_push(struct fw_sample *s, json_t *doc);
json_t *fw_sample_triggers_get(struct fw_sample *s);

/* fw_sample_fail - the last ask failed: why (shown by the pages) */
void fw_sample_fail(struct fw_sample *s, const char *why);

/*
 * fw_sample_get - the last two answers (new references, or NULL; the
 * caller json_decref()s them), the points oldest first into pts (at most
 * FW_SAMPLE_N; the count returned) and the last failure into err.
 */
unsigned int fw_sample_get(struct fw_sample *s, json_t **last, json_t **prev,
			   struct fw_point *pts, char *err, size_t errlen);

/*
 * fw_sample_rate - section.name's rate a second between prev and last
 * (answers of `counters`; section "fastpath" or "flowcutd"...): 0 and
 * *rate; -ENOENT when either lacks it or it is not an integer, -ERANGE
 * when it went back, -EINVAL when the times do not go forward.
 */
int fw_sample_rate(const json_t *prev, const json_t *last, const char *section, const char *name,
		   double *rate);

/* fw_sample_start - the thread asking ctl_path once a second; 0 or -errno */
int fw_sample_start(struct fw_sample *s, const char *ctl_path);
void fw_sample_stop(struct fw_sample *s);

#endif
