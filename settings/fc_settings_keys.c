/* SPDX-License-Identifier: BSD-3-Clause */
/* fc_settings_keys: see fc_settings_keys.h. */
#include "fc_settings_keys.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const struct fc_settings_key fc_settings_keys[] = {
	{ "cut_in_hardware", "bool", "on",
	  "A cut drops the connection on the coprocessor, both ways, then kills its state; off: "
	  "the connection is taken out of the fast path and its frames reach the host." },
	{ "offload", "bool", "on",
	  "The gate: connections go to the fast path; off, every frame goes to the host." },
	{ "idle_timeout", "number", "60",
	  "Seconds a quiet connection stays in the fast path (at most conntrack's timeout)." },
	{ "watched_list", "list", "",
	  "A block list file whose addresses are dropped both ways and their connections cut." },
	{ "watched_set", "list", "",
	  "FAMILY TABLE SET (or a pattern): a set of the host's ruleset whose additions are cut." },
	{ "watched_fingerprints", "path", "",
	  "A file of JA4 and JA3 fingerprints whose TLS and QUIC connections are cut." },
	{ "tls_ports", "text", "443 465 853 993 995 8443",
	  "The ports whose ClientHello the inspector reads (1 to 16, blank-separated)." },
	{ "inspect_hold_ms", "number", "2000",
	  "Milliseconds a TLS connection's frames are held while its hello is read; it is still "
	  "read, and cut if listed, after." },
	{ "inspect_read_timeout", "number", "120",
	  "Seconds a ClientHello may take in all before the connection is undecided." },
	{ "inspect_undecided", "text", "pass",
	  "pass or cut: what a TLS connection gets whose hello cannot be read (memory, malformed, "
	  "time, ambiguous bytes)." },
	{ "control_read_group", "text", "",
	  "A group whose members may read flowcutd's state over its control socket." },
	{ "list_max_bytes", "number", "67108864",
	  "The largest watched list or fingerprints file read, in bytes." },
	{ "list_min_prefix4", "number", "1",
	  "A list's IPv4 entry wider than this prefix is a bad line (0: none refused)." },
	{ "list_min_prefix6", "number", "1",
	  "A list's IPv6 entry wider than this prefix is a bad line (0: none refused)." },
	{ "never_cut", "list", "",
	  "Addresses and prefixes that none of flowcut's triggers ever cut." },
	{ "never_cut_file", "path", "",
	  "A list file of addresses and prefixes never cut." },
	{ "never_cut_min_prefix4", "number", "16",
	  "A never_cut IPv4 entry wider than this prefix is refused: lower it to allow a wider one "
	  "(warned)." },
	{ "never_cut_min_prefix6", "number", "48",
	  "The same for IPv6." },
};

const size_t fc_settings_nkeys = sizeof(fc_settings_keys) / sizeof(fc_settings_keys[0]);

const struct fc_settings_key *
fc_settings_keys_find(const char *name)
{
	for (size_t i = 0; i < fc_settings_nkeys; i++)
		if (strcmp(fc_settings_keys[i].name, name) == 0)
			return &fc_settings_keys[i];
	return NULL;
}

/* Key k's value from the file's text: a string, or a list's array; "" / [] when absent. */
static json_t *
value_of(const char *text, const struct fc_settings_key *k)
{
	bool list = strcmp(k->kind, "list") == 0;
	json_t *v = list ? json_array() : json_string("");
	size_t kn = strlen(k->name);

	for (const char *l = text; v != NULL && l != NULL && *l; l = strchr(l, '\n'), l += l != NULL) {
		const char *end = strchr(l, '\n');
		size_t n = end ? (size_t)(end - l) : strlen(l);

		if (n < kn + 3 || memcmp(l, k->name, kn) != 0 || memcmp(l + kn, " = ", 3) != 0)
			continue;
		if (list ? json_array_append_new(v, json_stringn(l + kn + 3, n - kn - 3)) != 0 :
		    json_string_setn(v, l + kn + 3, n - kn - 3) != 0) {
			json_decref(v);
			return NULL;
		}
	}
	return v;
}

json_t *
fc_settings_keys_json(const struct fc_settings *s)
{
	char text[FC_SETTINGS_MAX_BYTES];
	json_t *a = json_array();
	int n = fc_settings_format(s, text, sizeof(text));

	if (n < 0 || (size_t)n >= sizeof(text)) {
		json_decref(a);
		return NULL;
	}
	for (size_t i = 0; a != NULL && i < fc_settings_nkeys; i++) {
		const struct fc_settings_key *k = &fc_settings_keys[i];
		json_t *v = value_of(text, k);

		if (v == NULL || json_array_append_new(a, json_pack("{s:s, s:o, s:s, s:s, s:s}", "key",
								      k->name, "value", v, "default",
								      k->def, "help", k->help,
								      "kind", k->kind)) != 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

/*
 * The new settings whole, as fc_settings_load would read them back: their
 * text (fc_settings_format's, what the save writes) parsed again, then
 * fc_settings_check (never_cut_file read as the loader reads it).  A key
 * checked alone passes values the load then refuses (a never_cut_file
 * that is missing), and a saved file the load refuses locks out every
 * later settings-set; so the save is refused first,
 * with the reason, and nothing is written.
 */
static int
check_whole(const struct fc_settings *s, char *why, size_t len)
{
	char *text = malloc(FC_SETTINGS_MAX_BYTES + 1);
	struct fc_settings back;
	int n = text ? fc_settings_format(s, text, FC_SETTINGS_MAX_BYTES + 1) : -1, rc;

	if (text == NULL) {
		snprintf(why, len, "no memory to check them");
		return -ENOMEM;
	}
	if (n < 0 || (size_t)n > FC_SETTINGS_MAX_BYTES) {
		snprintf(why, len, "the file would be longer than %u bytes", FC_SETTINGS_MAX_BYTES);
		free(text);
		return -EOVERFLOW;
	}
	rc = fc_settings_parse(text, (size_t)n, &back, why, len);
	free(text);
	if (rc != 0)
		return rc;
	back.never_file_line = 0;	/* said as the key, not as a line of a file not written */
	return fc_settings_check(&back, why, len);
}

int
fc_settings_keys_save(const char *path, const char *key, const char *value, bool lines,
		      char *err, size_t errlen)
{
	const struct fc_settings_key *k = fc_settings_keys_find(key);
	struct fc_settings s;
	char one[FC_SETTINGS_MAX_BYTES > 4096 ? 4096 : FC_SETTINGS_MAX_BYTES], why[256];
	int rc;

	if (k == NULL || (lines && strcmp(k->kind, "list") != 0)) {
		snprintf(err, errlen, "%s: %s", key, k == NULL ? "not a key of the settings" :
			 "takes one value (settings-set KEY VALUE), not lines");
		return -EINVAL;
	}
	rc = fc_settings_load(path, &s, err, errlen);
	if (rc == -ENOENT)
		fc_settings_default(&s);	/* the first save makes the file */
	else if (rc != 0)
		return rc;
	if (strcmp(k->kind, "list") == 0 && fc_settings_set(&s, key, "-", why, sizeof(why)) != 0) {
		snprintf(err, errlen, "%s: %s", key, why);
		return -EINVAL;
	}
	for (const char *l = value; l != NULL && (*l || !lines); ) {
		const char *end = lines ? strchr(l, '\n') : NULL;
		size_t n = end ? (size_t)(end - l) : strlen(l);

		snprintf(one, sizeof(one), "%.*s", (int)n, l);
		if (fc_settings_set(&s, key, one, why, sizeof(why)) != 0) {
			snprintf(err, errlen, "%s: %s", key, why);
			return -EINVAL;
		}
		l = end ? end + 1 : NULL;
	}
	rc = check_whole(&s, why, sizeof(why));
	if (rc != 0) {
		snprintf(err, errlen, "%s: not saved, the settings would be refused: %s", key, why);
		return -EINVAL;
	}
	rc = fc_settings_save(path, &s);
	if (rc != 0)
		snprintf(err, errlen, "%s: saving %s: %s", key, path, strerror(-rc));
	return rc;
}
