/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_rulecheck: see fd_rulecheck.h.  The ruleset's JSON read with jansson
 * into chains, rules and sets; the chains a forwarded packet meets walked
 * from their base chains with one bit of state, "the mark may be set".
 */
#include "fd_rulecheck.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nftables/libnftables.h>

#include <flowcut/fc_nft.h>

/* a jump chain deeper than the kernel's 16 is not walked further */
#define MAX_DEPTH 32

static const char *const kind_names[] = {
#define FD_RULECHECK_NAME_OF(e, s) s,
	FD_RULECHECK_KINDS(FD_RULECHECK_NAME_OF)
#undef FD_RULECHECK_NAME_OF
};

const char *
fd_rulecheck_kind_name(int kind)
{
	return kind >= 0 && kind < FD_RULECHECK_NKINDS ? kind_names[kind] : "?";
}

/* The hooks a forwarded packet meets, in order; 0: not on its path. */
enum hook_rank { H_NONE, H_INGRESS, H_PREROUTING, H_FORWARD, H_POSTROUTING, H_EGRESS };

struct chain {
	const char *family, *table, *name;	/* in the parsed document */
	uint64_t handle;
	enum hook_rank hook;	/* H_NONE: not a base chain on the path */
	json_int_t prio;
	bool policy_drop;
	size_t *rules, nrules, caprules;	/* indexes in ctx.rules, in order */
	int marks;		/* -1: not known yet, 2: being found, 0, 1 */
	bool walked[2];		/* walked with the mark not set / maybe set */
};

struct rule {
	json_t *expr;
	uint64_t handle;
};

struct set {
	const char *family, *table, *name;
	bool timeout;
	json_t *elem;		/* a map's elements, when listed; else NULL */
};

struct ctx {
	uint32_t bit;
	struct chain *chains;
	size_t nchains, capchains;
	struct rule *rules;
	size_t nrules, caprules;
	struct set *sets;
	size_t nsets, capsets;
	struct fd_rulecheck_result *out;
	int rc;			/* -ENOMEM once out of memory */
};

static int
grow(void **p, size_t *cap, size_t n, size_t size)
{
	void *np;
	size_t ncap;

	if (n < *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 16;
	np = realloc(*p, ncap * size);
	if (np == NULL)
		return -ENOMEM;
	*p = np;
	*cap = ncap;
	return 0;
}

static enum hook_rank
hook_rank(const char *family, const char *hook)
{
	bool l3 = !strcmp(family, "ip") || !strcmp(family, "ip6") || !strcmp(family, "inet");

	if (!strcmp(hook, "ingress") && (!strcmp(family, "netdev") || !strcmp(family, "inet")))
		return H_INGRESS;
	if (!strcmp(hook, "egress") && !strcmp(family, "netdev"))
		return H_EGRESS;
	if (l3 && !strcmp(hook, "prerouting"))
		return H_PREROUTING;
	if (l3 && !strcmp(hook, "forward"))
		return H_FORWARD;
	if (l3 && !strcmp(hook, "postrouting"))
		return H_POSTROUTING;
	return H_NONE;
}

/* Do packets of chains of families a and b overlap (one of them may see the other's)? */
static bool
families_overlap(const char *a, const char *b)
{
	return !strcmp(a, b) || !strcmp(a, "inet") || !strcmp(b, "inet") ||
	       !strcmp(a, "netdev") || !strcmp(b, "netdev");
}

static struct chain *
chain_find(struct ctx *c, const char *family, const char *table, const char *name)
{
	for (size_t i = 0; i < c->nchains; i++)
		if (!strcmp(c->chains[i].name, name) && !strcmp(c->chains[i].table, table) &&
		    !strcmp(c->chains[i].family, family))
			return &c->chains[i];
	return NULL;
}

static struct set *
set_find(struct ctx *c, const char *family, const char *table, const char *name)
{
	for (size_t i = 0; i < c->nsets; i++)
		if (!strcmp(c->sets[i].name, name) && !strcmp(c->sets[i].table, table) &&
		    !strcmp(c->sets[i].family, family))
			return &c->sets[i];
	return NULL;
}

static void
finding(struct ctx *c, enum fd_rulecheck_kind kind, const struct chain *ch, uint64_t handle,
	const char *fmt, ...)
{
	struct fd_rulecheck_result *r = c->out;
	struct fd_rulecheck_finding f = { .kind = kind, .handle = handle };
	va_list ap;

	if (!strcmp(ch->family, FC_NFT_FAMILY) && !strcmp(ch->table, FC_NFT_TABLE))
		return;	/* flowcutd's own: its drops are the cut's, made on the coprocessor too */
	snprintf(f.family, sizeof(f.family), "%s", ch->family);
	snprintf(f.table, sizeof(f.table), "%s", ch->table);
	snprintf(f.chain, sizeof(f.chain), "%s", ch->name);
	va_start(ap, fmt);
	vsnprintf(f.what, sizeof(f.what), fmt, ap);
	va_end(ap);
	for (size_t i = 0; i < r->n; i++)
		if (r->f[i].kind == f.kind && r->f[i].handle == f.handle &&
		    !strcmp(r->f[i].what, f.what) && !strcmp(r->f[i].chain, f.chain) &&
		    !strcmp(r->f[i].table, f.table) && !strcmp(r->f[i].family, f.family))
			return;	/* reached again (another jump, another base chain) */
	if (r->n >= FD_RULECHECK_MAX) {
		r->more++;
		return;
	}
	if (grow((void **)&r->f, &r->cap, r->n, sizeof(*r->f)) != 0) {
		c->rc = -ENOMEM;
		return;
	}
	r->f[r->n++] = f;
}

/* The one member of a statement or expression object: its key, and its value in *v. */
static const char *
only_key(json_t *o, json_t **v)
{
	const char *k;
	json_t *val;

	if (!json_is_object(o) || json_object_size(o) != 1)
		return NULL;
	json_object_foreach(o, k, val) {
		*v = val;
		return k;
	}
	return NULL;
}

/* Is `o` {"ct": {"key": key}}? */
static bool
is_ct_key(json_t *o, const char *key)
{
	json_t *ct = json_object_get(o, "ct");
	json_t *k = json_object_get(ct, "key");

	return json_is_object(o) && json_object_size(o) == 1 && json_is_string(k) &&
	       !strcmp(json_string_value(k), key);
}

/* May a `ct mark set` value hold the bit? */
static bool
value_sets_bit(struct ctx *c, json_t *v, int depth)
{
	json_t *in, *e;
	const char *k;
	size_t i;

	if (depth > MAX_DEPTH)
		return false;
	if (json_is_integer(v))
		return ((uint64_t)json_integer_value(v) & c->bit) != 0;
	k = only_key(v, &in);
	if (k == NULL)
		return false;
	if ((!strcmp(k, "|") || !strcmp(k, "^")) && json_is_array(in)) {
		json_array_foreach(in, i, e)
			if (value_sets_bit(c, e, depth + 1))
				return true;
		return false;
	}
	if (!strcmp(k, "map")) {	/* ct mark set KEY map { k : v, ... } */
		json_t *set = json_object_get(json_object_get(in, "data"), "set");

		json_array_foreach(set, i, e)
			if (json_is_array(e) && json_array_size(e) == 2 &&
			    value_sets_bit(c, json_array_get(e, 1), depth + 1))
				return true;
	}
	return false;
}

/* Is this statement `ct mark set V` with V holding the bit? */
static bool
stmt_sets_mark(struct ctx *c, const char *k, json_t *v)
{
	return !strcmp(k, "mangle") && is_ct_key(json_object_get(v, "key"), "mark") &&
	       value_sets_bit(c, json_object_get(v, "value"), 0);
}

/*
 * Does the rule match `ct state` with new, invalid or untracked only (so
 * never an offloaded connection's frame)?
 */
static bool
rule_new_only(json_t *expr)
{
	json_t *s, *m;
	size_t i;

	json_array_foreach(expr, i, s) {
		json_t *right, *op, *e;
		const char *k = only_key(s, &m);
		bool only = true;
		size_t j;

		if (k == NULL || strcmp(k, "match") || !is_ct_key(json_object_get(m, "left"), "state"))
			continue;
		op = json_object_get(m, "op");
		if (!json_is_string(op) || (strcmp(json_string_value(op), "==") &&
					    strcmp(json_string_value(op), "in")))
			continue;
		right = json_object_get(m, "right");
		if (json_is_string(right))
			right = json_pack("[O]", right);
		else
			json_incref(right);
		if (!json_is_array(right) || json_array_size(right) == 0)
			only = false;
		json_array_foreach(right, j, e)
			if (!json_is_string(e) || (strcmp(json_string_value(e), "new") &&
						   strcmp(json_string_value(e), "invalid") &&
						   strcmp(json_string_value(e), "untracked")))
				only = false;
		json_decref(right);
		if (only)
			return true;
	}
	return false;
}

/* "@name" -> "name"; NULL when `v` is no set reference. */
static const char *
set_ref(json_t *v)
{
	const char *s = json_string_value(v);

	return s != NULL && s[0] == '@' ? s + 1 : NULL;
}

/* The verdict of a rule: "accept", "drop", ..., "" for none. */
static const char *
rule_verdict(json_t *expr)
{
	static const char *const verdicts[] = { "accept", "drop", "reject", "queue", "jump",
						"goto", "return", "continue" };
	json_t *s, *v;
	const char *found = "";
	size_t i;

	json_array_foreach(expr, i, s) {
		const char *k = only_key(s, &v);

		for (size_t j = 0; k != NULL && j < sizeof(verdicts) / sizeof(verdicts[0]); j++)
			if (!strcmp(k, verdicts[j]))
				found = verdicts[j];
	}
	return found;
}

/* A verdict map's elements, [[key, verdict], ...]: from {"set": [...]} or a named map. */
static json_t *
vmap_elems(struct ctx *c, const struct chain *ch, json_t *data, const char **name, bool *known)
{
	const char *ref = set_ref(data);
	struct set *s;

	*name = ref;
	*known = true;
	if (ref == NULL)
		return json_object_get(data, "set");
	s = set_find(c, ch->family, ch->table, ref);
	*known = s != NULL && s->elem != NULL;
	return s != NULL ? s->elem : NULL;
}

/* The jump or goto target of a verdict object ({"jump": {"target": "x"}}), or NULL. */
static const char *
verdict_target(json_t *v)
{
	json_t *in;
	const char *k = only_key(v, &in);

	if (k == NULL || (strcmp(k, "jump") && strcmp(k, "goto")))
		return NULL;
	return json_string_value(json_object_get(in, "target"));
}

static bool verdict_drops(json_t *v)
{
	json_t *in;
	const char *k = only_key(v, &in);

	return k != NULL && (!strcmp(k, "drop") || !strcmp(k, "reject"));
}

static bool chain_marks(struct ctx *c, struct chain *ch, int depth);

/* May a rule set the mark, itself or in a chain it jumps or goes to? */
static bool
rule_targets_mark(struct ctx *c, const struct chain *ch, json_t *expr, int depth)
{
	json_t *s, *v, *e;
	size_t i, j;
	bool marks = false;

	json_array_foreach(expr, i, s) {
		const char *k = only_key(s, &v);
		const char *t = NULL;

		if (k == NULL)
			continue;
		if (stmt_sets_mark(c, k, v))
			marks = true;
		if (!strcmp(k, "jump") || !strcmp(k, "goto"))
			t = verdict_target(s);
		if (t != NULL) {
			struct chain *tc = chain_find(c, ch->family, ch->table, t);

			marks |= tc != NULL && chain_marks(c, tc, depth + 1);
		}
		if (!strcmp(k, "vmap")) {
			const char *name;
			bool known;
			json_t *el = vmap_elems(c, ch, json_object_get(v, "data"), &name, &known);

			json_array_foreach(el, j, e) {
				struct chain *tc;

				t = verdict_target(json_array_get(e, 1));
				tc = t ? chain_find(c, ch->family, ch->table, t) : NULL;
				marks |= tc != NULL && chain_marks(c, tc, depth + 1);
			}
		}
	}
	return marks;
}

/* May the mark be set in `ch` or a chain it reaches? */
static bool
chain_marks(struct ctx *c, struct chain *ch, int depth)
{
	if (ch->marks == 0 || ch->marks == 1)
		return ch->marks;
	if (ch->marks == 2 || depth > MAX_DEPTH)
		return false;	/* a loop (the kernel refuses them) or too deep */
	ch->marks = 2;
	for (size_t r = 0; r < ch->nrules; r++) {
		json_t *expr = c->rules[ch->rules[r]].expr;

		if (!rule_new_only(expr) && rule_targets_mark(c, ch, expr, depth)) {
			ch->marks = 1;
			return true;
		}
	}
	ch->marks = 0;
	return false;
}

static void walk(struct ctx *c, struct chain *ch, bool marked, int depth);

static void
walk_target(struct ctx *c, const struct chain *ch, const char *t, bool marked, int depth)
{
	struct chain *tc = t ? chain_find(c, ch->family, ch->table, t) : NULL;

	if (tc != NULL)
		walk(c, tc, marked, depth + 1);
}

/* A match on a set with timeouts that allows. */
static void
check_allow_set(struct ctx *c, const struct chain *ch, const struct rule *r, json_t *m)
{
	const char *name = set_ref(json_object_get(m, "right"));
	const char *op = json_string_value(json_object_get(m, "op"));
	const char *verdict = rule_verdict(r->expr);
	struct set *s = name ? set_find(c, ch->family, ch->table, name) : NULL;
	bool allows;

	if (s == NULL || !s->timeout || op == NULL)
		return;
	if (!strcmp(op, "!="))
		allows = !strcmp(verdict, "drop") || !strcmp(verdict, "reject");
	else
		allows = !strcmp(verdict, "accept") || !strcmp(verdict, "jump") ||
			 !strcmp(verdict, "goto");
	if (allows)
		finding(c, FD_RULECHECK_TIMEOUT_SET, ch, r->handle, "%s@%s %s",
			strcmp(op, "!=") ? "" : "!= ", name, verdict);
}

/* One rule's findings; whether the mark may be set once past it. */
static bool
rule_walk(struct ctx *c, struct chain *ch, const struct rule *r, bool marked, int depth)
{
	json_t *s, *v, *e;
	size_t i, j;

	json_array_foreach(r->expr, i, s) {
		const char *k = only_key(s, &v);

		if (k == NULL)
			continue;
		if (!strcmp(k, "limit"))
			finding(c, FD_RULECHECK_LIMIT, ch, r->handle, "limit");
		else if (!strcmp(k, "quota"))
			finding(c, FD_RULECHECK_QUOTA, ch, r->handle, "quota");
		else if (!strcmp(k, "ct count"))
			finding(c, FD_RULECHECK_CT_COUNT, ch, r->handle, "ct count");
		else if (!strcmp(k, "meter"))
			finding(c, FD_RULECHECK_METER, ch, r->handle, "meter %s",
				json_is_string(json_object_get(v, "name"))
					? json_string_value(json_object_get(v, "name")) : "(anonymous)");
		else if ((!strcmp(k, "set") || !strcmp(k, "map")) &&
			 json_is_string(json_object_get(v, "op")))
			finding(c, FD_RULECHECK_SET_UPDATE, ch, r->handle, "%s %s",
				json_string_value(json_object_get(v, "op")),
				json_is_string(json_object_get(v, k))
					? json_string_value(json_object_get(v, k)) : "(a set)");
		else if (!strcmp(k, "queue"))
			finding(c, FD_RULECHECK_QUEUE, ch, r->handle, "queue");
		else if (!strcmp(k, "match"))
			check_allow_set(c, ch, r, v);
		else if ((!strcmp(k, "drop") || !strcmp(k, "reject")) && marked)
			finding(c, FD_RULECHECK_AFTER_MARK, ch, r->handle, "%s", k);
		else if (!strcmp(k, "jump") || !strcmp(k, "goto"))
			walk_target(c, ch, verdict_target(s), marked, depth);
		else if (!strcmp(k, "vmap")) {
			const char *name;
			bool known, drops = false;
			json_t *el = vmap_elems(c, ch, json_object_get(v, "data"), &name, &known);

			json_array_foreach(el, j, e) {
				json_t *verdict = json_array_get(e, 1);

				drops |= verdict_drops(verdict);
				walk_target(c, ch, verdict_target(verdict), marked, depth);
			}
			if (marked && (drops || !known))
				finding(c, FD_RULECHECK_AFTER_MARK, ch, r->handle, "vmap %s%s%s",
					name ? "@" : "{...}", name ? name : "",
					known ? "" : " (its elements not listed)");
		}
	}
	return rule_targets_mark(c, ch, r->expr, depth);
}

static void
walk(struct ctx *c, struct chain *ch, bool marked, int depth)
{
	if (ch->walked[marked] || depth > MAX_DEPTH || c->rc != 0)
		return;
	ch->walked[marked] = true;
	for (size_t i = 0; i < ch->nrules; i++) {
		const struct rule *r = &c->rules[ch->rules[i]];

		if (!rule_new_only(r->expr))
			marked |= rule_walk(c, ch, r, marked, depth);
	}
}

/* Does a packet of base chain `b` meet it after base chain `m` may have set the mark? */
static bool
base_after(const struct chain *b, const struct chain *m)
{
	if (b == m || !families_overlap(b->family, m->family))
		return false;
	return b->hook > m->hook || (b->hook == m->hook && b->prio >= m->prio);
}

#define FAIL(...) do { snprintf(err, errlen, __VA_ARGS__); rc = -EINVAL; goto out; } while (0)

/* member `key` of `o` as a string, or NULL */
static const char *
str_of(json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static int
read_chain(struct ctx *c, json_t *o, char *err, size_t errlen, size_t idx)
{
	struct chain ch = { .marks = -1 };
	json_t *h = json_object_get(o, "handle");
	const char *hook = str_of(o, "hook"), *type = str_of(o, "type");
	const char *policy = str_of(o, "policy");
	int rc = 0;

	ch.family = str_of(o, "family");
	ch.table = str_of(o, "table");
	ch.name = str_of(o, "name");
	if (ch.family == NULL || ch.table == NULL || ch.name == NULL)
		FAIL("object %zu (chain): 'family', 'table' or 'name' is not a string", idx);
	if (!json_is_integer(h))
		FAIL("object %zu (chain %s %s %s): 'handle' is not an integer", idx, ch.family,
		     ch.table, ch.name);
	ch.handle = (uint64_t)json_integer_value(h);
	if (hook != NULL) {
		json_t *prio = json_object_get(o, "prio");

		if (!json_is_integer(prio))
			FAIL("object %zu (chain %s %s %s): a base chain whose 'prio' is not an "
			     "integer", idx, ch.family, ch.table, ch.name);
		ch.prio = json_integer_value(prio);
		ch.hook = type != NULL && !strcmp(type, "nat") ? H_NONE : hook_rank(ch.family, hook);
		ch.policy_drop = policy != NULL && !strcmp(policy, "drop");
	}
	if (chain_find(c, ch.family, ch.table, ch.name) != NULL)
		FAIL("object %zu: chain %s %s %s listed twice", idx, ch.family, ch.table, ch.name);
	if (grow((void **)&c->chains, &c->capchains, c->nchains, sizeof(ch)) != 0)
		return -ENOMEM;
	c->chains[c->nchains++] = ch;
out:
	return rc;
}

static int
read_rule(struct ctx *c, json_t *o, char *err, size_t errlen, size_t idx)
{
	const char *family = str_of(o, "family"), *table = str_of(o, "table");
	const char *name = str_of(o, "chain");
	json_t *h = json_object_get(o, "handle"), *expr = json_object_get(o, "expr");
	struct chain *ch;
	int rc = 0;

	if (family == NULL || table == NULL || name == NULL)
		FAIL("object %zu (rule): 'family', 'table' or 'chain' is not a string", idx);
	if (!json_is_integer(h))
		FAIL("object %zu (rule in %s %s %s): 'handle' is not an integer", idx, family,
		     table, name);
	if (!json_is_array(expr))
		FAIL("object %zu (rule %s %s %s handle %" PRIu64 "): 'expr' is not an array", idx,
		     family, table, name, (uint64_t)json_integer_value(h));
	ch = chain_find(c, family, table, name);
	if (ch == NULL)
		FAIL("object %zu (rule handle %" PRIu64 "): its chain %s %s %s is not listed "
		     "before it", idx, (uint64_t)json_integer_value(h), family, table, name);
	if (grow((void **)&c->rules, &c->caprules, c->nrules, sizeof(*c->rules)) != 0 ||
	    grow((void **)&ch->rules, &ch->caprules, ch->nrules, sizeof(*ch->rules)) != 0)
		return -ENOMEM;
	c->rules[c->nrules] = (struct rule){ .expr = expr, .handle = (uint64_t)json_integer_value(h) };
	ch->rules[ch->nrules++] = c->nrules++;
out:
	return rc;
}

static int
read_set(struct ctx *c, json_t *o, const char *what, char *err, size_t errlen, size_t idx)
{
	struct set s = { 0 };
	json_t *flags = json_object_get(o, "flags"), *f, *elem = json_object_get(o, "elem");
	const char *map = str_of(o, "map");
	size_t i;
	int rc = 0;

	s.family = str_of(o, "family");
	s.table = str_of(o, "table");
	s.name = str_of(o, "name");
	if (s.family == NULL || s.table == NULL || s.name == NULL)
		FAIL("object %zu (%s): 'family', 'table' or 'name' is not a string", idx, what);
	s.timeout = json_object_get(o, "timeout") != NULL;
	if (json_is_string(flags))
		s.timeout |= !strcmp(json_string_value(flags), "timeout");
	json_array_foreach(flags, i, f)
		s.timeout |= json_is_string(f) && !strcmp(json_string_value(f), "timeout");
	if (map != NULL && !strcmp(map, "verdict") && elem != NULL) {
		if (!json_is_array(elem))
			FAIL("object %zu (map %s %s %s): 'elem' is not an array", idx, s.family,
			     s.table, s.name);
		s.elem = elem;	/* absent: not listed (terse), not known */
	}
	if (set_find(c, s.family, s.table, s.name) != NULL)
		FAIL("object %zu: set %s %s %s listed twice", idx, s.family, s.table, s.name);
	if (grow((void **)&c->sets, &c->capsets, c->nsets, sizeof(s)) != 0)
		return -ENOMEM;
	c->sets[c->nsets++] = s;
out:
	return rc;
}

int
fd_rulecheck_parse(const char *json, size_t len, uint32_t mark_bit,
		   struct fd_rulecheck_result *out, char *err, size_t errlen)
{
	struct ctx c = { .bit = mark_bit, .out = out };
	json_error_t je;
	json_t *root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &je), *list, *o;
	size_t i;
	int rc = 0;

	if (errlen > 0)
		err[0] = '\0';
	if (root == NULL)
		FAIL("not JSON: %s (line %d, column %d)", je.text, je.line, je.column);
	list = json_object_get(root, "nftables");
	if (!json_is_array(list))
		FAIL("no \"nftables\" array at the top");
	json_array_foreach(list, i, o) {
		json_t *v;
		const char *k = only_key(o, &v);

		if (k == NULL)
			FAIL("object %zu: not an object of one member", i);
		if (!strcmp(k, "chain"))
			rc = read_chain(&c, v, err, errlen, i);
		else if (!strcmp(k, "rule"))
			rc = read_rule(&c, v, err, errlen, i);
		else if (!strcmp(k, "set") || !strcmp(k, "map"))
			rc = read_set(&c, v, k, err, errlen, i);
		else
			continue;	/* metainfo, table, flowtable, element, ... */
		if (rc == -ENOMEM)
			snprintf(err, errlen, "object %zu: out of memory", i);
		if (rc != 0)
			goto out;
	}
	/* each base chain on the path, with whether a base chain before it may set the mark */
	for (i = 0; i < c.nchains && c.rc == 0; i++) {
		struct chain *b = &c.chains[i];
		bool after = false;

		if (b->hook == H_NONE)
			continue;
		for (size_t j = 0; j < c.nchains && !after; j++)
			after = c.chains[j].hook != H_NONE && base_after(b, &c.chains[j]) &&
				chain_marks(&c, &c.chains[j], 0);
		walk(&c, b, after, 0);
		if (after && b->policy_drop)
			finding(&c, FD_RULECHECK_AFTER_MARK, b, 0, "policy drop");
	}
	rc = c.rc;
	if (rc == -ENOMEM)
		snprintf(err, errlen, "out of memory");
out:
	for (i = 0; i < c.nchains; i++)
		free(c.chains[i].rules);
	free(c.chains);
	free(c.rules);
	free(c.sets);
	json_decref(root);
	return rc;
}

void
fd_rulecheck_result_free(struct fd_rulecheck_result *out)
{
	free(out->f);
	memset(out, 0, sizeof(*out));
}

int
fd_rulecheck_format(const struct fd_rulecheck_finding *f, char *buf, size_t len)
{
	char where[32];

	if (f->handle != 0)
		snprintf(where, sizeof(where), "handle %" PRIu64, f->handle);
	else
		snprintf(where, sizeof(where), "its policy");
	return snprintf(buf, len, "%s %s %s %s: %s (%s): offloaded connections bypass it",
			f->family, f->table, f->chain, where, fd_rulecheck_kind_name((int)f->kind),
			f->what);
}

/* A verdict map's elements listed (`list map`) and put into its object of the ruleset. */
static int
map_elems_put(struct nft_ctx *nft, json_t *m, char *err, size_t errlen)
{
	const char *family = str_of(m, "family"), *table = str_of(m, "table");
	const char *name = str_of(m, "name");
	char cmd[3 * FD_RULECHECK_NAME + 32];
	json_t *doc, *o;
	size_t i;

	if (family == NULL || table == NULL || name == NULL)
		return 0;	/* said by fd_rulecheck_parse */
	snprintf(cmd, sizeof(cmd), "list map %s %s %s", family, table, name);
	if (nft_run_cmd_from_buffer(nft, cmd) != 0) {
		snprintf(err, errlen, "%s: %s", cmd, nft_ctx_get_error_buffer(nft));
		return -EIO;
	}
	doc = json_loads(nft_ctx_get_output_buffer(nft), 0, NULL);
	json_array_foreach(json_object_get(doc, "nftables"), i, o) {
		json_t *l = json_object_get(o, "map");
		json_t *elem = json_object_get(l, "elem");

		if (elem != NULL && !json_equal(json_object_get(l, "name"), json_object_get(m, "name")))
			continue;
		if (elem != NULL && json_object_set(m, "elem", elem) != 0) {
			json_decref(doc);
			snprintf(err, errlen, "%s: out of memory", cmd);
			return -ENOMEM;
		}
	}
	json_decref(doc);
	return 0;
}

int
fd_rulecheck_list(char **json, char *err, size_t errlen)
{
	struct nft_ctx *nft = nft_ctx_new(NFT_CTX_DEFAULT);
	json_t *doc = NULL, *o;
	size_t i;
	int rc = 0;

	*json = NULL;
	if (errlen > 0)
		err[0] = '\0';
	if (nft == NULL || nft_ctx_buffer_output(nft) != 0 || nft_ctx_buffer_error(nft) != 0) {
		snprintf(err, errlen, "libnftables: no context (out of memory)");
		nft_ctx_free(nft);
		return -ENOMEM;
	}
	/* terse: no set's elements (the list sets may hold a million) */
	nft_ctx_output_set_flags(nft, NFT_CTX_OUTPUT_JSON | NFT_CTX_OUTPUT_TERSE |
				      NFT_CTX_OUTPUT_HANDLE);
	if (nft_run_cmd_from_buffer(nft, "list ruleset") != 0) {
		snprintf(err, errlen, "list ruleset: %s", nft_ctx_get_error_buffer(nft));
		rc = -EIO;
		goto out;
	}
	doc = json_loads(nft_ctx_get_output_buffer(nft), 0, NULL);
	if (doc == NULL) {
		snprintf(err, errlen, "list ruleset: libnftables' output is not JSON");
		rc = -EINVAL;
		goto out;
	}
	/* a verdict map's elements say where it may jump and whether it drops (not terse) */
	nft_ctx_output_set_flags(nft, NFT_CTX_OUTPUT_JSON | NFT_CTX_OUTPUT_HANDLE);
	json_array_foreach(json_object_get(doc, "nftables"), i, o) {
		json_t *m = json_object_get(o, "map");
		const char *type = str_of(m, "map");

		if (type != NULL && !strcmp(type, "verdict") &&
		    (rc = map_elems_put(nft, m, err, errlen)) != 0)
			goto out;
	}
	*json = json_dumps(doc, JSON_COMPACT);
	if (*json == NULL) {
		snprintf(err, errlen, "list ruleset: out of memory");
		rc = -ENOMEM;
	}
out:
	json_decref(doc);
	nft_ctx_free(nft);
	return rc;
}

struct fd_rulecheck {
	uint32_t bit;
	struct fd_rulecheck_result last;	/* the last good check's */
	uint64_t checks, failed;
	char error[512];			/* the last failure, or "" */
};

struct fd_rulecheck *
fd_rulecheck_open(uint32_t mark_bit)
{
	struct fd_rulecheck *c = calloc(1, sizeof(*c));

	if (c != NULL)
		c->bit = mark_bit;
	return c;
}

void
fd_rulecheck_close(struct fd_rulecheck *c)
{
	if (c == NULL)
		return;
	fd_rulecheck_result_free(&c->last);
	free(c);
}

static bool
same_finding(const struct fd_rulecheck_finding *a, const struct fd_rulecheck_finding *b)
{
	return a->kind == b->kind && a->handle == b->handle && !strcmp(a->what, b->what) &&
	       !strcmp(a->chain, b->chain) && !strcmp(a->table, b->table) &&
	       !strcmp(a->family, b->family);
}

static bool
result_has(const struct fd_rulecheck_result *r, const struct fd_rulecheck_finding *f)
{
	for (size_t i = 0; i < r->n; i++)
		if (same_finding(&r->f[i], f))
			return true;
	return false;
}

int
fd_rulecheck_run(struct fd_rulecheck *c)
{
	struct fd_rulecheck_result now = { 0 };
	char *json = NULL, err[sizeof(c->error)];
	size_t fresh = 0;
	bool changed;
	int rc;

	c->checks++;
	rc = fd_rulecheck_list(&json, err, sizeof(err));
	if (rc == 0)
		rc = fd_rulecheck_parse(json, strlen(json), c->bit, &now, err, sizeof(err));
	free(json);
	if (rc != 0) {
		c->failed++;
		snprintf(c->error, sizeof(c->error), "%s", err);
		fprintf(stderr, "flowcutd: ruleset check: %s; the findings before stay\n", err);
		fd_rulecheck_result_free(&now);
		return rc;
	}
	c->error[0] = '\0';
	for (size_t i = 0; i < now.n; i++) {
		char line[1024];

		if (result_has(&c->last, &now.f[i]))
			continue;	/* said at the check before */
		fresh++;
		fd_rulecheck_format(&now.f[i], line, sizeof(line));
		fprintf(stderr, "flowcutd: ruleset: %s (docs/settings.md)\n", line);
	}
	changed = fresh > 0 || now.n != c->last.n || now.more != c->last.more;
	if (changed)
		fprintf(stderr, "flowcutd: ruleset: %zu construct%s offloaded connections bypass "
			"(%zu new)%s\n", now.n + now.more, now.n + now.more == 1 ? "" : "s", fresh,
			now.more ? "; past the first " FD_RULECHECK_MAX_TEXT " not said" : "");
	fd_rulecheck_result_free(&c->last);
	c->last = now;
	return (int)(now.n + now.more);
}

json_t *
fd_rulecheck_stats_json(const struct fd_rulecheck *c)
{
	json_t *o, *kinds = json_object();
	size_t n[FD_RULECHECK_NKINDS] = { 0 };
	bool bad = kinds == NULL;

	for (size_t i = 0; i < c->last.n; i++)
		n[c->last.f[i].kind]++;
	for (int k = 0; k < FD_RULECHECK_NKINDS && !bad; k++)
		bad = json_object_set_new(kinds, fd_rulecheck_kind_name(k),
					  json_integer((json_int_t)n[k])) != 0;
	if (bad) {
		json_decref(kinds);
		return NULL;
	}
	o = json_pack("{s:I, s:I, s:I, s:o, s:o}",
		      "bypassed", (json_int_t)(c->last.n + c->last.more),
		      "checks", (json_int_t)c->checks, "failed", (json_int_t)c->failed,
		      "error", c->error[0] ? json_string(c->error) : json_null(), "kinds", kinds);
	return o;
}
