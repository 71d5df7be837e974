/* mpicases.c - MPI programs for test_mpi.sh, unmodified (no taskscope
 * call): each mode prints what it sent and received, so that the test can
 * hold the profiles to the program's own counts.
 *   mpicases ring N BYTES   N rounds: send BYTES to rank+1, receive from
 *                           rank-1 (MPI_Sendrecv), then N more as
 *                           MPI_Isend/MPI_Irecv/MPI_Waitall
 *   mpicases alltoall N     MPI_Alltoall of N ints per peer, then a
 *                           MPI_Bcast of N ints from rank 0
 *   mpicases rooted         MPI_Gather of 100 ints to rank 1, then MPI_Scatterv
 *                           from rank 2 of 10 x (i + 1) ints to rank i
 *   mpicases subcomm        even and odd ranks in communicators of their own
 *                           (MPI_Comm_split): an MPI_Alltoall of 100 ints in
 *                           each, and 8 bytes from its rank 0 to its rank 1
 *   mpicases work MS        busy MS x (rank + 1) milliseconds, then a barrier
 *   mpicases recv MS        rank 0 busy MS milliseconds, then MPI_Send to rank 1,
 *                           which waits for it in MPI_Recv
 *   mpicases abort          rank 1 calls MPI_Abort after some work; the
 *                           others wait in a barrier */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void busy(double ms)
{
    double end = now() + ms * 1e-3;
    volatile double x = 0;
    while (now() < end)
        x += 1;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *mode = argc > 1 ? argv[1] : "ring";
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    if (!strcmp(mode, "ring")) {
        int n = argc > 2 ? atoi(argv[2]) : 10, bytes = argc > 3 ? atoi(argv[3]) : 1000;
        char *out = calloc((size_t)bytes + 1, 1), *in = calloc((size_t)bytes + 1, 1);
        for (int i = 0; i < n; i++)
            MPI_Sendrecv(out, bytes, MPI_BYTE, right, i, in, bytes, MPI_BYTE, left, i,
                         MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 0; i < n; i++) {
            MPI_Request r[2];
            MPI_Irecv(in, bytes, MPI_BYTE, left, 100 + i, MPI_COMM_WORLD, &r[0]);
            MPI_Isend(out, bytes, MPI_BYTE, right, 100 + i, MPI_COMM_WORLD, &r[1]);
            MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
        }
        printf("rank %d sent %d messages of %d bytes to %d, received %d from %d\n", rank, 2 * n,
               bytes, right, 2 * n, left);
        free(out);
        free(in);
    } else if (!strcmp(mode, "alltoall")) {
        int n = argc > 2 ? atoi(argv[2]) : 100;
        int *s = calloc((size_t)n * size, sizeof *s), *r = calloc((size_t)n * size, sizeof *r);
        MPI_Alltoall(s, n, MPI_INT, r, n, MPI_INT, MPI_COMM_WORLD);
        MPI_Bcast(s, n, MPI_INT, 0, MPI_COMM_WORLD);
        printf("rank %d alltoall %d bytes per peer, bcast %d bytes\n", rank, n * (int)sizeof(int),
               n * (int)sizeof(int));
        free(s);
        free(r);
    } else if (!strcmp(mode, "rooted")) {
        int s[100] = {0}, *all = calloc((size_t)size * 100, sizeof *all);
        MPI_Gather(s, 100, MPI_INT, all, 100, MPI_INT, 1, MPI_COMM_WORLD);
        int *counts = calloc((size_t)size, sizeof *counts),
            *displs = calloc((size_t)size, sizeof *displs);
        for (int i = 0, at = 0; i < size; i++) {
            counts[i] = 10 * (i + 1);
            displs[i] = at;
            at += counts[i];
        }
        int *r = calloc((size_t)10 * (rank + 1), sizeof *r);
        MPI_Scatterv(all, counts, displs, MPI_INT, r, 10 * (rank + 1), MPI_INT, 2, MPI_COMM_WORLD);
        printf("rank %d rooted\n", rank);
        free(all);
        free(counts);
        free(displs);
        free(r);
    } else if (!strcmp(mode, "subcomm")) {
        MPI_Comm half;
        MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
        int hr, hn;
        MPI_Comm_rank(half, &hr);
        MPI_Comm_size(half, &hn);
        int *s = calloc((size_t)hn * 100, sizeof *s), *r = calloc((size_t)hn * 100, sizeof *r);
        MPI_Alltoall(s, 100, MPI_INT, r, 100, MPI_INT, half);
        double x = 1;
        if (hr == 0 && hn > 1)
            MPI_Send(&x, 1, MPI_DOUBLE, 1, 5, half);
        else if (hr == 1)
            MPI_Recv(&x, 1, MPI_DOUBLE, 0, 5, half, MPI_STATUS_IGNORE);
        printf("rank %d is %d of %d in its half\n", rank, hr, hn);
        free(s);
        free(r);
        MPI_Comm_free(&half);
    } else if (!strcmp(mode, "work")) {
        busy((argc > 2 ? atof(argv[2]) : 20) * (rank + 1));
        MPI_Barrier(MPI_COMM_WORLD);
        printf("rank %d worked\n", rank);
    } else if (!strcmp(mode, "recv")) {
        /* rank 0 computes while rank 1 waits for it in MPI_Recv */
        double x = 1;
        if (rank == 0) {
            busy(argc > 2 ? atof(argv[2]) : 200);
            MPI_Send(&x, 1, MPI_DOUBLE, 1, 7, MPI_COMM_WORLD);
        } else if (rank == 1) {
            MPI_Recv(&x, 1, MPI_DOUBLE, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        printf("rank %d done\n", rank);
    } else if (!strcmp(mode, "abort")) {
        busy(20);
        if (rank == 1) {
            fprintf(stderr, "rank 1 aborts\n");
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
