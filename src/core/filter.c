/* filter.c - the filter file: its parser, the rules' evaluation, and the
 * filter in force with its decision per task type (filter.h; the syntax in
 * docs/filter.md).
 *
 * The file is read once, at tscope_init (and by `taskscope run --filter`,
 * which checks it before starting the program).  Each rule is a pattern
 * matched with fnmatch(3) (flags 0: `*`, `?`, `[...]`, a backslash quotes
 * the next character) against the whole type name, or against the file of
 * the type's source location: the FILE of a name ending in "(FILE:LINE)",
 * as the adapters name types from code addresses.  All rules, of both
 * kinds, are evaluated in the file's order and the last one that matches
 * decides.
 *
 * Concurrency: the filter in force and the per-type bytes are written under
 * the type table's lock (tscope__filter_install takes it;
 * tscope__filter_decide is called by names.c with it held, before a new id
 * is handed out), so a type's byte is set before any thread can use the id.
 */
#include "filter.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "names.h"

#define LINE_MAX_BYTES 4096

struct rule {
    uint8_t exclude; /* else include */
    uint8_t files;   /* a rule on the type's source file, else on its name */
    char pattern[TSCOPE__NAME_MAX + 1];
};

struct tscope__filter {
    size_t n, cap;
    struct rule *rules;
};

uint8_t tscope__type_excluded[TSCOPE__MAX_IDS + 1];

static struct tscope__filter *active; /* the filter in force; under tscope__types.lock */

void tscope__filter_free(struct tscope__filter *f)
{
    if (!f)
        return;
    free(f->rules);
    free(f);
}

size_t tscope__filter_rules(const struct tscope__filter *f)
{
    return f ? f->n : 0;
}

static const char *const BLOCK_WORDS[2][2] = {
    {"TASKSCOPE_TYPE_NAMES_BEGIN", "TASKSCOPE_TYPE_NAMES_END"},
    {"TASKSCOPE_FILE_NAMES_BEGIN", "TASKSCOPE_FILE_NAMES_END"},
};

/* One line's error: "PATH:LINE: what"; returns -1. */
static int fail(char *err, size_t len, const char *path, unsigned line, const char *what)
{
    if (err && len)
        snprintf(err, len, "%s:%u: %s", path, line, what);
    return -1;
}

/* One rule line (keyword at s, its first n bytes): added to f, or -1. */
static int add_rule(struct tscope__filter *f, int files, const char *s, size_t n, char *why,
                    size_t len)
{
    int exclude = n == 7 && memcmp(s, "EXCLUDE", 7) == 0;
    if (!exclude && !(n == 7 && memcmp(s, "INCLUDE", 7) == 0)) {
        snprintf(why, len, "\"%.*s\" is no rule (expected EXCLUDE or INCLUDE and a pattern, or %s)",
                 (int)(n > 64 ? 64 : n), s, BLOCK_WORDS[files][1]);
        return -1;
    }
    const char *p = s + n;
    while (*p == ' ' || *p == '\t')
        p++;
    size_t plen = strlen(p);
    if (!plen) {
        snprintf(why, len, "%.*s without a pattern", (int)n, s);
        return -1;
    }
    if (plen > TSCOPE__NAME_MAX) {
        snprintf(why, len, "a pattern of %zu bytes (at most %d)", plen, TSCOPE__NAME_MAX);
        return -1;
    }
    if (files && strchr(p, '/')) {
        snprintf(why, len,
                 "file pattern \"%s\" has a '/': types name their file without its folder "
                 "(fib.c), so the pattern matches that name",
                 p);
        return -1;
    }
    if (f->n == f->cap) {
        size_t cap = f->cap ? 2 * f->cap : 16;
        struct rule *r = realloc(f->rules, cap * sizeof *r);
        if (!r) {
            snprintf(why, len, "out of memory");
            return -1;
        }
        f->rules = r;
        f->cap = cap;
    }
    struct rule *r = &f->rules[f->n++];
    r->exclude = (uint8_t)exclude;
    r->files = (uint8_t)files;
    memcpy(r->pattern, p, plen + 1);
    return 0;
}

int tscope__filter_parse(const char *path, struct tscope__filter **out, char *err, size_t len)
{
    *out = NULL;
    FILE *in = fopen(path, "r");
    if (!in) {
        if (err && len)
            snprintf(err, len, "%s: %s", path, strerror(errno));
        return -1;
    }
    struct tscope__filter *f = calloc(1, sizeof *f);
    char *buf = malloc(LINE_MAX_BYTES + 1);
    char why[512];
    int rc = 0, block = -1; /* -1: outside; 0: type names; 1: file names */
    unsigned line = 0, opened = 0;
    if (!f || !buf) {
        rc = fail(err, len, path, 0, "out of memory");
        goto out;
    }
    errno = 0;
    while (fgets(buf, LINE_MAX_BYTES + 1, in)) {
        line++;
        size_t n = strlen(buf);
        if (n == LINE_MAX_BYTES && buf[n - 1] != '\n' && !feof(in)) {
            rc = fail(err, len, path, line, "line longer than 4095 bytes");
            goto out;
        }
        while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' ' ||
                     buf[n - 1] == '\t'))
            buf[--n] = 0;
        char *s = buf;
        while (*s == ' ' || *s == '\t')
            s++;
        if (!*s || *s == '#')
            continue;
        size_t w = strcspn(s, " \t");
        int is_begin = -1, is_end = -1;
        for (int b = 0; b < 2; b++) {
            if (strlen(BLOCK_WORDS[b][0]) == w && memcmp(s, BLOCK_WORDS[b][0], w) == 0)
                is_begin = b;
            if (strlen(BLOCK_WORDS[b][1]) == w && memcmp(s, BLOCK_WORDS[b][1], w) == 0)
                is_end = b;
        }
        if ((is_begin >= 0 || is_end >= 0) && s[w]) {
            snprintf(why, sizeof why, "%.*s takes nothing after it on its line", (int)w, s);
            rc = fail(err, len, path, line, why);
            goto out;
        }
        if (is_begin >= 0) {
            if (block >= 0) {
                snprintf(why, sizeof why, "%s inside the block that line %u begins (expected %s)",
                         BLOCK_WORDS[is_begin][0], opened, BLOCK_WORDS[block][1]);
                rc = fail(err, len, path, line, why);
                goto out;
            }
            block = is_begin;
            opened = line;
        } else if (is_end >= 0) {
            if (block != is_end) {
                snprintf(why, sizeof why, "%s without its %s", BLOCK_WORDS[is_end][1],
                         BLOCK_WORDS[is_end][0]);
                rc = fail(err, len, path, line, why);
                goto out;
            }
            block = -1;
        } else if (block < 0) {
            snprintf(why, sizeof why,
                     "\"%.*s\" outside a block (rules go between TASKSCOPE_TYPE_NAMES_BEGIN "
                     "and _END, or TASKSCOPE_FILE_NAMES_BEGIN and _END)",
                     (int)(w > 64 ? 64 : w), s);
            rc = fail(err, len, path, line, why);
            goto out;
        } else if (add_rule(f, block, s, w, why, sizeof why)) {
            rc = fail(err, len, path, line, why);
            goto out;
        }
    }
    if (ferror(in)) { /* a folder, say */
        if (err && len)
            snprintf(err, len, "%s: %s", path, errno ? strerror(errno) : "read error");
        rc = -1;
    } else if (block >= 0) {
        snprintf(why, sizeof why, "%s has no %s before the end of the file", BLOCK_WORDS[block][0],
                 BLOCK_WORDS[block][1]);
        rc = fail(err, len, path, opened, why);
    }
out:
    fclose(in);
    free(buf);
    if (rc)
        tscope__filter_free(f);
    else
        *out = f;
    return rc;
}

/* The file of a type's source location: FILE of a name that ends in
 * "(FILE:LINE)", copied into buf; 0 when the name has none. */
static int type_file(const char *name, char *buf, size_t len)
{
    size_t n = strlen(name);
    if (n < 4 || name[n - 1] != ')')
        return 0;
    const char *open = NULL;
    for (const char *p = name + n - 1; p-- > name;)
        if (*p == '(') {
            open = p;
            break;
        }
    if (!open)
        return 0;
    const char *colon = NULL;
    for (const char *p = name + n - 1; p-- > open;)
        if (*p == ':') {
            colon = p;
            break;
        }
    if (!colon || colon == open + 1 || colon + 1 == name + n - 1)
        return 0;
    for (const char *d = colon + 1; d < name + n - 1; d++)
        if (*d < '0' || *d > '9')
            return 0;
    size_t flen = (size_t)(colon - open - 1);
    if (flen >= len)
        return 0;
    memcpy(buf, open + 1, flen);
    buf[flen] = 0;
    return 1;
}

int tscope__filter_excludes(const struct tscope__filter *f, const char *type_name)
{
    if (!f || !f->n)
        return 0;
    char file[TSCOPE__NAME_MAX + 1];
    int has_file = type_file(type_name, file, sizeof file);
    for (size_t i = f->n; i-- > 0;) {
        const struct rule *r = &f->rules[i];
        if (r->files ? has_file && fnmatch(r->pattern, file, 0) == 0
                     : fnmatch(r->pattern, type_name, 0) == 0)
            return r->exclude;
    }
    return 0;
}

void tscope__filter_decide(uint32_t id, const char *name)
{
    if (id && id <= TSCOPE__MAX_IDS)
        __atomic_store_n(&tscope__type_excluded[id], (uint8_t)tscope__filter_excludes(active, name),
                         __ATOMIC_RELAXED);
}

int tscope__filter_active(void)
{
    return __atomic_load_n(&active, __ATOMIC_RELAXED) != NULL;
}

int tscope__filter_install(const char *path, FILE *warn)
{
    struct tscope__filter *f = NULL;
    if (path && *path) {
        char err[1024];
        if (tscope__filter_parse(path, &f, err, sizeof err) && warn)
            fprintf(warn, "taskscope: warning: TASKSCOPE_FILTER_FILE: %s; measuring every task\n",
                    err);
    }
    pthread_mutex_lock(&tscope__types.lock);
    struct tscope__filter *old = active;
    __atomic_store_n(&active, f, __ATOMIC_RELAXED);
    for (uint32_t id = 1; id <= tscope__types.count && id <= TSCOPE__MAX_IDS; id++)
        tscope__filter_decide(id, tscope__types.names[id]);
    pthread_mutex_unlock(&tscope__types.lock);
    tscope__filter_free(old);
    return f != NULL;
}
