/* SPDX-License-Identifier: BSD-3-Clause */
/* fc_settings: see fc_settings.h. */
#include "fc_settings.h"

#include <ctype.h>
#include <errno.h>
#include <grp.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fc_file.h"

#define LINE_MAX_LEN 1024

void
fc_settings_default(struct fc_settings *s)
{
	memset(s, 0, sizeof(*s));
	s->offload = true;
	s->cut_in_hardware = true;
	s->idle_timeout = 60;
	s->inspect_hold_ms = 2000;
	s->inspect_read_timeout = 120;
	s->list_max_bytes = FC_SETTINGS_LIST_MAX_BYTES_DEFAULT;
	s->list_min_prefix4 = 1;
	s->list_min_prefix6 = 1;
	s->never_min_prefix4 = FC_SETTINGS_NEVER_MIN_PREFIX4;
	s->never_min_prefix6 = FC_SETTINGS_NEVER_MIN_PREFIX6;
	{
		static const uint16_t tls[] = FC_SETTINGS_TLS_PORTS_DEFAULT;

		memcpy(s->tls_ports, tls, sizeof(tls));
		s->ntls_ports = sizeof(tls) / sizeof(tls[0]);
	}
}

/*
 * An error: "line N: what" from the file, never a byte of its text (the
 * file may be anything a path names); "what: 'VALUE'" from flowcutctl,
 * whose value is its caller's own argument.
 */
static int
bad(char *err, size_t errlen, unsigned int line, const char *what, const char *given)
{
	if (line)
		snprintf(err, errlen, "line %u: %s", line, what);
	else if (given != NULL)
		snprintf(err, errlen, "%s: '%s'", what, given);
	else
		snprintf(err, errlen, "%s", what);
	return -EINVAL;
}

static int
onoff(const char *v, bool *out)
{
	if (strcmp(v, "on") == 0)
		*out = true;
	else if (strcmp(v, "off") == 0)
		*out = false;
	else
		return -1;
	return 0;
}

/* A number in decimal, digits only, min to max: 0 and *out, or -1. */
static int
number(const char *v, unsigned long min, unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long n;

	if (v[0] < '0' || v[0] > '9')
		return -1;
	errno = 0;
	n = strtoul(v, &end, 10);
	if (errno || *end || n < min || n > max)
		return -1;
	*out = n;
	return 0;
}

/* watched_fingerprints: an absolute path, or "-" (by flowcutctl) for none. */
static int
fingerprints_set(struct fc_settings *s, const char *value, unsigned int line, char *err,
		 size_t errlen)
{
	if (line == 0 && strcmp(value, "-") == 0) {
		memset(s->fingerprints, 0, sizeof(s->fingerprints));
		return 0;
	}
	if (value[0] != '/')
		return bad(err, errlen, line, "watched_fingerprints is not an absolute path", value);
	if (strlen(value) >= FC_SETTINGS_PATH_MAX)
		return bad(err, errlen, line, "watched_fingerprints is longer than 255 bytes", NULL);
	memset(s->fingerprints, 0, sizeof(s->fingerprints));
	memcpy(s->fingerprints, value, strlen(value));
	return 0;
}

/* tls_ports: 1 to 16 ports, 1 to 65535, blank-separated, none twice. */
static int
tls_ports_set(struct fc_settings *s, const char *value, unsigned int line, char *err,
	      size_t errlen)
{
	uint16_t ports[FC_SETTINGS_MAX_TLS_PORTS] = { 0 };
	unsigned int n = 0;
	const char *p = value;

	while (*p != '\0') {
		char word[16];
		size_t len = strcspn(p, " \t");
		unsigned long v;

		if (len == 0) {
			p++;
			continue;
		}
		snprintf(word, sizeof(word), "%.*s", (int)(len < 15 ? len : 15), p);
		if (len > 5 || number(word, 1, 65535, &v) != 0)
			return bad(err, errlen, line, "tls_ports: not a port (1 to 65535)", word);
		for (unsigned int i = 0; i < n; i++)
			if (ports[i] == v)
				return bad(err, errlen, line, "tls_ports: a port is given twice", word);
		if (n == FC_SETTINGS_MAX_TLS_PORTS)
			return bad(err, errlen, line, "tls_ports: more than 16 ports", NULL);
		ports[n++] = (uint16_t)v;
		p += len;
	}
	if (n == 0)
		return bad(err, errlen, line, "tls_ports: no port given", NULL);
	memcpy(s->tls_ports, ports, sizeof(ports));
	s->ntls_ports = n;
	return 0;
}

/* An nftables name as nft's scanner reads one: a letter, '_' or '.', then letters, digits, '_', '.', '-', '/'. */
static bool
nft_name(const char *v)
{
	if (!isalpha((unsigned char)v[0]) && v[0] != '_' && v[0] != '.')
		return false;
	for (const char *p = v + 1; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr("_.-/", *p))
			return false;
	return true;
}

bool
fc_settings_is_pattern(const char *set)
{
	return strpbrk(set, "*?[") != NULL;
}

/*
 * A pattern on a set's name (fnmatch(3), no flags): nftables name
 * characters, `*`, `?`, and bracket expressions `[...]` or `[!...]` of
 * name characters and ranges (`[0-9]`).  NULL when it is one, else why
 * not.  No character classes (`[[:digit:]]`) and no backslash: a set's
 * name holds none of the pattern characters, so none needs escaping.
 */
static const char *
pattern_bad(const char *v)
{
	for (const char *p = v; *p; p++) {
		const char *start;

		if (*p == '*' || *p == '?' || isalnum((unsigned char)*p) || strchr("_.-/", *p))
			continue;
		if (*p != '[')
			return "watched_set: a pattern holds a character that is neither a name's "
			       "nor one of '*', '?', '[...]'";
		start = ++p;
		if (*p == '!' || *p == '^')
			start = ++p;
		for (; *p && *p != ']'; p++)
			if (!isalnum((unsigned char)*p) && !strchr("_.-/", *p))
				return "watched_set: a pattern's '[...]' holds a character that is "
				       "not a name's";
		if (*p == '\0')
			return "watched_set: a pattern's '[' is not closed by ']'";
		if (p == start)
			return "watched_set: a pattern's '[]' is empty";
	}
	return NULL;
}

/* watched_set = FAMILY TABLE SET, or FAMILY TABLE PATTERN, added to s. */
static int
set_watched_set(struct fc_settings *s, const char *value, unsigned int line, char *err,
		size_t errlen)
{
	static const char *const families[] = { "ip", "ip6", "inet", "arp", "bridge", "netdev" };
	char copy[LINE_MAX_LEN + 1], *w[4], *save = NULL;
	struct fc_watched_set ws;
	unsigned int n = 0, f;

	snprintf(copy, sizeof(copy), "%s", value);
	for (char *t = strtok_r(copy, " \t", &save); t && n < 4; t = strtok_r(NULL, " \t", &save))
		w[n++] = t;
	if (n != 3)
		return bad(err, errlen, line, "watched_set is not FAMILY TABLE SET (three words, "
			   "e.g. inet filter blocked4)", value);
	for (f = 0; f < sizeof(families) / sizeof(families[0]); f++)
		if (strcmp(w[0], families[f]) == 0)
			break;
	if (f == sizeof(families) / sizeof(families[0]))
		return bad(err, errlen, line, "watched_set: the family is not ip, ip6, inet, arp, "
			   "bridge or netdev", w[0]);
	for (unsigned int i = 1; i < 3; i++) {
		if (strlen(w[i]) >= FC_SETTINGS_NAME_MAX)
			return bad(err, errlen, line, "watched_set: a name is longer than 63 "
				   "characters", w[i]);
		if (i == 2 && fc_settings_is_pattern(w[i])) {
			const char *why = pattern_bad(w[i]);

			if (why != NULL)
				return bad(err, errlen, line, why, w[i]);
			continue;
		}
		if (!nft_name(w[i]))
			return bad(err, errlen, line, "watched_set: a name is not an nftables name "
				   "(a letter, '_' or '.', then letters, digits, '_', '.', '-', '/')",
				   w[i]);
	}
	memset(&ws, 0, sizeof(ws));	/* whole, so two settings compare byte for byte */
	snprintf(ws.family, sizeof(ws.family), "%s", w[0]);
	snprintf(ws.table, sizeof(ws.table), "%s", w[1]);
	snprintf(ws.set, sizeof(ws.set), "%s", w[2]);
	for (unsigned int i = 0; i < s->nsets; i++)
		if (memcmp(&s->sets[i], &ws, sizeof(ws)) == 0)
			return bad(err, errlen, line, "watched_set is given twice", value);
	if (s->nsets == FC_SETTINGS_MAX_SETS)
		return bad(err, errlen, line, "more than 16 watched sets", NULL);
	s->sets[s->nsets++] = ws;
	return 0;
}

/* watched_list = PATH, added to s. */
static int
set_watched_list(struct fc_settings *s, const char *value, unsigned int line, char *err,
		 size_t errlen)
{
	if (value[0] != '/')
		return bad(err, errlen, line, "watched_list is not an absolute path", value);
	if (strlen(value) >= FC_SETTINGS_PATH_MAX)
		return bad(err, errlen, line, "watched_list is longer than 255 bytes", NULL);
	if (s->nlists == FC_SETTINGS_MAX_LISTS)
		return bad(err, errlen, line, "more than 16 watched lists", NULL);
	for (unsigned int i = 0; i < s->nlists; i++)
		if (strcmp(s->lists[i], value) == 0)
			return bad(err, errlen, line, "watched_list is given twice", value);
	snprintf(s->lists[s->nlists++], FC_SETTINGS_PATH_MAX, "%s", value);
	return 0;
}

/*
 * never_cut = ADDR[/LEN] ...: each entry added to s (fc_list_entry, exact:
 * no range, no host part set); "-" (by flowcutctl) removes them all.  An
 * error names the entry by its place on the line, from the file.
 */
static int
never_cut_set(struct fc_settings *s, const char *value, unsigned int line, char *err,
	      size_t errlen)
{
	char copy[LINE_MAX_LEN + 1], *save = NULL, why[160];
	unsigned int k = 0, n = s->nnever;
	struct fc_range r[FC_SETTINGS_MAX_NEVER];

	if (line == 0 && strcmp(value, "-") == 0) {
		memset(s->never, 0, sizeof(s->never));
		s->nnever = 0;
		return 0;
	}
	memcpy(r, s->never, sizeof(r));
	snprintf(copy, sizeof(copy), "%s", value);
	for (char *t = strtok_r(copy, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
		/* room first: r[n] is written by the parse */
		const char *what = n == FC_SETTINGS_MAX_NEVER
			? "more than 64 never_cut entries (a longer list: never_cut_file)"
			: fc_list_entry(t, true, &r[n]);

		k++;
		if (what != NULL) {
			if (line)
				snprintf(why, sizeof(why), "never_cut, entry %u: %s", k, what);
			else
				snprintf(why, sizeof(why), "never_cut: %s", what);
			return bad(err, errlen, line, why, t);
		}
		n++;
	}
	memcpy(s->never, r, sizeof(r));
	s->nnever = n;
	return 0;
}

/* never_cut_file = PATH (absolute), or "-" (by flowcutctl) for none. */
static int
never_file_set(struct fc_settings *s, const char *value, unsigned int line, char *err,
	       size_t errlen)
{
	memset(s->never_file, 0, sizeof(s->never_file));
	s->never_file_line = 0;
	if (line == 0 && strcmp(value, "-") == 0)
		return 0;
	if (value[0] != '/')
		return bad(err, errlen, line, "never_cut_file is not an absolute path", value);
	if (strlen(value) >= FC_SETTINGS_PATH_MAX)
		return bad(err, errlen, line, "never_cut_file is longer than 255 bytes", NULL);
	memcpy(s->never_file, value, strlen(value));
	s->never_file_line = line;
	return 0;
}

/* The keys, in the order of their bits in `seen`. */
enum key {
	K_OFFLOAD, K_CUT_IN_HARDWARE, K_IDLE_TIMEOUT, K_WATCHED_LIST, K_WATCHED_SET,
	K_FINGERPRINTS, K_TLS_PORTS, K_LIST_MAX_BYTES, K_LIST_MIN_PREFIX4, K_LIST_MIN_PREFIX6,
	K_READ_GROUP, K_NEVER_CUT, K_NEVER_FILE, K_HOLD_MS, K_READ_TIMEOUT, K_UNDECIDED,
	K_NEVER_MIN_PREFIX4, K_NEVER_MIN_PREFIX6, NKEYS
};

static const char *const key_names[NKEYS] = {
	"offload", "cut_in_hardware", "idle_timeout", "watched_list", "watched_set",
	"watched_fingerprints", "tls_ports", "list_max_bytes", "list_min_prefix4",
	"list_min_prefix6", "control_read_group", "never_cut", "never_cut_file",
	"inspect_hold_ms", "inspect_read_timeout", "inspect_undecided", "never_cut_min_prefix4",
	"never_cut_min_prefix6",
};

/* The numeric keys: their range and what a value out of it is told. */
static const struct {
	enum key k;
	unsigned long min, max;
	const char *why;
} numeric[] = {
	{ K_IDLE_TIMEOUT, 1, 65535, "idle_timeout is not 1 to 65535 seconds" },
	{ K_LIST_MAX_BYTES, FC_SETTINGS_LIST_MAX_BYTES_MIN, FC_SETTINGS_LIST_MAX_BYTES_MAX,
	  "list_max_bytes is not 1024 to 1073741824 (bytes)" },
	{ K_LIST_MIN_PREFIX4, 0, 32, "list_min_prefix4 is not 0 to 32" },
	{ K_LIST_MIN_PREFIX6, 0, 128, "list_min_prefix6 is not 0 to 128" },
	{ K_HOLD_MS, 100, 600000, "inspect_hold_ms is not 100 to 600000 (ms)" },
	{ K_READ_TIMEOUT, 1, 3600, "inspect_read_timeout is not 1 to 3600 seconds" },
	{ K_NEVER_MIN_PREFIX4, 0, 32, "never_cut_min_prefix4 is not 0 to 32" },
	{ K_NEVER_MIN_PREFIX6, 0, 128, "never_cut_min_prefix6 is not 0 to 128" },
};

static void
numeric_put(struct fc_settings *s, enum key k, unsigned long v)
{
	switch (k) {
	case K_IDLE_TIMEOUT:
		s->idle_timeout = (uint16_t)v;
		break;
	case K_LIST_MAX_BYTES:
		s->list_max_bytes = (uint32_t)v;
		break;
	case K_LIST_MIN_PREFIX4:
		s->list_min_prefix4 = (uint8_t)v;
		break;
	case K_HOLD_MS:
		s->inspect_hold_ms = (uint32_t)v;
		break;
	case K_READ_TIMEOUT:
		s->inspect_read_timeout = (uint16_t)v;
		break;
	case K_NEVER_MIN_PREFIX4:
		s->never_min_prefix4 = (uint8_t)v;
		break;
	case K_NEVER_MIN_PREFIX6:
		s->never_min_prefix6 = (uint8_t)v;
		break;
	default:
		s->list_min_prefix6 = (uint8_t)v;
		break;
	}
}

/*
 * control_read_group = NAME: a group of this machine (getgrnam_r, so an
 * unknown one is refused here), or "-" (by flowcutctl) for none.  From the
 * file, the error names the key, not the value (bad()).
 */
static int
read_group_set(struct fc_settings *s, const char *value, unsigned int line, char *err,
	       size_t errlen)
{
	struct group g, *found = NULL;
	char buf[16384];
	int rc;

	if (line == 0 && strcmp(value, "-") == 0) {
		memset(s->control_read_group, 0, sizeof(s->control_read_group));
		s->control_read_gid = 0;
		return 0;
	}
	if (strlen(value) >= FC_SETTINGS_NAME_MAX)
		return bad(err, errlen, line, "control_read_group is longer than 63 characters",
			   value);
	for (const char *p = value; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr("_.-", *p))
			return bad(err, errlen, line, "control_read_group is not a group name "
				   "(letters, digits, '_', '.', '-')", value);
	rc = getgrnam_r(value, &g, buf, sizeof(buf), &found);
	if (rc != 0 || found == NULL)
		return bad(err, errlen, line, rc ? "control_read_group: the group database "
			   "could not be read" : "control_read_group is not a group of this "
			   "machine", value);
	memset(s->control_read_group, 0, sizeof(s->control_read_group));
	memcpy(s->control_read_group, value, strlen(value));
	s->control_read_gid = (uint32_t)g.gr_gid;
	return 0;
}

/* One key on s; `seen` catches a key given twice (line > 0 only). */
static int
set_one(struct fc_settings *s, const char *key, const char *value, unsigned int line,
	unsigned int *seen, char *err, size_t errlen)
{
	char why[128];
	unsigned int k;

	for (k = 0; k < NKEYS; k++)
		if (strcmp(key, key_names[k]) == 0)
			break;
	if (k == NKEYS)
		return bad(err, errlen, line, "unknown key (docs/settings.md lists them)", key);
	if (k != K_WATCHED_LIST && k != K_WATCHED_SET && k != K_NEVER_CUT && seen != NULL && (*seen & (1u << k))) {
		snprintf(why, sizeof(why), "'%s' is given twice", key_names[k]);
		return bad(err, errlen, line, why, NULL);
	}
	if (seen != NULL)
		*seen |= 1u << k;
	for (size_t i = 0; i < sizeof(numeric) / sizeof(numeric[0]); i++)
		if (numeric[i].k == k) {
			unsigned long v;

			if (number(value, numeric[i].min, numeric[i].max, &v) != 0)
				return bad(err, errlen, line, numeric[i].why, value);
			numeric_put(s, (enum key)k, v);
			return 0;
		}
	switch (k) {
	case K_OFFLOAD:
	case K_CUT_IN_HARDWARE:
		if (onoff(value, k == K_OFFLOAD ? &s->offload : &s->cut_in_hardware) != 0) {
			snprintf(why, sizeof(why), "%s is not on or off", key_names[k]);
			return bad(err, errlen, line, why, value);
		}
		return 0;
	case K_UNDECIDED:
		if (strcmp(value, "pass") != 0 && strcmp(value, "cut") != 0)
			return bad(err, errlen, line, "inspect_undecided is not pass or cut", value);
		s->inspect_undecided_cut = strcmp(value, "cut") == 0;
		return 0;
	case K_FINGERPRINTS:
		return fingerprints_set(s, value, line, err, errlen);
	case K_TLS_PORTS:
		return tls_ports_set(s, value, line, err, errlen);
	case K_READ_GROUP:
		return read_group_set(s, value, line, err, errlen);
	case K_NEVER_CUT:
		return never_cut_set(s, value, line, err, errlen);
	case K_NEVER_FILE:
		return never_file_set(s, value, line, err, errlen);
	default:
		if (line == 0 && strcmp(value, "-") == 0) {
			/* flowcutctl: none of them, as parsed without them */
			if (k == K_WATCHED_LIST) {
				memset(s->lists, 0, sizeof(s->lists));
				s->nlists = 0;
			} else {
				memset(s->sets, 0, sizeof(s->sets));
				s->nsets = 0;
			}
			return 0;
		}
		return k == K_WATCHED_LIST ? set_watched_list(s, value, line, err, errlen)
					   : set_watched_set(s, value, line, err, errlen);
	}
}

static char *
trim(char *a)
{
	char *e;

	while (*a == ' ' || *a == '\t')
		a++;
	e = a + strlen(a);
	while (e > a && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		*--e = '\0';
	return a;
}

int
fc_settings_parse(const char *text, size_t len, struct fc_settings *out, char *err,
		  size_t errlen)
{
	struct fc_settings s;
	unsigned int line = 0, seen = 0;
	size_t pos = 0;

	fc_settings_default(&s);
	while (pos < len) {
		char buf[LINE_MAX_LEN + 1], *key, *value, *eq, *hash;
		size_t n = 0;
		int rc;

		line++;
		while (pos < len && text[pos] != '\n') {
			if (n == LINE_MAX_LEN)
				return bad(err, errlen, line, "longer than 1024 bytes", NULL);
			if (text[pos] == '\0' || (!isprint((unsigned char)text[pos]) &&
						  text[pos] != '\t' && text[pos] != '\r'))
				return bad(err, errlen, line, "a control or non-ASCII byte", NULL);
			buf[n++] = text[pos++];
		}
		pos++;	/* the newline */
		buf[n] = '\0';
		/* a comment starts a line or follows a blank: "/a#b" is a path */
		for (hash = buf; (hash = strchr(hash, '#')) != NULL; hash++)
			if (hash == buf || hash[-1] == ' ' || hash[-1] == '\t') {
				*hash = '\0';
				break;
			}
		key = trim(buf);
		if (*key == '\0')
			continue;
		eq = strchr(key, '=');
		if (eq == NULL)
			return bad(err, errlen, line, "not key = value", NULL);
		*eq = '\0';
		value = trim(eq + 1);
		key = trim(key);
		if (*key == '\0' || *value == '\0')
			return bad(err, errlen, line, "a key and a value are needed", NULL);
		rc = set_one(&s, key, value, line, &seen, err, errlen);
		if (rc != 0)
			return rc;
	}
	*out = s;
	return 0;
}

int
fc_settings_load(const char *path, struct fc_settings *s, char *err, size_t errlen)
{
	struct fc_settings t;
	char *text;
	size_t len;
	int rc = fc_file_read(path, FC_SETTINGS_MAX_BYTES, NULL, &text, &len, err, errlen);

	if (rc != 0)
		return rc;
	rc = fc_settings_parse(text, len, &t, err, errlen);
	free(text);
	if (rc == 0)
		rc = fc_settings_check(&t, err, errlen);
	if (rc == 0)
		*s = t;
	return rc;
}

int
fc_settings_check(const struct fc_settings *s, char *err, size_t errlen)
{
	struct fc_list l = { 0 };
	int rc;

	/* a file that cannot be read, or an entry wider than the bound, refuses them */
	rc = fc_settings_never_cut(s, &l, err, errlen);
	fc_list_free(&l);
	return rc;
}

/* A bad line of never_cut_file: the first one kept for the error. */
struct never_bad {
	unsigned long line;
	char what[96];
};

static void
never_bad_line(void *arg, unsigned long line, const char *what)
{
	struct never_bad *b = arg;

	if (b->line == 0) {
		b->line = line;
		snprintf(b->what, sizeof(b->what), "%s", what);
	}
}

int
fc_settings_never_cut(const struct fc_settings *s, struct fc_list *out, char *err,
		      size_t errlen)
{
	struct fc_list_limits lim = { .max_bytes = s->list_max_bytes,
				      .min_prefix4 = s->never_min_prefix4,
				      .min_prefix6 = s->never_min_prefix6,
				      .min_name = "never_cut_min_prefix" };
	struct never_bad nb = { 0 };
	char why[FC_SETTINGS_PATH_MAX + 160];
	long rc;

	fc_list_free(out);
	for (unsigned int i = 0; i < s->nnever; i++) {
		const struct fc_range *r = &s->never[i];
		unsigned int min = r->family == 4 ? s->never_min_prefix4 : s->never_min_prefix6;

		if (fc_range_wider_than(r, min)) {
			char t[96];

			/* every cut of a whole network off: refused unless the bound says so */
			snprintf(err, errlen, "never_cut %s: wider than a /%u (never_cut_min_prefix%c: "
				 "lower it to allow this, and every cut in it is off)",
				 fc_range_format(r, t, sizeof(t)), min, r->family == 4 ? '4' : '6');
			fc_list_free(out);
			return -EINVAL;
		}
		if (fc_list_add(out, r) != 0) {
			fc_list_free(out);
			return -ENOMEM;
		}
	}
	if (s->never_file[0] != '\0') {
		struct fc_list f = { 0 };

		rc = fc_list_load(s->never_file, &lim, &f, never_bad_line, &nb, why, sizeof(why));
		if (rc == -ENOMEM) {
			fc_list_free(out);
			return -ENOMEM;
		}
		if (rc != 0) {
			if (rc > 0)
				snprintf(why, sizeof(why), "%s: line %lu: %s (%ld bad line%s)",
					 s->never_file, nb.line, nb.what, rc, rc == 1 ? "" : "s");
			fc_list_free(&f);
			fc_list_free(out);
			if (s->never_file_line)
				snprintf(err, errlen, "line %u: never_cut_file %s",
					 s->never_file_line, why);
			else
				snprintf(err, errlen, "never_cut_file %s", why);
			return rc > 0 ? -EINVAL : (int)rc;
		}
		for (size_t i = 0; i < f.n; i++)
			if (fc_list_add(out, &f.r[i]) != 0) {
				fc_list_free(&f);
				fc_list_free(out);
				return -ENOMEM;
			}
		fc_list_free(&f);
	}
	fc_list_canon(out);
	return 0;
}

int
fc_settings_set(struct fc_settings *s, const char *key, const char *value, char *err,
		size_t errlen)
{
	struct fc_settings t = *s;
	int rc = set_one(&t, key, value, 0, NULL, err, errlen);

	if (rc == 0)
		*s = t;
	return rc;
}

int
fc_settings_format(const struct fc_settings *s, char *buf, size_t len)
{
	int n = snprintf(buf, len,
			 "# flowcut settings (docs/settings.md); written by flowcutctl\n"
			 "offload = %s\n"
			 "cut_in_hardware = %s\n"
			 "idle_timeout = %u\n"
			 "list_max_bytes = %u\n"
			 "list_min_prefix4 = %u\n"
			 "list_min_prefix6 = %u\n"
			 "never_cut_min_prefix4 = %u\n"
			 "never_cut_min_prefix6 = %u\n"
			 "inspect_hold_ms = %u\n"
			 "inspect_read_timeout = %u\n"
			 "inspect_undecided = %s\n",
			 s->offload ? "on" : "off", s->cut_in_hardware ? "on" : "off",
			 s->idle_timeout, (unsigned int)s->list_max_bytes, s->list_min_prefix4,
			 s->list_min_prefix6, s->never_min_prefix4, s->never_min_prefix6,
			 (unsigned int)s->inspect_hold_ms,
			 (unsigned int)s->inspect_read_timeout, s->inspect_undecided_cut ? "cut" : "pass");

	for (unsigned int i = 0; i < s->nlists && n >= 0; i++)
		n += snprintf(buf + ((size_t)n < len ? (size_t)n : len),
			      (size_t)n < len ? len - (size_t)n : 0, "watched_list = %s\n",
			      s->lists[i]);
	if (s->fingerprints[0] != '\0' && n >= 0)
		n += snprintf(buf + ((size_t)n < len ? (size_t)n : len),
			      (size_t)n < len ? len - (size_t)n : 0,
			      "watched_fingerprints = %s\n", s->fingerprints);
	if (n >= 0)
		n += snprintf(buf + ((size_t)n < len ? (size_t)n : len),
			      (size_t)n < len ? len - (size_t)n : 0, "tls_ports =");
	for (unsigned int i = 0; i < s->ntls_ports && n >= 0; i++)
		n += snprintf(buf + ((size_t)n < len ? (size_t)n : len),
			      (size_t)n < len ? len - (size_t)n : 0, " %u", s->tls_ports[i]);
	if (n >= 0)
		n += snprintf(buf + ((size_t)n < len ? (size_t)n : len),
			      (size_t)n < len ? len - (size_t)n : 0, "\n");
	for (unsigned int i = 0; i < s->nsets && n >= 0; i++)
		n += snprintf(buf + ((size_t)n < len ? (size_t)n : len),
			      (size_t)n < len ? len - (size_t)n : 0, "watched_set = %s %s %s\n",
			      s->sets[i].family, s->sets[i].table, s->sets[i].set);
	for (unsigned int i = 0; i < s->nnever && n >= 0; i++) {
		char r[96];

		n += snprintf(buf + ((size_t)n < len ? (size_t)n : len),
			      (size_t)n < len ? len - (size_t)n : 0, "never_cut = %s\n",
			      fc_range_format(&s->never[i], r, sizeof(r)));
	}
	if (s->never_file[0] != '\0' && n >= 0)
		n += snprintf(buf + ((size_t)n < len ? (size_t)n : len),
			      (size_t)n < len ? len - (size_t)n : 0, "never_cut_file = %s\n",
			      s->never_file);
	if (s->control_read_group[0] != '\0' && n >= 0)
		n += snprintf(buf + ((size_t)n < len ? (size_t)n : len),
			      (size_t)n < len ? len - (size_t)n : 0, "control_read_group = %s\n",
			      s->control_read_group);
	return n;
}

int
fc_settings_save(const char *path, const struct fc_settings *s)
{
	char text[8192], tmp[4096];
	int n = fc_settings_format(s, text, sizeof(text)), fd, err;

	if (n < 0 || (size_t)n >= sizeof(text))
		return -EOVERFLOW;
	snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path);
	fd = mkstemp(tmp);
	if (fd < 0)
		return -errno;
	errno = 0;
	if (write(fd, text, (size_t)n) != n || fsync(fd) != 0 || fchmod(fd, 0644) != 0) {
		err = errno ? errno : EIO;	/* a short write sets none */
		close(fd);
		unlink(tmp);
		return -err;
	}
	close(fd);
	if (rename(tmp, path) != 0) {
		err = errno;
		unlink(tmp);
		return -err;
	}
	{	/* the rename itself survives a crash once its folder is synced */
		char dir[4096], *slash;
		int dfd;

		snprintf(dir, sizeof(dir), "%s", path);
		slash = strrchr(dir, '/');
		if (slash == dir)
			slash[1] = '\0';
		else if (slash)
			*slash = '\0';
		else
			snprintf(dir, sizeof(dir), ".");
		dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dfd >= 0) {
			fsync(dfd);
			close(dfd);
		}
	}
	return 0;
}
