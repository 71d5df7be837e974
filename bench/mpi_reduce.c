/* mpi_reduce.c - the program of `scripts/bench mpi` (bench/mpi.sh) for what
 * the global view of an MPI job costs apart from measuring: it owns the
 * reduce_* results (the finalize reduction, tscope_finalize_global, alone,
 * over MPI collectives of its own) and the rank folders that the merge_*
 * results feed to `taskscope merge`.
 *
 *   usage: mpi_reduce [TYPES [TASKS]]   (under mpirun; defaults 100 100)
 *            every rank runs TASKS tasks of each of TYPES types ("type-K")
 *            and a few messages to the next rank, finalizes its own profile
 *            (set TASKSCOPE_OUTPUTS=none TASKSCOPE_SUMMARY=0 to write
 *            nothing), then times tscope_finalize_global; rank 0 prints the
 *            slowest rank's seconds.
 *          mpi_reduce folders N DIR
 *            no MPI at run time (MPI_Init is never called): one process
 *            plays ranks 0..N-1 in turn, each with 50 types and
 *            rank-dependent counts, and writes DIR/rank-R/profile.json. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "taskscope/taskscope.h"

struct mpi_ctx {
    MPI_Comm comm;
    int rank, size;
};

static int c_bcast(void *ctx, void *buf, size_t bytes, int root)
{
    struct mpi_ctx *m = ctx;
    return bytes > INT32_MAX || MPI_Bcast(buf, (int)bytes, MPI_BYTE, root, m->comm) != MPI_SUCCESS;
}

static int c_reduce(void *ctx, const int64_t *in, int64_t *out, size_t n, tscope_reduce_op_t op,
                    int root)
{
    struct mpi_ctx *m = ctx;
    MPI_Op o = op == TSCOPE_REDUCE_MIN ? MPI_MIN : op == TSCOPE_REDUCE_MAX ? MPI_MAX : MPI_SUM;
    return n > INT32_MAX ||
           MPI_Reduce(in, out, (int)n, MPI_INT64_T, o, root, m->comm) != MPI_SUCCESS;
}

/* counts are only read at root; a root that cannot build the int counts
 * still takes part (receiving nothing) and reports the failure */
static int c_gatherv(void *ctx, const void *in, size_t bytes, void *out, const size_t *counts,
                     int root)
{
    struct mpi_ctx *m = ctx;
    int *c = NULL, *d = NULL, bad = bytes > INT32_MAX;
    if (m->rank == root) {
        c = malloc(sizeof *c * (size_t)m->size);
        d = malloc(sizeof *d * (size_t)m->size);
        size_t at = 0;
        for (int i = 0; c && d && i < m->size; i++) {
            if (counts[i] > INT32_MAX || at > INT32_MAX) {
                bad = 1;
                break;
            }
            c[i] = (int)counts[i];
            d[i] = (int)at;
            at += counts[i];
        }
        if (!c || !d || bad) {
            free(c);
            free(d);
            c = d = NULL;
            bad = 1;
        }
    }
    static int zero;
    int rc = MPI_Gatherv(in, bytes > INT32_MAX ? 0 : (int)bytes, MPI_BYTE, out, c ? c : &zero,
                         d ? d : &zero, MPI_BYTE, root, m->comm);
    free(c);
    free(d);
    return bad || rc != MPI_SUCCESS;
}

/* types types of `tasks` tasks each (rank_dependent: from tasks / 2 to
 * tasks * 3 / 2, by rank and type), and 4 messages to the next rank and
 * from the previous one; 0 or the first error */
static int workload(int rank, int nranks, int types, int tasks, int rank_dependent)
{
    for (int k = 0; k < types; k++) {
        char name[32];
        tscope_type_t t;
        snprintf(name, sizeof name, "type-%d", k);
        int rc = tscope_type_register(name, &t);
        if (rc)
            return rc;
        int n = rank_dependent ? tasks / 2 + (rank * 7 + k * 13) % (tasks + 1) : tasks;
        for (int i = 0; i < n; i++) {
            uint64_t id = tscope_task_id_next();
            if ((rc = tscope_task_start(id, t)) || (rc = tscope_task_end(id)))
                return rc;
        }
    }
    int next = (rank + 1) % nranks, prev = (rank + nranks - 1) % nranks;
    for (int i = 0; i < 4; i++) {
        uint64_t bytes = 1024u * (uint64_t)(1 + i + rank % 5);
        int rc = tscope_message(next, bytes, i, TSCOPE_MSG_SEND);
        if (!rc)
            rc = tscope_message(prev, bytes, i, TSCOPE_MSG_RECV);
        if (rc)
            return rc;
    }
    return 0;
}

static int folders(int n, const char *dir)
{
    setenv("TASKSCOPE_OUTPUT_DIR", dir, 1);
    setenv("TASKSCOPE_OUTPUTS", "json", 1);
    setenv("TASKSCOPE_SUMMARY", "0", 1);
    setenv("TASKSCOPE_SAMPLE_MS", "0", 1);
    setenv("TASKSCOPE_QUIET", "1", 1);
    for (int r = 0; r < n; r++) {
        int rc = tscope_init(r, n);
        if (!rc)
            rc = workload(r, n, 50, 20, 1);
        int frc = tscope_finalize();
        if (rc || frc) {
            fprintf(stderr, "mpi_reduce: rank %d of %d: %s\n", r, n,
                    tscope_strerror(rc ? rc : frc));
            return 1;
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "folders") == 0) {
        int n = argc == 4 ? atoi(argv[2]) : 0;
        if (n < 2 || n > 65535) {
            fprintf(stderr, "usage: mpi_reduce folders N DIR   (N from 2 to 65535)\n");
            return 2;
        }
        return folders(n, argv[3]);
    }
    MPI_Init(&argc, &argv);
    struct mpi_ctx m = {.comm = MPI_COMM_WORLD};
    MPI_Comm_rank(m.comm, &m.rank);
    MPI_Comm_size(m.comm, &m.size);
    int types = argc > 1 ? atoi(argv[1]) : 100, tasks = argc > 2 ? atoi(argv[2]) : 100;
    if (types < 1 || tasks < 1) {
        if (m.rank == 0)
            fprintf(stderr, "usage: mpi_reduce [TYPES [TASKS]] | mpi_reduce folders N DIR\n");
        MPI_Finalize();
        return 2;
    }
    int rc = tscope_init(m.rank, m.size);
    if (!rc)
        rc = workload(m.rank, m.size, types, tasks, 0);
    if (!rc)
        rc = tscope_finalize();
    if (rc) {
        fprintf(stderr, "mpi_reduce: rank %d: %s\n", m.rank, tscope_strerror(rc));
        MPI_Abort(m.comm, 1);
    }
    tscope_comm_t comm = {
        .struct_size = sizeof comm,
        .ctx = &m,
        .rank = m.rank,
        .size = m.size,
        .bcast = c_bcast,
        .reduce = c_reduce,
        .gatherv = c_gatherv,
    };
    MPI_Barrier(m.comm);
    double t0 = MPI_Wtime();
    rc = tscope_finalize_global(&comm);
    double t = MPI_Wtime() - t0, tmax = 0;
    int bad = rc != 0, anybad = 0;
    MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, m.comm);
    MPI_Reduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, 0, m.comm);
    if (rc)
        fprintf(stderr, "mpi_reduce: rank %d: tscope_finalize_global: %s\n", m.rank,
                tscope_strerror(rc));
    if (m.rank == 0 && !anybad)
        printf("%.9f\n", tmax);
    MPI_Finalize();
    return anybad;
}
