/* mpi.c - the MPI adapter (libtaskscope-mpi.so): PMPI wrappers that give
 * taskscope the process's rank, time every MPI call as a task of its own
 * type ("MPI_Send", ...) nested under the task that calls it, count the
 * messages and bytes exchanged with each peer (tscope_message: a send when
 * posted, before the MPI call, a receive when it completes, so that a
 * trace's arrow goes forward in time), and at
 * MPI_Finalize reduce the ranks' profiles into the global view over MPI
 * itself (tscope_finalize_global, the collectives below).
 *
 * It is linked into a program (-ltaskscope-mpi before -lmpi), preloaded,
 * or put there by `taskscope run` for a program that links libmpi.  It
 * uses only the public API, as any outside tool would.
 *
 * Peers are ranks of MPI_COMM_WORLD (other communicators' ranks are
 * translated).  A receive counts when it completes (MPI_Recv, or the
 * MPI_Wait/Test call that completes an MPI_Irecv), with the size and
 * source from its status.  Collectives count what each rank logically
 * sends to and receives from each other rank (a broadcast: the root's
 * buffer to every other rank; an all-to-all: each block to its rank),
 * marked collective; MPI_Allreduce, MPI_Reduce_scatter(_block), MPI_Scan
 * and MPI_Exscan, whose traffic depends on the algorithm, count only their
 * bytes in a counter "MPI bytes: NAME".  Persistent and one-sided
 * operations, matched probes and receives (MPI_Mprobe, MPI_Mrecv),
 * non-blocking collectives and MPI-IO are not intercepted: their time stays
 * in the calling task (docs/mpi.md). */
#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lifecycle.h"
#include "taskscope/taskscope.h"

#define CALLS(X)                                                                                   \
    X(SEND, "MPI_Send")                                                                            \
    X(SSEND, "MPI_Ssend")                                                                          \
    X(BSEND, "MPI_Bsend")                                                                          \
    X(RSEND, "MPI_Rsend")                                                                          \
    X(ISEND, "MPI_Isend")                                                                          \
    X(ISSEND, "MPI_Issend")                                                                        \
    X(IBSEND, "MPI_Ibsend")                                                                        \
    X(IRSEND, "MPI_Irsend")                                                                        \
    X(RECV, "MPI_Recv")                                                                            \
    X(IRECV, "MPI_Irecv")                                                                          \
    X(SENDRECV, "MPI_Sendrecv")                                                                    \
    X(SENDRECV_REPLACE, "MPI_Sendrecv_replace")                                                    \
    X(PROBE, "MPI_Probe")                                                                          \
    X(WAIT, "MPI_Wait")                                                                            \
    X(WAITALL, "MPI_Waitall")                                                                      \
    X(WAITANY, "MPI_Waitany")                                                                      \
    X(WAITSOME, "MPI_Waitsome")                                                                    \
    X(TEST, "MPI_Test")                                                                            \
    X(TESTALL, "MPI_Testall")                                                                      \
    X(TESTANY, "MPI_Testany")                                                                      \
    X(TESTSOME, "MPI_Testsome")                                                                    \
    X(BARRIER, "MPI_Barrier")                                                                      \
    X(BCAST, "MPI_Bcast")                                                                          \
    X(REDUCE, "MPI_Reduce")                                                                        \
    X(ALLREDUCE, "MPI_Allreduce")                                                                  \
    X(GATHER, "MPI_Gather")                                                                        \
    X(GATHERV, "MPI_Gatherv")                                                                      \
    X(ALLGATHER, "MPI_Allgather")                                                                  \
    X(ALLGATHERV, "MPI_Allgatherv")                                                                \
    X(SCATTER, "MPI_Scatter")                                                                      \
    X(SCATTERV, "MPI_Scatterv")                                                                    \
    X(ALLTOALL, "MPI_Alltoall")                                                                    \
    X(ALLTOALLV, "MPI_Alltoallv")                                                                  \
    X(REDUCE_SCATTER, "MPI_Reduce_scatter")                                                        \
    X(REDUCE_SCATTER_BLOCK, "MPI_Reduce_scatter_block")                                            \
    X(SCAN, "MPI_Scan")                                                                            \
    X(EXSCAN, "MPI_Exscan")

enum call {
#define X(e, n) C_##e,
    CALLS(X)
#undef X
        NCALLS
};

static const char *const call_names[NCALLS] = {
#define X(e, n) n,
    CALLS(X)
#undef X
};

static tscope_type_t types[NCALLS];
static tscope_counter_t coll_bytes[NCALLS];
static int world_rank, world_size;
static MPI_Group world_group = MPI_GROUP_NULL;
static int mpi_up;  /* MPI_Init passed: this rank takes part in the global view */
static int started; /* and measuring started: the types are registered */
/* stopped at MPI_Finalize or MPI_Abort, which end measurement */
static struct tscope__adapter life = {.name = "MPI adapter"};

/* Started and not yet ended: MPI calls are measured. */
static inline int measuring(void)
{
    return started && !atomic_load_explicit(&life.stopped, memory_order_relaxed);
}

/* ---- timing ---------------------------------------------------------------- */

/* An MPI call as a task, through a handle: as each thread aggregates its
 * own tasks, it nests in the OpenMP task that makes the call like any other
 * task of that thread. */
static inline tscope_task_t *enter(enum call c)
{
    if (!measuring())
        return NULL;
    return tscope_task_start_h(tscope_task_id_next(), types[c]);
}

static inline void leave(tscope_task_t *task)
{
    if (task)
        tscope_task_end_h(task);
}

/* ---- peers and sizes ------------------------------------------------------- */

/* The MPI_COMM_WORLD rank of rank r of comm; -1 for MPI_PROC_NULL and
 * ranks that do not translate. */
/* The MPI_COMM_WORLD ranks of ranks r[0..n-1] of comm into w (-1: none). */
static void world_ranks(MPI_Comm comm, int n, const int *r, int *w)
{
    for (int i = 0; i < n; i++)
        w[i] = -1;
    int inter = 0;
    PMPI_Comm_test_inter(comm, &inter);
    MPI_Group g;
    if ((inter ? PMPI_Comm_remote_group(comm, &g) : PMPI_Comm_group(comm, &g)) != MPI_SUCCESS)
        return;
    PMPI_Group_translate_ranks(g, n, r, world_group, w);
    PMPI_Group_free(&g);
    for (int i = 0; i < n; i++)
        if (w[i] == MPI_UNDEFINED)
            w[i] = -1;
}

static int world_of(MPI_Comm comm, int r)
{
    if (r < 0 || r == MPI_PROC_NULL || r == MPI_ANY_SOURCE)
        return -1;
    if (comm == MPI_COMM_WORLD)
        return r;
    int w;
    world_ranks(comm, 1, &r, &w);
    return w;
}

static uint64_t bytes_of(int count, MPI_Datatype type)
{
    int size = 0;
    if (count <= 0 || type == MPI_DATATYPE_NULL || PMPI_Type_size(type, &size) != MPI_SUCCESS ||
        size < 0)
        return 0;
    return (uint64_t)count * (uint64_t)size;
}

static void message(MPI_Comm comm, int peer, uint64_t bytes, int tag, unsigned flags)
{
    if (!measuring())
        return;
    int w = world_of(comm, peer);
    if (w >= 0)
        tscope_message(w, bytes, tag, flags);
}

/* A completed receive, from its status. */
static void received(MPI_Comm comm, const MPI_Status *st)
{
    int cancelled = 0;
    PMPI_Test_cancelled(st, &cancelled);
    if (cancelled || st->MPI_SOURCE == MPI_PROC_NULL || st->MPI_SOURCE < 0)
        return;
    int n = 0;
    PMPI_Get_count(st, MPI_BYTE, &n);
    message(comm, st->MPI_SOURCE, n > 0 ? (uint64_t)n : 0, st->MPI_TAG, TSCOPE_MSG_RECV);
}

/* The ranks of comm other than the caller's, as peers of a collective: in
 * comm's order, so that per-rank counts (v variants) line up. */
static int comm_size(MPI_Comm comm)
{
    int n = 0, inter = 0;
    PMPI_Comm_test_inter(comm, &inter);
    if (inter)
        PMPI_Comm_remote_size(comm, &n);
    else
        PMPI_Comm_size(comm, &n);
    return n;
}

static int comm_rank(MPI_Comm comm)
{
    int r = 0;
    PMPI_Comm_rank(comm, &r);
    return r;
}

/* What the caller sends to (dir TSCOPE_MSG_SEND) or receives from every
 * other rank of comm: bytes[i] for rank i (or `each` when bytes is NULL). */
static void to_all(MPI_Comm comm, unsigned dir, uint64_t each, const uint64_t *bytes)
{
    if (!measuring())
        return;
    int n = comm_size(comm), me = comm_rank(comm);
    if (comm == MPI_COMM_WORLD) {
        for (int i = 0; i < n; i++)
            if (i != me)
                tscope_message(i, bytes ? bytes[i] : each, 0, dir | TSCOPE_MSG_COLLECTIVE);
        return;
    }
    /* another communicator: its ranks translated once, not per peer */
    int *r = malloc(2 * sizeof *r * (size_t)(n > 0 ? n : 1));
    if (!r)
        return;
    for (int i = 0; i < n; i++)
        r[i] = i;
    world_ranks(comm, n, r, r + n);
    for (int i = 0; i < n; i++)
        if (i != me && r[n + i] >= 0)
            tscope_message(r[n + i], bytes ? bytes[i] : each, 0, dir | TSCOPE_MSG_COLLECTIVE);
    free(r);
}

static void coll_counter(enum call c, uint64_t bytes)
{
    if (measuring() && coll_bytes[c])
        tscope_counter_sample(coll_bytes[c], (double)bytes);
}

/* ---- receive requests ------------------------------------------------------ */

/* The communicator of every open MPI_Irecv request, so that the call that
 * completes it can count the message: open addressing with tombstones,
 * rebuilt when live and deleted slots fill half of it (a lock for
 * MPI_THREAD_MULTIPLE programs).  An open request handle is unique. */
struct pending {
    MPI_Request req;
    MPI_Comm comm;
    int state; /* 0 empty, 1 open, 2 deleted */
};
static struct pending *pend;
static size_t pend_cap, pend_live, pend_dead;
static pthread_mutex_t pend_lock = PTHREAD_MUTEX_INITIALIZER;

static size_t req_hash(MPI_Request r)
{
    uint64_t h = 0;
    memcpy(&h, &r, sizeof r < sizeof h ? sizeof r : sizeof h);
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return (size_t)h;
}

static void pend_put_locked(MPI_Request r, MPI_Comm comm)
{
    size_t i = req_hash(r) & (pend_cap - 1);
    while (pend[i].state == 1)
        i = (i + 1) & (pend_cap - 1);
    if (pend[i].state == 2)
        pend_dead--;
    pend[i] = (struct pending){r, comm, 1};
    pend_live++;
}

static void pend_add(MPI_Request r, MPI_Comm comm)
{
    pthread_mutex_lock(&pend_lock);
    if ((pend_live + pend_dead + 1) * 2 > pend_cap) {
        size_t old_cap = pend_cap;
        struct pending *old = pend;
        size_t cap = old_cap ? old_cap : 256;
        while ((pend_live + 1) * 4 > cap)
            cap *= 2;
        struct pending *p = calloc(cap, sizeof *p);
        if (!p) {
            pthread_mutex_unlock(&pend_lock);
            return; /* this receive goes uncounted */
        }
        pend = p;
        pend_cap = cap;
        pend_live = pend_dead = 0;
        for (size_t i = 0; i < old_cap; i++)
            if (old[i].state == 1)
                pend_put_locked(old[i].req, old[i].comm);
        free(old);
    }
    pend_put_locked(r, comm);
    pthread_mutex_unlock(&pend_lock);
}

/* Removes r; 1 with its communicator when it was an open receive. */
static int pend_take(MPI_Request r, MPI_Comm *comm)
{
    int found = 0;
    pthread_mutex_lock(&pend_lock);
    for (size_t i = pend_live ? req_hash(r) & (pend_cap - 1) : 0; pend_live && pend[i].state;
         i = (i + 1) & (pend_cap - 1))
        if (pend[i].state == 1 && memcmp(&pend[i].req, &r, sizeof r) == 0) {
            *comm = pend[i].comm;
            pend[i].state = 2;
            pend_live--;
            pend_dead++;
            found = 1;
            break;
        }
    pthread_mutex_unlock(&pend_lock);
    return found;
}

/* Requests reqs[i] (copied before the call) completed with statuses st[i]:
 * the receives among them count. */
static void completed(const MPI_Request *before, const MPI_Status *st, const int *which, int n)
{
    for (int k = 0; k < n; k++) {
        int i = which ? which[k] : k;
        MPI_Comm comm;
        if (before[i] != MPI_REQUEST_NULL && pend_take(before[i], &comm))
            received(comm, &st[which ? k : i]);
    }
}

/* ---- the collectives of the global reduction ------------------------------- */

static int g_bcast(void *ctx, void *buf, size_t bytes, int root)
{
    (void)ctx;
    return bytes > INT32_MAX ||
           PMPI_Bcast(buf, (int)bytes, MPI_BYTE, root, MPI_COMM_WORLD) != MPI_SUCCESS;
}

static int g_reduce(void *ctx, const int64_t *in, int64_t *out, size_t n, tscope_reduce_op_t op,
                    int root)
{
    (void)ctx;
    MPI_Op o = op == TSCOPE_REDUCE_MIN ? MPI_MIN : op == TSCOPE_REDUCE_MAX ? MPI_MAX : MPI_SUM;
    return n > INT32_MAX ||
           PMPI_Reduce(in, out, (int)n, MPI_INT64_T, o, root, MPI_COMM_WORLD) != MPI_SUCCESS;
}

static int g_gatherv(void *ctx, const void *in, size_t bytes, void *out, const size_t *counts,
                     int root)
{
    (void)ctx;
    int *c = NULL, *d = NULL;
    if (world_rank == root) {
        c = malloc(sizeof *c * (size_t)world_size);
        d = malloc(sizeof *d * (size_t)world_size);
        if (!c || !d) {
            free(c);
            free(d);
            c = d = NULL;
        } else {
            size_t at = 0;
            for (int i = 0; i < world_size; i++) {
                if (counts[i] > INT32_MAX || at > INT32_MAX) {
                    free(c);
                    free(d);
                    c = d = NULL;
                    break;
                }
                c[i] = (int)counts[i];
                d[i] = (int)at;
                at += counts[i];
            }
        }
    }
    /* every rank takes part, also when the root could not: it then
     * receives nothing and says so */
    int bad = bytes > INT32_MAX || (world_rank == root && !c);
    static int zero;
    int rc = PMPI_Gatherv(in, bytes > INT32_MAX ? 0 : (int)bytes, MPI_BYTE, out, c ? c : &zero,
                          d ? d : &zero, MPI_BYTE, root, MPI_COMM_WORLD);
    free(c);
    free(d);
    return bad || rc != MPI_SUCCESS;
}

/* ---- init and finalize ----------------------------------------------------- */

/* A call that waits for other ranks: a blocking receive or probe, a wait for
 * requests, a barrier, a collective (TSCOPE_TYPE_WAIT: its time is waiting,
 * not work, in the pictures).  Sends, non-blocking calls and tests are not. */
static int waits(int c)
{
    switch (c) {
    case C_RECV:
    case C_SENDRECV:
    case C_SENDRECV_REPLACE:
    case C_PROBE:
    case C_WAIT:
    case C_WAITALL:
    case C_WAITANY:
    case C_WAITSOME:
        return 1;
    default:
        return c >= C_BARRIER; /* the barrier and the collectives after it */
    }
}

static void started_mpi(void)
{
    mpi_up = 1;
    PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &world_size);
    PMPI_Comm_group(MPI_COMM_WORLD, &world_group);
    if (tscope__adapter_start(&life, world_rank, world_size))
        return;
    for (int c = 0; c < NCALLS; c++) {
        tscope_type_register(call_names[c], &types[c]);
        if (types[c] && waits(c)) /* drawn as waiting, not work (heatmap.svg, ranks.svg) */
            tscope_type_set_attrs(types[c], TSCOPE_TYPE_WAIT);
        if (c == C_ALLREDUCE || c == C_REDUCE_SCATTER || c == C_REDUCE_SCATTER_BLOCK ||
            c == C_SCAN || c == C_EXSCAN) {
            char name[64];
            snprintf(name, sizeof name, "MPI bytes: %s", call_names[c]);
            tscope_counter_register(name, &coll_bytes[c]);
        }
    }
    started = 1;
}

/* MPI_Init's own time, when an adapter (OpenMP, pthreads) or the program
 * measures already: a task of type "MPI_Init" (0: none), a waiting type
 * (TSCOPE_TYPE_WAIT) as the calls that wait for other ranks are. */
static tscope_task_t *init_begin(const char *name)
{
    tscope_type_t t = 0;
    if (!tscope_is_enabled() || tscope_type_register(name, &t))
        return NULL;
    tscope_type_set_attrs(t, TSCOPE_TYPE_WAIT); /* mostly waiting for the other ranks */
    return tscope_task_start_h(tscope_task_id_next(), t);
}

int MPI_Init(int *argc, char ***argv)
{
    tscope_task_t *id = init_begin("MPI_Init");
    int rc = PMPI_Init(argc, argv);
    if (rc == MPI_SUCCESS)
        started_mpi();
    leave(id);
    return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    tscope_task_t *id = init_begin("MPI_Init_thread");
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS)
        started_mpi();
    leave(id);
    return rc;
}

int MPI_Finalize(void)
{
    /* every rank takes part in the global view's collectives, also one
     * that could not measure: the others would wait for it */
    if (mpi_up && tscope__adapter_stopping(&life)) {
        tscope_comm_t comm = {
            .struct_size = sizeof comm,
            .rank = world_rank,
            .size = world_size,
            .bcast = g_bcast,
            .reduce = g_reduce,
            .gatherv = g_gatherv,
        };
        tscope_finalize_global(&comm);
    }
    if (world_group != MPI_GROUP_NULL)
        PMPI_Group_free(&world_group);
    return PMPI_Finalize();
}

/* The rank's outputs are written before the job is torn down (the other
 * ranks are killed by the launcher: theirs come from their signal handlers
 * or crash journals). */
int MPI_Abort(MPI_Comm comm, int errorcode)
{
    if (started && tscope__adapter_stopping(&life))
        tscope_finalize();
    return PMPI_Abort(comm, errorcode);
}

/* ---- point to point -------------------------------------------------------- */

#define SEND_LIKE(NAME, E)                                                                         \
    int NAME(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)      \
    {                                                                                              \
        tscope_task_t *id = enter(C_##E);                                                          \
        message(comm, dest, bytes_of(count, type), tag, TSCOPE_MSG_SEND);                          \
        int rc = P##NAME(buf, count, type, dest, tag, comm);                                       \
        leave(id);                                                                                 \
        return rc;                                                                                 \
    }
SEND_LIKE(MPI_Send, SEND)
SEND_LIKE(MPI_Ssend, SSEND)
SEND_LIKE(MPI_Bsend, BSEND)
SEND_LIKE(MPI_Rsend, RSEND)

#define ISEND_LIKE(NAME, E)                                                                        \
    int NAME(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,      \
             MPI_Request *req)                                                                     \
    {                                                                                              \
        tscope_task_t *id = enter(C_##E);                                                          \
        message(comm, dest, bytes_of(count, type), tag, TSCOPE_MSG_SEND);                          \
        int rc = P##NAME(buf, count, type, dest, tag, comm, req);                                  \
        leave(id);                                                                                 \
        return rc;                                                                                 \
    }
ISEND_LIKE(MPI_Isend, ISEND)
ISEND_LIKE(MPI_Issend, ISSEND)
ISEND_LIKE(MPI_Ibsend, IBSEND)
ISEND_LIKE(MPI_Irsend, IRSEND)

int MPI_Recv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
             MPI_Status *status)
{
    tscope_task_t *id = enter(C_RECV);
    MPI_Status own;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
    int rc = PMPI_Recv(buf, count, type, source, tag, comm, st);
    if (rc == MPI_SUCCESS && measuring())
        received(comm, st);
    leave(id);
    return rc;
}

int MPI_Irecv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
              MPI_Request *req)
{
    tscope_task_t *id = enter(C_IRECV);
    int rc = PMPI_Irecv(buf, count, type, source, tag, comm, req);
    if (rc == MPI_SUCCESS && measuring() && source != MPI_PROC_NULL)
        pend_add(*req, comm);
    leave(id);
    return rc;
}

int MPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag, void *rbuf,
                 int rcount, MPI_Datatype rtype, int source, int rtag, MPI_Comm comm,
                 MPI_Status *status)
{
    tscope_task_t *id = enter(C_SENDRECV);
    MPI_Status own;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
    message(comm, dest, bytes_of(scount, stype), stag, TSCOPE_MSG_SEND);
    int rc =
        PMPI_Sendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag, comm, st);
    if (rc == MPI_SUCCESS && measuring())
        received(comm, st);
    leave(id);
    return rc;
}

int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype type, int dest, int stag, int source,
                         int rtag, MPI_Comm comm, MPI_Status *status)
{
    tscope_task_t *id = enter(C_SENDRECV_REPLACE);
    MPI_Status own;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
    message(comm, dest, bytes_of(count, type), stag, TSCOPE_MSG_SEND);
    int rc = PMPI_Sendrecv_replace(buf, count, type, dest, stag, source, rtag, comm, st);
    if (rc == MPI_SUCCESS && measuring())
        received(comm, st);
    leave(id);
    return rc;
}

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    tscope_task_t *id = enter(C_PROBE);
    int rc = PMPI_Probe(source, tag, comm, status);
    leave(id);
    return rc;
}

/* ---- completion ------------------------------------------------------------ */

/* A status array for n requests: the caller's, or one of ours when it
 * passed MPI_STATUSES_IGNORE (on the stack up to 16). */
#define STATUSES(st, user, n)                                                                      \
    MPI_Status st##_small[16];                                                                     \
    MPI_Status *st = (user) != MPI_STATUSES_IGNORE ? (user)                                        \
                     : (n) <= 16                   ? st##_small                                    \
                                                   : malloc(sizeof(MPI_Status) * (size_t)(n));                       \
    if (!st)                                                                                       \
    st = MPI_STATUSES_IGNORE
#define STATUSES_FREE(st, user, n)                                                                 \
    if ((user) == MPI_STATUSES_IGNORE && (n) > 16 && st != MPI_STATUSES_IGNORE)                    \
    free(st)

/* The requests before the call (the call sets completed ones to
 * MPI_REQUEST_NULL). */
#define BEFORE(b, reqs, n)                                                                         \
    MPI_Request b##_small[16];                                                                     \
    MPI_Request *b = (n) <= 16 ? b##_small : malloc(sizeof(MPI_Request) * (size_t)(n));            \
    if (b && (n) > 0)                                                                              \
    memcpy(b, reqs, sizeof(MPI_Request) * (size_t)(n))
#define BEFORE_FREE(b, n)                                                                          \
    if ((n) > 16)                                                                                  \
    free(b)

/* A receive request released without completing: its entry goes (its
 * message is not counted: no status says what came). */
int MPI_Request_free(MPI_Request *req)
{
    MPI_Comm comm;
    if (req && *req != MPI_REQUEST_NULL)
        pend_take(*req, &comm);
    return PMPI_Request_free(req);
}

int MPI_Wait(MPI_Request *req, MPI_Status *status)
{
    tscope_task_t *id = enter(C_WAIT);
    MPI_Request before = *req;
    MPI_Status own;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
    int rc = PMPI_Wait(req, st);
    if (rc == MPI_SUCCESS)
        completed(&before, st, NULL, 1);
    leave(id);
    return rc;
}

int MPI_Test(MPI_Request *req, int *flag, MPI_Status *status)
{
    tscope_task_t *id = enter(C_TEST);
    MPI_Request before = *req;
    MPI_Status own;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
    int rc = PMPI_Test(req, flag, st);
    if (rc == MPI_SUCCESS && *flag)
        completed(&before, st, NULL, 1);
    leave(id);
    return rc;
}

int MPI_Waitall(int n, MPI_Request reqs[], MPI_Status statuses[])
{
    tscope_task_t *id = enter(C_WAITALL);
    BEFORE(before, reqs, n);
    STATUSES(st, statuses, n);
    int rc = PMPI_Waitall(n, reqs, st);
    if (rc == MPI_SUCCESS && before && st != MPI_STATUSES_IGNORE)
        completed(before, st, NULL, n);
    STATUSES_FREE(st, statuses, n);
    BEFORE_FREE(before, n);
    leave(id);
    return rc;
}

int MPI_Testall(int n, MPI_Request reqs[], int *flag, MPI_Status statuses[])
{
    tscope_task_t *id = enter(C_TESTALL);
    BEFORE(before, reqs, n);
    STATUSES(st, statuses, n);
    int rc = PMPI_Testall(n, reqs, flag, st);
    if (rc == MPI_SUCCESS && *flag && before && st != MPI_STATUSES_IGNORE)
        completed(before, st, NULL, n);
    STATUSES_FREE(st, statuses, n);
    BEFORE_FREE(before, n);
    leave(id);
    return rc;
}

int MPI_Waitany(int n, MPI_Request reqs[], int *index, MPI_Status *status)
{
    tscope_task_t *id = enter(C_WAITANY);
    BEFORE(before, reqs, n);
    MPI_Status own;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
    int rc = PMPI_Waitany(n, reqs, index, st);
    if (rc == MPI_SUCCESS && before && *index != MPI_UNDEFINED)
        completed(before, st, index, 1);
    BEFORE_FREE(before, n);
    leave(id);
    return rc;
}

int MPI_Testany(int n, MPI_Request reqs[], int *index, int *flag, MPI_Status *status)
{
    tscope_task_t *id = enter(C_TESTANY);
    BEFORE(before, reqs, n);
    MPI_Status own;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
    int rc = PMPI_Testany(n, reqs, index, flag, st);
    if (rc == MPI_SUCCESS && before && *flag && *index != MPI_UNDEFINED)
        completed(before, st, index, 1);
    BEFORE_FREE(before, n);
    leave(id);
    return rc;
}

int MPI_Waitsome(int n, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[])
{
    tscope_task_t *id = enter(C_WAITSOME);
    BEFORE(before, reqs, n);
    STATUSES(st, statuses, n);
    int rc = PMPI_Waitsome(n, reqs, outcount, indices, st);
    if (rc == MPI_SUCCESS && before && st != MPI_STATUSES_IGNORE && *outcount != MPI_UNDEFINED)
        completed(before, st, indices, *outcount);
    STATUSES_FREE(st, statuses, n);
    BEFORE_FREE(before, n);
    leave(id);
    return rc;
}

int MPI_Testsome(int n, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[])
{
    tscope_task_t *id = enter(C_TESTSOME);
    BEFORE(before, reqs, n);
    STATUSES(st, statuses, n);
    int rc = PMPI_Testsome(n, reqs, outcount, indices, st);
    if (rc == MPI_SUCCESS && before && st != MPI_STATUSES_IGNORE && *outcount != MPI_UNDEFINED)
        completed(before, st, indices, *outcount);
    STATUSES_FREE(st, statuses, n);
    BEFORE_FREE(before, n);
    leave(id);
    return rc;
}

/* ---- collectives ----------------------------------------------------------- */

int MPI_Barrier(MPI_Comm comm)
{
    tscope_task_t *id = enter(C_BARRIER);
    int rc = PMPI_Barrier(comm);
    leave(id);
    return rc;
}

/* bytes per rank of a v variant: counts[i] elements of type (NULL: none) */
static uint64_t *per_rank(MPI_Comm comm, const int *counts, MPI_Datatype type)
{
    int n = comm_size(comm);
    uint64_t *b = calloc((size_t)(n > 0 ? n : 1), sizeof *b);
    if (b && counts)
        for (int i = 0; i < n; i++)
            b[i] = bytes_of(counts[i], type);
    return b;
}

/* A rooted collective's data flow: the root sends to (root_dir SEND) or
 * receives from every other rank `each` bytes, or counts[i] elements of
 * ctype for rank i (a v variant: counts only read at the root); every
 * other rank the opposite with the root, `mine` bytes. */
static void rooted(MPI_Comm comm, int root, unsigned root_dir, uint64_t each, const int *counts,
                   MPI_Datatype ctype, uint64_t mine)
{
    if (!measuring())
        return;
    if (comm_rank(comm) != root) {
        unsigned dir = root_dir == TSCOPE_MSG_SEND ? TSCOPE_MSG_RECV : TSCOPE_MSG_SEND;
        message(comm, root, mine, 0, dir | TSCOPE_MSG_COLLECTIVE);
        return;
    }
    uint64_t *b = counts ? per_rank(comm, counts, ctype) : NULL;
    if (!counts || b)
        to_all(comm, root_dir, each, b);
    free(b);
}

int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
    tscope_task_t *id = enter(C_BCAST);
    int rc = PMPI_Bcast(buf, count, type, root, comm);
    if (rc == MPI_SUCCESS)
        rooted(comm, root, TSCOPE_MSG_SEND, bytes_of(count, type), NULL, type,
               bytes_of(count, type));
    leave(id);
    return rc;
}

int MPI_Reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op, int root,
               MPI_Comm comm)
{
    tscope_task_t *id = enter(C_REDUCE);
    int rc = PMPI_Reduce(sbuf, rbuf, count, type, op, root, comm);
    if (rc == MPI_SUCCESS)
        rooted(comm, root, TSCOPE_MSG_RECV, bytes_of(count, type), NULL, type,
               bytes_of(count, type));
    leave(id);
    return rc;
}

int MPI_Gather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
               MPI_Datatype rtype, int root, MPI_Comm comm)
{
    tscope_task_t *id = enter(C_GATHER);
    int rc = PMPI_Gather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
    if (rc == MPI_SUCCESS)
        rooted(comm, root, TSCOPE_MSG_RECV, bytes_of(rcount, rtype), NULL, rtype,
               bytes_of(scount, stype));
    leave(id);
    return rc;
}

int MPI_Gatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[],
                const int displs[], MPI_Datatype rtype, int root, MPI_Comm comm)
{
    tscope_task_t *id = enter(C_GATHERV);
    int rc = PMPI_Gatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm);
    if (rc == MPI_SUCCESS)
        rooted(comm, root, TSCOPE_MSG_RECV, 0, rcounts, rtype, bytes_of(scount, stype));
    leave(id);
    return rc;
}

int MPI_Scatter(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                MPI_Datatype rtype, int root, MPI_Comm comm)
{
    tscope_task_t *id = enter(C_SCATTER);
    int rc = PMPI_Scatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
    if (rc == MPI_SUCCESS)
        rooted(comm, root, TSCOPE_MSG_SEND, bytes_of(scount, stype), NULL, stype,
               bytes_of(rcount, rtype));
    leave(id);
    return rc;
}

int MPI_Scatterv(const void *sbuf, const int scounts[], const int displs[], MPI_Datatype stype,
                 void *rbuf, int rcount, MPI_Datatype rtype, int root, MPI_Comm comm)
{
    tscope_task_t *id = enter(C_SCATTERV);
    int rc = PMPI_Scatterv(sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm);
    if (rc == MPI_SUCCESS)
        rooted(comm, root, TSCOPE_MSG_SEND, 0, scounts, stype, bytes_of(rcount, rtype));
    leave(id);
    return rc;
}

int MPI_Allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                  MPI_Datatype rtype, MPI_Comm comm)
{
    tscope_task_t *id = enter(C_ALLGATHER);
    int rc = PMPI_Allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm);
    if (rc == MPI_SUCCESS && measuring()) {
        /* MPI_IN_PLACE: the block sent is the rank's own block of rbuf */
        uint64_t s = sbuf == MPI_IN_PLACE ? bytes_of(rcount, rtype) : bytes_of(scount, stype);
        to_all(comm, TSCOPE_MSG_SEND, s, NULL);
        to_all(comm, TSCOPE_MSG_RECV, bytes_of(rcount, rtype), NULL);
    }
    leave(id);
    return rc;
}

int MPI_Allgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                   const int rcounts[], const int displs[], MPI_Datatype rtype, MPI_Comm comm)
{
    tscope_task_t *id = enter(C_ALLGATHERV);
    int rc = PMPI_Allgatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm);
    if (rc == MPI_SUCCESS && measuring()) {
        uint64_t *b = per_rank(comm, rcounts, rtype);
        if (b) {
            uint64_t s = sbuf == MPI_IN_PLACE ? b[comm_rank(comm)] : bytes_of(scount, stype);
            to_all(comm, TSCOPE_MSG_SEND, s, NULL);
            to_all(comm, TSCOPE_MSG_RECV, 0, b);
        }
        free(b);
    }
    leave(id);
    return rc;
}

int MPI_Alltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                 MPI_Datatype rtype, MPI_Comm comm)
{
    tscope_task_t *id = enter(C_ALLTOALL);
    int rc = PMPI_Alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm);
    if (rc == MPI_SUCCESS && measuring()) {
        uint64_t s = sbuf == MPI_IN_PLACE ? bytes_of(rcount, rtype) : bytes_of(scount, stype);
        to_all(comm, TSCOPE_MSG_SEND, s, NULL);
        to_all(comm, TSCOPE_MSG_RECV, bytes_of(rcount, rtype), NULL);
    }
    leave(id);
    return rc;
}

int MPI_Alltoallv(const void *sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype,
                  void *rbuf, const int rcounts[], const int rdispls[], MPI_Datatype rtype,
                  MPI_Comm comm)
{
    tscope_task_t *id = enter(C_ALLTOALLV);
    int rc = PMPI_Alltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm);
    if (rc == MPI_SUCCESS && measuring()) {
        int in_place = sbuf == MPI_IN_PLACE;
        uint64_t *s = per_rank(comm, in_place ? rcounts : scounts, in_place ? rtype : stype);
        uint64_t *r = per_rank(comm, rcounts, rtype);
        if (s && r) {
            to_all(comm, TSCOPE_MSG_SEND, 0, s);
            to_all(comm, TSCOPE_MSG_RECV, 0, r);
        }
        free(s);
        free(r);
    }
    leave(id);
    return rc;
}

int MPI_Allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                  MPI_Comm comm)
{
    tscope_task_t *id = enter(C_ALLREDUCE);
    int rc = PMPI_Allreduce(sbuf, rbuf, count, type, op, comm);
    if (rc == MPI_SUCCESS)
        coll_counter(C_ALLREDUCE, bytes_of(count, type));
    leave(id);
    return rc;
}

int MPI_Reduce_scatter(const void *sbuf, void *rbuf, const int rcounts[], MPI_Datatype type,
                       MPI_Op op, MPI_Comm comm)
{
    tscope_task_t *id = enter(C_REDUCE_SCATTER);
    int rc = PMPI_Reduce_scatter(sbuf, rbuf, rcounts, type, op, comm);
    if (rc == MPI_SUCCESS && measuring()) {
        uint64_t total = 0;
        int n = comm_size(comm);
        for (int i = 0; i < n; i++)
            total += bytes_of(rcounts[i], type);
        coll_counter(C_REDUCE_SCATTER, total);
    }
    leave(id);
    return rc;
}

int MPI_Reduce_scatter_block(const void *sbuf, void *rbuf, int rcount, MPI_Datatype type, MPI_Op op,
                             MPI_Comm comm)
{
    tscope_task_t *id = enter(C_REDUCE_SCATTER_BLOCK);
    int rc = PMPI_Reduce_scatter_block(sbuf, rbuf, rcount, type, op, comm);
    if (rc == MPI_SUCCESS && measuring())
        coll_counter(C_REDUCE_SCATTER_BLOCK, bytes_of(rcount, type) * (uint64_t)comm_size(comm));
    leave(id);
    return rc;
}

int MPI_Scan(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    tscope_task_t *id = enter(C_SCAN);
    int rc = PMPI_Scan(sbuf, rbuf, count, type, op, comm);
    if (rc == MPI_SUCCESS)
        coll_counter(C_SCAN, bytes_of(count, type));
    leave(id);
    return rc;
}

int MPI_Exscan(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    tscope_task_t *id = enter(C_EXSCAN);
    int rc = PMPI_Exscan(sbuf, rbuf, count, type, op, comm);
    if (rc == MPI_SUCCESS)
        coll_counter(C_EXSCAN, bytes_of(count, type));
    leave(id);
    return rc;
}
