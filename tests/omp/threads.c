/* threads.c - a plain pthread program for the pthread adapter test: main
 * starts a spawner (which starts 2 workers) and 2 workers; it prints and
 * exits with status 3, which `taskscope run` must pass on.
 *   threads N       N short threads one after another
 *   threads waits   a thread waits ~50 ms for a mutex, then ~50 ms on a
 *                   condition variable */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void *work(void *n)
{
    volatile long s = 0;
    for (long i = 0; i < (long)n; i++)
        s += i;
    (void)s;
    return NULL;
}

static void *spawner(void *arg)
{
    (void)arg;
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, work, (void *)100000L);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    pthread_exit(NULL); /* ends the task too */
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ready = PTHREAD_COND_INITIALIZER;
static int signalled;

static void sleep_ms(long ms)
{
    struct timespec t = {0, ms * 1000000L};
    nanosleep(&t, NULL);
}

static void *waiter(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&lock); /* held by main for ~50 ms */
    while (!signalled)
        pthread_cond_wait(&ready, &lock); /* signalled ~50 ms later */
    pthread_mutex_unlock(&lock);
    return NULL;
}

static int waits(void)
{
    pthread_t t;
    pthread_mutex_lock(&lock);
    pthread_create(&t, NULL, waiter, NULL);
    sleep_ms(50);
    pthread_mutex_unlock(&lock);
    sleep_ms(50);
    pthread_mutex_lock(&lock);
    signalled = 1;
    pthread_cond_signal(&ready);
    pthread_mutex_unlock(&lock);
    pthread_join(t, NULL);
    printf("waits done\n");
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "waits"))
        return waits();
    int many = argc > 1 ? atoi(argv[1]) : 0;
    if (many) { /* many short threads, one after another */
        for (int i = 0; i < many; i++) {
            pthread_t t;
            if (pthread_create(&t, NULL, work, (void *)10L) == 0)
                pthread_join(t, NULL);
        }
        printf("threads %d\n", many);
        return 0;
    }
    pthread_t t[3];
    pthread_create(&t[0], NULL, spawner, NULL);
    for (int i = 1; i < 3; i++)
        pthread_create(&t[i], NULL, work, (void *)200000L);
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    printf("threads done\n");
    return 3;
}
