/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fc_settings_keys: every key of the settings file as the page shows it
 * (flowcut-web's): its name, kind, default and one sentence of what it does,
 * in the page's order (cut_in_hardware first, then as docs/settings.md
 * lists them); the `settings` answer of flowcutd's control socket made
 * from it, and its `settings-set`: the file loaded (none: the defaults),
 * fc_settings_set, fc_settings_save - flowcutctl settings set's path.
 *
 * A key's value is read from fc_settings_format's text (the file as
 * written), so no value is formatted twice: one line `key = value` per
 * value, a repeatable key's (kind "list") lines gathered in order.
 *
 * No state; any thread.
 */
#ifndef FLOWCUT_FC_SETTINGS_KEYS_H
#define FLOWCUT_FC_SETTINGS_KEYS_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "fc_settings.h"

struct fc_settings_key {
	const char *name;
	const char *kind;	/* "bool", "number", "path", "text" or "list" (repeatable) */
	const char *def;	/* its default as the file would say it; "" none */
	const char *help;	/* one sentence: what it does */
};

extern const struct fc_settings_key fc_settings_keys[];
extern const size_t fc_settings_nkeys;

/* fc_settings_keys_find - the key named `name`, or NULL. */
const struct fc_settings_key *fc_settings_keys_find(const char *name);

/*
 * fc_settings_keys_json - every key of *s as an array of {"key", "value"
 * (a list's: an array of strings), "default", "help", "kind"}, in the
 * table's order.  NULL: no memory.  The caller owns it.
 */
json_t *fc_settings_keys_json(const struct fc_settings *s);

/*
 * fc_settings_keys_save - KEY set in the file at `path` and saved: a
 * value (`lines` false: one, a repeatable key then holds it alone) or
 * `value`'s lines, '\n'-separated, each checked (none: cleared; only for
 * a repeatable key), then the settings whole as the loader would read
 * them back (fc_settings_check: a never_cut_file that cannot be read
 * refuses the save).  0; -EINVAL with err "KEY: REASON" (nothing saved);
 * or the load's or the save's -errno with err.
 */
int fc_settings_keys_save(const char *path, const char *key, const char *value, bool lines,
			  char *err, size_t errlen);

#endif
