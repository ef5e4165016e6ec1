/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * flowcut: address lists.  See fc_list.h.
 */
#include "fc_list.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include <flowcut/fc_grow.h>

#include "fc_file.h"

static unsigned int
alen(uint8_t family)
{
	return family == 4 ? 4 : 16;
}

int
fc_list_add(struct fc_list *l, const struct fc_range *r)
{
	struct fc_range *a = fc_grow(l->r, &l->cap, l->n, sizeof(*a), 256);

	if (a == NULL)
		return -ENOMEM;
	l->r = a;
	l->r[l->n++] = *r;
	return 0;
}

void
fc_list_free(struct fc_list *l)
{
	free(l->r);
	*l = (struct fc_list){ 0 };
}

/* An address of either family: its family (4 or 6), or 0. */
static uint8_t
addr_parse(const char *s, uint8_t out[16])
{
	memset(out, 0, 16);
	if (inet_pton(AF_INET, s, out) == 1)
		return 4;
	if (inet_pton(AF_INET6, s, out) == 1)
		return 6;
	return 0;
}

/* Sets the bits below the prefix (hi) or clears them (lo). */
static void
prefix_fill(struct fc_range *r, unsigned int plen)
{
	unsigned int n = alen(r->family);

	for (unsigned int i = 0; i < n; i++) {
		unsigned int keep = plen >= 8 * (i + 1) ? 8 : plen > 8 * i ? plen - 8 * i : 0;
		uint8_t mask = (uint8_t)(keep ? 0xff << (8 - keep) : 0);

		r->lo[i] &= mask;
		r->hi[i] = r->lo[i] | (uint8_t)~mask;
	}
}

/*
 * One entry (comment and blanks already gone): 0 and *r, or a static
 * message saying what is wrong.
 */
static const char *
entry_parse(char *tok, struct fc_range *r)
{
	char *sep;

	*r = (struct fc_range){ 0 };
	if ((sep = strchr(tok, '/')) != NULL) {
		char *end;
		unsigned long plen;

		*sep = '\0';
		r->family = addr_parse(tok, r->lo);
		if (r->family == 0)
			return "not an address before the '/'";
		errno = 0;
		plen = strtoul(sep + 1, &end, 10);
		if (sep[1] < '0' || sep[1] > '9' || *end || errno || plen > 8 * alen(r->family))
			return r->family == 4 ? "the prefix length is not 0 to 32"
					      : "the prefix length is not 0 to 128";
		prefix_fill(r, (unsigned int)plen);
		return NULL;
	}
	if ((sep = strchr(tok, '-')) != NULL) {
		uint8_t f2;

		*sep = '\0';
		r->family = addr_parse(tok, r->lo);
		f2 = addr_parse(sep + 1, r->hi);
		if (r->family == 0 || f2 == 0)
			return "not an address on each side of the '-'";
		if (f2 != r->family)
			return "a range from one family to the other";
		if (memcmp(r->lo, r->hi, 16) > 0)
			return "a range whose first address is above its last";
		return NULL;
	}
	r->family = addr_parse(tok, r->lo);
	if (r->family == 0)
		return "not an address, a prefix (ADDR/LEN) or a range (ADDR-ADDR)";
	memcpy(r->hi, r->lo, 16);
	return NULL;
}

const char *
fc_list_entry(const char *entry, bool exact, struct fc_range *r)
{
	char buf[INET6_ADDRSTRLEN + 8];
	uint8_t a[16];
	const char *why, *slash;

	*r = (struct fc_range){ 0 };
	if (strlen(entry) >= sizeof(buf) || strpbrk(entry, " \t#;") != NULL)
		return "not an address, a prefix (ADDR/LEN) or a range (ADDR-ADDR)";
	if (exact && strchr(entry, '-') != NULL)
		return "a range: an address or a prefix (ADDR/LEN) is wanted";
	snprintf(buf, sizeof(buf), "%s", entry);
	why = entry_parse(buf, r);
	if (why != NULL && exact && strchr(entry, '/') == NULL)
		return "not an address or a prefix (ADDR/LEN)";
	if (why != NULL || !exact || (slash = strchr(entry, '/')) == NULL)
		return why;
	snprintf(buf, sizeof(buf), "%.*s", (int)(slash - entry), entry);
	(void)addr_parse(buf, a);	/* parsed once already: the same family */
	if (memcmp(a, r->lo, alen(r->family)) != 0)
		return "a host part is set in the prefix (its address is not the prefix's first)";
	return NULL;
}

/* Whether r holds more addresses than a prefix of length min: hi - lo >= 2^(bits - min). */
static bool
wider_than(const struct fc_range *r, unsigned int min)
{
	unsigned int n = alen(r->family), borrow = 0;
	uint8_t d[16];

	for (int i = (int)n - 1; i >= 0; i--) {
		int v = (int)r->hi[i] - (int)r->lo[i] - (int)borrow;

		borrow = v < 0;
		d[i] = (uint8_t)(v + (borrow ? 256 : 0));
	}
	for (unsigned int b = 0; b < min && b < 8 * n; b++)	/* the difference's top min bits */
		if (d[b / 8] & (0x80 >> (b % 8)))
			return true;
	return false;
}

bool
fc_range_wider_than(const struct fc_range *r, unsigned int len)
{
	return wider_than(r, len);
}

static bool
is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* What jansson said was wrong with a line, as a fixed text (its own texts quote the line). */
static const struct {
	enum json_error_code code;
	const char *what;
} json_whys[] = {
	{ json_error_premature_end_of_input, "bad JSON: the object is cut short" },
	{ json_error_end_of_input_expected, "bad JSON: text after the object (one object a line)" },
	{ json_error_invalid_utf8, "bad JSON: not UTF-8" },
	{ json_error_null_character, "bad JSON: a \\u0000 in a string" },
	{ json_error_duplicate_key, "bad JSON: a member named twice" },
};

/*
 * One JSON DROP line, s[0] == '{' (len bytes, blanks gone): 1 and *r (its
 * "cidr"), 0 (the metadata line: skipped), or -EINVAL and *why (static,
 * or written in msg).
 */
static int
json_entry(const char *s, size_t len, struct fc_range *r, const char **why, char *msg,
	   size_t msglen)
{
	json_error_t e;
	json_t *o = json_loadb(s, len, JSON_REJECT_DUPLICATES, &e), *type, *cidr;
	char tok[FC_LIST_MAX_LINE + 1];
	int rc = -EINVAL;

	if (o == NULL) {
		*why = "bad JSON: not an object of members";
		for (size_t i = 0; i < sizeof(json_whys) / sizeof(json_whys[0]); i++)
			if (json_whys[i].code == json_error_code(&e))
				*why = json_whys[i].what;
		return -EINVAL;
	}
	type = json_object_get(o, "type");
	cidr = json_object_get(o, "cidr");
	if (json_is_string(type) && strcmp(json_string_value(type), "metadata") == 0) {
		rc = 0;
	} else if (cidr == NULL) {
		*why = "a JSON object without a \"cidr\" (nor \"type\": \"metadata\")";
	} else if (!json_is_string(cidr)) {
		*why = "a \"cidr\" that is not a string";
	} else {
		/* no NUL in it (no JSON_ALLOW_NUL), and no longer than its line */
		snprintf(tok, sizeof(tok), "%s", json_string_value(cidr));
		if (strchr(tok, '-') != NULL) {
			*why = "a \"cidr\" that is a range (an address or ADDR/LEN, as Spamhaus writes)";
		} else if ((*why = entry_parse(tok, r)) != NULL) {
			snprintf(msg, msglen, "the \"cidr\": %s", *why);
			*why = msg;
		} else {
			rc = 1;
		}
	}
	json_decref(o);
	return rc;
}

long
fc_list_parse(const char *text, size_t len, struct fc_list *out, fc_list_bad_fn *bad, void *arg)
{
	return fc_list_parse_within(text, len, NULL, out, bad, arg);
}

long
fc_list_parse_within(const char *text, size_t len, const struct fc_list_limits *lim,
		     struct fc_list *out, fc_list_bad_fn *bad, void *arg)
{
	size_t n0 = out->n, pos = 0;
	unsigned long line = 0, first = 0;	/* the first entry's line: the file's format */
	bool json = false;
	long nbad = 0;

	while (pos < len) {
		const char *s = text + pos, *nl = memchr(s, '\n', len - pos);
		size_t ll = nl ? (size_t)(nl - s) : len - pos, a = 0, b, t;
		char buf[FC_LIST_MAX_LINE + 1], msg[160];
		const char *why = NULL;
		struct fc_range r;
		bool is_json;

		pos += ll + (nl != NULL);
		line++;
		if (ll > FC_LIST_MAX_LINE) {
			why = "longer than 1024 bytes";
			goto bad_line;
		}
		memcpy(buf, s, ll);
		buf[ll] = '\0';
		if (memchr(buf, '\0', ll) != NULL) {
			why = "a NUL byte in the line";
			goto bad_line;
		}
		while (a < ll && is_blank(buf[a]))
			a++;
		is_json = buf[a] == '{';
		b = is_json ? ll : strcspn(buf, "#;");	/* a text comment runs to the end */
		while (b > a && is_blank(buf[b - 1]))
			b--;
		if (a == b)
			continue;
		buf[b] = '\0';
		if (first == 0) {
			first = line;
			json = is_json;
		} else if (is_json != json) {
			snprintf(msg, sizeof(msg), is_json
				 ? "a JSON object among text entries (one format a file: line %lu is text)"
				 : "a text entry among JSON objects (one format a file: line %lu is JSON)",
				 first);
			why = msg;
			goto bad_line;
		}
		if (is_json) {
			int rc = json_entry(buf + a, b - a, &r, &why, msg, sizeof(msg));

			if (rc == 0)
				continue;
			if (rc < 0)
				goto bad_line;
			goto entry;
		}
		for (t = a; t < b && !is_blank(buf[t]); t++)
			;
		if (t < b) {
			why = "text after the entry (one entry a line)";
			goto bad_line;
		}
		why = entry_parse(buf + a, &r);
entry:
		if (why == NULL && lim != NULL) {
			unsigned int min = r.family == 4 ? lim->min_prefix4 : lim->min_prefix6;

			if (wider_than(&r, min)) {
				snprintf(msg, sizeof(msg), "wider than a /%u (%s%c)", min,
					 lim->min_name ? lim->min_name : "list_min_prefix",
					 r.family == 4 ? '4' : '6');
				why = msg;
			}
		}
		if (why == NULL) {
			if (fc_list_add(out, &r) != 0) {
				out->n = n0;
				return -ENOMEM;
			}
			continue;
		}
bad_line:
		nbad++;
		if (bad)
			bad(arg, line, why);
	}
	return nbad;
}

static int
range_cmp(const void *a, const void *b)
{
	const struct fc_range *x = a, *y = b;

	if (x->family != y->family)
		return x->family < y->family ? -1 : 1;
	return memcmp(x->lo, y->lo, 16);
}

/* a + 1 == b, for addresses of n bytes (no wrap: a is not all ones). */
static bool
next_to(const uint8_t *a, const uint8_t *b, unsigned int n)
{
	uint8_t s[16];
	int i;

	memcpy(s, a, 16);
	for (i = (int)n - 1; i >= 0; i--)
		if (++s[i] != 0)
			break;
	return i >= 0 && memcmp(s, b, 16) == 0;
}

void
fc_list_canon(struct fc_list *l)
{
	size_t w = 0;

	if (l->n == 0)
		return;
	qsort(l->r, l->n, sizeof(l->r[0]), range_cmp);
	for (size_t i = 1; i < l->n; i++) {
		struct fc_range *cur = &l->r[w], *nx = &l->r[i];

		if (nx->family == cur->family &&
		    (memcmp(nx->lo, cur->hi, 16) <= 0 || next_to(cur->hi, nx->lo, alen(cur->family)))) {
			if (memcmp(nx->hi, cur->hi, 16) > 0)
				memcpy(cur->hi, nx->hi, 16);
			continue;
		}
		l->r[++w] = *nx;
	}
	l->n = w + 1;
}

static bool
range_eq(const struct fc_range *a, const struct fc_range *b)
{
	return a->family == b->family && memcmp(a->lo, b->lo, 16) == 0 &&
	       memcmp(a->hi, b->hi, 16) == 0;
}

int
fc_list_diff(const struct fc_list *from, const struct fc_list *to, struct fc_list *added,
	     struct fc_list *removed)
{
	size_t i = 0, j = 0;

	/* both sorted by (family, lo) and disjoint: one walk, element by element */
	while (i < from->n || j < to->n) {
		int c = i == from->n ? 1 : j == to->n ? -1 : range_cmp(&from->r[i], &to->r[j]);

		if (c == 0 && range_eq(&from->r[i], &to->r[j])) {
			i++, j++;
		} else if (c < 0 || (c == 0 && memcmp(from->r[i].hi, to->r[j].hi, 16) < 0)) {
			if (fc_list_add(removed, &from->r[i++]) != 0)
				return -ENOMEM;
		} else {
			if (fc_list_add(added, &to->r[j++]) != 0)
				return -ENOMEM;
		}
	}
	return 0;
}

bool
fc_list_holds(const struct fc_list *l, uint8_t family, const uint8_t *addr)
{
	struct fc_range k = { .family = family };
	size_t lo = 0, hi = l->n;

	memcpy(k.lo, addr, alen(family));
	/* the last range that starts at or below addr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (range_cmp(&l->r[mid], &k) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return false;
	return l->r[lo - 1].family == family && memcmp(k.lo, l->r[lo - 1].hi, 16) <= 0;
}

long
fc_list_load(const char *path, const struct fc_list_limits *lim, struct fc_list *out,
	     fc_list_bad_fn *bad, void *arg, char *err, size_t errlen)
{
	struct fc_list l = { 0 };
	char *text;
	size_t len;
	long rc = fc_file_read(path, lim->max_bytes, "list_max_bytes", &text, &len, err, errlen);

	if (rc < 0)
		return rc;
	rc = fc_list_parse_within(text, len, lim, &l, bad, arg);
	free(text);
	if (rc < 0) {
		snprintf(err, errlen, "%s: no memory for its entries", path);
		fc_list_free(&l);
		return rc;
	}
	fc_list_canon(&l);
	fc_list_free(out);
	*out = l;
	return rc;
}

char *
fc_range_format(const struct fc_range *r, char *buf, size_t len)
{
	int af = r->family == 4 ? AF_INET : AF_INET6;
	unsigned int n = alen(r->family), plen = 0;
	char a[INET6_ADDRSTRLEN] = "?", b[INET6_ADDRSTRLEN] = "?";
	struct fc_range p = *r;

	if (len == 0)
		return buf;
	inet_ntop(af, r->lo, a, sizeof(a));
	if (memcmp(r->lo, r->hi, 16) == 0) {
		snprintf(buf, len, "%s", a);
		return buf;
	}
	/* a prefix when lo..hi is exactly one */
	for (plen = 0; plen < 8 * n; plen++) {
		memcpy(p.lo, r->lo, 16);
		prefix_fill(&p, plen);
		if (memcmp(p.lo, r->lo, 16) == 0 && memcmp(p.hi, r->hi, 16) == 0) {
			snprintf(buf, len, "%s/%u", a, plen);
			return buf;
		}
	}
	inet_ntop(af, r->hi, b, sizeof(b));
	snprintf(buf, len, "%s-%s", a, b);
	return buf;
}
