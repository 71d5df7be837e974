/* params.c - the parameter registry (include/taskscope/policy.h).
 *
 * An array of descriptions (names and choices copied) under one mutex.
 * tscope_param_set validates the value against the kind and range under the
 * lock, then calls the setter without it (a setter may take the runtime's
 * locks, or register other parameters).  Unregistering while another
 * thread is inside that parameter's setter is the caller's to avoid, like
 * freeing any object in use.  Errors leave a one-line text in a
 * thread-local buffer (tscope_param_last_error).
 */
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
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct param *params;
static size_t nparams, cap_params;
static _Thread_local char last_error[256];

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

static struct param *find(const char *name)
{
    for (size_t i = 0; i < nparams; i++)
        if (strcmp(params[i].name, name) == 0)
            return &params[i];
    return NULL;
}

static void free_param(struct param *p)
{
    free(p->name);
    for (unsigned i = 0; p->choices && i < p->d.nchoices; i++)
        free(p->choices[i]);
    free(p->choices);
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
    struct param p = {*desc, strdup(desc->name), NULL};
    if (!p.name)
        return TSCOPE_ENOMEM;
    p.d.name = p.name;
    if (choice) {
        p.d.min = 0;
        p.d.max = desc->nchoices - 1;
        p.choices = calloc(desc->nchoices, sizeof *p.choices);
        for (unsigned i = 0; p.choices && i < desc->nchoices; i++)
            if (!(p.choices[i] = strdup(desc->choices[i] ? desc->choices[i] : ""))) {
                free_param(&p);
                return TSCOPE_ENOMEM;
            }
        if (!p.choices) {
            free_param(&p);
            return TSCOPE_ENOMEM;
        }
        p.d.choices = (const char *const *)p.choices;
    }
    pthread_mutex_lock(&lock);
    int rc = 0;
    if (find(desc->name)) {
        rc = fail(TSCOPE_EINVAL, "parameter '%s' is already registered", desc->name);
    } else if (nparams == cap_params) {
        size_t c = cap_params ? cap_params * 2 : 16;
        struct param *n = realloc(params, c * sizeof *n);
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
        free_param(&p);
    return rc;
}

int tscope_param_unregister(const char *name)
{
    pthread_mutex_lock(&lock);
    struct param *p = name ? find(name) : NULL;
    if (p) {
        free_param(p);
        memmove(p, p + 1, (size_t)(params + nparams - (p + 1)) * sizeof *p);
        nparams--;
    }
    pthread_mutex_unlock(&lock);
    return p ? 0 : fail(TSCOPE_ENOENT, "no parameter named '%s'", name ? name : "(null)");
}

int tscope_param_set(const char *name, double value)
{
    pthread_mutex_lock(&lock);
    struct param *p = name ? find(name) : NULL;
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
    }
    pthread_mutex_unlock(&lock);
    if (rc)
        return rc;
    rc = d.set(value, d.data);
    if (rc)
        fail(rc, "parameter '%s': the setter refused %g (%s)", name, value, tscope_strerror(rc));
    return rc;
}

int tscope_param_set_choice(const char *name, const char *choice)
{
    pthread_mutex_lock(&lock);
    struct param *p = name ? find(name) : NULL;
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
    struct param *p = name ? find(name) : NULL;
    tscope_param_desc_t d = {0};
    if (p)
        d = p->d;
    pthread_mutex_unlock(&lock);
    if (!p)
        return fail(TSCOPE_ENOENT, "no parameter named '%s'", name ? name : "(null)");
    if (!value)
        return TSCOPE_EINVAL;
    *value = d.get(d.data);
    return 0;
}

int tscope_param_describe(const char *name, tscope_param_desc_t *out)
{
    pthread_mutex_lock(&lock);
    struct param *p = name ? find(name) : NULL;
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
        names[i] = params[i].name;
    *count = nparams;
    pthread_mutex_unlock(&lock);
    return 0;
}
