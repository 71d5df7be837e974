/* test_global.c - the reduction of a job's ranks into the global view
 * (src/global, tscope__global_merge): the message matrix kept as its pairs
 * gives, pair by pair, the figures of the whole matrix the ranks' peers
 * sum to; written whole for a small job (the bytes of before) and as pairs
 * for a large one; and a job that claims 65,536 ranks with one present
 * reduces within a bounded address space. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "export/export.h"
#include "global/global.h"
#include "test.h"

#define NR 4

/* AddressSanitizer's and ThreadSanitizer's shadow memory needs terabytes of
 * address space: no limit on it under them */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SANITIZED 1
#endif
#endif

/* Each rank's peers, in no order, with a peer named twice (rank 1: 0), one
 * only received from (rank 0: 3), a zero-byte message (rank 0 to 2) and
 * peers outside the job (ignored). */
static const tscope_peer_stats_t peers[NR][4] = {
    {{.peer = 1, .sent = 20, .sent_bytes = 20000},
     {.peer = 3, .recv = 20, .recv_bytes = 20000},
     {.peer = 2, .sent = 1, .coll_sent = 3, .coll_sent_bytes = 300},
     {.peer = 7, .sent = 5, .sent_bytes = 5}},
    {{.peer = 2, .sent = 20, .sent_bytes = 20000},
     {.peer = 0, .sent = 1, .sent_bytes = 10},
     {.peer = 0, .coll_sent = 2, .coll_sent_bytes = 40, .coll_recv = 9}},
    {{.peer = 3, .sent = 20, .sent_bytes = 20000}},
    {{.peer = -1, .sent = 4, .sent_bytes = 4}, {.peer = 0, .sent = 20, .sent_bytes = 20000}},
};
static const uint32_t npeers[NR] = {4, 3, 1, 2};

static struct tscope__ptype work = {.name = "work", .id = 1, .calls = 3, .created = 3};

static void rank_profile(struct tscope__profile *p, int rank, int nranks,
                         const tscope_peer_stats_t *pe, uint32_t n)
{
    memset(p, 0, sizeof *p);
    p->program = "prog";
    p->rank = rank;
    p->nranks = nranks;
    p->types = &work;
    p->ntypes = 1;
    p->peers = (tscope_peer_stats_t *)pe;
    p->npeers = n;
    p->totals.tasks_completed = 3;
}

/* The matrix as the dense reduction summed it: bytes and messages from
 * rank i to rank j, point to point and collective. */
static void dense(const int *present, uint64_t b[NR][NR], uint64_t m[NR][NR])
{
    memset(b, 0, sizeof(uint64_t) * NR * NR);
    memset(m, 0, sizeof(uint64_t) * NR * NR);
    for (int r = 0; r < NR; r++)
        for (uint32_t i = 0; present[r] && i < npeers[r]; i++) {
            const tscope_peer_stats_t *x = &peers[r][i];
            if (x->peer < 0 || x->peer >= NR)
                continue;
            b[r][x->peer] += x->sent_bytes + x->coll_sent_bytes;
            m[r][x->peer] += x->sent + x->coll_sent;
        }
}

static void check_pairs(const int *present)
{
    struct tscope__profile ranks[NR], *ps[NR];
    for (int r = 0; r < NR; r++) {
        rank_profile(&ranks[r], r, NR, peers[r], npeers[r]);
        ps[r] = present[r] ? &ranks[r] : NULL;
    }
    struct tscope__profile *g = tscope__global_merge(ps, NR);
    ASSERT(g && g->global);
    uint64_t b[NR][NR], m[NR][NR];
    dense(present, b, m);
    size_t k = 0;
    for (int i = 0; i < NR; i++)
        for (int j = 0; j < NR; j++) {
            if (!b[i][j] && !m[i][j])
                continue;
            ASSERT(k < g->global->nmatrix);
            const struct tscope__pmsgpair *x = &g->global->matrix[k++];
            ASSERT_EQ(x->from, i);
            ASSERT_EQ(x->to, j);
            ASSERT_U64_EQ(x->bytes, b[i][j]);
            ASSERT_U64_EQ(x->msgs, m[i][j]);
        }
    ASSERT_EQ(g->global->nmatrix, k);
    for (int r = 0; r < NR; r++)
        ASSERT_EQ(g->global->ranks[r].present, present[r]);
    ASSERT_U64_EQ(g->types[0].calls,
                  3 * (uint64_t)(present[0] + present[1] + present[2] + present[3]));
    tscope__profile_free(g);
}

static char *render_json(const struct tscope__profile *g)
{
    char *buf;
    size_t len;
    FILE *f = open_memstream(&buf, &len);
    ASSERT(f);
    ASSERT_EQ(tscope__export_json(g, f), 0);
    fclose(f);
    return buf;
}

/* A small job's matrix in profile.json: whole, as before the pairs. */
static void small_json(void)
{
    struct tscope__profile ranks[NR], *ps[NR];
    for (int r = 0; r < NR; r++)
        rank_profile(ps[r] = &ranks[r], r, NR, peers[r], npeers[r]);
    struct tscope__profile *g = tscope__global_merge(ps, NR);
    ASSERT(g);
    char *j = render_json(g);
    const char *want = "\"message_matrix\":{\"bytes\":[\n  [0,20000,300,0],\n  [50,0,20000,0],\n"
                       "  [0,0,0,20000],\n  [20000,0,0,0]],\"messages\":[\n  [0,20,4,0],\n"
                       "  [3,0,20,0],\n  [0,0,0,20],\n  [20,0,0,0]]}";
    if (!strstr(j, want))
        TEST_FAIL("no whole message matrix in:\n%s", j);
    free(j);
    tscope__profile_free(g);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    ASSERT(f);
    char *buf = calloc(1, 1 << 16);
    ASSERT(buf);
    size_t n = fread(buf, 1, (1 << 16) - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

/* A job of more than TSCOPE__GLOBAL_DENSE_MAX ranks: its pairs, in
 * profile.json and messages.csv. */
static void large_pairs(void)
{
    enum { N = TSCOPE__GLOBAL_DENSE_MAX + 44 };
    static const tscope_peer_stats_t first[] = {{.peer = N - 1, .sent = 2, .sent_bytes = 64}};
    static const tscope_peer_stats_t last[] = {{.peer = 0, .coll_sent = 1, .coll_sent_bytes = 8},
                                               {.peer = 5, .sent = 1, .sent_bytes = 1}};
    static struct tscope__profile *ps[N];
    struct tscope__profile a, z;
    rank_profile(ps[0] = &a, 0, N, first, 1);
    rank_profile(ps[N - 1] = &z, N - 1, N, last, 2);
    struct tscope__profile *g = tscope__global_merge(ps, N);
    ASSERT(g);
    ASSERT_EQ(g->global->nmatrix, 3);
    ASSERT_EQ(g->global->present, 2);
    char *j = render_json(g);
    if (!strstr(j, "\"message_matrix\":{\"pairs\":[\n  [0,299,64,2],\n  [299,0,8,1],\n"
                   "  [299,5,1,1]]}"))
        TEST_FAIL("no pairs in:\n%s", j);
    ASSERT(!strstr(j, "\"bytes\":["));
    free(j);
    char dir[] = "/tmp/test_global.XXXXXX", path[64];
    ASSERT(mkdtemp(dir));
    ASSERT_EQ(tscope__global_write(g, dir, NULL, 0), 0);
    snprintf(path, sizeof path, "%s/messages.csv", dir);
    char *csv = slurp(path);
    ASSERT_STR_EQ(csv, "from,to,bytes,messages\n0,299,64,2\n299,0,8,1\n299,5,1,1\n");
    free(csv);
    static const char *files[] = {"profile.json", "summary.txt",    "ranks.csv", "messages.csv",
                                  "messages.gp",  "ranks_busy.csv", "ranks.gp",  "taskgraph.dot"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        ASSERT_EQ(unlink(path), 0);
    }
    ASSERT_EQ(rmdir(dir), 0);
    tscope__profile_free(g);
}

/* One rank present of 65,536 claimed: no memory by the square of the
 * ranks (before: two 32 GiB matrices and a 512 KiB row per rank), so it
 * reduces within 1 GiB of address space (SANITIZED: without the limit). */
static void claimed_ranks(void)
{
    enum { N = 65536 };
    static const tscope_peer_stats_t pe[] = {{.peer = N - 1, .sent = 1, .sent_bytes = 100}};
    struct tscope__profile **ps = calloc(N, sizeof *ps);
    struct tscope__profile one;
    ASSERT(ps);
    rank_profile(ps[5] = &one, 5, N, pe, 1);
#ifndef SANITIZED
    struct rlimit lim = {1L << 30, 1L << 30}, was;
    ASSERT_EQ(getrlimit(RLIMIT_AS, &was), 0);
    if (was.rlim_max != RLIM_INFINITY && was.rlim_max < lim.rlim_max)
        lim.rlim_cur = lim.rlim_max = was.rlim_max;
    ASSERT_EQ(setrlimit(RLIMIT_AS, &lim), 0);
#endif
    struct tscope__profile *g = tscope__global_merge(ps, N);
    ASSERT(g);
    ASSERT_EQ(g->global->nranks, N);
    ASSERT_EQ(g->global->present, 1);
    ASSERT_EQ(g->global->nmatrix, 1);
    ASSERT_EQ(g->global->matrix[0].from, 5);
    ASSERT_EQ(g->global->matrix[0].to, N - 1);
    ASSERT_U64_EQ(g->global->matrix[0].bytes, 100);
    tscope__profile_free(g);
    free(ps);
}

int main(void)
{
    check_pairs((const int[NR]){1, 1, 1, 1});
    check_pairs((const int[NR]){1, 1, 0, 1});
    check_pairs((const int[NR]){0, 1, 1, 1});
    small_json();
    large_pairs();
    claimed_ranks();
    printf("test_global: ok\n");
    return 0;
}
