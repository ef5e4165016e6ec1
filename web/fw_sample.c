/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "fw_ctl.h"
#include "fw_sample.h"

void
fw_sample_init(struct fw_sample *s)
{
	pthread_condattr_t ca;

	memset(s, 0, sizeof(*s));
	pthread_mutex_init(&s->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->wake, &ca);
	pthread_condattr_destroy(&ca);
}

void
fw_sample_fini(struct fw_sample *s)
{
	json_decref(s->last);
	json_decref(s->prev);
	json_decref(s->triggers);
	s->last = s->prev = s->triggers = NULL;
	pthread_cond_destroy(&s->wake);
	pthread_mutex_destroy(&s->lock);
}

/* the sum of ports[].key of doc: 0 and *sum, -ENOENT when none has it */
static int
ports_sum(const json_t *doc, const char *key, double *sum)
{
	const json_t *ports = json_object_get(doc, "ports"), *p;
	size_t i;
	int found = 0;

	*sum = 0;
	json_array_foreach(ports, i, p) {
		const json_t *v = json_object_get(p, key);

		if (json_is_integer(v)) {
			*sum += (double)json_integer_value(v);
			found = 1;
		}
	}
	return found ? 0 : -ENOENT;
}

/*
 * The fast path's outcome counters a figure sums when the ports carry no
 * such key (flowcutd's choice: the coprocessor counts by outcome, not by
 * port, so its `counters` sends ports[].to_host alone): to the wire every
 * FROM_*_TO_WIRE* outcome, dropped every FROM_*_DROP_* one.
 */
static const struct {
	const char *key, *part;
} by_outcome[] = {
	{"to_wire", "_TO_WIRE"},
	{"dropped", "_DROP_"},
};

/* the sum of doc's fastpath counters whose name holds part: 0, -ENOENT when none */
static int
outcome_sum(const json_t *doc, const char *part, double *sum)
{
	const json_t *fp = json_object_get(doc, "fastpath"), *v;
	const char *name;
	int found = 0;

	*sum = 0;
	json_object_foreach((json_t *)fp, name, v) {
		if (strstr(name, part) != NULL && strncmp(name, "FROM_", 5) == 0 && json_is_integer(v)) {
			*sum += (double)json_integer_value(v);
			found = 1;
		}
	}
	return found ? 0 : -ENOENT;
}

/* a figure of doc: the ports' sum of key, else its fast-path outcomes' sum */
static int
figure(const json_t *doc, const char *key, double *sum)
{
	if (ports_sum(doc, key, sum) == 0)
		return 0;
	for (size_t i = 0; i < sizeof(by_outcome) / sizeof(by_outcome[0]); i++)
		if (strcmp(by_outcome[i].key, key) == 0)
			return outcome_sum(doc, by_outcome[i].part, sum);
	return -ENOENT;
}

static int
ports_rate(const json_t *prev, const json_t *last, const char *key, double dt, double *rate)
{
	double a, b;

	if (figure(prev, key, &a) != 0 || figure(last, key, &b) != 0)
		return -ENOENT;
	if (b < a)
		return -ERANGE;
	*rate = (b - a) / dt;
	return 0;
}

static int
times(const json_t *prev, const json_t *last, int64_t *t, double *dt)
{
	const json_t *a = json_object_get(prev, "time_ms"), *b = json_object_get(last, "time_ms");

	if (!json_is_integer(a) || !json_is_integer(b))
		return -ENOENT;
	if (json_integer_value(b) <= json_integer_value(a))
		return -EINVAL;
	*t = json_integer_value(b);
	*dt = (double)(json_integer_value(b) - json_integer_value(a)) / 1000.0;
	return 0;
}

void
fw_sample_push(struct fw_sample *s, json_t *doc)
{
	struct fw_point p = {.ok = false};
	double dt;

	pthread_mutex_lock(&s->lock);
	json_decref(s->prev);
	s->prev = s->last;
	s->last = json_incref(doc);
	s->err[0] = '\0';
	if (s->prev != NULL && times(s->prev, s->last, &p.t_ms, &dt) == 0) {
		p.ok = ports_rate(s->prev, s->last, "to_wire", dt, &p.wire) == 0 &&
		       ports_rate(s->prev, s->last, "to_host", dt, &p.host) == 0 &&
		       ports_rate(s->prev, s->last, "dropped", dt, &p.dropped) == 0;
		s->pts[s->head] = p;
		s->head = (s->head + 1) % FW_SAMPLE_N;
		if (s->n < FW_SAMPLE_N)
			s->n++;
	}
	pthread_mutex_unlock(&s->lock);
}

void
fw_sample_triggers_push(struct fw_sample *s, json_t *doc)
{
	pthread_mutex_lock(&s->lock);
	json_decref(s->triggers);
	s->triggers = json_incref(doc);
	pthread_mutex_unlock(&s->lock);
}

json_t *
fw_sample_triggers_get(struct fw_sample *s)
{
	json_t *t;

	pthread_mutex_lock(&s->lock);
	t = json_incref(s->triggers);
	pthread_mutex_unlock(&s->lock);
	return t;
}

void
fw_sample_fail(struct fw_sample *s, const char *why)
{
	pthread_mutex_lock(&s->lock);
	snprintf(s->err, sizeof(s->err), "%s", why);
	pthread_mutex_unlock(&s->lock);
}

unsigned int
fw_sample_get(struct fw_sample *s, json_t **last, json_t **prev, struct fw_point *pts, char *err,
	      size_t errlen)
{
	unsigned int n;

	pthread_mutex_lock(&s->lock);
	*last = json_incref(s->last);
	*prev = json_incref(s->prev);
	n = s->n;
	for (unsigned int i = 0; pts != NULL && i < n; i++)
		pts[i] = s->pts[(s->head + FW_SAMPLE_N - n + i) % FW_SAMPLE_N];
	if (err != NULL)
		snprintf(err, errlen, "%s", s->err);
	pthread_mutex_unlock(&s->lock);
	return n;
}

int
fw_sample_rate(const json_t *prev, const json_t *last, const char *section, const char *name,
	       double *rate)
{
	const json_t *a = json_object_get(json_object_get(prev, section), name);
	const json_t *b = json_object_get(json_object_get(last, section), name);
	int64_t t;
	double dt;
	int rc;

	if (!json_is_integer(a) || !json_is_integer(b))
		return -ENOENT;
	rc = times(prev, last, &t, &dt);
	if (rc != 0)
		return rc;
	if (json_integer_value(b) < json_integer_value(a))
		return -ERANGE;
	*rate = (double)(json_integer_value(b) - json_integer_value(a)) / dt;
	return 0;
}

static void *
loop(void *arg)
{
	struct fw_sample *s = arg;
	struct timespec next;

	clock_gettime(CLOCK_MONOTONIC, &next);
	for (;;) {
		char err[256];
		json_t *doc;
		bool stop;

		if (fw_ctl_ask(s->ctl_path, NULL, "counters\n", &doc, err, sizeof(err)) == 0) {
			fw_sample_push(s, doc);
			json_decref(doc);
		} else {
			fw_sample_fail(s, err);
		}
		if (fw_ctl_ask(s->ctl_path, NULL, "triggers\n", &doc, err, sizeof(err)) == 0) {
			fw_sample_triggers_push(s, doc);
			json_decref(doc);
		}
		next.tv_sec++;
		pthread_mutex_lock(&s->lock);
		while (!s->stop && pthread_cond_timedwait(&s->wake, &s->lock, &next) != ETIMEDOUT)
			;
		stop = s->stop;
		pthread_mutex_unlock(&s->lock);
		if (stop)
			break;
	}
	return NULL;
}

int
fw_sample_start(struct fw_sample *s, const char *ctl_path)
{
	int rc;

	s->ctl_path = ctl_path;
	s->stop = false;
	rc = pthread_create(&s->thread, NULL, loop, s);
	if (rc != 0)
		return -rc;
	s->running = true;
	return 0;
}

void
fw_sample_stop(struct fw_sample *s)
{
	if (!s->running)
		return;
	pthread_mutex_lock(&s->lock);
	s->stop = true;
	pthread_cond_signal(&s->wake);
	pthread_mutex_unlock(&s->lock);
	pthread_join(s->thread, NULL);
	s->running = false;
}
