/* params.c - the parameter registry (include/taskscope/policy.h).
 *
 * An array of pointers to descriptions (names and choices copied) under one
 * mutex.  tscope_param_set validates the value against the kind and range
 * under the lock, then calls the setter without it (a setter may take the
 * runtime's locks, or register other parameters); get calls the getter the
 * same way.  Threads other than the owner's use the registry too (a policy,
 * the live dashboard's commands and snapshots), so an entry in a call is
 * marked busy, and tscope_param_unregister takes the entry out at once (no
 * new call finds it) but waits for the calls already in it to return before
 * it frees the entry and returns: after it, no setter or getter of that
 * parameter runs, and the owner may free what they use.  A setter or
 * getter that unregisters its own parameter does not wait for itself (the
 * entry is freed when its last call returns); to tell its own calls from
 * others' a thread keeps the entries it is inside (8 deep at most: a
 * deeper call is refused).  Errors leave a one-line text in a thread-local
 * buffer (tscope_param_last_error).
 */
#include "params.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "taskscope/policy.h"

struct param {
    tscope_param_desc_t d;
    char *name;
    char **choices;
    unsigned busy; /* calls in its setter or getter: unregister waits for them */
    unsigned pins; /* tscope__param_each holds it for a getter call to come */
    int gone;      /* unregistered, freed when the last call or pin is out */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t idle = PTHREAD_COND_INITIALIZER; /* a busy count fell */
static struct param **params;
static size_t nparams, cap_params;
static _Thread_local char last_error[256];
/* The entries this thread is calling into (nested: a setter that sets
 * another parameter), so that unregistering one of them does not wait for
 * this thread itself. */
#define INSIDE_MAX 8
static _Thread_local struct param *inside[INSIDE_MAX];
static _Thread_local unsigned ninside;

static int fail(int rc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return rc;
}

const char *tscope_param_last_error(void)
{
    return last_error;
}

/* The entry named name, or NULL; its index in *at.  Lock held. */
static struct param *find(const char *name, size_t *at)
{
    for (size_t i = 0; i < nparams; i++)
        if (strcmp(params[i]->name, name) == 0) {
            if (at)
                *at = i;
            return params[i];
        }
    return NULL;
}

static void free_param(struct param *p)
{
    if (!p)
        return;
    free(p->name);
    for (unsigned i = 0; p->choices && i < p->d.nchoices; i++)
        free(p->choices[i]);
    free(p->choices);
    free(p);
}

/* Marks p in a call (lock held), and on this thread; -1 when this thread
 * is already INSIDE_MAX calls deep (the call is refused: an unregister
 * could not tell this thread's calls from others'). */
static int enter(struct param *p)
{
    if (ninside == INSIDE_MAX)
        return -1;
    p->busy++;
    inside[ninside++] = p;
    return 0;
}

/* Unregistered, and nobody in it or holding it: free it (lock held). */
static int unused(const struct param *p)
{
    return p->gone && p->busy == 0 && p->pins == 0;
}

/* Lowers one of p's counts (busy or pins): the last one out of an
 * unregistered entry frees it.  Takes the lock. */
static void release(struct param *p, unsigned *count)
{
    pthread_mutex_lock(&lock);
    --*count;
    int last = unused(p);
    pthread_cond_broadcast(&idle);
    pthread_mutex_unlock(&lock);
    if (last)
        free_param(p);
}

/* The end of a call into p. */
static void leave(struct param *p)
{
    for (unsigned i = ninside; i-- > 0;)
        if (inside[i] == p) {
            inside[i] = inside[--ninside];
            break;
        }
    release(p, &p->busy);
}

/* Calls into p this thread is making. */
static unsigned own_calls(const struct param *p)
{
    unsigned n = 0;
    for (unsigned i = 0; i < ninside; i++)
        n += inside[i] == p;
    return n;
}

int tscope_param_register(const tscope_param_desc_t *desc)
{
    if (!desc || desc->struct_size < sizeof *desc || !desc->name || !*desc->name || !desc->set ||
        !desc->get)
        return fail(TSCOPE_EINVAL, "parameter: incomplete description (name, set, get)");
    int choice = desc->kind == TSCOPE_PARAM_CHOICE;
    if (desc->kind < TSCOPE_PARAM_INT || desc->kind > TSCOPE_PARAM_CHOICE)
        return fail(TSCOPE_EINVAL, "parameter '%s': unknown kind", desc->name);
    if (choice && (!desc->choices || desc->nchoices == 0))
        return fail(TSCOPE_EINVAL, "parameter '%s': a choice needs choices", desc->name);
    if (!choice && !(desc->min <= desc->max))
        return fail(TSCOPE_EINVAL, "parameter '%s': empty range [%g, %g]", desc->name, desc->min,
                    desc->max);
    struct param *p = calloc(1, sizeof *p);
    if (!p || !(p->name = strdup(desc->name))) {
        free(p);
        return TSCOPE_ENOMEM;
    }
    p->d = *desc;
    p->d.name = p->name;
    if (choice) {
        p->d.min = 0;
        p->d.max = desc->nchoices - 1;
        p->choices = calloc(desc->nchoices, sizeof *p->choices);
        for (unsigned i = 0; p->choices && i < desc->nchoices; i++)
            if (!(p->choices[i] = strdup(desc->choices[i] ? desc->choices[i] : ""))) {
                free_param(p);
                return TSCOPE_ENOMEM;
            }
        if (!p->choices) {
            free_param(p);
            return TSCOPE_ENOMEM;
        }
        p->d.choices = (const char *const *)p->choices;
    }
    pthread_mutex_lock(&lock);
    int rc = 0;
    if (find(desc->name, NULL)) {
        rc = fail(TSCOPE_EINVAL, "parameter '%s' is already registered", desc->name);
    } else if (nparams == cap_params) {
        size_t c = cap_params ? cap_params * 2 : 16;
        struct param **n = realloc(params, c * sizeof *n);
        if (n) {
            params = n;
            cap_params = c;
        } else {
            rc = TSCOPE_ENOMEM;
        }
    }
    if (!rc)
        params[nparams++] = p;
    pthread_mutex_unlock(&lock);
    if (rc)
        free_param(p);
    return rc;
}

int tscope_param_unregister(const char *name)
{
    pthread_mutex_lock(&lock);
    size_t at = 0;
    struct param *p = name ? find(name, &at) : NULL;
    int freed_later = 0;
    if (p) {
        memmove(params + at, params + at + 1, (nparams - at - 1) * sizeof *params);
        nparams--;
        /* the calls already inside it return first (not this thread's own) */
        unsigned own = own_calls(p);
        while (p->busy > own)
            pthread_cond_wait(&idle, &lock);
        p->gone = 1;
        freed_later = !unused(p); /* this thread is inside it, or it is pinned */
    }
    pthread_mutex_unlock(&lock);
    if (!p)
        return fail(TSCOPE_ENOENT, "no parameter named '%s'", name ? name : "(null)");
    if (!freed_later)
        free_param(p);
    return 0;
}

int tscope_param_set(const char *name, double value)
{
    pthread_mutex_lock(&lock);
    struct param *p = name ? find(name, NULL) : NULL;
    tscope_param_desc_t d = {0};
    int rc = 0;
    if (!p) {
        rc = fail(TSCOPE_ENOENT, "no parameter named '%s'", name ? name : "(null)");
    } else {
        d = p->d;
        if (!(value >= d.min && value <= d.max))
            rc = fail(TSCOPE_EINVAL, "parameter '%s': %g is outside [%g, %g]", name, value, d.min,
                      d.max);
        else if (d.kind != TSCOPE_PARAM_REAL && value != floor(value))
            rc = fail(TSCOPE_EINVAL, "parameter '%s': %g is not an integer", name, value);
        else if (enter(p))
            rc = fail(TSCOPE_ELIMIT, "parameter '%s': calls nested %d deep", name, INSIDE_MAX);
    }
    pthread_mutex_unlock(&lock);
    if (rc)
        return rc;
    rc = d.set(value, d.data);
    leave(p);
    if (rc)
        fail(rc, "parameter '%s': the setter refused %g (%s)", name, value, tscope_strerror(rc));
    return rc;
}

int tscope_param_set_choice(const char *name, const char *choice)
{
    pthread_mutex_lock(&lock);
    struct param *p = name ? find(name, NULL) : NULL;
    int idx = -1;
    if (p && p->d.kind == TSCOPE_PARAM_CHOICE)
        for (unsigned i = 0; choice && i < p->d.nchoices; i++)
            if (strcmp(p->choices[i], choice) == 0)
                idx = (int)i;
    int kind = p ? (int)p->d.kind : 0;
    pthread_mutex_unlock(&lock);
    if (!p)
        return fail(TSCOPE_ENOENT, "no parameter named '%s'", name ? name : "(null)");
    if (kind != TSCOPE_PARAM_CHOICE)
        return fail(TSCOPE_EINVAL, "parameter '%s' is not a choice", name);
    if (idx < 0)
        return fail(TSCOPE_EINVAL, "parameter '%s' has no choice '%s'", name,
                    choice ? choice : "(null)");
    return tscope_param_set(name, idx);
}

int tscope_param_get(const char *name, double *value)
{
    pthread_mutex_lock(&lock);
    struct param *p = name ? find(name, NULL) : NULL;
    tscope_param_desc_t d = {0};
    int deep = 0;
    if (p && value) {
        d = p->d;
        deep = enter(p);
    }
    pthread_mutex_unlock(&lock);
    if (!p)
        return fail(TSCOPE_ENOENT, "no parameter named '%s'", name ? name : "(null)");
    if (!value)
        return TSCOPE_EINVAL;
    if (deep)
        return fail(TSCOPE_ELIMIT, "parameter '%s': calls nested %d deep", name, INSIDE_MAX);
    *value = d.get(d.data);
    leave(p);
    return 0;
}

int tscope__param_each(void (*fn)(void *ctx, const tscope_param_desc_t *d, double value), void *ctx)
{
    /* all of them pinned (not freed, whatever happens), then each one
     * entered for its getter only if still registered: an unregister does
     * not wait for the getters still to come, and none of them runs after
     * it returned */
    pthread_mutex_lock(&lock);
    size_t n = nparams;
    struct param **all = n ? malloc(n * sizeof *all) : NULL;
    if (n && !all) {
        pthread_mutex_unlock(&lock);
        return TSCOPE_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        all[i] = params[i];
        all[i]->pins++;
    }
    pthread_mutex_unlock(&lock);
    for (size_t i = 0; i < n; i++) {
        struct param *p = all[i];
        pthread_mutex_lock(&lock);
        int call = !p->gone && enter(p) == 0;
        pthread_mutex_unlock(&lock);
        if (call) {
            fn(ctx, &p->d, p->d.get(p->d.data));
            leave(p);
        }
        release(p, &p->pins);
    }
    free(all);
    return 0;
}

int tscope_param_describe(const char *name, tscope_param_desc_t *out)
{
    pthread_mutex_lock(&lock);
    struct param *p = name ? find(name, NULL) : NULL;
    if (p && out)
        *out = p->d;
    pthread_mutex_unlock(&lock);
    if (!p)
        return fail(TSCOPE_ENOENT, "no parameter named '%s'", name ? name : "(null)");
    return out ? 0 : TSCOPE_EINVAL;
}

int tscope_param_list(const char **names, size_t cap, size_t *count)
{
    if (!count || (cap && !names))
        return TSCOPE_EINVAL;
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < nparams && i < cap; i++)
        names[i] = params[i]->name;
    *count = nparams;
    pthread_mutex_unlock(&lock);
    return 0;
}

int tscope_param_thread_cap(char *name, size_t size)
{
    if (!name || !size)
        return TSCOPE_EINVAL;
    static const char suffix[] = TSCOPE_THREAD_CAP_SUFFIX;
    const size_t ns = sizeof suffix - 1;
    int rc = TSCOPE_ENOENT;
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < nparams && rc == TSCOPE_ENOENT; i++) {
        const struct param *p = params[i];
        size_t n = strlen(p->name);
        if (p->d.kind != TSCOPE_PARAM_INT || n <= ns || strcmp(p->name + n - ns, suffix) != 0)
            continue;
        rc = n < size ? 0 : TSCOPE_ELIMIT;
        if (!rc)
            memcpy(name, p->name, n + 1);
    }
    pthread_mutex_unlock(&lock);
    if (rc == TSCOPE_ENOENT)
        return fail(rc, "no thread-cap parameter (an integer parameter named *%s)", suffix);
    return rc;
}
