/* test_hazards.c - the OMPT adapter's dependency rules (src/adapt/hazards.c)
 * on access sequences whose edges are known: RAW, WAR, WAW, inout, a
 * diamond, readers collected between writers, and a new parent starting
 * an address's history afresh. */
#include <stdio.h>
#include <string.h>

#include "adapt/hazards.h"
#include "taskscope/taskscope.h"
#include "test.h"

static char got[1024];

static void edge(uint64_t from, uint64_t to, const void *addr, int hazard)
{
    static const char *const names[] = {"?", "RAW", "WAR", "WAW"};
    char e[64];
    snprintf(e, sizeof e, "%llu->%llu@%d:%s ", (unsigned long long)from, (unsigned long long)to,
             (int)(uintptr_t)addr, names[hazard]);
    strncat(got, e, sizeof got - strlen(got) - 1);
}

static void access_(uint64_t parent, uint64_t task, int addr, int kind)
{
    ASSERT_EQ(tscope__hazards_access(parent, task, (const void *)(uintptr_t)addr, kind, edge), 0);
}

int main(void)
{
    /* out, out: WAW; in: RAW; in: RAW; out: WAR from both readers */
    access_(1, 10, 8, TSCOPE__ACCESS_OUT);
    access_(1, 11, 8, TSCOPE__ACCESS_OUT);
    access_(1, 12, 8, TSCOPE__ACCESS_IN);
    access_(1, 13, 8, TSCOPE__ACCESS_IN);
    access_(1, 14, 8, TSCOPE__ACCESS_OUT);
    ASSERT_STR_EQ(got, "10->11@8:WAW 11->12@8:RAW 11->13@8:RAW 12->14@8:WAR 13->14@8:WAR ");

    /* inout after a writer reads it: RAW; inoutset behaves as a reader */
    got[0] = 0;
    access_(1, 20, 16, TSCOPE__ACCESS_INOUT);
    access_(1, 21, 16, TSCOPE__ACCESS_INOUT);
    access_(1, 22, 16, TSCOPE__ACCESS_SET);
    access_(1, 23, 16, TSCOPE__ACCESS_SET);
    access_(1, 24, 16, TSCOPE__ACCESS_OUT);
    ASSERT_STR_EQ(got, "20->21@16:RAW 21->22@16:RAW 21->23@16:RAW 22->24@16:WAR 23->24@16:WAR ");

    /* diamond over three addresses */
    got[0] = 0;
    access_(1, 30, 24, TSCOPE__ACCESS_OUT);
    access_(1, 31, 24, TSCOPE__ACCESS_IN);
    access_(1, 31, 32, TSCOPE__ACCESS_OUT);
    access_(1, 32, 24, TSCOPE__ACCESS_IN);
    access_(1, 32, 40, TSCOPE__ACCESS_OUT);
    access_(1, 33, 32, TSCOPE__ACCESS_IN);
    access_(1, 33, 40, TSCOPE__ACCESS_IN);
    ASSERT_STR_EQ(got, "30->31@24:RAW 30->32@24:RAW 31->33@32:RAW 32->33@40:RAW ");

    /* another parent's children do not depend on the first parent's */
    got[0] = 0;
    access_(2, 40, 8, TSCOPE__ACCESS_IN);
    access_(2, 41, 8, TSCOPE__ACCESS_OUT);
    ASSERT_STR_EQ(got, "40->41@8:WAR ");

    tscope__hazards_reset();
    got[0] = 0;
    access_(1, 50, 8, TSCOPE__ACCESS_IN);
    ASSERT_STR_EQ(got, "");
    printf("test_hazards: ok\n");
    return 0;
}
