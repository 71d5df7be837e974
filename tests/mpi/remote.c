/* remote.c - an MPI program that reports remote dependencies as a runtime
 * like DASH does (for test_mpi.sh): on every rank a task "produce", then a
 * task "consume" that waits for the produce task of the rank to its left
 * (tscope_dep_remote, direction in); rank 0 also consumes twice from its
 * right with direction out ("consume_out"); rank r > 0 runs r tasks of a
 * type of its own ("only on rank r").  The MPI adapter starts and ends
 * measurement. */
#include <mpi.h>
#include <stdio.h>
#include <taskscope/taskscope.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int rc = tscope_init(rank, size); /* the MPI adapter started it already */
    if (rc && rc != TSCOPE_ESTATE) {
        fprintf(stderr, "tscope_init: %s\n", tscope_strerror(rc));
        return 1;
    }
    tscope_type_t produce, consume, consume_out;
    tscope_type_register("produce", &produce);
    tscope_type_register("consume", &consume);
    tscope_type_register("consume_out", &consume_out);
    uint64_t mine = tscope_task_id_next(), left_id = 0, right_id = 0;
    tscope_task_start(mine, produce);
    tscope_task_end(mine);
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    MPI_Sendrecv(&mine, 1, MPI_UINT64_T, right, 0, &left_id, 1, MPI_UINT64_T, left, 0,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Sendrecv(&mine, 1, MPI_UINT64_T, left, 1, &right_id, 1, MPI_UINT64_T, right, 1,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    static double cell;
    uint64_t c = tscope_task_id_next();
    tscope_task_start(c, consume);
    tscope_dep_remote(left_id, left, c, rank, &cell, TSCOPE_DEP_IN);
    tscope_task_end(c);
    for (int i = 0; rank == 0 && i < 2; i++) {
        uint64_t o = tscope_task_id_next();
        tscope_task_start(o, consume_out);
        tscope_dep_remote(right_id, right, o, rank, &cell, TSCOPE_DEP_OUT);
        tscope_task_end(o);
    }
    /* the ranks' type names differ: the global view agrees on all of them */
    if (rank > 0) {
        char name[32];
        tscope_type_t only;
        snprintf(name, sizeof name, "only on rank %d", rank);
        tscope_type_register(name, &only);
        for (int i = 0; i < rank; i++) {
            uint64_t o = tscope_task_id_next();
            tscope_task_start(o, only);
            tscope_task_end(o);
        }
    }
    printf("rank %d consumed from %d\n", rank, left);
    MPI_Finalize();
    return 0;
}
