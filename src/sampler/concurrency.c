/* concurrency.c - the concurrency view (APEX's), the built-in source
 * "taskscope.concurrency" (sampler.h): at every sample, how many
 * threads run each task type, as series of samples.csv and of the live
 * values (tscope_sampler_latest).  The pictures of the run are drawn from
 * the exact begin and end times instead (src/export/timeline.c); this view
 * is what a policy or a dashboard reads while the program runs.
 *
 * What a thread runs is read from the profile store: the innermost task on
 * its replay stack, as of the consumer's last round (at most
 * TASKSCOPE_PERIOD_MS behind the program), which each round publishes
 * without a lock for this view (store.h, running).  Tasks that began and ended
 * between two rounds are not seen: the view samples long tasks well and
 * short ones statistically, like any sampling profiler.  Series:
 * concurrency.TYPE (threads), for every type seen running at least once
 * (0 in later samples when none runs), and concurrency.threads_busy.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/query.h"
#include "sampler.h"

enum { MAX_TYPES = 4096 };

static uint16_t running[TSCOPE__RUNNING_MAX];
static uint32_t counts[MAX_TYPES];
static char *series[MAX_TYPES]; /* "concurrency.TYPE" of each type seen: built once */
static uint32_t nseen;          /* 1 + the highest type seen: the loops stop there */

static void concurrency_start(const struct tscope__config *cfg)
{
    (void)cfg;
    for (uint32_t t = 0; t < nseen; t++) {
        free(series[t]);
        series[t] = NULL;
    }
    nseen = 0;
}

/* Per sample this touches the busy threads' types and the types seen, no
 * more: at 200 Hz the program's threads evict it between samples. */
static void concurrency_sample(void *data, double seconds, tscope_sample_emit_fn emit, void *ctx)
{
    (void)data;
    (void)seconds;
    uint32_t busy = tscope__query_running(running, TSCOPE__RUNNING_MAX);
    emit(ctx, "concurrency.threads_busy", busy);
    for (uint32_t t = 0; t < nseen; t++)
        counts[t] = 0;
    for (uint32_t i = 0; i < busy && i < TSCOPE__RUNNING_MAX; i++) {
        uint32_t t = running[i];
        if (t >= MAX_TYPES)
            continue;
        if (!series[t]) {
            char name[200], full[256];
            if (t == 0 || tscope_type_name(t, name, sizeof name))
                snprintf(name, sizeof name, "untyped");
            snprintf(full, sizeof full, "concurrency.%s", name);
            if (!(series[t] = strdup(full)))
                continue;
            for (uint32_t k = nseen; k <= t; k++)
                counts[k] = 0;
            nseen = t + 1 > nseen ? t + 1 : nseen;
        }
        counts[t]++;
    }
    for (uint32_t t = 0; t < nseen; t++)
        if (series[t])
            emit(ctx, series[t], counts[t]);
}

const struct tscope__builtin_source tscope__source_concurrency = {
    "taskscope.concurrency", TSCOPE__SOURCE_FIRST, concurrency_sample, concurrency_start, NULL};
