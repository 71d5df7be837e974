/* test_hazards.c - the OMPT adapter's dependence rules (src/adapt/hazards.c)
 * on depend lists whose edges are known: RAW, WAR, WAW, inout, one edge per
 * pair with every hazard and the address count, duplicates in a list,
 * mutexinoutset (exclusion, not order), inoutset, omp_all_memory (address
 * NULL or ~0), a taskwait's list (edges in, no access), the children of two
 * parents using one address at the same time (each waits for its own
 * siblings), and a parent's histories forgotten at its end (also among
 * thousands of parents, which the table's deletion must keep findable). */
#include <stdio.h>
#include <string.h>

#include "hazards/hazards.h"
#include "core/hazard.h"
#include "taskscope/taskscope.h"
#include "test.h"

static char got[2048];

static void edge(uint64_t from, uint64_t to, unsigned hazards, uint32_t naddrs, const void *addr)
{
    char e[96], h[32];
    snprintf(e, sizeof e, "%llu->%llu@%d:%s", (unsigned long long)from, (unsigned long long)to,
             addr == (const void *)~(uintptr_t)0 ? -1 : (int)(uintptr_t)addr,
             tscope__hazard_text(hazards, h, sizeof h));
    if (naddrs != 1)
        snprintf(e + strlen(e), sizeof e - strlen(e), "x%u", naddrs);
    strncat(e, " ", sizeof e - strlen(e) - 1);
    strncat(got, e, sizeof got - strlen(got) - 1);
}

#define ALL (-1) /* omp_all_memory as libomp 14 reports it */

/* Task `task` of `parent` with the accesses (addr, kind) pairs, n of them. */
static void task_(uint64_t parent, uint64_t task, unsigned flags, int n, const int *pairs)
{
    struct tscope__access_item list[8];
    for (int i = 0; i < n; i++)
        list[i] = (struct tscope__access_item){pairs[2 * i] == ALL
                                                   ? (const void *)~(uintptr_t)0
                                                   : (const void *)(uintptr_t)pairs[2 * i],
                                               pairs[2 * i + 1]};
    ASSERT_EQ(tscope__hazards_task(parent, task, list, n, flags, edge), 0);
}

#define T(parent, task, ...)                                                                       \
    task_(parent, task, 0, (int)(sizeof((int[]){__VA_ARGS__}) / sizeof(int) / 2),                  \
          (int[]){__VA_ARGS__})
#define WAIT(parent, task, ...)                                                                    \
    task_(parent, task, TSCOPE__HAZARDS_WAIT,                                                      \
          (int)(sizeof((int[]){__VA_ARGS__}) / sizeof(int) / 2), (int[]){__VA_ARGS__})

enum {
    IN = TSCOPE__ACCESS_IN,
    OUT = TSCOPE__ACCESS_OUT,
    INOUT = TSCOPE__ACCESS_INOUT,
    MUTEX = TSCOPE__ACCESS_MUTEX,
    SET = TSCOPE__ACCESS_SET
};

int main(void)
{
    /* out, out: WAW; in: RAW; in: RAW; out: WAR from both readers */
    T(1, 10, 8, OUT);
    T(1, 11, 8, OUT);
    T(1, 12, 8, IN);
    T(1, 13, 8, IN);
    T(1, 14, 8, OUT);
    ASSERT_STR_EQ(got, "10->11@8:WAW 11->12@8:RAW 11->13@8:RAW 12->14@8:WAR 13->14@8:WAR ");

    /* inout after a writer reads and writes: RAW and WAW */
    got[0] = 0;
    T(1, 20, 16, INOUT);
    T(1, 21, 16, INOUT);
    ASSERT_STR_EQ(got, "20->21@16:RAW+WAW ");

    /* one edge per pair: RAW on one address, WAR on another, counted twice */
    got[0] = 0;
    T(1, 30, 24, OUT, 32, IN);
    T(1, 31, 24, IN, 32, OUT);
    ASSERT_STR_EQ(got, "30->31@24:RAW+WARx2 ");

    /* an address named twice (as libomp reports depend(inout: x, x)
     * depend(in: x)) counts once; two kinds make an inout */
    got[0] = 0;
    T(1, 40, 40, OUT);
    T(1, 41, 40, INOUT, 40, INOUT, 40, IN);
    T(1, 42, 40, IN, 40, IN);
    ASSERT_STR_EQ(got, "40->41@40:RAW+WAW 41->42@40:RAW ");

    /* out, mutexinoutset, mutexinoutset, in: the two mutex tasks both wait
     * for the writer, exclude each other, and the reader waits for both */
    got[0] = 0;
    T(1, 9, 48, OUT);
    T(1, 11, 48, MUTEX);
    T(1, 13, 48, MUTEX);
    T(1, 15, 48, IN);
    ASSERT_STR_EQ(got, "9->11@48:RAW+WAW 9->13@48:RAW+WAW 11->13@48:mutex 11->15@48:RAW "
                       "13->15@48:RAW ");

    /* readers, then an inoutset group (waits for the readers, no order
     * inside), then a writer waits for the whole group */
    got[0] = 0;
    T(1, 50, 56, IN);
    T(1, 51, 56, SET);
    T(1, 52, 56, SET);
    T(1, 53, 56, OUT);
    ASSERT_STR_EQ(got, "50->51@56:WAR 50->52@56:WAR 51->53@56:WAW 52->53@56:WAW ");

    /* a taskwait's list waits for the writer and is no access: a later
     * reader still waits for the writer only */
    got[0] = 0;
    T(1, 60, 64, OUT);
    WAIT(1, 61, 64, IN);
    T(1, 62, 64, IN);
    WAIT(1, 63, 64, INOUT);
    ASSERT_STR_EQ(got, "60->61@64:RAW 60->62@64:RAW 62->63@64:WAR ");

    /* omp_all_memory waits for the latest access of every address of its
     * siblings; later accesses of any address wait for it */
    got[0] = 0;
    T(3, 70, 72, OUT);
    T(3, 71, 80, OUT);
    T(3, 72, 72, IN);
    T(3, 73, ALL, INOUT); /* waits for 72 (read x) and 71 (wrote y) */
    T(3, 74, 72, IN);     /* waits for 73 */
    T(3, 75, 88, OUT);    /* a new address waits for 73 too */
    T(3, 76, ALL, IN);    /* any type: waits for 74, 75 */
    T(3, 77, 80, IN);     /* waits for 76 */
    T(3, 78, 0, INOUT);   /* NULL: waits for 77 */
    T(3, 79, ALL, OUT);   /* nothing since: waits for 78 */
    ASSERT_STR_EQ(got, "70->72@72:RAW 71->73@80:RAW+WAW 72->73@72:WAR 73->74@72:RAW 73->75@88:WAW "
                       "74->76@72:WAR 75->76@88:RAW+WAW 76->77@80:RAW 77->78@80:WAR "
                       "78->79@0:RAW+WAW ");

    /* another parent's children do not depend on the first parent's */
    got[0] = 0;
    T(2, 90, 8, IN);
    T(2, 91, 8, OUT);
    ASSERT_STR_EQ(got, "90->91@8:WAR ");

    tscope__hazards_reset();
    got[0] = 0;
    T(1, 100, 8, IN);
    ASSERT_STR_EQ(got, "");

    /* two parents whose children use address 8 at the same time, turn by
     * turn: each child waits for its own siblings only (keyed by address
     * alone, the other parent's child reset the history: 110->112 and
     * 111->113 were lost) */
    tscope__hazards_reset();
    got[0] = 0;
    T(3, 110, 8, OUT);
    T(4, 111, 8, OUT);
    T(3, 112, 8, IN);
    T(4, 113, 8, INOUT);
    T(3, 114, 8, OUT);
    ASSERT_STR_EQ(got, "110->112@8:RAW 111->113@8:RAW+WAW 112->114@8:WAR ");
    /* omp_all_memory waits for its own siblings' latest accesses only */
    got[0] = 0;
    T(4, 115, ALL, INOUT);
    T(3, 116, 8, IN);
    ASSERT_STR_EQ(got, "113->115@8:RAW+WAW 114->116@8:RAW ");

    /* parent 3 ends: its histories go, parent 4's stay */
    tscope__hazards_forget(3);
    got[0] = 0;
    T(3, 117, 8, IN);
    T(4, 118, 8, IN);
    ASSERT_STR_EQ(got, "115->118@8:RAW ");
    tscope__hazards_forget(99); /* a parent without histories: nothing */
    got[0] = 0;
    T(4, 119, 8, OUT);
    ASSERT_STR_EQ(got, "118->119@8:WAR ");

    /* 3,000 parents with 20 addresses each, every other one forgotten: the
     * others' histories are all still found (the deletion moves entries of
     * a probe run back into the freed slots), the forgotten ones' are gone */
    tscope__hazards_reset();
    for (uint64_t p = 1; p <= 3000; p++)
        for (int a = 1; a <= 20; a++)
            T(1000 + p, p * 100 + (uint64_t)a, a * 16, OUT);
    for (uint64_t p = 1; p <= 3000; p += 2)
        tscope__hazards_forget(1000 + p);
    int kept = 0, lost = 0;
    for (uint64_t p = 1; p <= 3000; p++)
        for (int a = 1; a <= 20; a++) {
            got[0] = 0;
            T(1000 + p, 1000000 + p * 100 + (uint64_t)a, a * 16, IN);
            char want[96];
            snprintf(want, sizeof want, "%llu->%llu@%d:RAW ",
                     (unsigned long long)(p * 100 + (uint64_t)a),
                     (unsigned long long)(1000000 + p * 100 + (uint64_t)a), a * 16);
            if (p % 2 == 0)
                kept += strcmp(got, want) == 0;
            else
                lost += got[0] == 0;
        }
    ASSERT_EQ(kept, 1500 * 20);
    ASSERT_EQ(lost, 1500 * 20);
    tscope__hazards_reset();
    printf("test_hazards: ok\n");
    return 0;
}
