/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fc_settings: the appliance's settings file - parsed, checked, written.
 *
 * The format is sysctl.conf's: one `key = value` a line, `#` at the start
 * of a line or after a blank starts a comment, blank lines are ignored.
 * The keys, their values and defaults: docs/settings.md.
 *
 * A file that does not parse is refused whole with the line and the reason
 * (never a byte of the line's text), and whoever read it keeps the
 * settings it had; a bad never_cut entry is named by its line and its
 * place on it ("line 4: never_cut, entry 2: ...").  The file is read as
 * fc_file reads a file that can cut: a file or folder anyone but root (or
 * the reader's euid) could write is refused.  never_cut_file is read with
 * the never_cut entries into one list by fc_settings_never_cut, and by
 * fc_settings_load too: a file that cannot be read, or has a bad line,
 * refuses the settings.  Writing is atomic (a temporary file in the same
 * folder, fsync, rename): a reader sees the old file or the new, never
 * half of one.
 *
 * struct fc_settings is a plain value, the caller's: settings copy and
 * compare whole.  The calls return 0 or a negative errno, as each says
 * beside it, most with err saying "line N: reason" or "PATH: why".
 *
 * No state; any thread.
 *
 * Design notes (the keys in brief, never_cut, why by hand):
 * settings/README.md.
 */
#ifndef FLOWCUT_FC_SETTINGS_H
#define FLOWCUT_FC_SETTINGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fc_list.h"

#define FC_SETTINGS_MAX_LISTS 16
#define FC_SETTINGS_PATH_MAX 256
#define FC_SETTINGS_MAX_TLS_PORTS 16
/* tls_ports when the file does not say */
#define FC_SETTINGS_TLS_PORTS_DEFAULT { 443, 465, 853, 993, 995, 8443 }
#define FC_SETTINGS_MAX_SETS 16
/* never_cut entries wider than these are refused unless never_cut_min_prefix4/6 is lowered */
#define FC_SETTINGS_NEVER_MIN_PREFIX4 16
#define FC_SETTINGS_NEVER_MIN_PREFIX6 48
#define FC_SETTINGS_MAX_NEVER 64	/* never_cut entries in all (a longer list: never_cut_file) */
#define FC_SETTINGS_NAME_MAX 64	/* a table's or a set's name, its NUL included */
#define FC_SETTINGS_MAX_BYTES (64u << 10)	/* a larger settings file is refused */
/* list_max_bytes: 64 MiB by default (a million-line list of IPv6 /64s with comments is 34 MB) */
#define FC_SETTINGS_LIST_MAX_BYTES_DEFAULT (64u << 20)
#define FC_SETTINGS_LIST_MAX_BYTES_MIN 1024u
#define FC_SETTINGS_LIST_MAX_BYTES_MAX (1u << 30)

/*
 * watched_set = FAMILY TABLE SET: a set of the host's own ruleset, or
 * FAMILY TABLE PATTERN: the table's sets whose names match.  A SET
 * holding one of `*`, `?`, `[` is a pattern (an nftables name holds none
 * of them), any other an exact name, as before patterns were.  A pattern
 * is name characters, `*`, `?`, and bracket expressions of name
 * characters and ranges, `!` or `^` first to negate; no character
 * classes, no backslash (nothing to escape); 63 characters at most.  The
 * table is always a name.  Refused: an unclosed `[`, an empty `[]`, any
 * other character.
 */
struct fc_watched_set {
	char family[8];		/* ip, ip6, inet, arp, bridge, netdev */
	char table[FC_SETTINGS_NAME_MAX];
	char set[FC_SETTINGS_NAME_MAX];	/* a name or a pattern */
};

/* fc_settings_is_pattern - whether a watched_set's SET is a pattern (holds `*`, `?` or `[`). */
bool fc_settings_is_pattern(const char *set);

struct fc_settings {
	bool offload;
	bool cut_in_hardware;
	uint16_t idle_timeout;
	unsigned int nlists;
	char lists[FC_SETTINGS_MAX_LISTS][FC_SETTINGS_PATH_MAX];
	char fingerprints[FC_SETTINGS_PATH_MAX];	/* watched_fingerprints; "" none */
	unsigned int ntls_ports;
	uint16_t tls_ports[FC_SETTINGS_MAX_TLS_PORTS];	/* in the order given; the rest 0 */
	uint32_t inspect_hold_ms;	/* frames held while a hello is read, at most */
	uint16_t inspect_read_timeout;	/* seconds a hello may take */
	bool inspect_undecided_cut;	/* undecided: cut (else passed) */
	unsigned int nsets;
	struct fc_watched_set sets[FC_SETTINGS_MAX_SETS];
	uint32_t list_max_bytes;	/* the largest watched list or fingerprints file read */
	uint8_t list_min_prefix4;	/* a list entry wider than a /N is a bad line (0: none) */
	uint8_t list_min_prefix6;
	uint8_t never_min_prefix4;	/* a never_cut entry wider than a /N is refused (never_cut_min_prefix4) */
	uint8_t never_min_prefix6;
	char control_read_group[FC_SETTINGS_NAME_MAX];	/* "" none (root only) */
	uint32_t control_read_gid;	/* its gid, when named */
	unsigned int nnever;
	struct fc_range never[FC_SETTINGS_MAX_NEVER];	/* never_cut, in the order given */
	char never_file[FC_SETTINGS_PATH_MAX];	/* never_cut_file; "" none */
	unsigned int never_file_line;	/* its line in the file read (0: set by flowcutctl) */
};

/* fc_settings_default - the settings of a new appliance (Cut in hardware on). */
void fc_settings_default(struct fc_settings *s);

/*
 * fc_settings_parse - parse `len` bytes of text.  Returns 0 and fills *s,
 * or -EINVAL with `err` (errlen bytes) saying "line N: reason"; *s is then
 * untouched.
 */
int fc_settings_parse(const char *text, size_t len, struct fc_settings *s, char *err,
		      size_t errlen);

/*
 * fc_settings_load - read (fc_file_read: checked, FC_SETTINGS_MAX_BYTES at
 * most) and parse a file: 0, -EINVAL (see err), or fc_file_read's
 * negative errno with err saying "PATH: why" (-ENOENT: none).
 */
int fc_settings_load(const char *path, struct fc_settings *s, char *err, size_t errlen);

/*
 * fc_settings_set - change one key on *s from text, as `key = value` on a
 * line would ("watched_list" and "watched_set" add one; "-" as the value
 * removes them all; "-" as watched_fingerprints' or control_read_group's
 * removes it).  0 or
 * -EINVAL with err.
 */
int fc_settings_set(struct fc_settings *s, const char *key, const char *value, char *err,
		    size_t errlen);

/*
 * fc_settings_never_cut - the never-cut list of *s: its never_cut entries
 * and what never_cut_file holds (fc_list_load within s->list_max_bytes),
 * into `out` (emptied first, canonical).  0; or -EINVAL (a bad line of the
 * file: "line N: never_cut_file PATH: line M: why") or the file's read
 * error ("line N: never_cut_file: PATH: why"), with err, and `out` empty;
 * or -ENOMEM.
 */
int fc_settings_never_cut(const struct fc_settings *s, struct fc_list *out, char *err,
			  size_t errlen);

/*
 * fc_settings_check - what fc_settings_load refuses of settings already
 * parsed: a never_cut_file that cannot be read or holds a bad line
 * (fc_settings_never_cut's error and err).  0 or its -errno.  A save
 * checks with it first (fc_settings_keys_save), so no settings-set saves
 * a file the loader then refuses.
 */
int fc_settings_check(const struct fc_settings *s, char *err, size_t errlen);

/* fc_settings_format - the file's text for *s; returns its length (snprintf's). */
int fc_settings_format(const struct fc_settings *s, char *buf, size_t len);

/* fc_settings_save - write *s to path atomically.  0 or -errno. */
int fc_settings_save(const char *path, const struct fc_settings *s);

#endif
