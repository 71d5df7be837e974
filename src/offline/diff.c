/* diff.c - two profiles compared per task type (`taskscope diff`).
 *
 * Types are matched by name (ids are given in registration order and
 * differ between runs): one row per type of A, with B's type of that name
 * or none, then one per type only B has.  A row's impact is the change in
 * self time, B minus A.  Rows are sorted by the size of the impact (ties by
 * name), or by name.  Matching is a linear search per type: profiles have
 * tens of types, and the command prints them all.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "offline.h"

static int by_impact(const void *x, const void *y)
{
    const struct tscope__offline_diff_row *a = x, *b = y;
    double da = fabs(a->impact), db = fabs(b->impact);
    if (da != db)
        return da < db ? 1 : -1;
    return strcmp(a->name, b->name);
}

static int by_name(const void *x, const void *y)
{
    return strcmp(((const struct tscope__offline_diff_row *)x)->name,
                  ((const struct tscope__offline_diff_row *)y)->name);
}

static const struct tscope__ptype *find(const struct tscope__profile *p, const char *name)
{
    for (uint32_t i = 0; i < p->ntypes; i++)
        if (strcmp(p->types[i].name, name) == 0)
            return &p->types[i];
    return NULL;
}

struct tscope__offline_diff_row *tscope__offline_diff(const struct tscope__profile *a,
                                                      const struct tscope__profile *b, int by_names,
                                                      size_t *n)
{
    *n = 0;
    struct tscope__offline_diff_row *r = calloc((size_t)a->ntypes + b->ntypes + 1, sizeof *r);
    if (!r)
        return NULL;
    for (uint32_t i = 0; i < a->ntypes; i++) {
        const struct tscope__ptype *ta = &a->types[i], *tb = find(b, ta->name);
        r[(*n)++] = (struct tscope__offline_diff_row){ta->name, ta, tb,
                                                      (tb ? tb->self_total : 0) - ta->self_total};
    }
    for (uint32_t i = 0; i < b->ntypes; i++) {
        const struct tscope__ptype *tb = &b->types[i];
        if (!find(a, tb->name))
            r[(*n)++] = (struct tscope__offline_diff_row){tb->name, NULL, tb, tb->self_total};
    }
    qsort(r, *n, sizeof *r, by_names ? by_name : by_impact);
    return r;
}
