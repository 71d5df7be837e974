/* tasktree.c - bundled example: a parallel merge sort over a small pthread
 * task pool, instrumented with taskscope.
 *
 * Tasks: "sort" (splittable, recursive, with its depth) creates two child
 * sorts and a "merge"; below a cut-off a "leaf_sort" (processable) sorts
 * directly; a final "verify" task checks the result.  A task that waits for
 * its children yields and helps run queued tasks meanwhile (like OpenMP's
 * taskwait), then resumes.  Counter "queue_length" is sampled at each push.
 *
 * usage: tasktree [elements (default 2000000)] [threads (default 2)]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <taskscope/taskscope.h>

#define LEAF 4096

struct job {
    struct job *next;
    uint64_t id;
    int *a, *tmp;
    size_t n;
    unsigned depth;
    int *done; /* set to 1 when finished (guarded by the pool lock) */
};

static struct {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    struct job *head;
    size_t length;
    int stop;
} pool = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, 0, 0};

static tscope_type_t t_sort, t_leaf, t_merge, t_verify;
static tscope_counter_t c_queue;

static void run_job(struct job *j);

static void push(struct job *j)
{
    tscope_task_queued(j->id); /* before another thread can begin it */
    pthread_mutex_lock(&pool.lock);
    j->next = pool.head;
    pool.head = j;
    pool.length++;
    tscope_counter_sample(c_queue, (double)pool.length);
    pthread_cond_signal(&pool.cond);
    pthread_mutex_unlock(&pool.lock);
}

/* Takes a job without waiting; NULL when the queue is empty. */
static struct job *try_pop(void)
{
    pthread_mutex_lock(&pool.lock);
    struct job *j = pool.head;
    if (j) {
        pool.head = j->next;
        pool.length--;
    }
    pthread_mutex_unlock(&pool.lock);
    return j;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static void merge(int *a, int *tmp, size_t n)
{
    size_t h = n / 2, i = 0, k = h, o = 0;
    while (i < h && k < n)
        tmp[o++] = a[i] <= a[k] ? a[i++] : a[k++];
    while (i < h)
        tmp[o++] = a[i++];
    while (k < n)
        tmp[o++] = a[k++];
    memcpy(a, tmp, n * sizeof *a);
}

/* Waits for *done while running other queued jobs; the waiting task is
 * reported as yielded meanwhile. */
static void wait_for(uint64_t self, int *done)
{
    tscope_task_yield(self);
    for (;;) {
        pthread_mutex_lock(&pool.lock);
        int finished = done[0] && done[1];
        pthread_mutex_unlock(&pool.lock);
        if (finished)
            break;
        struct job *j = try_pop();
        if (j)
            run_job(j);
        else
            sched_yield();
    }
    tscope_task_resume(self);
}

static void run_job(struct job *j)
{
    tscope_task_begin(j->id, 0);
    if (j->n <= LEAF) {
        /* the leaf's work is a task of its own type, nested in this one */
        uint64_t leaf = tscope_task_id_next();
        tscope_task_create(leaf, j->id, t_leaf, TSCOPE_TASK_PROCESSABLE, j->depth + 1, 0);
        tscope_task_begin(leaf, 0);
        qsort(j->a, j->n, sizeof *j->a, cmp_int);
        tscope_task_end(leaf);
    } else {
        size_t h = j->n / 2;
        int done[2] = {0, 0};
        struct job *kids = malloc(2 * sizeof *kids);
        for (int k = 0; k < 2; k++) {
            kids[k] = (struct job){NULL,
                                   tscope_task_id_next(),
                                   j->a + (k ? h : 0),
                                   j->tmp + (k ? h : 0),
                                   k ? j->n - h : h,
                                   j->depth + 1,
                                   &done[k]};
            tscope_task_create(kids[k].id, j->id, t_sort, TSCOPE_TASK_SPLITTABLE, j->depth + 1, 0);
            push(&kids[k]);
        }
        wait_for(j->id, done);
        free(kids);
        uint64_t m = tscope_task_id_next();
        tscope_task_create(m, j->id, t_merge, 0, j->depth + 1, 0);
        tscope_task_begin(m, 0);
        merge(j->a, j->tmp, j->n);
        tscope_task_end(m);
    }
    tscope_task_end(j->id);
    pthread_mutex_lock(&pool.lock);
    if (j->done)
        *j->done = 1;
    pthread_mutex_unlock(&pool.lock);
}

static void *worker(void *arg)
{
    (void)arg;
    tscope_thread_register("worker");
    pthread_mutex_lock(&pool.lock);
    while (!pool.stop) {
        struct job *j = pool.head;
        if (!j) {
            pthread_cond_wait(&pool.cond, &pool.lock);
            continue;
        }
        pool.head = j->next;
        pool.length--;
        pthread_mutex_unlock(&pool.lock);
        run_job(j);
        pthread_mutex_lock(&pool.lock);
    }
    pthread_mutex_unlock(&pool.lock);
    return NULL;
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 2000000;
    int threads = argc > 2 ? atoi(argv[2]) : 2;
    if (n < 2 || threads < 1 || threads > 256) {
        fprintf(stderr, "usage: tasktree [elements >= 2] [threads 1..256]\n");
        return 2;
    }
    int rc = tscope_init(0, 1);
    if (rc)
        fprintf(stderr, "tasktree: tscope_init: %s (running unmeasured)\n", tscope_strerror(rc));
    tscope_type_register("sort", &t_sort);
    tscope_type_register("leaf_sort", &t_leaf);
    tscope_type_register("merge", &t_merge);
    tscope_type_register("verify", &t_verify);
    tscope_counter_register("queue_length", &c_queue);

    int *a = malloc(n * sizeof *a), *tmp = malloc(n * sizeof *tmp);
    if (!a || !tmp)
        return 1;
    srand(42);
    for (size_t i = 0; i < n; i++)
        a[i] = rand();

    pthread_t *tid = malloc((size_t)threads * sizeof *tid);
    for (int i = 1; i < threads; i++) /* the main thread is a worker too */
        pthread_create(&tid[i], NULL, worker, NULL);

    int done[2] = {0, 1};
    struct job root = {NULL, tscope_task_id_next(), a, tmp, n, 0, &done[0]};
    tscope_task_create(root.id, 0, t_sort, TSCOPE_TASK_SPLITTABLE, 0, 0);
    run_job(&root);

    pthread_mutex_lock(&pool.lock);
    pool.stop = 1;
    pthread_cond_broadcast(&pool.cond);
    pthread_mutex_unlock(&pool.lock);
    for (int i = 1; i < threads; i++)
        pthread_join(tid[i], NULL);

    uint64_t v = tscope_task_id_next();
    tscope_task_create(v, 0, t_verify, 0, 0, 0);
    tscope_task_begin(v, 0);
    size_t bad = 0;
    for (size_t i = 1; i < n; i++)
        bad += a[i - 1] > a[i];
    tscope_task_end(v);
    printf("tasktree: sorted %zu integers with %d threads: %s\n", n, threads,
           bad ? "WRONG ORDER" : "ok");
    free(tid);
    free(a);
    free(tmp);
    tscope_finalize();
    return bad != 0;
}
