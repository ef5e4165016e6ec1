/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * flowcutd_coproc: the coprocessor as flowcutd keeps it: its ports (LIFs)
 * and configuration word programmed at every boot, the lease renewed (a
 * lapse found: every connection judged again), its events read in bounded
 * batches.  See flowcutd.h.
 */
#include "flowcutd.h"

/*
 * The coprocessor failed closed while this flowcutd was away (stopped,
 * stuck, or before it started): every connection is judged again under a
 * new revision, and only then does the fast path forward again.
 */
static void
lease_lapsed(struct flowcutd *d)
{
	struct fd_offload *off = d->off;
	const struct fd_cmds *cmds = &d->cmds;

	fprintf(stderr, "flowcutd: the lease on the coprocessor had lapsed (lapse %u): "
		"every connection judged again, then forwarding again\n", d->lease.last.lapses);
	if (fd_offload_ruleset_changed(off) != 0) {
		/* not judged: it stays closed; the next renewal finds it lapsed again */
		fprintf(stderr, "flowcutd: judging every connection again failed; the coprocessor "
			"fails closed on\n");
		return;
	}
	if (fd_lease_reopen(&d->lease, cmds, fd_clock_ms()) != 0)
		fprintf(stderr, "flowcutd: the coprocessor still fails closed; trying again\n");
}

void
coproc_port_mac(unsigned int port, uint8_t mac[6])
{
	static const uint8_t base[6] = { 0x02, 0xfc, 0, 0, 0, 0 };

	memcpy(mac, base, 6);
	mac[5] = (uint8_t)(port + 1);
}

/*
 * fw_cfg as the settings say (Cut in hardware: the IPS switch), the gate
 * (OFFLOAD) open only with `open` and the settings' offload on.  The
 * value set in *set_out.  0 or the command's error (said).
 */
int
coproc_gate_set(struct flowcutd *d, bool open, uint32_t *set_out)
{
	const struct fd_cmds *cmds = &d->cmds;

	struct fc_ans_cfg now;
	struct fc_cmd_cfg set;
	int rc;

	rc = fd_cmds_call(cmds, FC_CMD_FW_CFG_PARAMS_GET, NULL, 0, &now, sizeof(now));
	if (rc != 0) {
		fprintf(stderr, "flowcutd: FW_CFG_PARAMS_GET: %s\n", strerror(-rc));
		return rc;
	}
	set.fw_cfg = now.fw_cfg & ~(FC_CFG_OFFLOAD | FC_CFG_IPS);
	set.fw_cfg |= (open && d->cur.offload ? FC_CFG_OFFLOAD : 0) |
		      (d->cur.cut_in_hardware ? FC_CFG_IPS : 0);
	rc = fd_cmds_call(cmds, FC_CMD_FW_CFG_PARAMS_SET, &set, sizeof(set), NULL, 0);
	if (rc != 0) {
		fprintf(stderr, "flowcutd: FW_CFG_PARAMS_SET 0x%03x: %s\n", set.fw_cfg, strerror(-rc));
		return rc;
	}
	if (set_out != NULL)
		*set_out = set.fw_cfg;
	d->fw_cfg_known = true;
	d->fw_cfg_last = set.fw_cfg;
	return 0;
}

/*
 * Everything the coprocessor forgets when it boots: the ports, then the
 * configuration word, the gate and the IPS switch set together on what it
 * reads back (never written as a constant).
 */
static int
program(struct flowcutd *d)
{
	const struct fd_cmds *cmds = &d->cmds;
	const struct opts *o = &d->o;

	int rc;

	for (unsigned int p = 0; p < o->ports; p++) {
		struct fc_cmd_lif l = { .id = (uint16_t)p, .port = (uint16_t)p, .mtu = 1500 };

		coproc_port_mac(p, l.mac);
		rc = fd_cmds_call(cmds, FC_CMD_LIF_ADD_UPDATE, &l, sizeof(l), NULL, 0);
		if (rc != 0) {
			fprintf(stderr, "flowcutd: LIF_ADD_UPDATE port %u: %s\n", p, strerror(-rc));
			return rc;
		}
	}
	return coproc_gate_set(d, false, NULL);
}

/*
 * The coprocessor programmed once it answers, with the lease held first,
 * or the lease renewed.  Returns false when the turn must end here (the
 * lease not taken: said, tried again after 100 ms).
 */
bool
coproc_lease_and_program(struct flowcutd *d)
{
	int rc;

	if (d->programmed) {
		if (fd_lease_renew(&d->lease, &d->cmds, fd_clock_ms(), false) == 1)
			lease_lapsed(d);
		return true;
	}
	/*
	 * The gate shut before the lease is taken: fw_cfg outlives the
	 * flowcutd that set it, and its connections (their states gone
	 * meanwhile, or passed by rules changed since) would forward from the
	 * moment the lease is held, until this one's resync and revision
	 * bump.  It opens once those are done, below.  The lease next: the
	 * gate forwards only with it held.
	 */
	if (coproc_gate_set(d, false, NULL) != 0) {
		usleep(100000);	/* said; tried again */
		return false;
	}
	rc = fd_lease_renew(&d->lease, &d->cmds, fd_clock_ms(), true);
	if (rc < 0) {
		usleep(100000);	/* said; tried again */
		return false;
	}
	d->programmed = program(d) == 0;
	if (d->programmed) {
		uint32_t fw_cfg = 0;

		d->programmed_boot = lk_boot_id(d->lk);
		fd_offload_resync(d->off);	/* the connections conntrack holds */
		fd_watch_boot(d->wat);	/* what the watched sets and lists hold, cut */
		fd_trigger_hand_all(d->nft, d->cut);	/* and the cut sets (a flowcutd before's too) */
		/*
		 * Marks a predecessor's rules set, and rules changed while
		 * no flowcutd ran, are not this one's to trust: everything
		 * is judged again once, cut connections kept.
		 */
		if (rc == 1)
			lease_lapsed(d);
		else if (!d->judged)
			(void)fd_offload_ruleset_changed(d->off);	/* said */
		d->judged = true;
		/* judged: what a flowcutd before made forwards no more; the gate opens */
		if (coproc_gate_set(d, true, &fw_cfg) != 0) {
			d->programmed = false;	/* tried again */
			return true;
		}
		printf("flowcutd: coprocessor %016" PRIx64 " programmed: %u ports, fw_cfg 0x%03x\n",
		       lk_boot_id(d->lk), d->o.ports, fw_cfg);
		fflush(stdout);
	}
	return true;
}

/*
 * A bounded batch of the coprocessor's events (FD_EVENTS_PER_TURN).
 * Returns false when the turn must end here (the link reset: resynced).
 */
bool
coproc_events(struct flowcutd *d)
{
	struct lk_event ev;
	int rc = 0;

	for (int k = 0; k < FD_EVENTS_PER_TURN && (rc = lk_event_take(d->lk, &ev)) == 0; k++) {
		if (ev.type != LK_EV_BOOT)
			fd_offload_fp_event(d->off, &ev);
		else if (ev.boot_id != d->programmed_boot)
			d->programmed = false;	/* it forgot everything */
	}
	if (rc == -EOVERFLOW && d->programmed) {
		/* the coprocessor lost events: only a reconciliation tells what */
		d->mst.events_lost++;
		fprintf(stderr, "flowcutd: coprocessor events lost; reconciling\n");
		fd_offload_resync(d->off);
	}
	if (rc == -ECONNRESET || rc == -EPROTO) {
		d->programmed = false;
		if (lk_resync(d->lk) != 0)
			usleep(100000);	/* still booting; EINTR only shortens it */
		return false;
	}
	return true;
}
