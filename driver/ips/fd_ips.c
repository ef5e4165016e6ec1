/* SPDX-License-Identifier: BSD-3-Clause */
/* fd_ips: see fd_ips.h. */
#include "fd_ips.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libnetfilter_conntrack/libnetfilter_conntrack.h>

#include <flowcut/fc_cmd.h>

#include "fc_fplist.h"
#include "fd_chan.h"
#include "fd_clock.h"
#include "fd_cmds.h"
#include "fd_ct.h"
#include "fd_dirwatch.h"
#include "fd_inspect.h"
#include "fd_policy.h"
#include "lk.h"

#define FD_IPS_PENDING 1024		/* cuts waiting for their connection's offload */
#define FD_IPS_PENDING_MS 2000		/* how long one waits before its state is killed on the host */
/*
 * A state may begin this long before the SYN the inspector saw and still
 * be its connection's: the inspector's clock is read in whole ms when the
 * relay takes the frame, conntrack's when the host confirms the state
 * after it.
 */
#define FD_IPS_BORN_SLACK_NS 5000000ull
#define FD_IPS_TELL_A_SECOND 10		/* lines a flood can make (undecided, not cut) said a second */

/* A cut decided before its connection was offloaded. */
struct pending {
	uint32_t ct_id;
	struct nf_conntrack *tuple;	/* its original tuple (the state's identity, with the id) */
	struct fd_tuple key;
	uint64_t deadline;
	uint32_t line;			/* the fingerprint's list line (its cut's record) */
};

struct fd_ips {
	struct fd_inspect *in;
	struct fd_chan *chan;		/* to flowcut-inspect (fd_ips_parser); NULL: none yet */
	struct fd_relay *relay;		/* where its answers' frames go on */
	struct fd_relay_hook hook;
	void (*wake)(void *);		/* the main loop woken for a decision (NULL: none) */
	void *wake_arg;
	uint64_t queued_seen;		/* fd_inspect_queued when last woken (the relay's and the channel's threads) */
	struct fd_offload *off;
	struct fd_ct_io ct;		/* the binding's conntrack */
	struct fd_cmds cmds;		/* the binding's commands */
	bool cut_in_hardware;		/* the setting in force (fd_ips_settings) */
	bool undecided_cut;		/* inspect_undecided in force: cut (else pass) */
	struct fd_cut *cut;
	uint16_t ports[FC_SETTINGS_MAX_TLS_PORTS];	/* in force: none without a file */
	unsigned int nports;
	/* the watched file */
	struct fd_dirwatch *dw;		/* its folder's watch: slot 0 */
	char path[FC_SETTINGS_PATH_MAX];	/* "": none */
	size_t max_bytes;		/* list_max_bytes */
	size_t nja4, nja3;		/* in force */
	long bad;			/* bad lines of the last read */
	char error[320];		/* why the last read failed, or "" */
	uint64_t retried;		/* ms: the watch last tried again */
	struct pending pend[FD_IPS_PENDING];
	unsigned int npend;
	struct {
		uint64_t cut_thru_set;	/* verdicts set CUT_THRU, answered */
		uint64_t verdict_failed; /* ... refused or unanswered (the connection stays SEND_TO_IPS) */
		uint64_t cuts;		/* fd_cut_conn done */
		uint64_t cut_not_offloaded;	/* not offloaded within 2 s: cut by fd_cut_state */
		uint64_t cut_no_state;	/* no state to cut: gone, or never made (nothing reached the host) */
		uint64_t cut_not_this_conn;	/* the tuple's state began before the connection read: not cut */
		uint64_t cut_unverified;	/* cut with no start time on the state to check */
	} st;
	uint64_t said_at;		/* ms: the second undecided ones were last told in */
	unsigned int said;		/* ... told in it */
	uint64_t unsaid;		/* ... not told since */
};

/* ---- the relay's side (its "up" thread) ---- */

static void
to_host(void *octx, uint16_t port, const uint8_t *frame, uint32_t len)
{
	fd_relay_to_host(octx, port, frame, len);
}

/* A decision queued since the last look: the main loop woken to carry it out. */
static void
wake_for_news(struct fd_ips *x)
{
	uint64_t q = fd_inspect_queued(x->in);

	if (__atomic_exchange_n(&x->queued_seen, q, __ATOMIC_ACQ_REL) != q && x->wake != NULL)
		x->wake(x->wake_arg);
}

static bool
hook_frame(void *arg, struct fd_relay *r, uint16_t port, uint16_t flags, const uint8_t *buf,
	   uint32_t len)
{
	struct fd_ips *x = arg;
	bool taken = fd_inspect_frame(x->in, port, (flags & LK_FRAME_INSPECT) != 0, buf, len,
				      fd_clock_ms(), to_host, r) == 1;

	wake_for_news(x);
	return taken;
}

static void
hook_tick(void *arg, struct fd_relay *r)
{
	struct fd_ips *x = arg;

	fd_inspect_tick(x->in, fd_clock_ms(), to_host, r);
	wake_for_news(x);
}

/* Every 20 ms while the inspector holds connections (a hello's deadline), else once a second. */
static uint32_t
hook_tick_ms(void *arg)
{
	struct fd_ips *x = arg;

	return fd_inspect_holds(x->in) ? 20 : 1000;
}

/* ---- the offload's side ---- */

static void
key_of_ct(const struct nf_conntrack *ct, struct fd_tuple *k)
{
	struct fc_key fk;

	fd_policy_key(ct, FD_DIR_ORIG, 0, &fk);
	memset(k, 0, sizeof(*k));
	memcpy(k->src, fk.src, fk.family == 4 ? 4 : 16);
	memcpy(k->dst, fk.dst, fk.family == 4 ? 4 : 16);
	k->sport = fk.sport;
	k->dport = fk.dport;
	k->family = fk.family;
	k->proto = fk.proto;
}

static uint8_t
offload_verdict(void *arg, const struct nf_conntrack *ct)
{
	struct fd_ips *x = arg;
	struct fd_tuple k;

	key_of_ct(ct, &k);
	return fd_inspect_verdict(x->in, &k);
}

/* ---- the file ---- */

static void
on_bad(void *arg, unsigned long line, const char *what)
{
	const struct fd_ips *x = arg;

	fprintf(stderr, "flowcutd: watched fingerprints %s line %lu: %s\n", x->path, line, what);
}

/* Reads the file: its fingerprints in force, or the last good ones kept and why said. */
static void
load(struct fd_ips *x)
{
	struct fc_fplist l = { 0 };
	long rc = fc_fplist_load(x->path, x->max_bytes, &l, on_bad, x, x->error, sizeof(x->error));
	size_t n;

	if (rc < 0) {	/* x->error: "PATH: why", none of its text */
		fprintf(stderr, "flowcutd: watched fingerprints %s; the last good (%zu) stay in "
			"force\n", x->error, x->nja4 + x->nja3);
		return;
	}
	x->error[0] = '\0';
	x->bad = rc;
	x->nja4 = x->nja3 = 0;
	for (size_t i = 0; i < l.n; i++) {
		if (l.fp[i].kind == FC_FP_JA4)
			x->nja4++;
		else
			x->nja3++;
	}
	n = l.n;
	fd_inspect_watch(x->in, &l);
	printf("flowcutd: watched fingerprints %s: %zu in force (%zu JA4, %zu JA3), %ld bad "
	       "line%s\n", x->path, n, x->nja4, x->nja3, rc, rc == 1 ? "" : "s");
	fflush(stdout);
}

/* Watches the file's folder (a save is often a rename into it).  0, or -errno (said). */
static int
watch(struct fd_ips *x)
{
	int rc = fd_dirwatch_add(x->dw, 0, x->path, IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM |
				 IN_DELETE);

	if (rc != 0) {
		snprintf(x->error, sizeof(x->error), "%s: watching its folder: %s", x->path,
			 strerror(-rc));
		fprintf(stderr, "flowcutd: watched fingerprints %s; tried again each second\n",
			x->error);
	}
	return rc;
}

static void
unwatch(struct fd_ips *x)
{
	fd_dirwatch_remove(x->dw, 0);
}

static void
ports_apply(struct fd_ips *x)
{
	fd_inspect_ports(x->in, x->ports, x->nports);
	if (x->off != NULL)
		fd_offload_tls_ports(x->off, x->ports, x->nports);
}

void
fd_ips_settings(struct fd_ips *x, const struct fc_settings *s)
{
	bool on = s->fingerprints[0] != '\0';

	x->cut_in_hardware = s->cut_in_hardware;
	x->undecided_cut = s->inspect_undecided_cut;
	fd_inspect_tune(x->in, s->inspect_hold_ms, (uint32_t)s->inspect_read_timeout * 1000u,
			s->inspect_undecided_cut);
	x->nports = on ? s->ntls_ports : 0;
	memcpy(x->ports, s->tls_ports, sizeof(x->ports));
	ports_apply(x);
	if (strcmp(x->path, s->fingerprints) == 0) {
		if (x->max_bytes != s->list_max_bytes && on) {
			x->max_bytes = s->list_max_bytes;
			load(x);	/* a file refused for its size may fit now */
		}
		return;
	}
	x->max_bytes = s->list_max_bytes;
	unwatch(x);
	snprintf(x->path, sizeof(x->path), "%s", s->fingerprints);
	x->error[0] = '\0';
	if (!on) {
		struct fc_fplist none = { 0 };

		fd_inspect_watch(x->in, &none);
		x->nja4 = x->nja3 = 0;
		x->bad = 0;
		printf("flowcutd: no watched fingerprints: TLS connections are not inspected\n");
		fflush(stdout);
		return;
	}
	x->retried = fd_clock_ms();
	if (watch(x) == 0)
		load(x);
}

/* The watch's events, if any (non-blocking): the file read again when it changed. */
static void
file_events(struct fd_ips *x)
{
	uint64_t changed;

	/* a folder gone is unwatched by it: watched again when it is back (fd_ips_turn) */
	(void)fd_dirwatch_read(x->dw, &changed);	/* failed: what came before */
	if (changed != 0 && x->path[0] != '\0')
		load(x);
}

/* ---- the decisions ---- */

/* The state of a connection, as conntrack holds it now: NULL when gone. */
static struct nf_conntrack *
state_of(struct fd_ips *x, const struct fd_tuple *k)
{
	struct nf_conntrack *t = nfct_new(), *ct;

	if (t == NULL)
		return NULL;
	nfct_set_attr_u8(t, ATTR_ORIG_L3PROTO, k->family == 4 ? AF_INET : AF_INET6);
	nfct_set_attr_u8(t, ATTR_ORIG_L4PROTO, k->proto);
	if (k->family == 4) {
		uint32_t a;

		memcpy(&a, k->src, 4);
		nfct_set_attr_u32(t, ATTR_ORIG_IPV4_SRC, a);
		memcpy(&a, k->dst, 4);
		nfct_set_attr_u32(t, ATTR_ORIG_IPV4_DST, a);
	} else {
		nfct_set_attr(t, ATTR_ORIG_IPV6_SRC, k->src);
		nfct_set_attr(t, ATTR_ORIG_IPV6_DST, k->dst);
	}
	nfct_set_attr_u16(t, ATTR_ORIG_PORT_SRC, k->sport);
	nfct_set_attr_u16(t, ATTR_ORIG_PORT_DST, k->dport);
	ct = x->ct.get(x->ct.ctx, t);
	nfct_destroy(t);
	return ct;
}

static void
verdict_done(void *dctx, int rc, const void *ans, uint16_t len)
{
	struct fd_ips *x = dctx;

	(void)ans, (void)len;
	if (rc == 0)
		x->st.cut_thru_set++;
	else if (rc != -ENOENT)	/* gone meanwhile: nothing to set */
		x->st.verdict_failed++;
}

/* A pass: an offloaded connection (IPS) forwarded in the fast path from now on. */
static void
pass(struct fd_ips *x, const struct fd_offload_conn *oc)
{
	struct fc_cmd_conn_verdict v = { .id = oc->fp_id, .verdict = FC_VERDICT_CUT_THRU };

	if (oc->action != FC_ACTION_IPS || oc->cut)
		return;		/* FWD: its verdict is never consulted */
	if (fd_cmds_post(&x->cmds, FC_CMD_CONN_MODIFY_FP_VERDICT, &v, sizeof(v),
			 verdict_done, x) != 0)
		x->st.verdict_failed++;
	else	/* counted as set once posted: a refusal is verdict_failed's */
		(void)fd_offload_mark(x->off, oc->fp_id, FD_OFFLOAD_MARK_PASSED, 0);
}

/* A decision's list line as a cut's record keeps it (32 bits). */
static uint32_t
line32(unsigned long line)
{
	return line > UINT32_MAX ? UINT32_MAX : (uint32_t)line;
}

/* What a cut's record names: the file as it is now, the fingerprint's line in it. */
static struct fd_cut_cause
cause(const struct fd_ips *x, uint32_t line)
{
	return (struct fd_cut_cause){ .list = x->path[0] ? x->path : NULL, .line = line };
}

static void
cut_now(struct fd_ips *x, const struct fd_offload_conn *oc, const char *tuple, uint32_t line)
{
	struct fd_cut_cause from = cause(x, line);
	int rc = fd_cut_conn_from(x->cut, oc->fp_id, FD_CUT_TLS, &from);	/* it logs the cut */

	if (rc == 0)
		x->st.cuts++;
	else if (rc != -EALREADY && rc != -EPERM)	/* never cut: fd_cut said it */
		fprintf(stderr, "flowcutd: tls: %s conn %" PRIu64 ": not cut: %s\n", tuple,
			oc->fp_id, strerror(-rc));
}

/*
 * A cut whose connection was never offloaded: its state (whole, as GET
 * gives it) cut as any other (fd_cut_state: made dropping on the
 * coprocessor with the setting on, else killed on the host behind the
 * connection drop sets).
 */
static void
cut_unoffloaded(struct fd_ips *x, const struct nf_conntrack *ct, uint32_t line)
{
	struct fd_cut_cause from = cause(x, line);

	if (fd_cut_state_from(x->cut, ct, FD_CUT_TLS, &from) > 0)	/* it logs the cut */
		x->st.cut_not_offloaded++;
}

/* A pending cut whose time is up: its state read again, unless it went meanwhile. */
static void
cut_pending_now(struct fd_ips *x, const struct pending *p)
{
	struct nf_conntrack *ct = state_of(x, &p->key);
	char tuple[128];

	if (ct == NULL || nfct_get_attr_u32(ct, ATTR_ID) != p->ct_id) {
		x->st.cut_no_state++;
		printf("flowcutd: tls: %s: its state is gone; nothing to cut\n",
		       fd_tuple_format(&p->key, tuple, sizeof(tuple)));
		nfct_destroy(ct);
		return;
	}
	cut_unoffloaded(x, ct, p->line);
	nfct_destroy(ct);
}

/*
 * Whether the state ct is the connection the inspector read: it began
 * no earlier than that connection's SYN (its first datagram).  A state
 * older than it is another connection of the same tuple - a spoofed
 * hello aimed at it - and is not cut.  A state without its start (the
 * host's nf_conntrack_timestamp off: flowcutd says so when it starts)
 * cannot be told: counted, and taken as the tuple's.
 */
static bool
is_this_conn(struct fd_ips *x, const struct nf_conntrack *ct, const struct fd_inspect_decision *d,
	     int64_t *early_ms)
{
	struct timespec rt;
	uint64_t born_rt_ns, start, age_ms = fd_clock_ms() - d->born_ms;

	*early_ms = 0;
	if (!nfct_attr_is_set(ct, ATTR_TIMESTAMP_START)) {
		x->st.cut_unverified++;
		return true;
	}
	clock_gettime(CLOCK_REALTIME, &rt);
	born_rt_ns = (uint64_t)rt.tv_sec * 1000000000ull + (uint64_t)rt.tv_nsec - age_ms * 1000000ull;
	start = nfct_get_attr_u64(ct, ATTR_TIMESTAMP_START);
	*early_ms = ((int64_t)born_rt_ns - (int64_t)start) / 1000000;
	return start + FD_IPS_BORN_SLACK_NS >= born_rt_ns;
}

/*
 * Whether one more line of those a flood can make (undecided connections,
 * cuts not made) may be said now: FD_IPS_TELL_A_SECOND a second, the rest
 * counted and their count said in the next second that says one.
 */
static bool
may_tell(struct fd_ips *x, uint64_t now)
{
	if (now / 1000 != x->said_at) {
		if (x->unsaid > 0)
			printf("flowcutd: tls: %" PRIu64 " more lines (undecided, not cut) not said\n",
			       x->unsaid);
		x->said_at = now / 1000;
		x->said = 0;
		x->unsaid = 0;
	}
	if (x->said++ >= FD_IPS_TELL_A_SECOND) {
		x->unsaid++;
		return false;
	}
	return true;
}

/* An undecided connection, told (may_tell). */
static void
tell_undecided(struct fd_ips *x, const struct fd_inspect_decision *d, const char *tuple,
	       uint64_t now)
{
	if (!may_tell(x, now))
		return;
	printf("flowcutd: tls: %s: undecided (%s): %s, as inspect_undecided says\n", tuple,
	       fd_inspect_why_name((enum fd_inspect_why)d->why), d->cut ? "cut" : "passed");
	fflush(stdout);
}

/* A listed hello: the connection, its fingerprints and the list's line. */
static void
tell_listed(const struct fd_ips *x, const struct fd_inspect_decision *d, const char *tuple)
{
	printf("flowcutd: tls: %s%s%s JA4 %s JA3 %s: its %s is listed (%s line %lu)\n",
	       tuple, d->sni[0] ? " sni " : "", d->sni, d->ja4[0] ? d->ja4 : "-",
	       d->ja3[0] ? d->ja3 : "-", d->why == FD_INSPECT_LISTED_JA4 ? "JA4" : "JA3",
	       x->path, d->line);
	fflush(stdout);
}

static void
apply(struct fd_ips *x, const struct fd_inspect_decision *d, uint64_t now)
{
	bool listed = d->cut && !fd_inspect_why_undecided((enum fd_inspect_why)d->why);
	struct fd_offload_conn oc;
	struct nf_conntrack *ct, *orig = NULL;
	char tuple[128];
	int64_t early;
	uint32_t ct_id;

	fd_tuple_format(&d->key, tuple, sizeof(tuple));
	if (fd_inspect_why_undecided((enum fd_inspect_why)d->why))
		tell_undecided(x, d, tuple, now);
	ct = state_of(x, &d->key);
	if (ct == NULL) {
		if (d->cut) {
			if (listed)
				tell_listed(x, d, tuple);
			/* a QUIC flow's first datagram held: the host never saw it */
			x->st.cut_no_state++;
			printf("flowcutd: cut (tls) %s: no conntrack state (gone, or nothing of it "
			       "reached the host): its frames dropped by the inspector\n", tuple);
			fflush(stdout);
		}
		return;
	}
	if (d->cut && !is_this_conn(x, ct, d, &early)) {
		/* a spoofed hello aimed at another's connection: a flood of them is told in part */
		x->st.cut_not_this_conn++;
		if (may_tell(x, now)) {
			printf("flowcutd: tls: %s JA4 %s: its state began %" PRId64 " ms before the "
			       "connection the inspector read (another connection of the tuple): not "
			       "cut\n", tuple, d->ja4[0] ? d->ja4 : "-", early);
			fflush(stdout);
		}
		fd_inspect_forget(x->in, &d->key);	/* that connection's frames go on */
		nfct_destroy(ct);
		return;
	}
	if (listed)
		tell_listed(x, d, tuple);
	ct_id = nfct_get_attr_u32(ct, ATTR_ID);
	/*
	 * An offload on its way (posted, not answered) is not in the table
	 * yet: settled first, or a pass would be lost (fd_offload_try finds
	 * it there: -EEXIST) and the connection left SEND_TO_IPS, every frame
	 * through the host; and a cut would not find it.
	 */
	fd_offload_settle(x->off);
	if (fd_offload_find(x->off, FD_OFFLOAD_BY_CT, ct_id, ct, &oc, NULL) == 0) {
		if (d->cut)
			cut_now(x, &oc, tuple, line32(d->line));
		else
			pass(x, &oc);
	} else if (!d->cut) {
		/*
		 * Not offloaded yet: now, if it qualifies (CUT_THRU at once; a
		 * FWD one waited for this), else when conntrack next says it
		 * does; fd_offload counts either (its offloaded_at_pass).
		 */
		(void)fd_offload_try(x->off, ct);
	} else if (x->npend == FD_IPS_PENDING || !x->cut_in_hardware ||
		   d->key.proto == IPPROTO_UDP || (orig = fd_ct_tuple(ct)) == NULL) {
		/*
		 * Cut now, not offloaded: with Cut in hardware off it is never
		 * offloaded (FWD waits for a pass); a QUIC flow is offloaded
		 * only once its server has answered, which it never will; or
		 * no room to wait.  The inspector drops its frames meanwhile.
		 */
		cut_unoffloaded(x, ct, line32(d->line));
	} else {
		/* offloaded in a moment, most likely (its hello came up before its offload) */
		x->pend[x->npend++] = (struct pending){ .ct_id = ct_id, .tuple = orig,
							.key = d->key,
							.deadline = now + FD_IPS_PENDING_MS,
							.line = line32(d->line) };
	}
	nfct_destroy(ct);
}

static void
pending_turn(struct fd_ips *x, uint64_t now)
{
	unsigned int w = 0;

	for (unsigned int i = 0; i < x->npend; i++) {
		struct pending *p = &x->pend[i];
		struct fd_offload_conn oc;

		if (fd_offload_find(x->off, FD_OFFLOAD_BY_CT, p->ct_id, p->tuple, &oc, NULL) == 0) {
			char tuple[128];

			cut_now(x, &oc, fd_tuple_format(&p->key, tuple, sizeof(tuple)), p->line);
			nfct_destroy(p->tuple);
		} else if (now >= p->deadline) {
			cut_pending_now(x, p);
			nfct_destroy(p->tuple);
		} else {
			x->pend[w++] = *p;
		}
	}
	x->npend = w;
}

void
fd_ips_turn(struct fd_ips *x)
{
	struct fd_inspect_decision d;
	uint64_t now = fd_clock_ms();

	if (x->off == NULL)
		return;
	for (int k = 0; k < 256 && fd_inspect_take(x->in, &d) == 1; k++)
		apply(x, &d, now);
	if (x->npend > 0)
		pending_turn(x, now);
	file_events(x);
	if (x->path[0] != '\0' && !fd_dirwatch_watched(x->dw, 0) && now - x->retried >= 1000) {
		x->retried = now;
		if (watch(x) == 0)
			load(x);
	}
}

/* ---- the parser's channel (its own thread) ---- */

/* A question for flowcut-inspect (the inspector's lock held). */
static int
parser_ask(void *actx, const void *msg, size_t len)
{
	struct fd_chan *ch = __atomic_load_n(&((struct fd_ips *)actx)->chan, __ATOMIC_ACQUIRE);

	return ch != NULL ? fd_chan_ask(ch, msg, len) : -ENOTCONN;
}

static int
parser_answer(void *arg, const void *msg, size_t len)
{
	struct fd_ips *x = arg;
	int rc = fd_inspect_answer(x->in, msg, len, fd_clock_ms(), to_host, x->relay);

	wake_for_news(x);
	return rc;
}

static void
parser_lost(void *arg)
{
	struct fd_ips *x = arg;

	fd_inspect_parser_lost(x->in, fd_clock_ms(), to_host, x->relay);
	wake_for_news(x);
}

int
fd_ips_parser(struct fd_ips *x, const char *path, struct fd_relay *relay)
{
	struct fd_chan_io io = { .answer = parser_answer, .lost = parser_lost, .arg = x };
	struct fd_chan *ch;

	x->relay = relay;
	ch = fd_chan_start(path, &io);
	if (ch == NULL)
		return -errno;
	__atomic_store_n(&x->chan, ch, __ATOMIC_RELEASE);
	return 0;
}

void
fd_ips_parser_stop(struct fd_ips *x)
{
	fd_chan_stop(x->chan);
}

/* ---- the rest ---- */

struct fd_ips *
fd_ips_open(void)
{
	struct fd_ips *x = calloc(1, sizeof(*x));

	if (x == NULL)
		return NULL;
	x->in = fd_inspect_open(&(struct fd_inspect_params){ .ask = parser_ask, .actx = x });
	x->dw = fd_dirwatch_open();
	if (x->in == NULL || x->dw == NULL) {
		int err = errno;

		fd_inspect_close(x->in);
		fd_dirwatch_close(x->dw);
		free(x);
		errno = err;
		return NULL;
	}
	x->hook = (struct fd_relay_hook){ .frame = hook_frame, .tick = hook_tick,
					    .tick_ms = hook_tick_ms, .arg = x };
	return x;
}

void
fd_ips_close(struct fd_ips *x)
{
	if (x == NULL)
		return;
	fd_chan_close(x->chan);	/* before the inspector: its thread answers into it */
	fd_dirwatch_close(x->dw);
	fd_inspect_close(x->in);
	for (unsigned int i = 0; i < x->npend; i++)
		nfct_destroy(x->pend[i].tuple);
	free(x);
}

void
fd_ips_wake_with(struct fd_ips *x, void (*wake)(void *), void *arg)
{
	x->wake = wake;
	x->wake_arg = arg;
}

bool
fd_ips_waiting(const struct fd_ips *x)
{
	return x->npend > 0;
}

const struct fd_relay_hook *
fd_ips_relay_hook(struct fd_ips *x)
{
	return &x->hook;
}

void
fd_ips_offload_cfg(struct fd_ips *x, struct fd_offload_cfg *cfg)
{
	cfg->inspect_verdict = offload_verdict;
	cfg->inspect_arg = x;
}

void
fd_ips_bind(struct fd_ips *x, struct fd_offload *off, const struct fd_ct_io *ct,
	    const struct fd_cmds *cmds, struct fd_cut *cut)
{
	x->off = off;
	x->ct = *ct;
	x->cmds = *cmds;
	x->cut = cut;
	ports_apply(x);
}

/*
 * The inspector's object in flowcutd's stats, in the order written, each
 * under one name.  COUNT(name, from): a counter, the field `name` of `from`
 * (st: fd_inspect's, x->st: this module's); OBJ(name,
 * value): a member made whole (json_t *, NULL: no memory); EACH(names,
 * count, array): one member a name of fd_inspect's lists (FD_INSPECT_WHYS,
 * FD_INSPECT_FRAMES).  docs/counters.md ("The inspector's") has a row for
 * each, and tests/run.sh checks that the lists agree.
 */
#define FD_IPS_STATS(COUNT, OBJ, EACH)						\
	OBJ(tls_ports, ports)							\
	OBJ(list, json_pack("{s:o, s:I, s:I, s:I, s:I, s:o}",			\
			    "path", x->path[0] ? json_string(x->path) : json_null(), \
			    "fingerprints", (json_int_t)(x->nja4 + x->nja3),	\
			    "ja4", (json_int_t)x->nja4, "ja3", (json_int_t)x->nja3, \
			    "bad_lines", (json_int_t)x->bad,			\
			    "error", x->error[0] ? json_string(x->error) : json_null())) \
	OBJ(parser, parser_json(x))						\
	OBJ(undecided, json_string(x->undecided_cut ? "cut" : "pass"))		\
	COUNT(reading, st)							\
	COUNT(entries, st)							\
	COUNT(hellos, st)							\
	COUNT(asked, st)							\
	COUNT(answered, st)							\
	COUNT(answers_stale, st)						\
	EACH(fd_inspect_why_name, FD_INSPECT_NWHY, st.why)			\
	EACH(fd_inspect_frame_name, FD_INSPECT_NFRAME, st.frames)		\
	COUNT(passes_lost, st)							\
	COUNT(evicted_waiting, st)						\
	COUNT(undecided_cut, st)						\
	COUNT(bytes, st)							\
	COUNT(cut_thru_set, x->st)						\
	COUNT(verdict_failed, x->st)						\
	COUNT(cuts, x->st)							\
	OBJ(cut_pending, json_integer(x->npend))				\
	COUNT(cut_not_offloaded, x->st)						\
	COUNT(cut_no_state, x->st)						\
	COUNT(cut_not_this_conn, x->st)						\
	COUNT(cut_unverified, x->st)

/* The channel to flowcut-inspect: where, whether it is up, how often it was lost, what it refused. */
static json_t *
parser_json(struct fd_ips *x)
{
	struct fd_chan_stats cs = { 0 };

	if (x->chan == NULL)
		return json_pack("{s:n, s:b}", "path", "up", 0);
	fd_chan_stats(x->chan, &cs);
	return json_pack("{s:s, s:b, s:I, s:I, s:I, s:I}", "path", fd_chan_path(x->chan), "up",
			 cs.up, "connects", (json_int_t)cs.connects, "lost", (json_int_t)cs.lost,
			 "refused", (json_int_t)cs.refused, "bad_answers",
			 (json_int_t)cs.bad_answers);
}

json_t *
fd_ips_stats_json(struct fd_ips *x)
{
	struct fd_inspect_stats st;
	json_t *o = json_object(), *ports = json_array();
	int bad = o == NULL || ports == NULL;

	fd_inspect_stats(x->in, &st);
	for (unsigned int i = 0; i < x->nports && !bad; i++)
		bad |= json_array_append_new(ports, json_integer(x->ports[i]));
	if (o == NULL) {
		json_decref(ports);
		return NULL;
	}
	/* json_object_set_new frees the value either way, and refuses a NULL one */
#define IPS_COUNT_(name, from) \
	bad |= json_object_set_new(o, #name, json_integer((json_int_t)(from).name));
#define IPS_OBJ_(name, value) bad |= json_object_set_new(o, #name, value);
#define IPS_EACH_(names, count, array)						\
	for (int i = 0; i < (count); i++)					\
		bad |= json_object_set_new(o, names(i), json_integer((json_int_t)(array)[i]));
	FD_IPS_STATS(IPS_COUNT_, IPS_OBJ_, IPS_EACH_)
#undef IPS_COUNT_
#undef IPS_OBJ_
#undef IPS_EACH_
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}
