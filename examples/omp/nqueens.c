/* nqueens.c - counts the solutions of the N-queens problem with one OpenMP
 * task per partial placement (the BOTS search pattern); counts its own
 * tasks so that a profile can be checked against it.
 *
 *   usage: nqueens [N] [CUTOFF]   (default 10, tasks down to row CUTOFF=N)
 *   prints: N queens: S solutions, tasks T, threads P
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

static long tasks;
static int cutoff;

static int ok(const char *q, int row, int col)
{
    for (int r = 0; r < row; r++)
        if (q[r] == col || q[r] - col == row - r || col - q[r] == row - r)
            return 0;
    return 1;
}

static long solve(int n, int row, const char *q)
{
    if (row == n)
        return 1;
    long count[32] = {0};
    for (int col = 0; col < n; col++) {
        if (!ok(q, row, col))
            continue;
        if (row < cutoff) {
#pragma omp atomic
            tasks++;
#pragma omp task shared(count) firstprivate(col)
            {
                char next[32];
                for (int r = 0; r < row; r++)
                    next[r] = q[r];
                next[row] = (char)col;
                count[col] = solve(n, row + 1, next);
            }
        } else {
            char next[32];
            for (int r = 0; r < row; r++)
                next[r] = q[r];
            next[row] = (char)col;
            count[col] = solve(n, row + 1, next);
        }
    }
#pragma omp taskwait
    long sum = 0;
    for (int col = 0; col < n; col++)
        sum += count[col];
    return sum;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 10;
    cutoff = argc > 2 ? atoi(argv[2]) : n;
    if (n < 1 || n > 16) {
        fprintf(stderr, "nqueens: N must be 1..16\n");
        return 2;
    }
    long solutions = 0;
    int threads = 0;
#pragma omp parallel
#pragma omp single
    {
        threads = omp_get_num_threads();
        char q[32];
        solutions = solve(n, 0, q);
    }
    printf("%d queens: %ld solutions, tasks %ld, threads %d\n", n, solutions, tasks, threads);
    return 0;
}
