/* node.c - the AllScale dashboard's node metrics, the built-in source
 * "taskscope.node" (sampler.h), computed at every sample from the profile
 * store and the series of the same sample (it comes after the sources
 * registered through tscope_sampler_source_register, so a runtime's
 * rt.active_threads is this sample's):
 *
 *   node.speed       useful time / (elapsed x CPUs): the share of the machine,
 *                    at maximum frequency, spent in tasks
 *   node.efficiency  useful time / (elapsed x resources in use): resources
 *                    are the runtime's active threads (rt.active_threads)
 *                    where a runtime publishes them, else the CPUs
 *   node.power       power / maximum power (RAPL's package power over the
 *                    model's maximum, or the estimate over its maximum)
 *   node.score       (ws x speed + we x efficiency + wp x (1 - power)) /
 *                    (ws + we + wp), weights TASKSCOPE_SCORE_WEIGHTS
 *
 * Computed at most every 100 ms (it copies every type's statistics under
 * the store lock).  Useful time is the self time of all tasks that
 * ended since the previous computation (tasks still running count when they end).  This VM
 * reports no CPU frequency, so "at maximum frequency" and "at the current
 * frequency" coincide here: the ratio is 1 (docs/sampling.md).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/core.h"
#include "sampler.h"

static double last_useful_ns, last_t;

/* Mean of current / maximum frequency over the CPUs, or -1 without cpufreq. */
static double freq_ratio(long ncpu)
{
    double sum = 0;
    long n = 0;
    for (long c = 0; c < ncpu; c++) {
        char path[128];
        unsigned long long cur, max;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%ld/cpufreq/scaling_cur_freq", c);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        int ok = fscanf(f, "%llu", &cur) == 1;
        fclose(f);
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%ld/cpufreq/cpuinfo_max_freq", c);
        f = fopen(path, "r");
        if (!f)
            continue;
        ok = ok && fscanf(f, "%llu", &max) == 1 && max > 0;
        fclose(f);
        if (ok) {
            sum += (double)cur / (double)max;
            n++;
        }
    }
    return n ? sum / (double)n : -1;
}
static tscope_type_stats_t *types;
static size_t cap_types;

static void node_start(const struct tscope__config *cfg)
{
    (void)cfg;
    last_useful_ns = 0;
    last_t = 0;
}

static double useful_ns(void)
{
    size_t n = 0;
    for (;;) {
        if (tscope_query_types(types, cap_types, &n))
            return NAN;
        if (n <= cap_types)
            break;
        tscope_type_stats_t *t = realloc(types, n * 2 * sizeof *t);
        if (!t)
            return NAN;
        types = t;
        cap_types = n * 2;
    }
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += types[i].self_ns.sum;
    tscope_type_stats_t untyped; /* tasks created without a type */
    if (tscope_query_type(0, &untyped) == 0 && (n == 0 || types[0].type != 0))
        sum += untyped.self_ns.sum;
    return sum;
}

static void node_sample(void *data, double seconds, tscope_sample_emit_fn emit, void *ctx)
{
    (void)data;
    (void)seconds;
    double now = tscope__sampler_now();
    const double *latest_threads, *latest_power;
    int power_is_estimate;
    tscope__sampler_node_inputs(&latest_threads, &latest_power, &power_is_estimate);
    if (last_t > 0 && now - last_t < 0.1)
        return; /* at most every 100 ms: it copies every type's statistics */
    double useful = useful_ns();
    if (isnan(useful))
        return;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    if (ncpu < 1)
        ncpu = 1;
    if (last_t > 0 && now > last_t) {
        double dt = now - last_t, u = (useful - last_useful_ns) * 1e-9;
        double fr = freq_ratio(ncpu);
        if (fr > 0)
            emit(ctx, "node.freq_ratio", fr);
        double speed = u * (fr > 0 ? fr : 1) / (dt * (double)ncpu);
        double resources = latest_threads && *latest_threads > 0 ? *latest_threads : (double)ncpu;
        double eff = u / (dt * resources);
        /* in [0, 1]: the sums' rounding leaves -1e-9 when nothing ran */
        speed = speed > 1 ? 1 : speed < 0 ? 0 : speed;
        eff = eff > 1 ? 1 : eff < 0 ? 0 : eff;
        emit(ctx, "node.speed", speed);
        emit(ctx, "node.efficiency", eff);
        const struct tscope__config *c = &tscope__g.cfg;
        double pmax = (double)ncpu * c->power_max_w, power = NAN;
        if (latest_power && pmax > 0) {
            power = *latest_power / pmax;
            power = power > 1 ? 1 : power;
            emit(ctx, power_is_estimate ? "node.power_estimate" : "node.power", power);
        }
        double ws = c->score_w[0], we = c->score_w[1], wp = c->score_w[2];
        double score = ws * speed + we * eff, wsum = ws + we;
        if (!isnan(power)) {
            score += wp * (1 - power);
            wsum += wp;
        }
        if (wsum > 0)
            emit(ctx, "node.score", score / wsum);
    }
    last_useful_ns = useful;
    last_t = now;
}

const struct tscope__builtin_source tscope__source_node = {"taskscope.node", TSCOPE__SOURCE_LAST,
                                                           node_sample, node_start, NULL};
