/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fc_file: reading a file whose contents can cut (a watched list, the
 * watched fingerprints, the settings) as if an attacker may have written
 * it.
 *
 * Trusted only when no one but root (or the reader's own euid) could have
 * written it or swapped it, as sshd's StrictModes asks of authorized_keys:
 *
 *   the file     a regular file (not a symbolic link, FIFO, device or
 *                folder), owned by root or the euid, not writable by its
 *                group or others
 *   its folder   owned by root or the euid, not writable by group or
 *                others (sticky or not)
 *   the folders  each owned by root or the euid, not writable by group or
 *   above        others unless sticky and owned by root (/tmp, /dev/shm)
 *
 * Each is checked on its own descriptor, opened without following a link,
 * so a swap between the check and the read meets a descriptor already
 * checked.  The file is read with read() under a cap, never mapped; one
 * that changed while it was read is refused, to be read again at its next
 * change.
 *
 * The calls return 0 (fc_file_folder: a descriptor) or a negative errno,
 * each listed beside it, with err saying "PATH: why".  No error ever holds
 * a byte of the file: only its path and why.
 * No state; any thread.
 *
 * Design notes (the walk, why read() and not mmap): settings/README.md.
 */
#ifndef FLOWCUT_FC_FILE_H
#define FLOWCUT_FC_FILE_H

#include <stddef.h>

/*
 * fc_file_read - check `path` as above and read it whole.  `cap` is the
 * largest size read; `cap_key` names the setting it comes from in the
 * error (NULL: none).  Returns 0 with *text (malloc'ed, NUL-terminated,
 * the caller frees it) and *len, or a negative errno with `err` saying
 * "PATH: why" (*text NULL):
 *   -ENOENT, -EACCES, ...   it (or a folder on its path) cannot be opened
 *   -ELOOP     it is a symbolic link
 *   -EISDIR    it is a folder;  -EINVAL: not a regular file otherwise
 *   -EPERM     it or a folder on its path is owned by another user or
 *              writable by group or others (err names which)
 *   -EFBIG     larger than `cap`
 *   -EAGAIN    changed while it was read
 *   -ENOMEM
 */
int fc_file_read(const char *path, size_t cap, const char *cap_key, char **text, size_t *len,
		 char *err, size_t errlen);

/*
 * fc_file_folder - the folder of `path` walked and checked as fc_file_read
 * checks it (each folder root's or the euid's, none writable by group or
 * others; one above may be /tmp's sticky kind, its own folder not): an
 * O_PATH descriptor of it (the caller closes it) with *name the file's
 * name in it, or a negative errno with `err` ("DIR: writable by others
 * (on the path of PATH)").  For a writer that makes a file there
 * (fc_secret_make).
 */
int fc_file_folder(const char *path, const char **name, char *err, size_t errlen);

#endif
