/* SPDX-License-Identifier: BSD-3-Clause */
/* fd_first: see fd_first.h. */
#include "fd_first.h"

#include <errno.h>
#include <string.h>

#define NS_PER_MS 1000000ull

void
fd_first_init(struct fd_first *f)
{
	memset(f, 0, sizeof(*f));
	f->next_due_ns = UINT64_MAX;
}

static void
due_at(struct fd_first *f, struct fd_first_sample *s, uint64_t due_ns)
{
	s->due_ns = due_ns;
	s->posted = false;
	if (due_ns < f->next_due_ns)
		f->next_due_ns = due_ns;
}

bool
fd_first_offer(struct fd_first *f, uint64_t id, uint64_t t0_ns, uint64_t now_ns)
{
	if (f->n == FD_FIRST_MAX) {
		f->skipped++;
		return false;
	}
	for (unsigned int i = 0; i < FD_FIRST_MAX; i++) {
		struct fd_first_sample *s = &f->s[i];

		if (s->used)
			continue;
		*s = (struct fd_first_sample){ .id = id, .t0_ns = t0_ns, .used = true };
		due_at(f, s, now_ns + FD_FIRST_AFTER_MS * NS_PER_MS);
		f->n++;
		break;
	}
	return true;
}

struct fd_first_sample *
fd_first_due(struct fd_first *f, uint64_t now_ns)
{
	struct fd_first_sample *hit = NULL;
	uint64_t next = UINT64_MAX;

	if (now_ns < f->next_due_ns)
		return NULL;
	/* one due taken; the earliest of the rest kept for the next call */
	for (unsigned int i = 0; i < FD_FIRST_MAX; i++) {
		struct fd_first_sample *s = &f->s[i];

		if (!s->used || s->posted)
			continue;
		if (hit == NULL && s->due_ns <= now_ns)
			hit = s;
		else if (s->due_ns < next)
			next = s->due_ns;
	}
	f->next_due_ns = next;
	if (hit != NULL)
		hit->posted = true;
	return hit;
}

static void
sample_free(struct fd_first *f, struct fd_first_sample *s)
{
	s->used = false;
	f->n--;
}

void
fd_first_answer(struct fd_first *f, struct fd_first_sample *s, int rc,
		const struct fc_conn_info *ci, uint64_t now_ns)
{
	uint64_t first = 0;

	if (rc == -ENOENT) {
		f->unseen++;
		sample_free(f, s);
		return;
	}
	if (rc == 0) {
		/* the earlier of the two directions' stamps */
		for (unsigned int d = 0; d < 2; d++) {
			uint64_t at = fc_first_fwd_ns(&ci->mf[d]);

			if (at != 0 && (first == 0 || at < first))
				first = at;
		}
	}
	if (first != 0) {
		if (first >= s->t0_ns)
			fd_hist_add(&f->us, (first - s->t0_ns) / 1000u);
		else
			f->unseen++;	/* not one clock (fd_first.h): not measured */
		sample_free(f, s);
		return;
	}
	if (++s->tries >= FD_FIRST_TRIES) {
		f->unseen++;
		sample_free(f, s);
		return;
	}
	due_at(f, s, now_ns + (FD_FIRST_AFTER_MS * NS_PER_MS << s->tries));
}
