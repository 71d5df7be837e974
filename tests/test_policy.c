/* test_policy.c - the parameter registry and the tuners
 * (include/taskscope/policy.h): bounds enforced with clear errors; every
 * tuner finds the optimum of known functions within a stated number of
 * evaluations; hill climbing does not move on a flat, noisy objective; the
 * throttling policy's decisions on an objective the test sets (a manual
 * clock, no wall-clock figure: bench/throttle.c measures what throttling
 * gains on a real workload). */
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>
#include <taskscope/policy.h>
#include <taskscope/rt.h>
#include <taskscope/sampler.h>

#include "harness.h"
#include "policy/params.h"
#include "test.h"

/* ---- parameters ---------------------------------------------------------- */

static double threads = 4, ratio = 0.5, sched = 0;

static int set_double(double v, void *data)
{
    *(double *)data = v;
    return 0;
}

static double get_double(void *data)
{
    return *(double *)data;
}

static int refuse(double v, void *data)
{
    (void)v;
    (void)data;
    return TSCOPE_ELIMIT;
}

static void test_params(void)
{
    static const char *const policies[] = {"lifo", "fifo", "random"};
    tscope_param_desc_t d = {sizeof d, "test.threads", TSCOPE_PARAM_INT, 1,       16, NULL,
                             0,        set_double,     get_double,       &threads};
    ASSERT_EQ(tscope_param_register(&d), 0);
    ASSERT_EQ(tscope_param_register(&d), TSCOPE_EINVAL); /* twice */
    ASSERT(strstr(tscope_param_last_error(), "already registered"));
    tscope_param_desc_t r = {sizeof r, "test.ratio", TSCOPE_PARAM_REAL, 0,     1, NULL,
                             0,        set_double,   get_double,        &ratio};
    ASSERT_EQ(tscope_param_register(&r), 0);
    tscope_param_desc_t c = {sizeof c, "test.schedule", TSCOPE_PARAM_CHOICE, 0,     0, policies,
                             3,        set_double,      get_double,          &sched};
    ASSERT_EQ(tscope_param_register(&c), 0);
    tscope_param_desc_t bad = {sizeof bad, "test.bad", TSCOPE_PARAM_INT, 5,          1,
                               NULL,       0,          set_double,       get_double, &threads};
    ASSERT_EQ(tscope_param_register(&bad), TSCOPE_EINVAL);
    ASSERT(strstr(tscope_param_last_error(), "empty range"));

    ASSERT_EQ(tscope_param_set("test.threads", 8), 0);
    ASSERT(threads == 8);
    ASSERT_EQ(tscope_param_set("test.threads", 17), TSCOPE_EINVAL);
    ASSERT(strcmp(tscope_param_last_error(), "parameter 'test.threads': 17 is outside [1, 16]") ==
           0);
    ASSERT_EQ(tscope_param_set("test.threads", 2.5), TSCOPE_EINVAL);
    ASSERT(strstr(tscope_param_last_error(), "2.5 is not an integer"));
    ASSERT(threads == 8); /* refused values are not set */
    ASSERT_EQ(tscope_param_set("test.ratio", 0.25), 0);
    ASSERT(ratio == 0.25);
    ASSERT_EQ(tscope_param_set("test.ratio", NAN), TSCOPE_EINVAL);
    ASSERT_EQ(tscope_param_set_choice("test.schedule", "fifo"), 0);
    ASSERT(sched == 1);
    ASSERT_EQ(tscope_param_set_choice("test.schedule", "dfs"), TSCOPE_EINVAL);
    ASSERT(strstr(tscope_param_last_error(), "has no choice 'dfs'"));
    ASSERT_EQ(tscope_param_set_choice("test.threads", "fifo"), TSCOPE_EINVAL);
    ASSERT_EQ(tscope_param_set("test.nothing", 1), TSCOPE_ENOENT);
    ASSERT(strstr(tscope_param_last_error(), "no parameter named 'test.nothing'"));
    double v;
    ASSERT_EQ(tscope_param_get("test.threads", &v), 0);
    ASSERT(v == 8);
    tscope_param_desc_t info;
    ASSERT_EQ(tscope_param_describe("test.schedule", &info), 0);
    ASSERT(info.nchoices == 3 && strcmp(info.choices[2], "random") == 0 && info.max == 2);
    const char *names[8];
    size_t n;
    ASSERT_EQ(tscope_param_list(names, 8, &n), 0);
    ASSERT_EQ(n, 3);
    ASSERT(strcmp(names[0], "test.threads") == 0 && strcmp(names[2], "test.schedule") == 0);
    /* a setter's refusal comes back */
    tscope_param_desc_t f = {sizeof f, "test.fixed", TSCOPE_PARAM_INT, 0,       1, NULL,
                             0,        refuse,       get_double,       &threads};
    ASSERT_EQ(tscope_param_register(&f), 0);
    ASSERT_EQ(tscope_param_set("test.fixed", 1), TSCOPE_ELIMIT);
    ASSERT(strstr(tscope_param_last_error(), "the setter refused 1"));
    ASSERT_EQ(tscope_param_unregister("test.fixed"), 0);
    ASSERT_EQ(tscope_param_unregister("test.fixed"), TSCOPE_ENOENT);
    ASSERT_EQ(tscope_param_list(names, 8, &n), 0);
    ASSERT_EQ(n, 3);
}

/* ---- tuners ----------------------------------------------------------------- */

static double bowl(const double *p)
{
    return (p[0] - 7) * (p[0] - 7) + 2 * (p[1] - 3) * (p[1] - 3) + 1;
}

/* Runs a session to convergence; returns the best objective. */
static double run(tscope_tuner_kind_t kind, const tscope_tune_dim_t *dims, unsigned nd,
                  const tscope_tuner_opts_t *o, double (*f)(const double *), double *best,
                  unsigned *evals)
{
    tscope_tuner_t *t;
    ASSERT_EQ(tscope_tuner_create(kind, dims, nd, o, &t), 0);
    double p[TSCOPE_TUNER_MAX_DIMS], fb;
    ASSERT_EQ(tscope_tuner_best(t, p, &fb), TSCOPE_ESTATE);
    unsigned guard = 0;
    while (!tscope_tuner_converged(t) && tscope_tuner_next(t, p) == 0) {
        for (unsigned i = 0; i < nd; i++) { /* on the grid and in range */
            ASSERT(p[i] >= dims[i].min && p[i] <= dims[i].max);
            if (dims[i].step > 0)
                ASSERT(fabs(remainder(p[i] - dims[i].min, dims[i].step)) < 1e-9);
        }
        ASSERT_EQ(tscope_tuner_next(t, p), TSCOPE_ESTATE); /* report first */
        ASSERT_EQ(tscope_tuner_report(t, f(p)), 0);
        ASSERT(++guard < 100000);
    }
    ASSERT(tscope_tuner_converged(t));
    ASSERT_EQ(tscope_tuner_best(t, best, &fb), 0);
    *evals = tscope_tuner_evals(t);
    tscope_tuner_destroy(t);
    return fb;
}

/* Unregistering waits for a setter another thread is inside (afterwards no
 * setter or getter of it runs: its owner may free what they use); a setter
 * that unregisters its own parameter does not wait for itself. */
static atomic_int slow_entered, slow_done;
static int set_slow(double v, void *data)
{
    (void)v;
    (void)data;
    atomic_store(&slow_entered, 1);
    usleep(100000);
    atomic_store(&slow_done, 1);
    return 0;
}
static void *set_slow_thread(void *arg)
{
    (void)arg;
    ASSERT_EQ(tscope_param_set("test.slow", 1), 0);
    return NULL;
}
static int set_self_unregister(double v, void *data)
{
    (void)v;
    (void)data;
    ASSERT_EQ(tscope_param_unregister("test.self"), 0);
    double x;
    ASSERT_EQ(tscope_param_get("test.self", &x), TSCOPE_ENOENT); /* gone already */
    return 0;
}
/* tscope__param_each over ten parameters whose getters unregister: p9 its
 * own (no wait for itself), p3 p5 (whose getter then never runs) */
static int got_calls[10];
static double get_unregistering(void *data)
{
    int i = (int)(intptr_t)data;
    got_calls[i]++;
    if (i == 9)
        ASSERT_EQ(tscope_param_unregister("test.each9"), 0);
    if (i == 3)
        ASSERT_EQ(tscope_param_unregister("test.each5"), 0);
    return i;
}
static int each_seen;
static void each_fn(void *ctx, const tscope_param_desc_t *d, double v)
{
    (void)ctx;
    if (strncmp(d->name, "test.each", 9) == 0) {
        ASSERT_EQ((int)v, d->name[9] - '0');
        each_seen++;
    }
}
static void test_each_unregistering(void)
{
    for (int i = 0; i < 10; i++) {
        char name[16];
        snprintf(name, sizeof name, "test.each%d", i);
        tscope_param_desc_t d = {.struct_size = sizeof d,
                                 .name = name,
                                 .kind = TSCOPE_PARAM_INT,
                                 .min = 0,
                                 .max = 9,
                                 .set = set_double,
                                 .get = get_unregistering,
                                 .data = (void *)(intptr_t)i};
        ASSERT_EQ(tscope_param_register(&d), 0);
    }
    ASSERT_EQ(tscope__param_each(each_fn, NULL), 0);
    ASSERT_EQ(each_seen, 9); /* all but test.each5 */
    ASSERT_EQ(got_calls[5], 0);
    ASSERT_EQ(got_calls[9], 1);
    double x;
    ASSERT_EQ(tscope_param_get("test.each5", &x), TSCOPE_ENOENT);
    ASSERT_EQ(tscope_param_get("test.each9", &x), TSCOPE_ENOENT);
    for (int i = 0; i < 10; i++) {
        char name[16];
        snprintf(name, sizeof name, "test.each%d", i);
        if (i != 5 && i != 9)
            ASSERT_EQ(tscope_param_unregister(name), 0);
    }
}

/* A getter that unregisters its own parameter through tscope_param_get. */
static double get_self_unregister(void *data)
{
    (void)data;
    ASSERT_EQ(tscope_param_unregister("test.getself"), 0);
    return 7;
}

static void test_unregister_waits(void)
{
    double slow = 0, self = 0;
    tscope_param_desc_t d = {.struct_size = sizeof d,
                             .name = "test.slow",
                             .kind = TSCOPE_PARAM_INT,
                             .min = 0,
                             .max = 1,
                             .set = set_slow,
                             .get = get_double,
                             .data = &slow};
    ASSERT_EQ(tscope_param_register(&d), 0);
    pthread_t th;
    ASSERT_EQ(pthread_create(&th, NULL, set_slow_thread, NULL), 0);
    while (!atomic_load(&slow_entered))
        usleep(1000);
    ASSERT_EQ(tscope_param_unregister("test.slow"), 0);
    ASSERT_EQ(atomic_load(&slow_done), 1); /* it waited for the setter */
    double x;
    ASSERT_EQ(tscope_param_get("test.slow", &x), TSCOPE_ENOENT);
    ASSERT_EQ(tscope_param_set("test.slow", 0), TSCOPE_ENOENT);
    ASSERT_EQ(pthread_join(th, NULL), 0);

    tscope_param_desc_t s = d;
    s.name = "test.self";
    s.set = set_self_unregister;
    s.data = &self;
    ASSERT_EQ(tscope_param_register(&s), 0);
    ASSERT_EQ(tscope_param_set("test.self", 1), 0); /* returns: no wait for itself */
    ASSERT_EQ(tscope_param_get("test.self", &x), TSCOPE_ENOENT);
    ASSERT_EQ(tscope_param_register(&s), 0); /* the name is free again */
    ASSERT_EQ(tscope_param_unregister("test.self"), 0);

    tscope_param_desc_t g = d;
    g.name = "test.getself";
    g.set = set_double;
    g.get = get_self_unregister;
    ASSERT_EQ(tscope_param_register(&g), 0);
    ASSERT_EQ(tscope_param_get("test.getself", &x), 0);
    ASSERT_EQ(x, 7);
    ASSERT_EQ(tscope_param_get("test.getself", &x), TSCOPE_ENOENT);
    test_each_unregistering();
}

static void test_tuners_grid(void)
{
    const tscope_tune_dim_t dims[2] = {{0, 20, 1}, {0, 10, 1}};
    tscope_tuner_opts_t o = {sizeof o, 200, 42, 0.0, NULL, 1};
    double best[2];
    unsigned evals;
    /* exhaustive: the whole grid, exactly */
    ASSERT(run(TSCOPE_TUNER_EXHAUSTIVE, dims, 2, NULL, bowl, best, &evals) == 1);
    ASSERT(best[0] == 7 && best[1] == 3);
    ASSERT_EQ(evals, 21 * 11);
    /* hill climbing from the middle: straight down, within 60 evaluations */
    ASSERT(run(TSCOPE_TUNER_HILL_CLIMB, dims, 2, &o, bowl, best, &evals) == 1);
    ASSERT(best[0] == 7 && best[1] == 3);
    ASSERT(evals <= 60);
    /* Nelder-Mead and PRO: the optimum within 100 / 150 evaluations */
    ASSERT(run(TSCOPE_TUNER_NELDER_MEAD, dims, 2, &o, bowl, best, &evals) <= 2);
    ASSERT(evals <= 100);
    ASSERT(run(TSCOPE_TUNER_PRO, dims, 2, &o, bowl, best, &evals) <= 2);
    ASSERT(evals <= 150);
    /* random and annealing: 200 evaluations come within 2 of the optimum */
    ASSERT(run(TSCOPE_TUNER_RANDOM, dims, 2, &o, bowl, best, &evals) <= 3);
    ASSERT(evals <= 200);
    ASSERT(run(TSCOPE_TUNER_ANNEALING, dims, 2, &o, bowl, best, &evals) <= 3);
    ASSERT(evals <= 200);
}

static double smooth(const double *p)
{
    return (p[0] - 0.3) * (p[0] - 0.3) + (p[1] + 0.2) * (p[1] + 0.2);
}

/* time per unit of work with T threads: parallel part, plus contention */
static double threads_model(const double *p)
{
    return 100.0 / p[0] + 6.0 * p[0];
}

static void test_tuners_continuous(void)
{
    const tscope_tune_dim_t dims[2] = {{-1, 1, 0}, {-1, 1, 0}};
    tscope_tuner_opts_t o = {sizeof o, 300, 7, 0.0, NULL, 1};
    double best[2];
    unsigned evals;
    ASSERT(run(TSCOPE_TUNER_NELDER_MEAD, dims, 2, &o, smooth, best, &evals) < 1e-4);
    ASSERT(run(TSCOPE_TUNER_PRO, dims, 2, &o, smooth, best, &evals) < 1e-3);
    ASSERT_EQ(tscope_tuner_create(TSCOPE_TUNER_EXHAUSTIVE, dims, 2, NULL, &(tscope_tuner_t *){0}),
              TSCOPE_EINVAL); /* needs a grid */
    /* a thread count: 1..16, optimum at sqrt(100 / 6) = 4.08 -> 4 */
    const tscope_tune_dim_t t1[1] = {{1, 16, 1}};
    for (int k = TSCOPE_TUNER_EXHAUSTIVE; k <= TSCOPE_TUNER_ANNEALING; k++) {
        tscope_tuner_opts_t ok = {sizeof ok, 60, 3, 0.0, NULL, 1};
        run((tscope_tuner_kind_t)k, t1, 1, &ok, threads_model, best, &evals);
        if (best[0] != 4)
            TEST_FAIL("tuner %d: thread count %g, want 4", k, best[0]);
    }
}

static uint64_t noise_state = 12345;

static double flat_noisy(const double *p)
{
    (void)p;
    noise_state = noise_state * 6364136223846793005ull + 1442695040888963407ull;
    return 100 * (1 + 0.02 * ((double)(noise_state >> 33) / 2147483648.0 - 0.5));
}

/* Exhaustive there and back on a program that speeds up over time: each
 * evaluation is 6 better than the one before.  One pass ends at the last
 * point (10: 9 - 60 against 0 - 42 at 7); two find 7, whose mean is exact:
 * its measurements at evaluations 7 and 14 sum to 21, like every point's. */
static unsigned drift_evals;

static double drifting(const double *p)
{
    return (p[0] - 7) * (p[0] - 7) - 6.0 * drift_evals++;
}

static void test_exhaustive_passes(void)
{
    const tscope_tune_dim_t dim = {0, 10, 1};
    double best;
    unsigned evals;
    tscope_tuner_opts_t o = {sizeof o, 0, 0, 0.0, NULL, 1};
    drift_evals = 0;
    run(TSCOPE_TUNER_EXHAUSTIVE, &dim, 1, &o, drifting, &best, &evals);
    ASSERT_EQ(evals, 11);
    ASSERT_EQ(best, 10); /* fooled by the drift */
    o.passes = 2;
    drift_evals = 0;
    double fb = run(TSCOPE_TUNER_EXHAUSTIVE, &dim, 1, &o, drifting, &best, &evals);
    ASSERT_EQ(evals, 22);
    ASSERT_EQ(best, 7);
    ASSERT(fabs(fb - (0 - 6.0 * 21 / 2)) < 1e-9);
}

static void test_hysteresis(void)
{
    const tscope_tune_dim_t dims[2] = {{1, 16, 1}, {0, 3, 1}};
    const double start[2] = {8, 1};
    tscope_tuner_opts_t o = {sizeof o, 500, 1, 0.05, start, 1};
    for (int rep = 0; rep < 20; rep++) {
        tscope_tuner_t *t;
        ASSERT_EQ(tscope_tuner_create(TSCOPE_TUNER_HILL_CLIMB, dims, 2, &o, &t), 0);
        double p[2];
        unsigned moves = 0;
        while (tscope_tuner_next(t, p) == 0) {
            tscope_tuner_report(t, flat_noisy(p));
            moves++;
        }
        /* the start and one sweep of its 4 neighbours, then it stays */
        ASSERT_EQ(tscope_tuner_evals(t), 5);
        ASSERT(tscope_tuner_converged(t));
        tscope_tuner_destroy(t);
        ASSERT(moves == 5);
    }
}

/* ---- the bundled runtime's parameters ------------------------------------ */

static _Atomic int counted;

static void count_task(void *arg)
{
    (void)arg;
    counted++;
}

static void test_runtime_params(void)
{
    ASSERT_EQ(tscope_rt_init(2), 0);
    tscope_param_desc_t d;
    ASSERT_EQ(tscope_param_describe("rt.thread_cap", &d), 0);
    ASSERT(d.kind == TSCOPE_PARAM_INT && d.min == 1 && d.max == 2);
    ASSERT_EQ(tscope_param_set("rt.thread_cap", 1), 0);
    ASSERT_EQ(tscope_rt_thread_cap(), 1);
    double v;
    ASSERT_EQ(tscope_param_get("rt.thread_cap", &v), 0);
    ASSERT(v == 1);
    ASSERT_EQ(tscope_param_set("rt.thread_cap", 3), TSCOPE_EINVAL);
    ASSERT_EQ(tscope_param_set("rt.thread_cap", 2), 0);
    ASSERT_EQ(tscope_param_set_choice("rt.schedule", "fifo"), 0);
    ASSERT_EQ(tscope_param_get("rt.schedule", &v), 0);
    ASSERT(v == 1);
    for (int i = 0; i < 1000; i++)
        ASSERT_EQ(tscope_rt_spawn(count_task, NULL, NULL, NULL), 0);
    ASSERT_EQ(tscope_rt_taskwait(), 0);
    ASSERT_EQ(counted, 1000);
    ASSERT_EQ(tscope_param_set_choice("rt.schedule", "lifo"), 0);
    ASSERT_EQ(tscope_rt_finalize(), 0);
    ASSERT_EQ(tscope_param_describe("rt.thread_cap", &d), TSCOPE_ENOENT); /* gone with it */
}

/* TASKSCOPE_POLICY starts the policy it names in tscope_rt_init (each one
 * known by the parameters it registers) and tscope_rt_finalize stops it:
 * "optimize" once started the power-capping policy. */
static void test_autostart(void)
{
    static const struct {
        const char *policy, *has, *lacks;
    } cases[] = {{"optimize", "optimize.w_time", "powercap.low_w"},
                 {"powercap", "powercap.low_w", "optimize.w_time"},
                 {"throttle", NULL, "optimize.w_time"}};
    setenv("TASKSCOPE_OUTPUTS", "none", 1);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        setenv("TASKSCOPE_POLICY", cases[i].policy, 1);
        ASSERT_EQ(tscope_init(0, 1), 0);
        ASSERT_EQ(tscope_rt_init(2), 0);
        tscope_param_desc_t d = {.struct_size = sizeof d};
        if (cases[i].has)
            ASSERT_EQ(tscope_param_describe(cases[i].has, &d), 0);
        ASSERT_EQ(tscope_param_describe(cases[i].lacks, &d), TSCOPE_ENOENT);
        ASSERT_EQ(tscope_param_describe("powercap.high_w", &d),
                  strcmp(cases[i].policy, "powercap") == 0 ? 0 : TSCOPE_ENOENT);
        ASSERT_EQ(tscope_rt_finalize(), 0);
        if (cases[i].has) /* stopped with the runtime */
            ASSERT_EQ(tscope_param_describe(cases[i].has, &d), TSCOPE_ENOENT);
        ASSERT_EQ(tscope_finalize(), 0);
    }
    unsetenv("TASKSCOPE_POLICY");
}

/* ---- periodic policies and thread throttling ------------------------------- */

static _Atomic int policy_runs;
static double elapsed_sum;

static void count_policy(void *data, double elapsed)
{
    (void)data;
    if (policy_runs++ > 0)
        elapsed_sum += elapsed;
}

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts))
        ;
}

static void test_periodic(void)
{
    ASSERT_EQ(tscope_policy_add("early", 10, count_policy, NULL), TSCOPE_ESTATE); /* no init */
    setenv("TASKSCOPE_OUTPUTS", "none", 1);
    ASSERT_EQ(tscope_init(0, 1), 0);
    ASSERT_EQ(tscope_policy_add("count", 20, count_policy, NULL), 0);
    ASSERT_EQ(tscope_policy_add("count", 20, count_policy, NULL), TSCOPE_EINVAL);
    ASSERT_EQ(tscope_policy_add("zero", 0, count_policy, NULL), TSCOPE_EINVAL);
    sleep_s(0.4);
    ASSERT_EQ(tscope_policy_remove("count"), 0);
    int runs = policy_runs;
    /* 0.4 s at 50 Hz: ~21 runs; a loaded machine may delay some */
    if (runs < 8 || runs > 22)
        TEST_FAIL("periodic policy ran %d times in 0.4 s at a 20 ms period", runs);
    double mean = elapsed_sum / (runs - 1);
    if (mean < 0.018 || mean > 0.06)
        TEST_FAIL("mean time between runs %g s, period 0.02 s", mean);
    sleep_s(0.05);
    ASSERT_EQ(policy_runs, runs); /* removed: no more runs */
    ASSERT_EQ(tscope_policy_remove("count"), TSCOPE_ENOENT);
    ASSERT_EQ(tscope_policy_add("again", 5, count_policy, NULL), 0);
    ASSERT_EQ(tscope_finalize(), 0); /* forgets it */
    int after = policy_runs;
    sleep_s(0.03);
    ASSERT_EQ(policy_runs, after);
}

static int custom_hits, counter_hits, begin_hits;
static uint64_t last_payload;
static double counter_sum;

static void on_trigger(void *data, const tscope_trigger_info_t *info)
{
    (void)data;
    if (info->kind == TSCOPE_TRIGGER_CUSTOM) {
        custom_hits++;
        last_payload = info->payload;
    } else if (info->kind == TSCOPE_TRIGGER_COUNTER) {
        counter_hits++;
        counter_sum += info->value;
    } else {
        begin_hits++;
    }
}

static void test_triggered(void)
{
    ASSERT_EQ(tscope_policy_on("t", TSCOPE_TRIGGER_CUSTOM, 0, on_trigger, NULL), TSCOPE_ESTATE);
    ASSERT_EQ(tscope_init(0, 1), 0);
    tscope_event_t alarm, other;
    tscope_counter_t temp;
    tscope_type_t kernel, helper;
    ASSERT_EQ(tscope_event_register("alarm", &alarm), 0);
    ASSERT_EQ(tscope_event_register("other", &other), 0);
    ASSERT_EQ(tscope_counter_register("temperature", &temp), 0);
    ASSERT_EQ(tscope_type_register("kernel", &kernel), 0);
    ASSERT_EQ(tscope_type_register("helper", &helper), 0);
    ASSERT_EQ(tscope_policy_on("on_alarm", TSCOPE_TRIGGER_CUSTOM, alarm, on_trigger, NULL), 0);
    ASSERT_EQ(tscope_policy_on("on_alarm", TSCOPE_TRIGGER_CUSTOM, alarm, on_trigger, NULL),
              TSCOPE_EINVAL);
    ASSERT_EQ(tscope_policy_on("on_temp", TSCOPE_TRIGGER_COUNTER, temp, on_trigger, NULL), 0);
    ASSERT_EQ(tscope_policy_on("on_kernel", TSCOPE_TRIGGER_TASK_BEGIN, kernel, on_trigger, NULL),
              0);
    for (int i = 1; i <= 5; i++) {
        tscope_custom_event(alarm, 100 + i);
        tscope_custom_event(other, 7); /* another event: not delivered */
        tscope_counter_sample(temp, 10.0 * i);
        uint64_t k = tscope_task_id_next(), h = tscope_task_id_next();
        tscope_task_start(k, kernel);
        tscope_task_end(k);
        tscope_task_start(h, helper); /* another type: not delivered */
        tscope_task_end(h);
    }
    ASSERT_EQ(tscope_flush(), 0);
    ASSERT_EQ(custom_hits, 5);
    ASSERT_EQ(last_payload, 105);
    ASSERT_EQ(counter_hits, 5);
    ASSERT(counter_sum == 150);
    ASSERT_EQ(begin_hits, 5);
    ASSERT_EQ(tscope_policy_remove("on_alarm"), 0);
    tscope_custom_event(alarm, 1);
    ASSERT_EQ(tscope_flush(), 0);
    ASSERT_EQ(custom_hits, 5); /* removed */
    ASSERT_EQ(tscope_finalize(), 0);
}

/* Task handles (aggregated by their thread) reach a task-begin policy too,
 * begun by start or by begin, and are counted once. */
static void test_triggered_handles(void)
{
    setenv("TASKSCOPE_OUTPUTS", "none", 1);
    ASSERT_EQ(tscope_init(0, 1), 0);
    tscope_type_t kernel, helper;
    ASSERT_EQ(tscope_type_register("kernel", &kernel), 0);
    ASSERT_EQ(tscope_type_register("helper", &helper), 0);
    tscope_task_t *before = tscope_task_start_h(tscope_task_id_next(), kernel);
    ASSERT_EQ(tscope_task_end_h(before), 0); /* no policy yet: no notice */
    begin_hits = 0;
    ASSERT_EQ(tscope_policy_on("on_kernel", TSCOPE_TRIGGER_TASK_BEGIN, kernel, on_trigger, NULL),
              0);
    for (int i = 0; i < 5; i++) {
        tscope_task_t *k = tscope_task_start_h(tscope_task_id_next(), kernel);
        tscope_task_t *c = tscope_task_create_h(tscope_task_id_next(), k, kernel, 0, 0, 0);
        tscope_task_t *h = tscope_task_create_h(tscope_task_id_next(), k, helper, 0, 0, 0);
        ASSERT(k && c && h);
        ASSERT_EQ(tscope_task_begin_h(c), 0);
        ASSERT_EQ(tscope_task_end_h(c), 0);
        ASSERT_EQ(tscope_task_begin_h(h), 0); /* another type: not delivered */
        ASSERT_EQ(tscope_task_end_h(h), 0);
        ASSERT_EQ(tscope_task_end_h(k), 0);
    }
    ASSERT_EQ(tscope_flush(), 0);
    ASSERT_EQ(begin_hits, 10);
    ASSERT_EQ(tscope_policy_remove("on_kernel"), 0);
    tscope_task_end_h(tscope_task_start_h(tscope_task_id_next(), kernel));
    ASSERT_EQ(tscope_flush(), 0);
    ASSERT_EQ(begin_hits, 10); /* removed: no notices any more */
    tscope_type_stats_t st;
    ASSERT_EQ(tscope_query_type(kernel, &st), 0);
    ASSERT_EQ(st.calls, 12);
    ASSERT_EQ(st.created, 12);
    ASSERT_EQ(tscope_query_type(helper, &st), 0);
    ASSERT_EQ(st.calls, 5);
    ASSERT_EQ(tscope_finalize(), 0);
    unsetenv("TASKSCOPE_OUTPUTS");
}

static void work_task(void *arg)
{
    (void)arg;
    volatile double x = 0;
    for (int i = 0; i < 20000; i++)
        x += i;
    (void)x;
}

/* A task that sleeps, so that the runtime's throughput is cap / duration
 * on an idle machine: 1 ms up to 2 threads, 4 ms at more (contention that
 * sets in above 2). */
static void contended_task(void *arg)
{
    (void)arg;
    struct timespec d = {0, tscope_rt_thread_cap() > 2 ? 4000000 : 1000000};
    nanosleep(&d, NULL);
}

/* A parameter "rt.thread_cap" of 1 .. 4 threads standing in for the
 * runtime's: the test sees every cap the policy sets, and records its
 * tasks under the same lock, so no task runs under a cap it was not
 * measured for. */
static pthread_mutex_t fake_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned fake_cap = 4, caps_set[32], ncaps_set;

static int set_fake_cap(double v, void *data)
{
    (void)data;
    pthread_mutex_lock(&fake_lock);
    fake_cap = (unsigned)v;
    if (ncaps_set < sizeof caps_set / sizeof caps_set[0])
        caps_set[ncaps_set++] = fake_cap;
    pthread_mutex_unlock(&fake_lock);
    return 0;
}

static double get_fake_cap(void *data)
{
    (void)data;
    pthread_mutex_lock(&fake_lock);
    double v = fake_cap;
    pthread_mutex_unlock(&fake_lock);
    return v;
}

/* The objective the test sets: a task's self time at each cap (ns on
 * the manual clock), best at 2, 2x worse at 1 and 4x at 4. */
static uint64_t task_ns_at(unsigned cap)
{
    return cap == 2 ? 1000 : cap == 1 ? 2000 : 4000;
}

/* Throttling on a task type's mean self time: the policy's decisions
 * follow from the objective alone, whatever the machine's load does to the
 * timing of its periods: the caps it tries (4, 2, 1 and back: 1, 2, 4; each
 * set when its point starts), the cap it keeps (2) and that cap's mean. */
static void test_throttle_decisions(void)
{
    tscope_param_desc_t cap = {sizeof cap, "rt.thread_cap", TSCOPE_PARAM_INT, 1,   4, NULL,
                               0,          set_fake_cap,    get_fake_cap,     NULL};
    ASSERT_EQ(tscope_param_register(&cap), 0);
    harness_init(); /* manual clock: self times are what the test says */
    tscope_type_t t = type_named("throttled");
    ASSERT_EQ(tscope_throttle_start(40, "throttled"), 0);
    tscope_throttle_status_t st = {0};
    uint64_t now = 0, id = 1;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do { /* a task at the current cap every ~0.5 ms until the policy converged */
        pthread_mutex_lock(&fake_lock);
        at(now);
        ASSERT_OK(tscope_task_start(id, t));
        now += task_ns_at(fake_cap);
        at(now);
        ASSERT_OK(tscope_task_end(id++));
        ASSERT_OK(tscope_flush()); /* in the store before the cap can change */
        pthread_mutex_unlock(&fake_lock);
        sleep_s(0.0005);
        ASSERT_EQ(tscope_throttle_status(&st), 0);
        clock_gettime(CLOCK_MONOTONIC, &t1);
    } while (!st.converged && t1.tv_sec - t0.tv_sec < 60); /* a bound, not a figure */
    tscope_throttle_stop();
    ASSERT_EQ(tscope_throttle_status(&st), TSCOPE_ESTATE); /* stopped; the fields stay */
    printf("test_throttle_decisions: converged %d to cap %u after %u points (%u cut short) "
           "and %llu tasks\n",
           st.converged, st.best, st.evals, st.cut, (unsigned long long)(id - 1));
    ASSERT(st.converged);
    const unsigned want[] = {4, 2, 1, 1, 2, 4, 2}; /* the search, then the best kept */
    ASSERT_EQ(ncaps_set, sizeof want / sizeof want[0]);
    for (unsigned i = 0; i < ncaps_set; i++)
        if (caps_set[i] != want[i])
            TEST_FAIL("cap %u set was %u, expected %u", i + 1, caps_set[i], want[i]);
    ASSERT_EQ(st.evals, 6);
    ASSERT_EQ(st.best, 2);
    ASSERT_EQ(st.cap, 2);
    ASSERT_EQ(fake_cap, 2);
    ASSERT(st.objective == 1000); /* ns per task at cap 2, exactly */
    ASSERT_EQ(st.retunes, 0);
    /* only the points more than 20% worse than the best so far can be cut
     * short (cap 1 twice, cap 4 on the way back); whether they are depends
     * on when the policy thread got to run */
    ASSERT_LE(st.cut, 3);
    ASSERT_EQ(tscope_finalize(), 0);
    tscope__clock_kind = TSCOPE__CLOCK_MONOTONIC; /* the next tscope_init chooses a real clock */
    ASSERT_EQ(tscope_param_unregister("rt.thread_cap"), 0);
}

/* Throttling the bundled runtime on its throughput: the policy needs the
 * runtime's parameter, runs one at a time, searches every cap (each search
 * 6 points, however the timings came out), and leaves the runtime at the
 * cap it found.  Which cap is best is a matter of timing: not checked. */
static void test_throttle(void)
{
    ASSERT_EQ(tscope_init(0, 1), 0);
    ASSERT_EQ(tscope_throttle_start(50, NULL), TSCOPE_ENOENT); /* no runtime, no rt.thread_cap */
    ASSERT_EQ(tscope_rt_init(4), 0);
    ASSERT_EQ(tscope_throttle_start(0, NULL), TSCOPE_EINVAL);
    ASSERT_EQ(tscope_throttle_start(40, NULL), 0);
    ASSERT_EQ(tscope_throttle_start(40, NULL), TSCOPE_EINVAL); /* one at a time */
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    tscope_throttle_status_t st = {0};
    for (;;) { /* keep the runtime busy until the policy converged */
        for (int i = 0; i < 16; i++)
            ASSERT_EQ(tscope_rt_spawn(contended_task, NULL, NULL, NULL), 0);
        ASSERT_EQ(tscope_rt_taskwait(), 0);
        ASSERT_EQ(tscope_throttle_status(&st), 0);
        ASSERT(st.cap == 0 || st.cap == 1 || st.cap == 2 || st.cap == 4);
        if (st.converged) {
            tscope_throttle_stop(); /* the status is final from here on */
            ASSERT_EQ(tscope_throttle_status(&st), TSCOPE_ESTATE);
            break;
        }
        clock_gettime(CLOCK_MONOTONIC, &t);
        if (t.tv_sec - t0.tv_sec >= 60) /* a bound, not a figure */
            TEST_FAIL("the policy did not converge in 60 s: %u points measured", st.evals);
    }
    printf("test_throttle: converged %d to %u threads after %u points (%u cut short, %u "
           "retunes), %.0f tasks/s\n",
           st.converged, st.best, st.evals, st.cut, st.retunes, st.objective);
    ASSERT(st.objective > 0);
    ASSERT_EQ(tscope_rt_thread_cap(), st.cap); /* what the policy set last */
    if (st.converged) {                        /* each search: caps 4, 2, 1 and back: 1, 2, 4 */
        ASSERT_EQ(st.evals, 6 * (st.retunes + 1));
        ASSERT(st.best == 1 || st.best == 2 || st.best == 4);
        ASSERT_EQ(st.cap, st.best);
        ASSERT_LE(st.cut, st.evals - (st.retunes + 1)); /* never a search's first point */
    } else { /* the last tasks' period drifted: a new search began just before the stop */
        ASSERT_GE(st.retunes, 1);
        ASSERT(st.evals >= 6 * st.retunes && st.evals < 6 * (st.retunes + 1));
    }
    ASSERT_EQ(tscope_rt_finalize(), 0);
    ASSERT_EQ(tscope_finalize(), 0);

    /* tscope_rt_finalize stops a policy that is still running */
    ASSERT_EQ(tscope_init(0, 1), 0);
    ASSERT_EQ(tscope_rt_init(4), 0);
    ASSERT_EQ(tscope_throttle_start(40, NULL), 0);
    ASSERT_EQ(tscope_throttle_status(&st), 0);
    ASSERT_EQ(tscope_rt_finalize(), 0);
    ASSERT_EQ(tscope_throttle_status(&st), TSCOPE_ESTATE);
    ASSERT_EQ(tscope_finalize(), 0);
}

/* The optimiser with only the resources term: fewer threads are always
 * better, so it must end at one thread. */
static void test_optimize(void)
{
    ASSERT_EQ(tscope_init(0, 1), 0);
    ASSERT_EQ(tscope_rt_init(4), 0);
    ASSERT_EQ(tscope_optimize_start(20, 0, 0, 0), TSCOPE_EINVAL);
    ASSERT_EQ(tscope_optimize_start(20, 0, 1, 0), 0);
    ASSERT_EQ(tscope_throttle_start(20, NULL), TSCOPE_EINVAL); /* one at a time */
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    tscope_throttle_status_t st = {0};
    do {
        for (int i = 0; i < 64; i++)
            ASSERT_EQ(tscope_rt_spawn(work_task, NULL, NULL, NULL), 0);
        ASSERT_EQ(tscope_rt_taskwait(), 0);
        ASSERT_EQ(tscope_throttle_status(&st), 0);
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while (!st.converged && (double)(t.tv_sec - t0.tv_sec) < 3.0);
    ASSERT(st.converged);
    ASSERT_EQ(st.best, 1);
    ASSERT_EQ(tscope_rt_thread_cap(), 1);
    printf("test_optimize: resources only -> 1 thread after %u periods\n", st.evals);
    /* the weights are parameters (the dashboard's sliders): never all 0; a
     * change starts a new search */
    double w;
    ASSERT_EQ(tscope_param_get("optimize.w_resources", &w), 0);
    ASSERT(w == 1);
    ASSERT_EQ(tscope_param_set("optimize.w_resources", 0), TSCOPE_EINVAL);
    ASSERT_EQ(tscope_param_get("optimize.w_resources", &w), 0);
    ASSERT(w == 1);
    unsigned retunes = st.retunes;
    ASSERT_EQ(tscope_param_set("optimize.w_time", 1), 0);
    ASSERT_EQ(tscope_param_get("optimize.w_time", &w), 0);
    ASSERT(w == 1);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        for (int i = 0; i < 64; i++)
            ASSERT_EQ(tscope_rt_spawn(work_task, NULL, NULL, NULL), 0);
        ASSERT_EQ(tscope_rt_taskwait(), 0);
        ASSERT_EQ(tscope_throttle_status(&st), 0);
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while (st.retunes == retunes && (double)(t.tv_sec - t0.tv_sec) < 3.0);
    ASSERT_EQ(st.retunes, retunes + 1);
    ASSERT_EQ(tscope_rt_finalize(), 0);
    ASSERT_EQ(tscope_param_get("optimize.w_time", &w), TSCOPE_ENOENT); /* gone with it */
    ASSERT_EQ(tscope_finalize(), 0);
}

/* A power source proportional to the thread cap: 5 W per thread. */
static void fake_power(void *data, double seconds, tscope_sample_emit_fn emit, void *ctx)
{
    (void)data;
    (void)seconds;
    emit(ctx, "power.package_w", 5.0 * tscope_rt_thread_cap());
}

static void test_powercap(void)
{
    setenv("TASKSCOPE_SAMPLE_MS", "10", 1);
    ASSERT_EQ(tscope_init(0, 1), 0);
    ASSERT_EQ(tscope_powercap_start(20, 9, 11), TSCOPE_ENOENT); /* no runtime */
    ASSERT_EQ(tscope_rt_init(4), 0);
    ASSERT_EQ(tscope_sampler_source_register("fake_power", fake_power, NULL), 0);
    ASSERT_EQ(tscope_powercap_start(20, 11, 9), TSCOPE_EINVAL); /* empty band */
    ASSERT_EQ(tscope_powercap_start(20, 9, 11), 0);
    tscope_powercap_status_t st = {0};
    for (int i = 0; i < 100 && st.inside_after < 10; i++) {
        sleep_s(0.02);
        ASSERT_EQ(tscope_powercap_status(&st), 0);
    }
    /* 20 W at 4 threads: down to 2 threads (10 W, inside [9, 11]), then it stays */
    ASSERT_EQ(tscope_rt_thread_cap(), 2);
    ASSERT(st.inside_after >= 10 && st.inside_after == st.after_first);
    ASSERT(st.estimate == 0 && st.power_w == 10);
    printf("test_powercap: 20 W -> 10 W in %u periods, then inside the band\n",
           st.periods - st.after_first + 1);
    /* the band as parameters: low stays below high; raising it to [14, 16]
     * brings the cap to 3 threads (15 W) */
    double v;
    ASSERT_EQ(tscope_param_get("powercap.low_w", &v), 0);
    ASSERT(v == 9);
    ASSERT_EQ(tscope_param_set("powercap.low_w", 12), TSCOPE_EINVAL);
    ASSERT_EQ(tscope_param_set("powercap.high_w", 16), 0);
    ASSERT_EQ(tscope_param_set("powercap.low_w", 14), 0);
    for (int i = 0; i < 100 && tscope_rt_thread_cap() != 3; i++)
        sleep_s(0.02);
    ASSERT_EQ(tscope_rt_thread_cap(), 3);
    ASSERT_EQ(tscope_rt_finalize(), 0);
    ASSERT_EQ(tscope_powercap_status(&st), TSCOPE_ESTATE);
    ASSERT_EQ(tscope_sampler_source_unregister("fake_power"), 0);
    ASSERT_EQ(tscope_finalize(), 0);
    setenv("TASKSCOPE_SAMPLE_MS", "0", 1);
}

/* 30 W of other processes' load plus 5 W per thread of ours. */
static void loaded_power(void *data, double seconds, tscope_sample_emit_fn emit, void *ctx)
{
    (void)data;
    (void)seconds;
    emit(ctx, "power.package_w", 30.0 + 5.0 * tscope_rt_thread_cap());
}

/* The band cannot be reached by capping this program: down to one thread,
 * the periods above the band counted, and the reason said once. */
static void test_powercap_others_load(void)
{
    setenv("TASKSCOPE_SAMPLE_MS", "10", 1);
    fflush(stderr);
    int saved = dup(2);
    FILE *err = tmpfile();
    ASSERT(saved >= 0 && err != NULL);
    dup2(fileno(err), 2);
    ASSERT_EQ(tscope_init(0, 1), 0);
    ASSERT_EQ(tscope_rt_init(4), 0);
    ASSERT_EQ(tscope_sampler_source_register("loaded_power", loaded_power, NULL), 0);
    ASSERT_EQ(tscope_powercap_start(20, 9, 11), 0);
    tscope_powercap_status_t st = {0};
    for (int i = 0; i < 200 && st.above_at_floor < 6; i++) {
        sleep_s(0.02);
        ASSERT_EQ(tscope_powercap_status(&st), 0);
    }
    ASSERT_EQ(tscope_rt_finalize(), 0);
    ASSERT_EQ(tscope_sampler_source_unregister("loaded_power"), 0);
    ASSERT_EQ(tscope_finalize(), 0);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    ASSERT(st.above_at_floor >= 6 && st.inside == 0 && st.cap == 1);
    char text[4096] = "";
    rewind(err);
    size_t n = fread(text, 1, sizeof text - 1, err);
    text[n] = 0;
    fclose(err);
    const char *say = "taskscope: powercap: the power stays above the band (35.0 W > 11.0 W) with "
                      "the program down to one thread";
    ASSERT(strstr(text, say) != NULL);
    ASSERT(strstr(strstr(text, say) + 1, say) == NULL); /* once */
    printf("test_powercap_others_load: at one thread after %u periods, said why\n", st.periods);
    setenv("TASKSCOPE_SAMPLE_MS", "0", 1);
}

/* The thread cap by convention (policy.h): the first registered INT
 * parameter named "*.thread_cap", whatever the runtime. */
static int set_nothing(double v, void *data)
{
    (void)v;
    (void)data;
    return 0;
}

static double get_nothing(void *data)
{
    (void)data;
    return 1;
}

static void test_thread_cap_param(void)
{
    char name[64];
    ASSERT_EQ(tscope_param_thread_cap(name, sizeof name), TSCOPE_ENOENT);
    ASSERT_EQ(tscope_param_thread_cap(NULL, 0), TSCOPE_EINVAL);
    const char *names[] = {"real.thread_cap", "x.thread_capacity", "thread_cap", "b.thread_cap",
                           "a.thread_cap"};
    for (int i = 0; i < 5; i++) {
        tscope_param_desc_t d = {sizeof d, names[i],    i ? TSCOPE_PARAM_INT : TSCOPE_PARAM_REAL,
                                 1,        4,           NULL,
                                 0,        set_nothing, get_nothing,
                                 NULL};
        ASSERT_EQ(tscope_param_register(&d), 0);
        if (i < 3) /* a real one, another name, no component: not a thread cap */
            ASSERT_EQ(tscope_param_thread_cap(name, sizeof name), TSCOPE_ENOENT);
    }
    ASSERT_EQ(tscope_param_thread_cap(name, sizeof name), 0);
    ASSERT_STR_EQ(name, "b.thread_cap"); /* the first registered */
    ASSERT_EQ(tscope_param_thread_cap(name, 12), TSCOPE_ELIMIT);
    ASSERT_EQ(tscope_param_thread_cap(name, 13), 0);
    ASSERT_EQ(tscope_param_unregister("b.thread_cap"), 0);
    ASSERT_EQ(tscope_param_thread_cap(name, sizeof name), 0);
    ASSERT_STR_EQ(name, "a.thread_cap");
    for (int i = 0; i < 5; i++)
        tscope_param_unregister(names[i]);
    ASSERT_EQ(tscope_param_thread_cap(name, sizeof name), TSCOPE_ENOENT);
}

/* A runtime the policies know only by its parameter (no bundled runtime):
 * "other.thread_cap" of 1 .. 4 threads. */
static void other_runtime(int on)
{
    if (!on)
        ASSERT_EQ(tscope_param_unregister("other.thread_cap"), 0);
    pthread_mutex_lock(&fake_lock); /* as test_throttle_decisions finds them */
    fake_cap = 4;
    ncaps_set = 0;
    pthread_mutex_unlock(&fake_lock);
    if (!on)
        return;
    tscope_param_desc_t cap = {sizeof cap, "other.thread_cap", TSCOPE_PARAM_INT, 1,   4, NULL,
                               0,          set_fake_cap,       get_fake_cap,     NULL};
    ASSERT_EQ(tscope_param_register(&cap), 0);
}

/* Throttling on throughput steers any runtime's thread cap through the
 * registry, and counts the tasks it finishes through the profile: the test
 * records ten tasks per step at cap 2 and one at the others, so 2 is best
 * by a factor of ten, whatever the load. */
static void test_throttle_any_runtime(void)
{
    ASSERT_EQ(tscope_init(0, 1), 0);
    ASSERT_EQ(tscope_throttle_start(40, NULL), TSCOPE_ENOENT); /* no thread cap */
    other_runtime(1);
    tscope_type_t t = type_named("other_runtime_task");
    ASSERT_EQ(tscope_throttle_start(40, NULL), 0);
    tscope_throttle_status_t st = {0};
    uint64_t id = 1;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        pthread_mutex_lock(&fake_lock);
        for (unsigned k = 0; k < (fake_cap == 2 ? 10u : 1u); k++) {
            ASSERT_OK(tscope_task_start(id, t));
            ASSERT_OK(tscope_task_end(id++));
        }
        pthread_mutex_unlock(&fake_lock);
        sleep_s(0.0005);
        ASSERT_EQ(tscope_throttle_status(&st), 0);
        clock_gettime(CLOCK_MONOTONIC, &t1);
    } while (!st.converged && t1.tv_sec - t0.tv_sec < 60); /* a bound, not a figure */
    tscope_throttle_stop();
    printf("test_throttle_any_runtime: converged %d to cap %u after %u points, %u caps set\n",
           st.converged, st.best, st.evals, ncaps_set);
    ASSERT(st.converged);
    ASSERT(ncaps_set >= 4);
    ASSERT(caps_set[0] == 4 && caps_set[1] == 2 && caps_set[2] == 1); /* the search */
    ASSERT_EQ(st.best, 2);
    ASSERT_EQ(fake_cap, 2);   /* the best kept, set through the registry */
    ASSERT(st.objective > 0); /* tasks per second, from the profile */
    ASSERT_EQ(tscope_finalize(), 0);
    other_runtime(0);
}

/* 5 W per thread of the other runtime's. */
static void other_power(void *data, double seconds, tscope_sample_emit_fn emit, void *ctx)
{
    (void)data;
    (void)seconds;
    emit(ctx, "power.package_w", 5.0 * get_fake_cap(NULL));
}

/* Power capping reads and sets any runtime's thread cap through the
 * registry: 20 W at 4 threads, down to 2 (10 W, inside [9, 11]). */
static void test_powercap_any_runtime(void)
{
    setenv("TASKSCOPE_SAMPLE_MS", "10", 1);
    ASSERT_EQ(tscope_init(0, 1), 0);
    other_runtime(1);
    ASSERT_EQ(tscope_sampler_source_register("other_power", other_power, NULL), 0);
    ASSERT_EQ(tscope_powercap_start(20, 9, 11), 0);
    tscope_powercap_status_t st = {0};
    for (int i = 0; i < 200 && st.inside_after < 5; i++) {
        sleep_s(0.02);
        ASSERT_EQ(tscope_powercap_status(&st), 0);
    }
    ASSERT_EQ(get_fake_cap(NULL), 2);
    ASSERT_EQ(st.cap, 2);
    ASSERT(st.inside_after >= 5 && st.power_w == 10);
    for (unsigned i = 1; i < ncaps_set; i++) /* only down, one way or another */
        ASSERT(caps_set[i] < caps_set[i - 1]);
    tscope_powercap_stop();
    ASSERT_EQ(tscope_sampler_source_unregister("other_power"), 0);
    ASSERT_EQ(tscope_finalize(), 0);
    other_runtime(0);
    setenv("TASKSCOPE_SAMPLE_MS", "0", 1);
}

int main(void)
{
    test_params();
    test_unregister_waits();
    test_tuners_grid();
    test_tuners_continuous();
    test_exhaustive_passes();
    test_hysteresis();
    test_runtime_params();
    test_autostart();
    test_periodic();
    test_triggered();
    test_triggered_handles();
    test_throttle();
    test_powercap();
    test_powercap_others_load();
    test_optimize();
    test_thread_cap_param();
    test_throttle_any_runtime();
    test_powercap_any_runtime();
    test_throttle_decisions(); /* last: it installs a manual clock */
    ASSERT_EQ(tscope_tuner_kind_parse("nelder_mead"), TSCOPE_TUNER_NELDER_MEAD);
    ASSERT_EQ(tscope_tuner_kind_parse("simplex"), -1);
    printf("test_policy: ok\n");
    return 0;
}
