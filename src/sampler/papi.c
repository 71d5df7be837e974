/* papi.c - PAPI events in the sampler (TASKSCOPE_PAPI_EVENTS), when
 * taskscope is built with Debian's libpapi-dev; without it a selection of
 * events is refused with one line that says so.
 *
 * The event set is started on the thread that calls tscope_init.  Where
 * PAPI can attach it to the process with inheritance (PAPI_INHERIT,
 * PAPI_attach), it counts that thread and the threads started after it
 * (the runtime's workers), like the perf software counters of sources.c,
 * and each event becomes papi.EVENT_per_s.  Where it cannot (Debian's PAPI
 * 7 on this project's VM answers "Event does not exist" to both), that is
 * said once and the set counts the tscope_init thread only:
 * papi.init_thread.EVENT_per_s.  The perf_event component lets the sampler
 * thread read the set either way.  An event the machine lacks (the VM has
 * no hardware counters; software ones like perf::TASK-CLOCK work) is said
 * once and left out.  Where PAPI disables its perf_event component (no PMU
 * that libpfm4 recognises, as on a VM whose kernel exposes only the
 * "software" event source), that is said once and PAPI is skipped.
 *
 * libpapi (with libpfm4, ~7 ms of loading and relocation) is opened with
 * dlopen only when TASKSCOPE_PAPI_EVENTS names events, by the SONAME found
 * at build time; every program that does not use PAPI starts without it.
 */
#include <stdio.h>
#include <string.h>

#include "sampler.h"

#ifdef TSCOPE_HAVE_PAPI

#include <papi.h>
#include <unistd.h>

#include "common/lazylib.h"

/* The PAPI functions used here, called through pointers filled by dlsym. */
#define PAPI_FUNCS(X)                                                                              \
    X(PAPI_library_init)                                                                           \
    X(PAPI_is_initialized)                                                                         \
    X(PAPI_strerror)                                                                               \
    X(PAPI_get_component_index)                                                                    \
    X(PAPI_get_component_info)                                                                     \
    X(PAPI_create_eventset)                                                                        \
    X(PAPI_assign_eventset_component)                                                              \
    X(PAPI_set_opt)                                                                                \
    X(PAPI_attach)                                                                                 \
    X(PAPI_add_named_event)                                                                        \
    X(PAPI_start)                                                                                  \
    X(PAPI_read)                                                                                   \
    X(PAPI_stop)                                                                                   \
    X(PAPI_cleanup_eventset)                                                                       \
    X(PAPI_destroy_eventset)

PAPI_FUNCS(TSCOPE__LAZY_DECLARE)
static const struct tscope__lazy_sym papi_syms[] = {PAPI_FUNCS(TSCOPE__LAZY_SYM)};

/* Opens libpapi once; 0, or -1 said once. */
static int papi_load(void)
{
    static int state;
    char why[512] = "";
    if (!tscope__lazy_load(&state, TSCOPE_PAPI_SONAME, papi_syms,
                           sizeof papi_syms / sizeof *papi_syms, why, sizeof why))
        return 0;
    if (why[0]) /* the failing call: later ones are silent */
        fprintf(stderr, "taskscope: sampler: %s; PAPI events skipped\n", why);
    return -1;
}

/* From here on the calls go through the pointers. */
#define PAPI_library_init p_PAPI_library_init
#define PAPI_is_initialized p_PAPI_is_initialized
#define PAPI_strerror p_PAPI_strerror
#define PAPI_get_component_index p_PAPI_get_component_index
#define PAPI_get_component_info p_PAPI_get_component_info
#define PAPI_create_eventset p_PAPI_create_eventset
#define PAPI_assign_eventset_component p_PAPI_assign_eventset_component
#define PAPI_set_opt p_PAPI_set_opt
#define PAPI_attach p_PAPI_attach
#define PAPI_add_named_event p_PAPI_add_named_event
#define PAPI_start p_PAPI_start
#define PAPI_read p_PAPI_read
#define PAPI_stop p_PAPI_stop
#define PAPI_cleanup_eventset p_PAPI_cleanup_eventset
#define PAPI_destroy_eventset p_PAPI_destroy_eventset

enum { MAX_EVENTS = 16 };

static struct {
    int set, n, running, inherited;
    char names[MAX_EVENTS][64];
    long long prev[MAX_EVENTS];
    double prev_t;
} Q = {.set = PAPI_NULL};

static int said_init, said_inherit;

void tscope__papi_reset(const char *events)
{
    if (Q.running) {
        long long v[MAX_EVENTS];
        PAPI_stop(Q.set, v);
        PAPI_cleanup_eventset(Q.set);
        PAPI_destroy_eventset(&Q.set);
        Q.running = 0;
    }
    Q.n = 0;
    Q.prev_t = 0;
    if (!events || !*events || papi_load())
        return;
    int rc = PAPI_is_initialized() ? (int)PAPI_VER_CURRENT : PAPI_library_init(PAPI_VER_CURRENT);
    if (rc != (int)PAPI_VER_CURRENT) {
        if (!said_init++)
            fprintf(stderr, "taskscope: sampler: PAPI cannot start (%s); PAPI events skipped\n",
                    PAPI_strerror(rc));
        return;
    }
    /* the events taskscope asks for are perf_event ones; with no PMU that
     * libpfm4 knows (some VMs expose none at all), PAPI disables the whole
     * component and every event "does not exist": say why, once */
    int cidx = PAPI_get_component_index("perf_event");
    const PAPI_component_info_t *perf = cidx >= 0 ? PAPI_get_component_info(cidx) : NULL;
    if (!perf || perf->disabled) {
        if (!said_init++)
            fprintf(stderr,
                    "taskscope: sampler: PAPI's perf_event component is disabled here (%s); "
                    "PAPI events skipped\n",
                    perf ? perf->disabled_reason : "PAPI has no perf_event component");
        return;
    }
    Q.set = PAPI_NULL;
    if ((rc = PAPI_create_eventset(&Q.set)) != PAPI_OK ||
        (rc = PAPI_assign_eventset_component(Q.set, cidx)) != PAPI_OK) {
        fprintf(stderr, "taskscope: sampler: PAPI event set: %s; PAPI events skipped\n",
                PAPI_strerror(rc));
        return;
    }
    PAPI_option_t opt;
    memset(&opt, 0, sizeof opt);
    opt.inherit.eventset = Q.set;
    opt.inherit.inherit = PAPI_INHERIT_ALL;
    Q.inherited = (rc = PAPI_set_opt(PAPI_INHERIT, &opt)) == PAPI_OK &&
                  (rc = PAPI_attach(Q.set, (unsigned long)getpid())) == PAPI_OK;
    if (!Q.inherited && !said_inherit++)
        fprintf(stderr,
                "taskscope: sampler: PAPI cannot count the whole process here (%s); PAPI "
                "events count the thread that called tscope_init (papi.init_thread.*)\n",
                PAPI_strerror(rc));
    char list[1024];
    snprintf(list, sizeof list, "%s", events);
    char *save = NULL;
    for (char *e = strtok_r(list, ",", &save); e && Q.n < MAX_EVENTS;
         e = strtok_r(NULL, ",", &save)) {
        if ((rc = PAPI_add_named_event(Q.set, e)) != PAPI_OK) {
            fprintf(stderr,
                    "taskscope: sampler: PAPI event %s is not available here (%s); "
                    "skipped\n",
                    e, PAPI_strerror(rc));
            continue;
        }
        snprintf(Q.names[Q.n++], sizeof Q.names[0], "%s", e);
    }
    if (Q.n && (rc = PAPI_start(Q.set)) != PAPI_OK) {
        fprintf(stderr,
                "taskscope: sampler: PAPI cannot start counting (%s); PAPI events "
                "skipped\n",
                PAPI_strerror(rc));
        Q.n = 0;
    }
    Q.running = Q.n > 0;
}

void tscope__papi_sample(double now, tscope_sample_emit_fn emit, void *ctx)
{
    if (!Q.running)
        return;
    long long v[MAX_EVENTS];
    if (PAPI_read(Q.set, v) != PAPI_OK)
        return;
    if (Q.prev_t > 0 && now > Q.prev_t)
        for (int i = 0; i < Q.n; i++) {
            char series[96];
            snprintf(series, sizeof series,
                     Q.inherited ? "papi.%s_per_s" : "papi.init_thread.%s_per_s", Q.names[i]);
            emit(ctx, series, (double)(v[i] - Q.prev[i]) / (now - Q.prev_t));
        }
    memcpy(Q.prev, v, sizeof Q.prev);
    Q.prev_t = now;
}

#else

static int said;

void tscope__papi_reset(const char *events)
{
    if (events && *events && !said++)
        fprintf(stderr, "taskscope: sampler: TASKSCOPE_PAPI_EVENTS is set but taskscope was "
                        "built without PAPI (install libpapi-dev, or run ./scripts/setup, and "
                        "rebuild); PAPI events skipped\n");
}

void tscope__papi_sample(double now, tscope_sample_emit_fn emit, void *ctx)
{
    (void)now;
    (void)emit;
    (void)ctx;
}

#endif
