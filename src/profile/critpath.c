/* critpath.c - the critical path of a profile's instance graph (see
 * critpath.h): the longest path through the tasks weighted by work.
 *
 * Work.  A task's work is its self time; a task whose type is a wait
 * (TSCOPE_TYPE_WAIT: barriers, taskwait, taskgroup) has none, and idle time
 * is in no task.  Implicit and initial tasks and constructs (a parallel
 * region, a `single`) are tasks like the others: a `single` generator's
 * serial work is its construct's self time.
 *
 * The graph.  The tasks that ended and began (a task cancelled before it ran
 * did no work).  A task hosts what ran on its thread inside its interval
 * and on top of it (constructs, waits, undeferred tasks, tasks run in a
 * taskwait): found per thread with a stack over the tasks by begin.  While
 * a hosted task runs, its host does nothing: a task's own time is its
 * interval less its hosted tasks'.  Its self time is taken as spread evenly
 * over its own time - the one approximation here: per-task begin, end and
 * self times say how much work a task did, not when, so the work a task did
 * before it created a child is self * (own time until then) / (own time).
 * Edges:
 * - created: a child cannot begin before its creation, so it follows the
 *   work its creator did until then.  The creator is the innermost
 *   construct of the parent running at that moment: a task the parent hosts
 *   that was created and begun at one instant (tscope_task_start: the OMPT
 *   adapter's `single`, whose tasks OpenMP reports as created by the
 *   implicit task), and so on inward; else the parent (an implicit task is
 *   created by its region, not by the primary thread's implicit task the
 *   region hosts);
 * - dependence: a task follows the tasks it depends on
 *   (tscope__critpath_orders: local edges that order their tasks; remote
 *   edges name tasks of other ranks);
 * - joined: a task that ended continues its nearest ancestor that outlived
 *   it, where that one waited for it: right away if it ran on top of it (or
 *   of its construct running then: the ancestor was suspended meanwhile),
 *   else at the end of the wait it was in then, else of its next wait (a
 *   taskwait, a barrier), else at its end (a parallel region ends after its
 *   implicit tasks; a task that ends without waiting for a child that ended
 *   earlier is taken as if it had waited: an overestimate of at most its
 *   work after that child's end);
 * - barrier: the waits of one barrier (TSCOPE_TYPE_BARRIER: one wait per
 *   thread of the team, of one type, all sharing the instant the last one
 *   arrived) join their tasks: each continues after the longest path into
 *   any of them at its arrival.
 * Waits are no steps of a path: a path through a taskwait goes from the
 * child that ended last to the task after the wait, with nothing between.
 *
 * The longest path: one sweep over the tasks' creations, begins and ends
 * in time order (at one instant, ends before the rest, a hosted task's end
 * before its host's; an ancestor needed before its own begin is begun
 * then).  Each task keeps the best value of (path into it - its work until
 * the entry point) over its entries so far: its begin (the longest of its
 * creation and its dependences) and the joins of the tasks it waited for;
 * the longest path to a moment t inside it is its work until t plus that
 * value.  A join waits in its wait (or at the task's end) until that moment
 * is reached, so nothing the task did before sees it.  Each value remembers
 * where it came from, and the path is read back from the task with the
 * longest path at its end.  Ties keep the earlier entry.
 *
 * Only the graph's tasks take part: with a capped instance graph
 * (TASKSCOPE_INSTANCE_CAP keeps the top of the tree) the path runs through
 * the tasks kept, and the work of those left out is on no path.
 */
#include "core/hazard.h"
#include "critpath.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "taskscope/taskscope.h"

#define NONE UINT32_MAX

enum ev_kind { EV_END, EV_CREATE, EV_BEGIN };
enum start_kind { START_NONE, START_CREATED, START_DEP };
enum join_kind { JOIN_NONE, JOIN_NOW, JOIN_AT_WAIT, JOIN_AT_END };

/* Where a task's best value came from: its begin (task NONE), the join of
 * task `task` at time `at`, or (group > 0) the barrier group - 1 it left at
 * `at`, which `task` reached last. */
struct src {
    uint32_t task;
    double at;
    uint32_t group;
};

/* The waits of one barrier, one per thread of the team: the longest path
 * into their tasks at their arrival (v, task `task` at `e`, its source). */
struct group {
    double v, e;
    uint32_t task;
    struct src src;
    int set;
};

struct ev {
    double t;
    uint32_t task;
    int kind;
};

struct task_state {
    double st, end, cre_t; /* begin (or where it is taken to be), end, creation */
    double self;           /* work: 0 for waits */
    double own;            /* interval less its hosted tasks' */
    uint32_t par;          /* parent index (waits skipped), NONE */
    uint32_t host;         /* the innermost task around it on its thread, NONE */
    uint32_t kids, nkids;  /* the tasks it hosts: kid[kids .. kids + nkids) */
    uint32_t deps, ndeps;  /* ordering dependence edges into it: dep[deps ..) */
    uint8_t wait, barrier, created, begun, done;
    uint32_t group; /* a barrier's group + 1, 0 */
    int join;       /* enum join_kind */
    uint32_t join_to;
    /* the sweep's values */
    double best, start, cre, f, pend;
    struct src best_src, cre_src, pend_src, end_src;
    int start_kind;
    uint32_t cre_ctx, start_dep;
};

struct cp {
    const struct tscope__profile *p;
    uint32_t n;
    struct task_state *t;
    uint32_t *by_id;
    uint32_t *kid;       /* hosted tasks, grouped by host, by begin */
    double *kid_before;  /* the time of the earlier kids of the same host */
    uint32_t *next_wait; /* kid position -> position of the next wait kid, NONE */
    uint32_t *dep;       /* p->deps indexes, grouped by the task they order */
    uint32_t *chain;     /* scratch: ancestors begun on demand */
    struct group *groups;
};

/* Task indexes by id, then index (qsort_r: arg is the struct cp). */
static int by_id_then_index(const void *a, const void *b, void *arg)
{
    const struct tscope__profile *p = ((const struct cp *)arg)->p;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    uint64_t ix = p->tasks[x].id, iy = p->tasks[y].id;
    if (ix != iy)
        return ix < iy ? -1 : 1;
    return x < y ? -1 : x > y;
}

/* The first task with this id that takes part, or NONE. */
static uint32_t find_task(const struct cp *c, uint64_t id)
{
    uint32_t lo = 0, hi = c->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (c->p->tasks[c->by_id[mid]].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < c->n && c->p->tasks[c->by_id[lo]].id == id ? c->by_id[lo] : NONE;
}

int tscope__critpath_orders(const struct tscope__pdep *d)
{
    return !d->remote && (d->kind & TSCOPE_HAZARD_ORDER); /* an exclusion orders nothing */
}

/* The text of a local edge, into buf (len bytes): its hazards and the
 * first address, "RAW+WAR on 0x7ffd0010 +1 more". */
static void hazard_text(const struct tscope__pdep *d, char *buf, size_t len)
{
    char h[32];
    int n = snprintf(buf, len, "%s", tscope__hazard_text((unsigned)d->kind, h, sizeof h));
    if (d->addr && n >= 0 && (size_t)n < len)
        n += snprintf(buf + n, len - (size_t)n, " on 0x%llx", (unsigned long long)d->addr);
    if (d->naddrs > 1 && n >= 0 && (size_t)n < len)
        snprintf(buf + n, len - (size_t)n, " +%u more", d->naddrs - 1);
}

/* How many of the tasks x hosts began at or before t (they are ordered by
 * their begin). */
static uint32_t kids_begun(const struct cp *c, const struct task_state *x, double t)
{
    uint32_t lo = 0, hi = x->nkids;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (c->t[c->kid[x->kids + mid]].st <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Own time of task i from its begin until t. */
static double own_until(const struct cp *c, uint32_t i, double t)
{
    const struct task_state *x = &c->t[i];
    if (t <= x->st)
        return 0;
    if (t >= x->end)
        return x->own;
    uint32_t lo = kids_begun(c, x, t);
    double hosted = 0;
    if (lo) {
        const struct task_state *k = &c->t[c->kid[x->kids + lo - 1]];
        hosted = c->kid_before[x->kids + lo - 1] + (t < k->end ? t - k->st : k->end - k->st);
    }
    double own = t - x->st - hosted;
    return own < 0 ? 0 : own > x->own ? x->own : own;
}

/* Work task i did from its begin until t. */
static double work_until(const struct cp *c, uint32_t i, double t)
{
    const struct task_state *x = &c->t[i];
    if (x->self <= 0)
        return 0;
    if (x->own <= 0)
        return t >= x->end ? x->self : 0;
    return x->self * own_until(c, i, t) / x->own;
}

/* The task i hosts that runs at t (begun at or before t, ending
 * after it), or NONE. */
static uint32_t kid_at(const struct cp *c, uint32_t i, double t, uint32_t *pos)
{
    const struct task_state *x = &c->t[i];
    uint32_t lo = kids_begun(c, x, t);
    if (pos)
        *pos = x->kids + lo; /* the first kid beginning after t */
    if (!lo)
        return NONE;
    uint32_t k = c->kid[x->kids + lo - 1];
    if (t >= c->t[k].end)
        return NONE;
    if (pos)
        *pos = x->kids + lo - 1;
    return k;
}

/* The innermost construct of task i running at t: i, or a task i hosts
 * that was started where it was made (created and begun at one instant on
 * i's thread: the runtime's constructs, a `single` say, whose code is i's),
 * and so on inward; not `skip`.  *wait: a wait it is in at t, or NONE. */
static uint32_t running_at(const struct cp *c, uint32_t i, double t, uint32_t skip, uint32_t *wait)
{
    *wait = NONE;
    for (uint32_t guard = 0; guard < c->n; guard++) {
        uint32_t k = kid_at(c, i, t, NULL);
        if (k == NONE || k == skip)
            break;
        if (c->t[k].wait) {
            *wait = k;
            break;
        }
        if (c->p->tasks[k].create != c->p->tasks[k].begin)
            break; /* a task of its own (an implicit task in its region) */
        i = k;
    }
    return i;
}

/* Whether task i ran inside task `at` on its thread. */
static int hosted_by(const struct cp *c, uint32_t i, uint32_t at)
{
    for (uint32_t h = c->t[i].host, guard = 0; h != NONE && guard < c->n; h = c->t[h].host, guard++)
        if (h == at)
            return 1;
    return 0;
}

/* The task a wait belongs to: the one it ran on top of (its parent for a
 * runtime's construct). */
static uint32_t wait_owner(const struct cp *c, uint32_t w)
{
    return c->t[w].host != NONE && !c->t[c->t[w].host].wait ? c->t[w].host : c->t[w].par;
}

/* Where task i (not a wait) joins, decided before the sweep. */
static void place_join(struct cp *c, uint32_t i)
{
    struct task_state *x = &c->t[i];
    uint32_t a = x->par;
    for (uint32_t guard = 0; a != NONE && x->end > c->t[a].end && guard < c->n; guard++)
        a = c->t[a].par;
    if (a == NONE || a == i)
        return;
    if (x->host == a) { /* it ran on top of its ancestor, which waited meanwhile */
        x->join = JOIN_NOW;
        x->join_to = a;
        return;
    }
    uint32_t wait, pos;
    uint32_t at = running_at(c, a, x->end, i, &wait);
    if (wait != NONE) { /* it ended while `at` waited there */
        x->join = JOIN_AT_WAIT;
        x->join_to = wait;
        return;
    }
    if (hosted_by(c, i, at)) {
        x->join = JOIN_NOW;
        x->join_to = at;
        return;
    }
    kid_at(c, at, x->end, &pos); /* the first task `at` hosts after its end */
    if (pos < c->t[at].kids + c->t[at].nkids && c->next_wait[pos] != NONE) {
        x->join = JOIN_AT_WAIT; /* `at`'s next wait */
        x->join_to = c->kid[c->next_wait[pos]];
    } else {
        x->join = JOIN_AT_END;
        x->join_to = at;
    }
}

/* Takes a join of value v from task `from` at time `at` into task i. */
static void enter(struct cp *c, uint32_t i, double v, uint32_t from, double at)
{
    struct task_state *x = &c->t[i];
    double e = v - work_until(c, i, at);
    if (e > x->best) {
        x->best = e;
        x->best_src = (struct src){from, at, 0};
    }
}

static void ensure_begun(struct cp *c, uint32_t i, double t);

static void create_task(struct cp *c, uint32_t i)
{
    struct task_state *x = &c->t[i];
    if (x->created)
        return;
    x->created = 1;
    x->cre_ctx = NONE;
    uint32_t par = x->par;
    if (par == NONE || c->t[par].done || c->t[par].st > x->cre_t)
        return;
    ensure_begun(c, par, x->cre_t);
    uint32_t wait, ctx = running_at(c, par, x->cre_t, i, &wait);
    if (!c->t[ctx].begun || c->t[ctx].done)
        ctx = par;
    if (!c->t[ctx].begun)
        return;
    x->cre = work_until(c, ctx, x->cre_t) + c->t[ctx].best;
    x->cre_ctx = ctx;
    x->cre_src = c->t[ctx].best_src;
}

static void begin_task(struct cp *c, uint32_t i)
{
    struct task_state *x = &c->t[i];
    if (x->begun)
        return;
    create_task(c, i);
    x->begun = 1;
    x->start = 0;
    x->start_kind = START_NONE;
    if (x->cre_ctx != NONE) {
        x->start = x->cre;
        x->start_kind = START_CREATED;
    }
    for (uint32_t e = x->deps; e < x->deps + x->ndeps; e++) {
        const struct tscope__pdep *d = &c->p->deps[c->dep[e]];
        uint32_t q = find_task(c, d->from);
        if (q != NONE && q != i && c->t[q].done && c->t[q].f > x->start) {
            x->start = c->t[q].f;
            x->start_kind = START_DEP;
            x->start_dep = c->dep[e];
        }
    }
    x->best = x->start;
    x->best_src = (struct src){NONE, x->st, 0};
}

/* Begins task i, and first the ancestors it needs that begin by t but
 * were not begun yet (events at one instant in another order): top down,
 * without recursion. */
static void ensure_begun(struct cp *c, uint32_t i, double t)
{
    uint32_t n = 0;
    for (uint32_t j = i;
         j != NONE && n < c->n && !c->t[j].begun && !c->t[j].done && c->t[j].st <= t;
         j = c->t[j].par)
        c->chain[n++] = j;
    while (n--)
        begin_task(c, c->chain[n]);
}

static void pend(struct task_state *w, double v, uint32_t from, double at)
{
    if (v > w->pend || w->pend_src.task == NONE) {
        w->pend = v;
        w->pend_src = (struct src){from, at, 0};
    }
}

/* Barrier wait i begins: the longest path into its task then counts for
 * every task of the team after the barrier. */
static void barrier_arrive(struct cp *c, uint32_t i)
{
    const struct task_state *x = &c->t[i];
    uint32_t owner = wait_owner(c, i);
    if (!x->group || owner == NONE || c->t[owner].done)
        return;
    ensure_begun(c, owner, x->st);
    if (!c->t[owner].begun)
        return;
    struct group *g = &c->groups[x->group - 1];
    double v = work_until(c, owner, x->st) + c->t[owner].best;
    if (!g->set || v > g->v)
        *g = (struct group){v, x->st, owner, c->t[owner].best_src, 1};
}

/* Barrier wait i ends: its task continues after the team's longest path. */
static void barrier_leave(struct cp *c, uint32_t i)
{
    const struct task_state *x = &c->t[i];
    uint32_t owner = wait_owner(c, i);
    if (!x->group || owner == NONE || c->t[owner].done)
        return;
    const struct group *g = &c->groups[x->group - 1];
    if (!g->set || g->task == owner)
        return;
    ensure_begun(c, owner, x->end);
    struct task_state *o = &c->t[owner];
    double e = g->v - work_until(c, owner, x->end);
    if (e > o->best) {
        o->best = e;
        o->best_src = (struct src){g->task, x->end, x->group};
    }
}

static void end_task(struct cp *c, uint32_t i)
{
    struct task_state *x = &c->t[i];
    if (x->done)
        return;
    if (x->wait) { /* what waited here continues its task */
        uint32_t owner = wait_owner(c, i);
        x->done = 1;
        if (x->pend_src.task != NONE && owner != NONE && !c->t[owner].done) {
            ensure_begun(c, owner, x->end);
            enter(c, owner, x->pend, x->pend_src.task, x->end);
        }
        barrier_leave(c, i);
        return;
    }
    ensure_begun(c, i, x->end);
    if (x->pend_src.task != NONE)
        enter(c, i, x->pend, x->pend_src.task, x->end);
    x->f = work_until(c, i, x->end) + x->best;
    x->end_src = x->best_src;
    x->done = 1;
    uint32_t to = x->join_to;
    switch (x->join) {
    case JOIN_NOW:
        if (!c->t[to].done) {
            ensure_begun(c, to, x->end);
            enter(c, to, x->f, i, x->end);
        }
        break;
    case JOIN_AT_WAIT:
        if (!c->t[to].done) {
            pend(&c->t[to], x->f, i, x->end);
        } else if (wait_owner(c, to) != NONE && !c->t[wait_owner(c, to)].done) {
            ensure_begun(c, wait_owner(c, to), x->end); /* the wait ended at this instant */
            enter(c, wait_owner(c, to), x->f, i, c->t[to].end);
        }
        break;
    case JOIN_AT_END:
        if (!c->t[to].done)
            pend(&c->t[to], x->f, i, x->end);
        break;
    default:
        break;
    }
}

/* Tasks by thread, then begin (ties: the longer first, then by id). */
static int by_thread_begin(const void *a, const void *b, void *arg)
{
    const struct cp *c = arg;
    uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
    const struct tscope__ptask *x = &c->p->tasks[i], *y = &c->p->tasks[j];
    if (x->thread != y->thread)
        return x->thread < y->thread ? -1 : 1;
    if (c->t[i].st != c->t[j].st)
        return c->t[i].st < c->t[j].st ? -1 : 1;
    if (c->t[i].end != c->t[j].end)
        return c->t[i].end > c->t[j].end ? -1 : 1;
    if (x->id != y->id)
        return x->id < y->id ? -1 : 1;
    return i < j ? -1 : i > j;
}

/* Time order; at one instant ends first, a later begin's end first (a
 * hosted task before its host), then by id; creations before begins. */
static int by_time(const void *a, const void *b, void *arg)
{
    const struct cp *c = arg;
    const struct ev *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    if ((x->kind == EV_END) != (y->kind == EV_END))
        return x->kind == EV_END ? -1 : 1;
    uint64_t ix = c->p->tasks[x->task].id, iy = c->p->tasks[y->task].id;
    if (x->kind == EV_END) {
        double sx = c->t[x->task].st, sy = c->t[y->task].st;
        if (sx != sy)
            return sx > sy ? -1 : 1;
        if (ix != iy)
            return ix > iy ? -1 : 1;
    } else if (ix != iy) {
        return ix < iy ? -1 : 1;
    }
    if (x->kind != y->kind)
        return x->kind < y->kind ? -1 : 1;
    return x->task < y->task ? -1 : x->task > y->task;
}

static void cp_free(struct cp *c)
{
    free(c->t);
    free(c->by_id);
    free(c->kid);
    free(c->kid_before);
    free(c->next_wait);
    free(c->dep);
    free(c->chain);
    free(c->groups);
}

/* Counts per group (first[g + 1]) into the groups' starts (first[g]). */
static void prefix(uint32_t *first, uint32_t groups)
{
    for (uint32_t g = 0; g < groups; g++)
        first[g + 1] += first[g];
}

/* The attributes (TSCOPE_TYPE_*) of type `type`. */
static unsigned type_attrs(const struct tscope__profile *p, uint32_t type)
{
    uint32_t lo = 0, hi = p->ntypes;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (p->types[mid].id < type)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < p->ntypes && p->types[lo].id == type ? p->types[lo].attrs : 0;
}

/* Barrier waits by type, then begin (qsort_r: arg is the struct cp). */
static int by_type_begin(const void *a, const void *b, void *arg)
{
    const struct cp *c = arg;
    uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
    uint32_t ti = c->p->tasks[i].type, tj = c->p->tasks[j].type;
    if (ti != tj)
        return ti < tj ? -1 : 1;
    if (c->t[i].st != c->t[j].st)
        return c->t[i].st < c->t[j].st ? -1 : 1;
    return i < j ? -1 : i > j;
}

/* Groups the barrier waits: the waits of one barrier have one type and
 * share an instant (the last arrival), so each begins before every earlier
 * one of its group ended.  0, or -1 when memory runs out. */
static int group_barriers(struct cp *c)
{
    uint32_t n = c->p->ntasks, nb = 0, ng = 0;
    uint32_t *b = malloc(((size_t)n + 1) * sizeof *b);
    c->groups = calloc((size_t)n + 1, sizeof *c->groups);
    if (!b || !c->groups) {
        free(b);
        return -1;
    }
    for (uint32_t i = 0; i < n; i++)
        if (!c->t[i].done && c->t[i].barrier)
            b[nb++] = i;
    qsort_r(b, nb, sizeof *b, by_type_begin, c);
    double first_end = 0;
    for (uint32_t k = 0; k < nb; k++) {
        struct task_state *x = &c->t[b[k]];
        if (!k || c->p->tasks[b[k - 1]].type != c->p->tasks[b[k]].type || x->st > first_end) {
            ng++;
            first_end = x->end;
        }
        if (x->end < first_end)
            first_end = x->end;
        x->group = ng;
    }
    free(b);
    return 0;
}

/* The tasks' times, parents, hosted tasks and dependence edges. */
static int build(struct cp *c)
{
    const struct tscope__profile *p = c->p;
    uint32_t n = p->ntasks;
    c->t = calloc((size_t)n + 1, sizeof *c->t);
    c->by_id = malloc(((size_t)n + 1) * sizeof *c->by_id);
    uint32_t *first = calloc((size_t)n + 2, sizeof *first);
    if (!c->t || !c->by_id || !first) {
        free(first);
        return -1;
    }
    c->n = 0;
    for (uint32_t i = 0; i < n; i++) {
        const struct tscope__ptask *pt = &p->tasks[i];
        struct task_state *x = &c->t[i];
        x->par = x->host = x->kids = x->deps = x->join_to = x->cre_ctx = NONE;
        x->pend_src.task = x->best_src.task = x->end_src.task = x->cre_src.task = NONE;
        x->done = 1; /* not taking part until shown otherwise */
        if (pt->state == TSCOPE_TASK_LIVE || !(pt->begin > 0 || pt->running > 0) ||
            pt->end < pt->begin)
            continue;
        x->done = 0;
        x->st = pt->begin;
        x->end = pt->end;
        x->cre_t = pt->create > 0 && pt->create <= pt->begin ? pt->create : pt->begin;
        unsigned attrs = type_attrs(p, pt->type);
        x->wait = (attrs & TSCOPE_TYPE_WAIT) != 0;
        x->barrier = x->wait && (attrs & TSCOPE_TYPE_BARRIER);
        x->self = x->wait || !(pt->self > 0) ? 0 : pt->self;
        c->by_id[c->n++] = i;
    }
    qsort_r(c->by_id, c->n, sizeof *c->by_id, by_id_then_index, c);
    for (uint32_t i = 0; i < n; i++) {
        struct task_state *x = &c->t[i];
        if (x->done || !p->tasks[i].parent)
            continue;
        uint32_t a = find_task(c, p->tasks[i].parent);
        for (uint32_t guard = 0; a != NONE && c->t[a].wait && guard < n; guard++)
            a = p->tasks[a].parent ? find_task(c, p->tasks[a].parent) : NONE;
        x->par = a == i ? NONE : a;
    }
    /* hosts: per thread by begin (the longer first), a stack of what runs */
    uint32_t *order = malloc(((size_t)c->n + 1) * sizeof *order), *stack = first;
    if (!order) {
        free(first);
        return -1;
    }
    memcpy(order, c->by_id, (size_t)c->n * sizeof *order);
    qsort_r(order, c->n, sizeof *order, by_thread_begin, c);
    for (uint32_t k = 0, sp = 0; k < c->n; k++) {
        uint32_t i = order[k];
        if (k && p->tasks[order[k - 1]].thread != p->tasks[i].thread)
            sp = 0;
        while (sp && c->t[stack[sp - 1]].end < c->t[i].end)
            sp--; /* ended before it, or not around it (bad input) */
        c->t[i].host = sp ? stack[sp - 1] : NONE;
        stack[sp++] = i;
    }
    /* hosted tasks by host, by begin */
    memset(first, 0, ((size_t)n + 2) * sizeof *first);
    for (uint32_t i = 0; i < n; i++)
        if (!c->t[i].done && c->t[i].host != NONE)
            first[c->t[i].host + 1]++;
    prefix(first, n);
    c->kid = malloc(((size_t)first[n] + 1) * sizeof *c->kid);
    c->kid_before = malloc(((size_t)first[n] + 1) * sizeof *c->kid_before);
    c->next_wait = malloc(((size_t)first[n] + 1) * sizeof *c->next_wait);
    if (!c->kid || !c->kid_before || !c->next_wait) {
        free(order);
        free(first);
        return -1;
    }
    for (uint32_t k = 0; k < c->n; k++) /* by begin, as order holds them */
        if (c->t[order[k]].host != NONE)
            c->kid[first[c->t[order[k]].host]++] = order[k];
    free(order);
    memmove(first + 1, first, (size_t)n * sizeof *first);
    first[0] = 0;
    for (uint32_t a = 0; a < n; a++) {
        struct task_state *x = &c->t[a];
        x->kids = first[a];
        x->nkids = first[a + 1] - first[a];
        double hosted = 0;
        for (uint32_t k = x->kids; k < x->kids + x->nkids; k++) {
            const struct task_state *y = &c->t[c->kid[k]];
            c->kid_before[k] = hosted;
            hosted += y->end - y->st;
        }
        x->own = x->end - x->st - hosted;
        if (x->own < 0)
            x->own = 0;
        uint32_t next = NONE;
        for (uint32_t k = x->kids + x->nkids; k-- > x->kids;) {
            if (c->t[c->kid[k]].wait)
                next = k;
            c->next_wait[k] = next;
        }
    }
    /* ordering dependence edges by the task they order */
    memset(first, 0, ((size_t)n + 2) * sizeof *first);
    for (uint32_t e = 0; e < p->ndeps; e++) {
        uint32_t to = tscope__critpath_orders(&p->deps[e]) ? find_task(c, p->deps[e].to) : NONE;
        if (to != NONE)
            first[to + 1]++;
    }
    prefix(first, n);
    c->dep = malloc(((size_t)first[n] + 1) * sizeof *c->dep);
    if (!c->dep) {
        free(first);
        return -1;
    }
    for (uint32_t i = 0; i < n; i++) {
        c->t[i].deps = first[i];
        c->t[i].ndeps = first[i + 1] - first[i];
    }
    for (uint32_t e = 0; e < p->ndeps; e++) {
        uint32_t to = tscope__critpath_orders(&p->deps[e]) ? find_task(c, p->deps[e].to) : NONE;
        if (to != NONE)
            c->dep[first[to]++] = e;
    }
    free(first);
    for (uint32_t i = 0; i < n; i++)
        if (!c->t[i].done && !c->t[i].wait)
            place_join(c, i);
    return group_barriers(c);
}

/* The sweep: every task's longest path at its end. */
static int sweep(struct cp *c)
{
    uint32_t n = c->p->ntasks, ne = 0;
    struct ev *ev = malloc(((size_t)3 * n + 1) * sizeof *ev);
    c->chain = malloc(((size_t)n + 1) * sizeof *c->chain);
    if (!ev || !c->chain) {
        free(ev);
        return -1;
    }
    for (uint32_t i = 0; i < n; i++) {
        struct task_state *x = &c->t[i];
        if (x->done)
            continue;
        if (!x->wait)
            ev[ne++] = (struct ev){x->cre_t, i, EV_CREATE};
        if (!x->wait || x->barrier)
            ev[ne++] = (struct ev){x->st, i, EV_BEGIN};
        ev[ne++] = (struct ev){x->end, i, EV_END};
    }
    qsort_r(ev, ne, sizeof *ev, by_time, c);
    for (uint32_t k = 0; k < ne; k++) {
        if (ev[k].kind == EV_CREATE)
            create_task(c, ev[k].task);
        else if (ev[k].kind == EV_BEGIN && c->t[ev[k].task].wait)
            barrier_arrive(c, ev[k].task);
        else if (ev[k].kind == EV_BEGIN)
            begin_task(c, ev[k].task);
        else
            end_task(c, ev[k].task);
    }
    free(ev);
    return 0;
}

/* Reads the path back from the task with the longest path at its end. */
static int read_back(struct cp *c, struct tscope__critpath *out)
{
    uint32_t n = c->p->ntasks, last = NONE;
    for (uint32_t i = 0; i < n; i++) {
        const struct task_state *x = &c->t[i];
        if (x->begun && !x->wait && x->done &&
            (last == NONE || x->f > c->t[last].f ||
             (x->f == c->t[last].f && x->end > c->t[last].end)))
            last = i;
    }
    if (last == NONE)
        return 0;
    size_t cap = 16;
    out->steps = malloc(cap * sizeof *out->steps);
    if (!out->steps)
        return -1;
    uint32_t cur = last, dep = NONE;
    double e = c->t[last].end;
    struct src src = c->t[last].end_src;
    int link = TSCOPE__CP_END;
    for (size_t guard = 0; cur != NONE && guard < 6 * (size_t)n + 6; guard++) {
        if (out->nsteps == cap) {
            struct tscope__cpstep *grown = realloc(out->steps, 2 * cap * sizeof *grown);
            if (!grown)
                return -1;
            out->steps = grown;
            cap *= 2;
        }
        const struct task_state *x = &c->t[cur];
        double from = src.task != NONE ? src.at : x->st;
        double w = work_until(c, cur, e) - work_until(c, cur, from);
        struct tscope__cpstep *s = &out->steps[out->nsteps++];
        *s = (struct tscope__cpstep){
            c->p->tasks[cur].id, c->p->tasks[cur].type, cur, link, from, e, w > 0 ? w : 0, ""};
        if (link == TSCOPE__CP_DEP)
            hazard_text(&c->p->deps[dep], s->why, sizeof s->why);
        else if (link != TSCOPE__CP_END)
            snprintf(s->why, sizeof s->why, "%s",
                     link == TSCOPE__CP_CREATED  ? "created"
                     : link == TSCOPE__CP_JOINED ? "joined"
                                                 : "barrier");
        out->length += s->work;
        dep = NONE;
        if (src.group) { /* after a barrier src.task reached last */
            const struct group *g = &c->groups[src.group - 1];
            link = TSCOPE__CP_BARRIER;
            cur = g->task;
            e = g->e;
            src = g->src;
        } else if (src.task != NONE) { /* joined from src.task */
            link = TSCOPE__CP_JOINED;
            cur = src.task;
            e = c->t[cur].end;
            src = c->t[cur].end_src;
        } else if (x->start_kind == START_CREATED) {
            link = TSCOPE__CP_CREATED;
            e = x->cre_t;
            src = x->cre_src;
            cur = x->cre_ctx;
        } else if (x->start_kind == START_DEP) {
            link = TSCOPE__CP_DEP;
            dep = x->start_dep;
            cur = find_task(c, c->p->deps[dep].from);
            if (cur != NONE) {
                e = c->t[cur].end;
                src = c->t[cur].end_src;
            }
        } else {
            cur = NONE;
        }
    }
    for (uint32_t a = 0, b = out->nsteps ? out->nsteps - 1 : 0; a < b; a++, b--) {
        struct tscope__cpstep s = out->steps[a];
        out->steps[a] = out->steps[b];
        out->steps[b] = s;
    }
    return 0;
}

/* A copy of the path read from a file. */
static int copy_path(const struct tscope__critpath *from, struct tscope__critpath *out)
{
    *out = *from;
    out->steps = malloc(((size_t)from->nsteps + 1) * sizeof *out->steps);
    if (!out->steps) {
        *out = (struct tscope__critpath){0};
        return TSCOPE_ENOMEM;
    }
    if (from->nsteps)
        memcpy(out->steps, from->steps, from->nsteps * sizeof *out->steps);
    return 0;
}

int tscope__critpath_find(const struct tscope__profile *p, struct tscope__critpath *out)
{
    *out = (struct tscope__critpath){0};
    if (!p->ntasks && p->path)
        return copy_path(p->path, out);
    for (uint32_t i = 0; i < p->ntypes; i++)
        if (p->types[i].attrs & TSCOPE_TYPE_WAIT)
            out->waits_marked = 1;
    out->tasks_cut_off = p->totals.instances_cut_off;
    if (!p->ntasks)
        return 0;
    struct cp c = {.p = p};
    int rc = build(&c) == 0 && sweep(&c) == 0 && read_back(&c, out) == 0 ? 0 : TSCOPE_ENOMEM;
    if (!rc) {
        for (uint32_t i = 0; i < p->ntasks; i++)
            if (c.t[i].begun) {
                out->tasks++;
                out->work += c.t[i].self;
            }
    } else {
        tscope__critpath_free(out);
    }
    cp_free(&c);
    return rc;
}

void tscope__critpath_free(struct tscope__critpath *cp)
{
    free(cp->steps);
    *cp = (struct tscope__critpath){0};
}

double tscope__critpath_by_type(const struct tscope__profile *p, const struct tscope__critpath *cp,
                                double *work)
{
    double other = 0;
    for (uint32_t i = 0; i < p->ntypes; i++)
        work[i] = 0;
    for (uint32_t k = 0; k < cp->nsteps; k++) {
        uint32_t type = cp->steps[k].type, lo = 0, hi = p->ntypes;
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (p->types[mid].id < type)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo < p->ntypes && p->types[lo].id == type)
            work[lo] += cp->steps[k].work;
        else
            other += cp->steps[k].work;
    }
    return other;
}
