/* stencil.c - a task-parallel 1-D Jacobi stencil with halo exchange: an
 * unmodified MPI + OpenMP program (no taskscope call), the example of
 * docs/mpi.md and the program of `scripts/bench mpi`.
 *
 * Each rank owns CELLS cells in BLOCKS blocks.  An iteration exchanges one
 * halo cell with each neighbour (MPI_Irecv, MPI_Isend, MPI_Waitall), then
 * updates its blocks as OpenMP tasks, one per block; every 10 iterations
 * the ranks agree on the residual (MPI_Allreduce).  Rank r's blocks cost
 * (1 + r * SKEW) times the work, so that SKEW > 0 makes the ranks unequal.
 *
 *   usage: stencil [CELLS [ITERATIONS [BLOCKS [SKEW]]]]
 *          (defaults 200000 50 16 0)
 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static void update(const double *in, double *out, long lo, long hi, int reps)
{
    for (int k = 0; k < reps; k++)
        for (long i = lo; i < hi; i++)
            out[i] = 0.5 * in[i] + 0.25 * (in[i - 1] + in[i + 1]);
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long cells = argc > 1 ? atol(argv[1]) : 200000;
    int iters = argc > 2 ? atoi(argv[2]) : 50;
    int blocks = argc > 3 ? atoi(argv[3]) : 16;
    double skew = argc > 4 ? atof(argv[4]) : 0;
    if (cells < blocks || iters < 1 || blocks < 1) {
        if (rank == 0)
            fprintf(stderr, "usage: stencil [CELLS [ITERATIONS [BLOCKS [SKEW]]]]\n");
        MPI_Finalize();
        return 2;
    }
    int reps = (int)lround(1 + rank * skew);
    /* cells 1..cells are the rank's, 0 and cells + 1 the halo */
    double *a = calloc((size_t)cells + 2, sizeof *a), *b = calloc((size_t)cells + 2, sizeof *b);
    for (long i = 1; i <= cells; i++)
        a[i] = (double)((rank * cells + i) % 97);
    int left = rank > 0 ? rank - 1 : MPI_PROC_NULL,
        right = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;
    double t0 = MPI_Wtime(), residual = 0;
#pragma omp parallel
#pragma omp single
    for (int it = 0; it < iters; it++) {
        MPI_Request req[4];
        MPI_Irecv(&a[0], 1, MPI_DOUBLE, left, 0, MPI_COMM_WORLD, &req[0]);
        MPI_Irecv(&a[cells + 1], 1, MPI_DOUBLE, right, 1, MPI_COMM_WORLD, &req[1]);
        MPI_Isend(&a[1], 1, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, &req[2]);
        MPI_Isend(&a[cells], 1, MPI_DOUBLE, right, 0, MPI_COMM_WORLD, &req[3]);
        MPI_Waitall(4, req, MPI_STATUSES_IGNORE);
        long per = cells / blocks;
        for (int k = 0; k < blocks; k++) {
            long lo = 1 + k * per, hi = k == blocks - 1 ? cells + 1 : lo + per;
#pragma omp task firstprivate(lo, hi)
            update(a, b, lo, hi, reps);
        }
#pragma omp taskwait
        double *t = a;
        a = b;
        b = t;
        if (it % 10 == 9 || it == iters - 1) {
            double local = 0;
            for (long i = 1; i <= cells; i++)
                local += fabs(a[i] - b[i]);
            MPI_Allreduce(&local, &residual, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        }
    }
    double t = MPI_Wtime() - t0;
    if (rank == 0)
        printf("stencil: %d ranks x %ld cells, %d iterations: residual %.6g, %.3f s\n", size, cells,
               iters, residual, t);
    free(a);
    free(b);
    MPI_Finalize();
    return 0;
}
