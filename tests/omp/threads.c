/* threads.c - a plain pthread program for the pthread adapter test: main
 * starts a spawner (which starts 2 workers) and 2 workers; it prints and
 * exits with status 3, which `taskscope run` must pass on. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static void *work(void *n)
{
    volatile long s = 0;
    for (long i = 0; i < (long)n; i++)
        s += i;
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

int main(int argc, char **argv)
{
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
