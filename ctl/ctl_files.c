/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ctl_files: flowcutctl's commands on files of this host, no link and no
 * flowcutd: the settings file (settings), a capture's ClientHellos
 * (fingerprint) and the operator's web secret (web-secret).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <arpa/inet.h>
#include <sys/socket.h>
#include <unistd.h>

#include <jansson.h>

#include "ctl.h"
#include "fc_ja.h"
#include "fc_secret.h"
#include "fc_settings.h"
#include "fc_tlscap.h"

/* ---- settings (the file; flowcutd follows it) ---- */

int
cmd_settings(const char *path, int argc, char **argv)
{
	struct fc_settings s;
	char err[512], value[1024] = "";
	int rc;

	if (argc != 0 && !(argc >= 3 && strcmp(argv[0], "set") == 0)) {
		fprintf(stderr, "flowcutctl: settings [set KEY VALUE...]\n");
		return 2;
	}
	/* the value's words joined: settings set watched_set inet filter blocked4 */
	for (int i = 2; i < argc; i++) {
		size_t used = strlen(value);

		if ((size_t)snprintf(value + used, sizeof(value) - used, "%s%s", i > 2 ? " " : "",
				     argv[i]) >= sizeof(value) - used) {
			fprintf(stderr, "flowcutctl: settings set: the value is too long\n");
			return 2;
		}
	}
	if (argc > 3)
		argc = 3;
	rc = fc_settings_load(path, &s, err, sizeof(err));
	if (rc == -ENOENT && argc == 3) {
		fc_settings_default(&s);	/* the first save makes the file */
	} else if (rc != 0) {
		fprintf(stderr, "flowcutctl: settings: %s\n", err);
		return 1;
	}
	if (argc == 3) {
		if (fc_settings_set(&s, argv[1], value, err, sizeof(err)) != 0) {
			fprintf(stderr, "flowcutctl: settings set: %s\n", err);
			return 2;
		}
		/* what the loader (flowcutd's) would refuse is not saved: never_cut's bound, its file */
		if (fc_settings_check(&s, err, sizeof(err)) != 0) {
			fprintf(stderr, "flowcutctl: settings set: %s (not saved)\n", err);
			return 2;
		}
		rc = fc_settings_save(path, &s);
		if (rc != 0) {
			fprintf(stderr, "flowcutctl: settings: saving %s: %s\n", path, strerror(-rc));
			return 1;
		}
	}
	if (json) {
		json_t *lists = json_array(), *ports = json_array(), *sets = json_array();

		for (unsigned int i = 0; i < s.nlists; i++)
			json_array_append_new(lists, json_string(s.lists[i]));
		for (unsigned int i = 0; i < s.nsets; i++)
			json_array_append_new(sets, json_pack("{s:s, s:s, s:s}", "family",
							      s.sets[i].family, "table",
							      s.sets[i].table, "set",
							      s.sets[i].set));
		for (unsigned int i = 0; i < s.ntls_ports; i++)
			json_array_append_new(ports, json_integer(s.tls_ports[i]));
		return print_json(json_pack("{s:b, s:b, s:i, s:o, s:o, s:o, s:o, s:I, s:i, s:i, s:o}",
					    "offload", s.offload, "cut_in_hardware",
					    s.cut_in_hardware, "idle_timeout", s.idle_timeout,
					    "watched_lists", lists, "watched_sets", sets,
					    "watched_fingerprints",
					    s.fingerprints[0] ? json_string(s.fingerprints) :
					    json_null(), "tls_ports", ports, "list_max_bytes",
					    (json_int_t)s.list_max_bytes, "list_min_prefix4",
					    s.list_min_prefix4, "list_min_prefix6",
					    s.list_min_prefix6, "control_read_group",
					    s.control_read_group[0] ? json_string(s.control_read_group)
								    : json_null()));
	}
	printf("offload          %s\n", s.offload ? "on" : "off");
	printf("cut_in_hardware  %s\n", s.cut_in_hardware ? "on" : "off");
	printf("idle_timeout     %u s\n", s.idle_timeout);
	for (unsigned int i = 0; i < s.nlists; i++)
		printf("watched_list     %s\n", s.lists[i]);
	if (s.fingerprints[0])
		printf("watched_fingerprints %s\n", s.fingerprints);
	printf("tls_ports       ");
	for (unsigned int i = 0; i < s.ntls_ports; i++)
		printf(" %u", s.tls_ports[i]);
	printf("\n");
	for (unsigned int i = 0; i < s.nsets; i++)
		printf("watched_set      %s %s %s\n", s.sets[i].family, s.sets[i].table,
		       s.sets[i].set);
	printf("list_max_bytes   %u\n", (unsigned int)s.list_max_bytes);
	printf("list_min_prefix4 %u\n", s.list_min_prefix4);
	printf("list_min_prefix6 %u\n", s.list_min_prefix6);
	if (s.control_read_group[0])
		printf("control_read_group %s (gid %u)\n", s.control_read_group,
		       (unsigned int)s.control_read_gid);
	return 0;
}

/* ---- fingerprint (a capture; no link) ---- */

/* Bytes as text: printable ASCII as is, anything else as \xNN. */
static void
escaped(const uint8_t *p, size_t n, char *out, size_t cap)
{
	size_t o = 0;

	for (size_t i = 0; i < n && o + 5 < cap; i++)
		o += (size_t)snprintf(out + o, cap - o, p[i] >= 0x20 && p[i] < 0x7f && p[i] != '\\' ?
				      "%c" : "\\x%02x", p[i]);
	out[o] = '\0';
}

static void
endpoint(const struct fc_tlscap_hello *ch, const uint8_t *addr, uint16_t port, char *out,
	 size_t cap)
{
	char a[INET6_ADDRSTRLEN];

	inet_ntop(ch->family, addr, a, sizeof(a));
	snprintf(out, cap, ch->family == AF_INET6 ? "[%s]:%u" : "%s:%u", a, port);
}

static int
fingerprint_one(void *arg, const struct fc_tlscap_hello *ch)
{
	static char ja3[FC_JA_STR_MAX], ja4r[FC_JA_STR_MAX];
	const struct fc_tls_hello *h = ch->hello;
	char cli[64], srv[64], sni[1024] = "", alpn[1024] = "", md5[FC_JA3_MD5_LEN + 1];
	char ja4[FC_JA4_LEN + 1];
	json_t *doc = arg;
	int rc = ch->rc;

	endpoint(ch, ch->src, ch->sport, cli, sizeof(cli));
	endpoint(ch, ch->dst, ch->dport, srv, sizeof(srv));
	if (rc == 0) {
		struct fc_tls_bytes name;
		unsigned int pos = 0;
		size_t o = 0;

		escaped(fc_tls_bytes_ptr(h, h->sni), h->sni.len, sni, sizeof(sni));
		while (fc_tls_alpn_next(h, &pos, &name) && o + 1 < sizeof(alpn)) {
			if (o > 0)
				alpn[o++] = ',';
			escaped(fc_tls_bytes_ptr(h, name), name.len, alpn + o, sizeof(alpn) - o);
			o += strlen(alpn + o);
		}
		rc = fc_ja4(h, ch->transport, ja4, ja4r, sizeof(ja4r));
		if (rc == 0)
			rc = fc_ja3(h, ja3, sizeof(ja3), md5) < 0 ? -EIO : 0;
		if (rc != 0)
			snprintf(ja3, sizeof(ja3), "fingerprint: %s", strerror(-rc));
	}
	if (json) {
		json_t *o = json_pack("{s:s, s:s, s:s, s:I}", "transport",
				      ch->transport == 'q' ? "quic" : "tcp", "client", cli, "server",
				      srv, "frame", (json_int_t)ch->frame);

		if (rc == 0) {
			json_object_set_new(o, "sni", h->has_sni ? json_string(sni) : json_null());
			json_object_set_new(o, "alpn", h->has_alpn ? json_string(alpn) : json_null());
			json_object_set_new(o, "ja4", json_string(ja4));
			json_object_set_new(o, "ja4_r", json_string(ja4r));
			json_object_set_new(o, "ja3", json_string(md5));
			json_object_set_new(o, "ja3_full", json_string(ja3));
		} else {
			json_object_set_new(o, "error", json_string(ch->rc != 0 ? h->err : ja3));
		}
		json_array_append_new(doc, o);
		return 0;
	}
	printf("%s %s -> %s  frame %" PRIu64 "\n", ch->transport == 'q' ? "quic" : "tcp", cli,
	       srv, ch->frame);
	if (rc != 0) {
		printf("  error     %s\n\n", ch->rc != 0 ? h->err : ja3);
		return 0;
	}
	printf("  sni       %s\n", h->has_sni ? sni : "-");
	printf("  alpn      %s\n", h->has_alpn ? alpn : "-");
	printf("  ja4       %s\n", ja4);
	printf("  ja4_r     %s\n", ja4r);
	printf("  ja3       %s\n", md5);
	printf("  ja3_full  %s\n\n", ja3);
	return 0;
}

int
cmd_fingerprint(int argc, char **argv)
{
	struct fc_tlscap_stats st;
	json_t *doc = json_array();
	char err[512];
	int n;

	if (argc != 1) {
		fprintf(stderr, "flowcutctl: fingerprint FILE\n");
		json_decref(doc);
		return 2;
	}
	n = fc_tlscap_read(argv[0], fingerprint_one, doc, &st, err, sizeof(err));
	if (n < 0) {
		fprintf(stderr, "flowcutctl: fingerprint: %s\n", err);
		json_decref(doc);
		return 1;
	}
	if (json)
		return print_json(json_pack("{s:s, s:o, s:{s:I, s:I, s:I, s:I, s:I}}", "file",
					    argv[0], "hellos", doc, "skipped", "ip_fragments",
					    (json_int_t)st.fragments, "truncated",
					    (json_int_t)st.truncated, "other", (json_int_t)st.other,
					    "out_of_order_dropped", (json_int_t)st.dropped,
					    "quic_undecrypted", (json_int_t)st.quic_undecrypted));
	json_decref(doc);
	printf("%d ClientHello%s over TCP and QUIC in %" PRIu64 " frames (%" PRIu64 " QUIC "
	       "Initial datagrams of clients)\n", n, n == 1 ? "" : "s", st.frames,
	       st.quic_initials);
	if (st.quic_undecrypted)
		printf("not read: %" PRIu64 " QUIC Initials that no client key opens (a server's "
		       "whose client the capture missed, or damaged)\n", st.quic_undecrypted);
	if (st.fragments || st.truncated || st.dropped)
		printf("not read: %" PRIu64 " IP fragments, %" PRIu64 " segments cut short by the "
		       "snapshot length, %" PRIu64 " out-of-order bytes over the cap\n",
		       st.fragments, st.truncated, st.dropped);
	return 0;
}

/* ---- web-secret (the operator's secret file; no link) ---- */

/*
 * web-secret [--make]: the secret file's path and flowcutd's verdict on it
 * (fc_secret_read, the check flowcutd's `auth` line makes), never the
 * secret; --make writes one when none is there (fc_secret_make, as
 * flowcutd's start does: root's, since a file of another user is refused).
 * Exit 0 when accepted, 1 when missing or refused (or the make failed).
 */
int
cmd_web_secret(const char *path, int argc, char **argv)
{
	char hex[FC_SECRET_HEX + 1], why[512] = "";
	bool make = false;
	int made = 0, rc;

	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--make") == 0) {
			make = true;
		} else if (strcmp(argv[i], "--json") == 0) {
			json = true;
		} else {
			fprintf(stderr, "flowcutctl: web-secret: '%s': it takes --make and --json "
				"alone\n", argv[i]);
			return 2;
		}
	}
	if (make && geteuid() != 0) {
		fprintf(stderr, "flowcutctl: web-secret --make: %s: root's to make (flowcutd "
			"refuses a secret file not root's)\n", path);
		return 1;
	}
	if (make && (made = fc_secret_make(path, why, sizeof(why))) < 0) {
		fprintf(stderr, "flowcutctl: web-secret --make: %s\n", why);
		return 1;
	}
	rc = fc_secret_read(path, hex, why, sizeof(why));
	explicit_bzero(hex, sizeof(hex));
	if (json)
		return print_json(json_pack("{s:s, s:b, s:b, s:o}", "path", path, "accepted",
					    rc == 0, "made", made == 1, "refused",
					    rc == 0 ? json_null() : json_string(why))) != 0 || rc != 0;
	if (rc == 0)
		printf("%s: %s; flowcutd accepts it (root's, 0600, %d hex digits)\n", path,
		       made == 1 ? "made" : "there", FC_SECRET_HEX);
	else if (rc == -ENOENT)
		printf("%s: missing: flowcutd accepts no secret (flowcutctl web-secret --make "
		       "writes one)\n", path);
	else
		printf("%s: refused: flowcutd accepts no secret: %s\n", path, why);
	return rc == 0 ? 0 : 1;
}
