/* palette.c - the task types' colours and the legends' placement for every
 * picture of a run (palette.h has the rule). */
#include "palette.h"

#include <stdlib.h>

#include "export.h"

/* Work: Okabe and Ito's seven colours (told apart with the common colour
 * vision deficiencies), then five of Paul Tol's "muted" ones; no grey. */
const char *const tscope__palette_work[TSCOPE__PALETTE_OWN] = {
    "#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00",
    "#F0E442", "#332288", "#117733", "#882255", "#44AA99", "#999933"};
/* Waiting: dark to light, lighter than none of the work colours' darkest. */
const char *const tscope__palette_wait[TSCOPE__PALETTE_GREYS] = {"#3C3C3C", "#6E6E6E", "#9A9A9A",
                                                                 "#BEBEBE"};

static const double *rank_self;
static int by_self_then_id(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    if (rank_self[x] != rank_self[y])
        return rank_self[x] > rank_self[y] ? -1 : 1;
    return x < y ? -1 : x > y;
}

int tscope__palette_assign(const double *self, const unsigned char *wait, uint32_t n,
                           struct tscope__colour *out)
{
    uint32_t *order = malloc((n ? n : 1) * sizeof *order), m = 0;
    if (!order)
        return TSCOPE_ENOMEM;
    for (uint32_t id = 0; id < n; id++) {
        out[id] = (struct tscope__colour){NULL, TSCOPE__COLOUR_NONE, 0, UINT32_MAX};
        if (self[id] >= 0)
            order[m++] = id;
    }
    rank_self = self;
    qsort(order, m, sizeof *order, by_self_then_id);
    rank_self = NULL;
    unsigned greys = 0;
    for (uint32_t r = 0; r < m; r++) {
        struct tscope__colour *c = &out[order[r]];
        c->rank = r;
        c->wait = wait && wait[order[r]];
        if (c->wait && r < TSCOPE__PALETTE_OWN && greys < TSCOPE__PALETTE_GREYS)
            *c = (struct tscope__colour){tscope__palette_wait[greys++], TSCOPE__COLOUR_OWN, 1, r};
        else if (c->wait)
            c->rgb = TSCOPE__PALETTE_OTHER_WAIT, c->group = TSCOPE__COLOUR_OTHER_WAIT;
        else if (r < TSCOPE__PALETTE_OWN)
            c->rgb = tscope__palette_work[r], c->group = TSCOPE__COLOUR_OWN;
        else
            c->rgb = TSCOPE__PALETTE_OTHER, c->group = TSCOPE__COLOUR_OTHER;
    }
    free(order);
    return 0;
}

struct tscope__colour *tscope__palette_of_profile(const struct tscope__profile *p, uint32_t *n)
{
    uint32_t ids = p->tl.ntype;
    for (uint32_t i = 0; i < p->ntypes; i++)
        if (p->types[i].id != TSCOPE__PROFILE_ROOT && p->types[i].id >= ids)
            ids = p->types[i].id + 1;
    for (uint32_t i = 0; i < p->tl.npoints; i++)
        if (p->tl.points[i].type >= ids)
            ids = p->tl.points[i].type + 1;
    double *self = malloc((ids ? ids : 1) * sizeof *self);
    unsigned char *wait = calloc(ids ? ids : 1, 1);
    struct tscope__colour *out = malloc((ids ? ids : 1) * sizeof *out);
    if (!self || !wait || !out) {
        free(self), free(wait), free(out);
        return NULL;
    }
    for (uint32_t id = 0; id < ids; id++)
        self[id] = -1;
    /* a timeline row without a type (untyped time): the row's own sum */
    for (uint32_t t = 0; t < p->tl.ntype; t++) {
        double sum = 0;
        for (uint32_t b = 0; p->tl.type[t] && b < p->tl.nbins; b++)
            sum += p->tl.type[t][b];
        if (p->tl.type[t])
            self[t] = sum;
    }
    for (uint32_t i = 0; i < p->tl.npoints; i++)
        if (self[p->tl.points[i].type] < 0)
            self[p->tl.points[i].type] = 0;
    for (uint32_t i = 0; i < p->ntypes; i++) {
        const struct tscope__ptype *t = &p->types[i];
        if (t->id == TSCOPE__PROFILE_ROOT)
            continue;
        self[t->id] = t->self_total;
        wait[t->id] = (t->attrs & TSCOPE_TYPE_WAIT) != 0;
    }
    int rc = tscope__palette_assign(self, wait, ids, out);
    free(self);
    free(wait);
    if (rc) {
        free(out);
        return NULL;
    }
    *n = ids;
    return out;
}

/* A legend's text at font size 9 on pngcairo: at most 7 px a character, a
 * line sample and gaps of 60 px, rows of 14 px, 16 px around. */
#define KEY_CHAR_PX 7u
#define KEY_SAMPLE_PX 60u
#define KEY_ROW_PX 14u
#define KEY_PAD_PX 16u

unsigned tscope__palette_key(FILE *f, unsigned entries, size_t longest, unsigned width,
                             unsigned min_height)
{
    if (!entries) {
        fprintf(f, "unset key\n");
        return min_height;
    }
    unsigned column = (unsigned)(longest < 200 ? longest : 200) * KEY_CHAR_PX + KEY_SAMPLE_PX;
    unsigned cols = width > 100 ? (width - 100) / column : 1;
    if (cols < 1)
        cols = 1;
    if (cols > entries)
        cols = entries;
    unsigned rows = (entries + cols - 1) / cols;
    unsigned key = rows * KEY_ROW_PX + KEY_PAD_PX;
    unsigned height = min_height > 4 * key ? min_height : 4 * key;
    fprintf(f,
            "# legend: %u entries in %u columns, %u rows below the plot: %u of %u px high"
            " (at most a quarter)\n"
            "set key below center horizontal maxcols %u font ',9' spacing 1 samplen 2\n",
            entries, cols, rows, key, height, cols);
    return height;
}

void tscope__palette_put_title(FILE *f, const char *name)
{
    fputc('\'', f);
    for (const char *c = name; *c; c++) {
        if (*c == '\n' || *c == '\r')
            continue;
        if (*c == '\'')
            fputc('\'', f);
        fputc(*c, f);
    }
    fputc('\'', f);
}
