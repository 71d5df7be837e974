/* cases.c - OpenMP programs whose profile is known, for test_adapters.sh.
 *
 *   cases deps        a chain, a diamond, WAR and WAW on depend clauses
 *   cases twoparents  two implicit tasks whose tasks depend on one address
 *                     at the same time: each chain A->B->C is its own
 *   cases untied N    N untied tasks that yield and may migrate
 *   cases generator P K  one untied task creating K untied leaves per phase, P phases
 *                        with a taskwait each (it resumes where a thread is free)
 *   cases tree D K    untied tasks in a tree D levels deep, K children each, every
 *                     task waiting for its children (BOTS health's shape: an
 *                     untied task's final part, run by another thread, often
 *                     returns before the part that queued it)
 *   cases nested      a parallel region of 2 inside one of 2
 *   cases numthreads  regions of 1, 3 and 2 threads (omp_set_num_threads)
 *   cases taskloop    a taskloop of 100 iterations in tasks of 10
 *   cases bigtaskloop two taskloops of 1,000 iterations in tasks of 10 at
 *                     4 threads (libomp splits them recursively: tasks that
 *                     make the chunk tasks on other threads)
 *   cases fork        deps, then a child process runs deps, then deps again
 *   cases exit        exit(5) from inside a task
 *   cases abort       abort() from inside a task
 *   cases _exit       _exit(6) from inside a task (no atexit handler, no
 *                     signal: the outputs come from the crash journal)
 *   cases count FILE  tasks in batches of 64 with a taskwait each, until it is
 *                     killed; the tasks known to have ended (counted after
 *                     each taskwait) written into FILE every 10 ms (aside,
 *                     then renamed)
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile long sink;

static void work(long n)
{
    for (long i = 0; i < n; i++)
        sink += i;
}

static void deps(void)
{
    int x = 0, y = 0, e = 0, f = 0;
#pragma omp parallel num_threads(2)
#pragma omp single
    {
#pragma omp task depend(out : x) /* A */
        x = 1;
#pragma omp task depend(inout : x) /* B: A->B RAW */
        x++;
#pragma omp task depend(in : x) /* C: B->C RAW */
        work(x);
#pragma omp task depend(out : y) /* D */
        y = 2;
#pragma omp task depend(in : y) depend(out : e) /* E: D->E RAW */
        e = y;
#pragma omp task depend(in : y) depend(out : f) /* F: D->F RAW */
        f = y;
#pragma omp task depend(in : e, f) /* G: E->G RAW, F->G RAW */
        work(e + f);
#pragma omp task depend(out : y) /* H: E->H WAR, F->H WAR */
        y = 3;
#pragma omp task depend(out : y) /* I: H->I WAW */
        y = 4;
#pragma omp task depend(out : x) /* J: C->J WAR */
        x = 5;
    }
    printf("deps x=%d y=%d\n", x, y);
}

static void untied(int n)
{
    long done = 0;
#pragma omp parallel
#pragma omp single
    for (int i = 0; i < n; i++) {
#pragma omp task untied shared(done)
        {
            work(1000);
#pragma omp task
            work(2000);
#pragma omp taskyield
            work(1000);
#pragma omp taskwait
#pragma omp atomic
            done++;
        }
    }
    printf("untied %ld of %d\n", done, n);
}

static void generator(int phases, int per_phase)
{
    long leaves = 0;
#pragma omp parallel
#pragma omp single nowait
#pragma omp task untied shared(leaves)
    {
        for (int p = 0; p < phases; p++) {
            for (int i = 0; i < per_phase; i++) {
#pragma omp task untied shared(leaves)
                {
                    work(3000);
#pragma omp atomic
                    leaves++;
                }
            }
#pragma omp taskwait
        }
    }
    printf("generator %ld of %d\n", leaves, phases * per_phase);
}

static long tree_node(int depth, int fanout)
{
    long below = 0;
    work(100);
    if (depth > 1) {
        for (int i = 0; i < fanout; i++) {
#pragma omp task untied shared(below)
            {
                long n = tree_node(depth - 1, fanout);
#pragma omp atomic
                below += n;
            }
        }
#pragma omp taskwait
    }
    work(100);
    return below + 1;
}

static void tree(int depth, int fanout)
{
    long nodes = 0;
#pragma omp parallel
#pragma omp single
    nodes = tree_node(depth, fanout);
    printf("tree %ld tasks\n", nodes - 1);
}

static void nested(void)
{
    omp_set_max_active_levels(2);
    int count = 0;
#pragma omp parallel num_threads(2)
#pragma omp parallel num_threads(2)
    {
#pragma omp atomic
        count++;
    }
    printf("nested %d\n", count);
}

static void numthreads(void)
{
    int total = 0;
    static const int teams[] = {1, 3, 2};
    for (int i = 0; i < 3; i++) {
        omp_set_num_threads(teams[i]);
#pragma omp parallel
        {
#pragma omp atomic
            total++;
        }
    }
    printf("numthreads %d\n", total);
}

static void taskloop(void)
{
    long sum = 0;
#pragma omp parallel num_threads(2)
#pragma omp single
#pragma omp taskloop grainsize(10) reduction(+ : sum)
    for (int i = 0; i < 100; i++)
        sum += i;
    printf("taskloop %ld\n", sum);
}

static void bigtaskloop(void)
{
    long sum = 0;
#pragma omp parallel num_threads(4)
#pragma omp single
    {
#pragma omp taskloop grainsize(10) reduction(+ : sum)
        for (int i = 0; i < 1000; i++)
            sum += i;
#pragma omp taskloop grainsize(10) reduction(+ : sum)
        for (int i = 0; i < 1000; i++)
            sum += 2 * i;
    }
    printf("bigtaskloop %ld\n", sum);
}

static int forked(void)
{
    deps();
    fflush(stdout);
    pid_t child = fork();
    if (child == 0) {
        deps();
        fflush(stdout);
        _exit(7);
    }
    int status = 0;
    waitpid(child, &status, 0);
    deps();
    printf("child exit %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return 0;
}

static void leave(int how)
{
#pragma omp parallel num_threads(2)
#pragma omp single
    {
#pragma omp task
        work(1000);
#pragma omp taskwait
#pragma omp task
        {
            fflush(stdout);
            if (how == 1)
                abort();
            if (how == 2)
                _exit(6); /* libc's: the privately loaded tool sees nothing */
            exit(5);
        }
    }
}

static void count(const char *file)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", file);
    printf("ready\n");
    fflush(stdout);
#pragma omp parallel
#pragma omp single
    {
        unsigned long long ended = 0;
        double next = omp_get_wtime();
        for (;;) {
            for (int i = 0; i < 64; i++) {
#pragma omp task
                work(50);
            }
#pragma omp taskwait
            ended += 64; /* their ends came before the taskwait returned */
            if (omp_get_wtime() >= next) {
                FILE *f = fopen(tmp, "w");
                if (f) {
                    fprintf(f, "%llu\n", ended);
                    if (fclose(f) == 0)
                        rename(tmp, file);
                }
                next = omp_get_wtime() + 0.01;
            }
        }
    }
}

/* Two implicit tasks create tasks with depend clauses on one address at
 * the same time (barriers make them take turns): OpenMP orders siblings
 * only, so each thread's B waits for its own A and its C for its B. */
static void twoparents(void)
{
    int x = 0;
#pragma omp parallel num_threads(2)
    {
#pragma omp task depend(out : x) /* A: this thread's first */
        work(1);
#pragma omp barrier
#pragma omp task depend(inout : x) /* B: this thread's A->B */
        work(1);
#pragma omp barrier
#pragma omp task depend(in : x) /* C: this thread's B->C */
        work(1);
    }
    printf("twoparents x=%d\n", x);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (!strcmp(mode, "deps"))
        deps();
    else if (!strcmp(mode, "twoparents"))
        twoparents();
    else if (!strcmp(mode, "untied"))
        untied(argc > 2 ? atoi(argv[2]) : 100);
    else if (!strcmp(mode, "generator"))
        generator(argc > 2 ? atoi(argv[2]) : 10, argc > 3 ? atoi(argv[3]) : 20);
    else if (!strcmp(mode, "tree"))
        tree(argc > 2 ? atoi(argv[2]) : 6, argc > 3 ? atoi(argv[3]) : 4);
    else if (!strcmp(mode, "nested"))
        nested();
    else if (!strcmp(mode, "numthreads"))
        numthreads();
    else if (!strcmp(mode, "taskloop"))
        taskloop();
    else if (!strcmp(mode, "bigtaskloop"))
        bigtaskloop();
    else if (!strcmp(mode, "fork"))
        forked();
    else if (!strcmp(mode, "count") && argc > 2)
        count(argv[2]);
    else if (!strcmp(mode, "exit") || !strcmp(mode, "abort") || !strcmp(mode, "_exit"))
        leave(!strcmp(mode, "abort") ? 1 : !strcmp(mode, "_exit") ? 2 : 0);
    else {
        fprintf(
            stderr,
            "usage: cases deps|untied [N]|generator [P K]|tree [D K]|nested|numthreads|taskloop|"
            "bigtaskloop|fork|exit|abort|_exit|count FILE\n");
        return 2;
    }
    return 0;
}
