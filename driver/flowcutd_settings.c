/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * flowcutd_settings: the settings file read and followed (a refusal said,
 * the last good settings in force), the never-cut list applied, and the
 * control socket's changes (settings-set, resync, cut-conn; the reads are
 * driver/report's).  See flowcutd.h.
 */
#include "flowcutd.h"

/*
 * `settings-set KEY VALUE|lines`: the file saved as flowcutctl settings set
 * saves it; flowcutd follows its file (the save takes effect as any save).
 */
static void
ctl_settings_set(const struct fd_report *x, const struct fd_ctl_req *req, char *ans, size_t cap)
{
	char err[512];
	json_t *doc;
	char *text;
	int rc = fc_settings_keys_save(x->settings, req->key, req->value, req->lines, err,
				       sizeof(err));

	if (rc != 0) {
		snprintf(ans, cap, "error %s\n", err);
		return;
	}
	doc = json_pack("{s:s, s:s}", "key", req->key, "value", req->value);
	text = doc ? json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
	snprintf(ans, cap, text ? "ok %s\n" : "ok {}\n", text);
	free(text);
	json_decref(doc);
}

/* A resync asked (fd_ctl.h: answered when it is through, with its figures). */
/*
 * A resync asked by hand: started (the job runs over the loop's turns, as
 * one lost events start), answered at once with its number - the value
 * `resyncs` takes when it starts.  The run is through once status says
 * `resyncs` at least that and `resyncing` false, or `resyncs` past it.
 */
static void
ctl_resync(const struct fd_report *x, char *ans, size_t cap)
{
	struct fd_offload_stats os;

	if (!*x->programmed) {
		snprintf(ans, cap, "error resync: the coprocessor is not programmed yet (its "
			 "programming resyncs)\n");
		return;
	}
	fd_offload_stats(x->off, &os);
	fd_offload_resync(x->off);	/* one running: this one follows it */
	snprintf(ans, cap, "ok {\"resync\":%" PRIu64 "}\n", os.resyncs + 1);
}

/* A control request the peer may ask (fd_ctl checked its credentials). */
void
ctl_on_request(void *arg, const struct fd_ctl_req *req, char *ans, size_t cap)
{
	const struct fd_report *x = arg;

	if (fd_report_answer(x, req, ans, cap))
		return;		/* a read: the report room's */
	if (req->op == FD_CTL_RESYNC)
		ctl_resync(x, ans, cap);
	else if (req->op == FD_CTL_SETTINGS_SET)
		ctl_settings_set(x, req, ans, cap);
	else if (req->op == FD_CTL_CUT_CONN)
		fd_trigger_conn(x->cut, req->id, ans, cap);	/* the cut by connection */
	else
		snprintf(ans, cap, "error request: not one flowcutd answers\n");
}

struct fd_ctl_access
ctl_access(const struct flowcutd *d, const struct fc_settings *s)
{
	struct fd_ctl_access a = { .read_group = s->control_read_group[0] != '\0',
				   .gid = (gid_t)s->control_read_gid, .secret_path = d->secret_path };

	snprintf(a.name, sizeof(a.name), "%s", s->control_read_group);
	return a;
}

/*
 * (Re)reads the settings file.  Returns true when the settings in force
 * changed; a file that does not parse changes nothing and says why.
 */
bool
settings_load(struct flowcutd *d, const char *path)
{
	struct fc_settings s;
	char err[sizeof(d->settings_error)] = "";
	int rc = fc_settings_load(path, &s, err, sizeof(err));

	if (rc == -ENOENT) {
		fc_settings_default(&s);	/* a new appliance: write the defaults down */
		rc = fc_settings_save(path, &s);
		if (rc != 0) {
			snprintf(err, sizeof(err), "%s: %s", path, strerror(-rc));
			fprintf(stderr, "flowcutd: settings: the defaults in force, not saved: %s\n",
				err);
		} else {
			err[0] = '\0';
		}
		rc = 0;
	}
	snprintf(d->settings_error, sizeof(d->settings_error), "%s", err);
	if (rc != 0) {
		fprintf(stderr, "flowcutd: settings refused, the last good stay in force: %s\n",
			d->settings_error);
		return false;
	}
	if (memcmp(&s, &d->cur, sizeof(s)) == 0)
		return false;
	d->cur = s;
	printf("flowcutd: settings: offload %s, cut in hardware %s, idle timeout %u s\n",
	       d->cur.offload ? "on" : "off", d->cur.cut_in_hardware ? "on" : "off", d->cur.idle_timeout);
	fflush(stdout);
	return true;
}

/*
 * Watches the settings file's folder (a save is a rename into it): the
 * descriptor to wait on, or -1 (said) when it cannot be watched.
 */
int
settings_watch(struct flowcutd *d, const char *path)
{
	int rc;

	d->settings_dw = fd_dirwatch_open();
	if (d->settings_dw == NULL) {
		fprintf(stderr, "flowcutd: watching %s: %s\n", path, strerror(errno));
		return -1;
	}
	rc = fd_dirwatch_add(d->settings_dw, 0, path, IN_CLOSE_WRITE | IN_MOVED_TO);
	if (rc != 0) {
		fprintf(stderr, "flowcutd: watching %s: %s\n", path, strerror(-rc));
		fd_dirwatch_close(d->settings_dw);
		d->settings_dw = NULL;
		return -1;
	}
	return fd_dirwatch_fd(d->settings_dw);
}

/* Has the settings file been written since the last call? */
bool
settings_touched(struct flowcutd *d)
{
	uint64_t changed;

	(void)fd_dirwatch_read(d->settings_dw, &changed);	/* failed: what came before */
	return changed != 0;
}

/*
 * The settings' never-cut list (never_cut, never_cut_file: read again at
 * every look, the file too) into flowcutd's never-cut sets and the cut.
 * When it changed: what it newly holds is released (fd_cut_never), and
 * once programmed the triggers are asked again, so what it no longer
 * holds is cut where a set, a list or a cut set still holds it.  A file
 * that cannot be read keeps the list in force, said.
 */
void
never_apply(struct flowcutd *d)
{
	static struct fc_list now;	/* the list in force */
	struct fc_list l = { 0 };
	char err[512];
	int rc = fc_settings_never_cut(&d->cur, &l, err, sizeof(err));

	if (rc != 0) {
		fprintf(stderr, "flowcutd: never_cut: %s; the list in force stays (%zu ranges)\n",
			rc == -ENOMEM ? "no memory" : err, now.n);
		fc_list_free(&l);
		return;
	}
	if (l.n == now.n && (l.n == 0 || memcmp(l.r, now.r, l.n * sizeof(*l.r)) == 0) &&
	    d->never_set) {
		fc_list_free(&l);
		return;
	}
	if (fd_nft_never(d->nft, &l) != 0 || fd_cut_never(d->cut, &l) < 0) {
		fc_list_free(&l);
		return;		/* said; looked at again at the next settings change */
	}
	printf("flowcutd: never_cut: %zu ranges never cut\n", l.n);
	d->never_wide = 0;
	for (size_t i = 0; i < l.n; i++) {
		const struct fc_range *r = &l.r[i];
		char t[96];

		if (!fc_range_wider_than(r, r->family == 4 ? FC_SETTINGS_NEVER_MIN_PREFIX4
							   : FC_SETTINGS_NEVER_MIN_PREFIX6))
			continue;
		/* allowed only by a lowered never_cut_min_prefix: said, and counted in the stats */
		if (d->never_wide++ < 8)
			fprintf(stderr, "flowcutd: never_cut: WARNING: %s is wider than a /%u: no trigger "
					"cuts anything in it (never_cut_min_prefix%c lowered)\n",
				fc_range_format(r, t, sizeof(t)),
				r->family == 4 ? FC_SETTINGS_NEVER_MIN_PREFIX4 : FC_SETTINGS_NEVER_MIN_PREFIX6,
				r->family == 4 ? '4' : '6');
	}
	fc_list_free(&now);
	now = l;
	d->never_set = true;
	if (d->programmed) {
		fd_watch_boot(d->wat);	/* what no longer is never cut, cut if still asked */
		fd_trigger_hand_all(d->nft, d->cut);
	}
}
