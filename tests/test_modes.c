/* test_modes.c - the golden comparison of the two ways into the shards.
 *
 * One deterministic run (manual clock, three threads taking turns by a
 * script) is measured twice: once through the id-based events (a started
 * task on its thread's stack, created and yielded ones in the id map the
 * threads share: ids.c, idmap.c) and once through task handles
 * (handles.c), both aggregated by the threads in their shards and folded
 * by the readers.
 * The script has what crosses threads: tasks created on one thread and begun
 * on another, a yield on one thread resumed on another, recursion, a nested
 * task, leaves, a queued event, a dependency, a cancel, a task still
 * running at the end.  Every output
 * file of both runs (profile.json with the instance graph, the CSVs, the
 * tree, the DOT graphs, folded stacks, Hatchet, TAU) must be the same, byte
 * for byte, after the run's own identity (its pid, wall clock and folder) is
 * masked; a file written by one run only fails too.  Again with an
 * instance graph cap that leaves tasks out. */
#include <dirent.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/core.h"
#include "golden.h"
#include "harness.h"

enum op_kind { CREATE, QUEUED, BEGIN, START, END, YIELD, RESUME, CANCEL, DEP, FLUSH };

struct op {
    int thread; /* 0 main, 1 and 2 the workers */
    uint64_t t;
    enum op_kind op;
    uint64_t task, parent;
    int type; /* 0 root, 1 child, 2 leaf */
    unsigned flags;
};

static const struct op script[] = {
    {0, 0, CREATE, 1, 0, 0, 0},
    {0, 1, BEGIN, 1, 0, 0, 0},
    {0, 10, CREATE, 2, 1, 1, TSCOPE_TASK_UNTIED},
    {0, 10, CREATE, 3, 1, 1, 0},
    {0, 11, CREATE, 4, 1, 1, 0},
    {0, 11, CREATE, 5, 1, 1, 0},
    {0, 12, CREATE, 6, 1, 1, 0},
    {0, 12, CREATE, 7, 1, 1, TSCOPE_TASK_UNTIED},
    {0, 12, QUEUED, 3, 0, 0, 0},
    {0, 12, DEP, 3, 5, 0, TSCOPE_DEP_RAW}, /* 5 waits for 3 (parent: the target) */
    {0, 13, START, 8, 0, 2, 0},
    {0, 15, END, 8, 0, 0, 0},
    {1, 20, BEGIN, 2, 0, 0, 0},
    {1, 22, CREATE, 9, 2, 1, 0}, /* a child in a child: recursion */
    {1, 25, YIELD, 2, 0, 0, 0},
    {2, 26, BEGIN, 9, 0, 0, 0},
    {2, 30, END, 9, 0, 0, 0},
    {2, 31, RESUME, 2, 0, 0, 0}, /* resumed on another thread */
    {2, 35, END, 2, 0, 0, 0},
    {1, 36, BEGIN, 3, 0, 0, 0},
    {1, 40, START, 10, 0, 2, 0},
    {1, 41, END, 10, 0, 0, 0},
    {1, 45, END, 3, 0, 0, 0},
    {0, 46, CANCEL, 4, 0, 0, 0}, /* never begun */
    {2, 47, BEGIN, 5, 0, 0, 0},
    {2, 50, END, 5, 0, 0, 0},
    {0, 51, BEGIN, 6, 0, 0, 0}, /* nested in the root on its thread */
    {0, 53, START, 11, 0, 2, 0},
    {0, 54, END, 11, 0, 0, 0},
    {0, 55, END, 6, 0, 0, 0},
    {1, 56, BEGIN, 7, 0, 0, 0},
    {1, 60, YIELD, 7, 0, 0, 0},
    {0, 58, FLUSH, 0, 0, 0, 0},  /* the consumer has seen every end so far */
    {2, 61, RESUME, 7, 0, 0, 0}, /* still running at the end: unfinished */
    {2, 62, START, 12, 0, 2, 0}, /* below 7: under a cap, left out when created */
    {2, 63, END, 12, 0, 0, 0},
    {0, 70, END, 1, 0, 0, 0},
};
#define NOPS (sizeof script / sizeof script[0])

static int handles;
static int dep_cell; /* the address the dependency names */
static tscope_type_t types[3];
static tscope_task_t *h[16];
static size_t next_op;
static int quit;
static int registered; /* workers registered so far */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t turn = PTHREAD_COND_INITIALIZER;

static void do_op(const struct op *o)
{
    at(o->t);
    if (o->op == FLUSH) {
        ASSERT_OK(tscope_flush());
        return;
    }
    tscope_type_t type = types[o->type];
    if (handles) {
        switch (o->op) {
        case CREATE:
            h[o->task] = tscope_task_create_h(o->task, o->parent ? h[o->parent] : NULL, type,
                                              o->flags, o->parent ? 1 : 0, 0);
            ASSERT(h[o->task] != NULL);
            break;
        case START:
            ASSERT((h[o->task] = tscope_task_start_h(o->task, type)) != NULL);
            break;
        case BEGIN:
            ASSERT_OK(tscope_task_begin_h(h[o->task]));
            break;
        case END:
            ASSERT_OK(tscope_task_end_h(h[o->task]));
            break;
        case YIELD:
            ASSERT_OK(tscope_task_yield_h(h[o->task]));
            break;
        case RESUME:
            ASSERT_OK(tscope_task_resume_h(h[o->task]));
            break;
        case CANCEL:
            ASSERT_OK(tscope_task_cancel_h(h[o->task]));
            break;
        case QUEUED:
            ASSERT_OK(tscope_task_queued_h(h[o->task]));
            break;
        case FLUSH:
            break;
        case DEP: /* with the types, as taskscope.h asks of runtimes on handles */
            ASSERT_OK(tscope_dep_local_typed(o->task, tscope_task_handle_type(h[o->task]),
                                             o->parent, tscope_task_handle_type(h[o->parent]),
                                             &dep_cell, (tscope_hazard_t)o->flags));
            break;
        }
        return;
    }
    switch (o->op) {
    case CREATE:
        ASSERT_OK(tscope_task_create(o->task, o->parent, type, o->flags, o->parent ? 1 : 0, 0));
        break;
    case START:
        ASSERT_OK(tscope_task_start(o->task, type));
        break;
    case BEGIN:
        ASSERT_OK(tscope_task_begin(o->task, 0));
        break;
    case END:
        ASSERT_OK(tscope_task_end(o->task));
        break;
    case YIELD:
        ASSERT_OK(tscope_task_yield(o->task));
        break;
    case RESUME:
        ASSERT_OK(tscope_task_resume(o->task));
        break;
    case CANCEL:
        ASSERT_OK(tscope_task_cancel(o->task));
        break;
    case QUEUED:
        ASSERT_OK(tscope_task_queued(o->task));
        break;
    case FLUSH:
        break;
    case DEP:
        ASSERT_OK(tscope_dep_local(o->task, o->parent, &dep_cell, (tscope_hazard_t)o->flags));
        break;
    }
}

/* Runs the script's ops of thread `me` in their turn; returns at the end of
 * the script (main) or when told to quit (the workers: after finalize, so
 * that no thread retires while the clock moves). */
static void run_turns(int me)
{
    pthread_mutex_lock(&lock);
    for (;;) {
        while (next_op < NOPS && script[next_op].thread != me && !quit)
            pthread_cond_wait(&turn, &lock);
        if (next_op >= NOPS || quit)
            break;
        pthread_mutex_unlock(&lock);
        do_op(&script[next_op]);
        pthread_mutex_lock(&lock);
        next_op++;
        pthread_cond_broadcast(&turn);
    }
    if (me != 0)
        while (!quit)
            pthread_cond_wait(&turn, &lock);
    pthread_mutex_unlock(&lock);
}

static void *worker(void *arg)
{
    int me = (int)(intptr_t)arg;
    ASSERT_OK(tscope_thread_register(me == 1 ? "w1" : "w2"));
    pthread_mutex_lock(&lock);
    registered++;
    pthread_cond_broadcast(&turn);
    pthread_mutex_unlock(&lock);
    run_turns(me);
    return NULL;
}

static char dirs[2][300];

static void run(int with_handles)
{
    handles = with_handles;
    next_op = 0;
    quit = 0;
    memset(h, 0, sizeof h);
    const char *tmp = getenv("TSCOPE_TEST_TMP") ? getenv("TSCOPE_TEST_TMP") : "/tmp";
    char *dir = dirs[with_handles];
    snprintf(dir, sizeof dirs[0], "%s/tscope-test-modes-%s", tmp, with_handles ? "handles" : "ids");
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ASSERT_EQ(system(cmd), 0);
    setenv("TASKSCOPE_OUTPUT_DIR", dir, 1);
    setenv("TASKSCOPE_OUTPUTS", "all,tasks,folded,hatchet,tau,treedot", 1);
    setenv("TASKSCOPE_SUMMARY", "0", 1);
    setenv("TASKSCOPE_SAMPLE_MS", "0", 1);
    tscope__clock_use_manual(1000);
    ASSERT_OK(tscope_init(0, 1));
    ASSERT_EQ(tscope__g.cfg.aggregate, TSCOPE__AGG_THREAD);
    types[0] = type_named("root");
    types[1] = type_named("child");
    types[2] = type_named("leaf");
    pthread_t w[2];
    for (int i = 0; i < 2; i++) { /* one after the other: w1 gets the slot after main's */
        ASSERT_EQ(pthread_create(&w[i], NULL, worker, (void *)(intptr_t)(i + 1)), 0);
        pthread_mutex_lock(&lock);
        while (registered < i + 1)
            pthread_cond_wait(&turn, &lock);
        pthread_mutex_unlock(&lock);
    }
    run_turns(0);
    ASSERT_EQ(next_op, NOPS);
    at(80);
    ASSERT_OK(tscope_finalize());
    pthread_mutex_lock(&lock);
    quit = 1;
    pthread_cond_broadcast(&turn);
    pthread_mutex_unlock(&lock);
    for (int i = 0; i < 2; i++)
        ASSERT_EQ(pthread_join(w[i], NULL), 0);
}

/* The run's identity in a file's text, masked: digits after each `key`
 * become "N", and the output folder's path becomes "DIR". */
static void mask_after(char *text, const char *key)
{
    for (char *p = strstr(text, key); p; p = strstr(p, key)) {
        p += strlen(key);
        char *q = p;
        while (*q >= '0' && *q <= '9')
            q++;
        if (q > p) {
            *p = 'N';
            memmove(p + 1, q, strlen(q) + 1);
        }
    }
}

static char *masked(const char *path, const char *dir)
{
    char *text = test_slurp(path);
    ASSERT(text != NULL);
    for (char *p = strstr(text, dir); p; p = strstr(p, dir)) {
        size_t n = strlen(dir);
        memcpy(p, "DIR", 3);
        memmove(p + 3, p + n, strlen(p + n) + 1);
    }
    mask_after(text, "\"pid\":");
    mask_after(text, "\"pid\": ");
    mask_after(text, "realtime_origin_ns\":");
    mask_after(text, "\"start_unix_ns\":");
    mask_after(text, "(pid ");
    return text;
}

/* Compares every file under rel in both folders; returns how many. */
static int compare_tree(const char *rel)
{
    char a[700], b[700];
    snprintf(a, sizeof a, "%s/%s", dirs[0], rel);
    snprintf(b, sizeof b, "%s/%s", dirs[1], rel);
    DIR *d = opendir(a);
    ASSERT(d != NULL);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char fa[1000], fb[1000], sub[700];
        snprintf(fa, sizeof fa, "%s/%s", a, e->d_name);
        snprintf(fb, sizeof fb, "%s/%s", b, e->d_name);
        snprintf(sub, sizeof sub, "%s%s%s", rel, *rel ? "/" : "", e->d_name);
        struct stat sa;
        ASSERT_EQ(stat(fa, &sa), 0);
        if (S_ISDIR(sa.st_mode)) {
            n += compare_tree(sub);
            continue;
        }
        char *ta = masked(fa, dirs[0]), *tb = masked(fb, dirs[1]);
        if (strcmp(ta, tb) != 0) {
            size_t i = 0;
            while (ta[i] && ta[i] == tb[i])
                i++;
            size_t from = i > 60 ? i - 60 : 0;
            TEST_FAIL("%s differs between the modes at byte %zu:\n ids:     ...%.120s\n "
                      "handles: ...%.120s",
                      sub, i, ta + from, tb + from);
        }
        free(ta);
        free(tb);
        n++;
    }
    closedir(d);
    return n;
}

/* The same number of entries on the handles' side (no file of its own). */
static int count_tree(const char *dir)
{
    DIR *d = opendir(dir);
    ASSERT(d != NULL);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char f[1000];
        snprintf(f, sizeof f, "%s/%s", dir, e->d_name);
        struct stat st;
        ASSERT_EQ(stat(f, &st), 0);
        n += S_ISDIR(st.st_mode) ? count_tree(f) : 1;
    }
    closedir(d);
    return n;
}

/* Each mode in a process of its own, as a user runs it (thread slots are
 * the process's: a second run in one process would count the first's). */
static void run_apart(int with_handles)
{
    fflush(NULL);
    pid_t pid = fork();
    ASSERT(pid >= 0);
    if (pid == 0) {
        run(with_handles);
        fflush(NULL);
        _exit(0);
    }
    int status;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    const char *tmp = getenv("TSCOPE_TEST_TMP") ? getenv("TSCOPE_TEST_TMP") : "/tmp";
    snprintf(dirs[with_handles], sizeof dirs[0], "%s/tscope-test-modes-%s", tmp,
             with_handles ? "handles" : "ids");
}

/* Both modes compared, with the instance graph's cap at `cap` (0: the
 * default); returns the files compared. */
static int compare_modes(const char *cap)
{
    if (cap)
        setenv("TASKSCOPE_INSTANCE_CAP", cap, 1);
    run_apart(0);
    run_apart(1);
    unsetenv("TASKSCOPE_INSTANCE_CAP");
    int n = compare_tree("");
    ASSERT_EQ(count_tree(dirs[1]), n);
    ASSERT_GT(n, 8); /* profile.json, the CSVs, tree, DOTs, folded, Hatchet, TAU */
    return n;
}

int main(void)
{
    int n = compare_modes(NULL);
    /* a cap that leaves tasks out (on a level boundary: which tasks fill a
     * level the cap cuts through depends on the order tasks end): the
     * tasks each thread counted below a kept ancestor are cut off alike on
     * both ways */
    compare_modes("8");
    char path[400];
    snprintf(path, sizeof path, "%s/profile.json", dirs[1]);
    char *text = test_slurp(path);
    ASSERT(text != NULL);
    ASSERT(strstr(text, "\"instances\":8,\"instances_cut_off\":4,") != NULL);
    free(text);
    printf("test_modes: ok (%d files the same by ids and by handles, with and without a cap)\n", n);
    return 0;
}
