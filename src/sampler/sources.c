/* sources.c - the sampler's built-in system source, "taskscope.system"
 * (docs/sampling.md lists the series and their units), registered in the
 * sampler's list like any other source (sampler.h).
 *
 *   /proc/stat            sys.cpu_utilization (0..1 of all CPUs)
 *   /proc/self/statm      proc.rss_bytes
 *   /proc/meminfo         sys.mem_used_bytes (MemTotal - MemAvailable)
 *   /proc/net/dev         sys.net_rx_bytes_per_s, sys.net_tx_bytes_per_s (all but lo)
 *   /proc/self/io         proc.io_read_bytes_per_s, proc.io_write_bytes_per_s
 *   /proc/loadavg         sys.loadavg1
 *   perf_event (software) proc.cpu_cores_used (task clock), proc.page_faults_per_s,
 *                         proc.context_switches_per_s: counted for the process and
 *                         the threads it starts after tscope_init (inherit), one
 *                         event group read at once where the kernel allows
 *   perf_event (hardware) proc.instructions_per_cycle, where the machine has them
 *   RAPL (powercap)       power.package_w from energy_uj, where readable; otherwise
 *                         power.estimate_w = CPUs x (idle + (max - idle) x
 *                         utilization), TASKSCOPE_POWER_MODEL watts per CPU, and
 *                         energy.estimate_j: the name says it is an estimate
 *
 * Cost: all of them are read at most every 100 ms, so a 200 Hz sampler
 * costs little more than a 10 Hz one here (the rates they give are over the
 * time since their previous read): the system-wide files (/proc/stat
 * formats every CPU and interrupt, ~100 us of kernel time for all of them),
 * the perf and PAPI counters (reading a counter inherited by threads
 * running on other CPUs interrupts those CPUs to collect their counts), and
 * /proc/self/statm too (~4 us on an idle process but ~55 us while the
 * program's threads keep the CPUs busy: read at 200 Hz it was most of the
 * sampler's cost, docs/performance.md).
 * The /proc files stay open between reads (each read starts at offset 0,
 * and the kernel writes the text anew): opening and closing a file costs
 * more than reading it.  A source that cannot be read the first time
 * prints one line and is skipped from then on; nothing here can stop the
 * program.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/core.h"
#include "procfs.h"
#include "sampler.h"

enum { SRC_STAT, SRC_STATM, SRC_MEMINFO, SRC_NET, SRC_IO, SRC_LOAD, NSRC };
static const char *const paths[NSRC] = {"/proc/stat",    "/proc/self/statm", "/proc/meminfo",
                                        "/proc/net/dev", "/proc/self/io",    "/proc/loadavg"};

enum { PE_TASK_CLOCK, PE_FAULTS, PE_CSW, PE_CYCLES, PE_INSTR, NPE };

static struct {
    int off[NSRC];
    int fd[NSRC]; /* kept open from the first read to tscope__sampler_builtin_close */
    uint64_t cpu_busy, cpu_total, net[2], io[2]; /* net: rx, tx; io: read, write */
    int have_prev[NSRC];
    double prev_t[NSRC];
    int pe_fd[NPE];
    int pe_group; /* the software counters are one group led by pe_fd[0] */
    uint64_t pe_prev[NPE];
    double pe_prev_t;
    char rapl_path[256];
    uint64_t rapl_prev;
    double rapl_prev_t;
    double idle_w, max_w, energy_j, last_power_t;
    double last_slow; /* when the system-wide files were read last */
    double util;      /* the last CPU utilisation, for the power estimate */
    long ncpu, page;
} B = {.fd = {-1, -1, -1, -1, -1, -1}, .pe_fd = {-1, -1, -1, -1, -1}};

static char buf[65536];
static int said_perf, said_hw, said_rapl; /* each note once per process */

static int read_src(int src)
{
    if (B.off[src])
        return -1;
    if (B.fd[src] < 0)
        B.fd[src] = open(paths[src], O_RDONLY | O_CLOEXEC);
    if (B.fd[src] >= 0 && tscope__proc_pread(B.fd[src], buf, sizeof buf) == 0)
        return 0;
    fprintf(stderr, "taskscope: sampler: %s is not readable (%s); skipped\n", paths[src],
            strerror(errno));
    B.off[src] = 1;
    return -1;
}

static void close_perf(void)
{
    for (int i = 0; i < NPE; i++)
        if (B.pe_fd[i] >= 0) {
            close(B.pe_fd[i]);
            B.pe_fd[i] = -1;
        }
}

static void system_stop(void)
{
    for (int i = 0; i < NSRC; i++)
        if (B.fd[i] >= 0) {
            close(B.fd[i]);
            B.fd[i] = -1;
        }
    close_perf();
}

static void parse_failed(int src)
{
    fprintf(stderr, "taskscope: sampler: %s has an unexpected format; skipped\n", paths[src]);
    B.off[src] = 1;
}

/* perf_open's group: a counter of its own, the leader of a group, or (a
 * descriptor >= 0) a member of the group that descriptor leads; a group is
 * read through its leader. */
enum { PERF_ALONE = -2, PERF_LEADER = -1 };

static int perf_open(uint32_t type, uint64_t config, int group)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = type;
    a.config = config;
    a.inherit = 1;
    if (group != PERF_ALONE)
        a.read_format = PERF_FORMAT_GROUP;
    /* software events happen in the kernel (a context switch, a fault): count
     * them there too, which perf_event_paranoid 2 allows for one's own process;
     * hardware events: user space only, what paranoid 2 allows */
    a.exclude_kernel = type == PERF_TYPE_HARDWARE;
    a.exclude_hv = 1;
    return (int)syscall(SYS_perf_event_open, &a, 0, -1, group >= 0 ? group : -1, 0);
}

static uint64_t perf_read(int fd)
{
    uint64_t v = 0;
    if (fd < 0 || read(fd, &v, sizeof v) != (ssize_t)sizeof v)
        return 0;
    return v;
}

static void system_start(const struct tscope__config *cfg)
{
    system_stop();
    memset(B.off, 0, sizeof B.off);
    memset(B.have_prev, 0, sizeof B.have_prev);
    B.idle_w = cfg->power_idle_w;
    B.max_w = cfg->power_max_w;
    B.energy_j = 0;
    B.last_power_t = 0;
    B.last_slow = 0;
    B.util = -1;
    if (!cfg->sample_ms)
        return; /* sampling off: open nothing, read nothing, say nothing */
    B.ncpu = sysconf(_SC_NPROCESSORS_ONLN); /* a file read: only when sampling */
    if (B.ncpu < 1)
        B.ncpu = 1;
    B.page = sysconf(_SC_PAGESIZE);
    tscope__papi_reset(cfg->papi_events);

    static const uint64_t sw[3] = {PERF_COUNT_SW_TASK_CLOCK, PERF_COUNT_SW_PAGE_FAULTS,
                                   PERF_COUNT_SW_CONTEXT_SWITCHES};
    /* one group: a read gets all three, and the kernel fetches the counts of
     * threads running on other CPUs once (an interrupt of each of those
     * CPUs) instead of once per counter: 3 reads took ~170 us here while
     * two threads kept the CPUs busy, one group read ~90 us */
    B.pe_group = 0;
    B.pe_fd[0] = perf_open(PERF_TYPE_SOFTWARE, sw[0], PERF_LEADER);
    if (B.pe_fd[0] >= 0) {
        B.pe_group = 1;
        for (int i = 1; i < 3 && B.pe_group; i++)
            if ((B.pe_fd[i] = perf_open(PERF_TYPE_SOFTWARE, sw[i], B.pe_fd[0])) < 0)
                B.pe_group = 0;
        uint64_t probe[4];
        if (B.pe_group && read(B.pe_fd[0], probe, sizeof probe) != (ssize_t)sizeof probe)
            B.pe_group = 0; /* a kernel that does not read inherited groups */
    }
    if (!B.pe_group) { /* separate counters, read one by one */
        close_perf();
        for (int i = 0; i < 3; i++)
            B.pe_fd[i] = perf_open(PERF_TYPE_SOFTWARE, sw[i], PERF_ALONE);
    }
    if (B.pe_fd[PE_TASK_CLOCK] < 0 && !said_perf++)
        tscope__machine_note(
            "perf-software",
            "sampler: perf_event_open refused software counters (%s; "
            "/proc/sys/kernel/perf_event_paranoid); task clock, faults and context "
            "switches skipped\n",
            strerror(errno));
    B.pe_fd[PE_CYCLES] = perf_open(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, PERF_ALONE);
    B.pe_fd[PE_INSTR] = perf_open(PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, PERF_ALONE);
    if ((B.pe_fd[PE_CYCLES] < 0 || B.pe_fd[PE_INSTR] < 0) && !said_hw++)
        tscope__machine_note("perf-hardware",
                             "sampler: no hardware performance counters on this machine "
                             "(perf_event_open: %s); hardware counters skipped\n",
                             strerror(errno));
    B.pe_prev_t = 0;

    B.rapl_path[0] = 0;
    const char *rapl = "/sys/class/powercap/intel-rapl:0/energy_uj";
    char tmp[64];
    if (tscope__proc_read(rapl, tmp, sizeof tmp) == 0) {
        snprintf(B.rapl_path, sizeof B.rapl_path, "%s", rapl);
        B.rapl_prev_t = 0;
    } else if (!said_rapl++) {
        tscope__machine_note("rapl",
                             "sampler: no readable RAPL energy counter (%s); power is an "
                             "estimate: power.estimate_w = %ld CPUs x (%g W + %g W x utilization) "
                             "(TASKSCOPE_POWER_MODEL)\n",
                             rapl, B.ncpu, B.idle_w, B.max_w - B.idle_w);
    }
}

/* Two byte counters of one source (a, b; prev[0], prev[1]) as rates per
 * second since the source's previous read. */
static void rates(int src, uint64_t prev[2], uint64_t a, uint64_t b, double now,
                  const char *series_a, const char *series_b, tscope_sample_emit_fn emit, void *ctx)
{
    if (B.have_prev[src] && now > B.prev_t[src]) {
        emit(ctx, series_a, (double)(a - prev[0]) / (now - B.prev_t[src]));
        emit(ctx, series_b, (double)(b - prev[1]) / (now - B.prev_t[src]));
    }
    prev[0] = a;
    prev[1] = b;
    B.have_prev[src] = 1;
    B.prev_t[src] = now;
}

static void proc_sources(double now, tscope_sample_emit_fn emit, void *ctx, double *util)
{
    uint64_t a, b;
    if (read_src(SRC_STAT) == 0) {
        if (tscope__proc_stat_cpu(buf, &a, &b)) {
            parse_failed(SRC_STAT);
        } else {
            if (B.have_prev[SRC_STAT] && b > B.cpu_total) {
                *util = (double)(a - B.cpu_busy) / (double)(b - B.cpu_total);
                emit(ctx, "sys.cpu_utilization", *util);
            }
            B.cpu_busy = a;
            B.cpu_total = b;
            B.have_prev[SRC_STAT] = 1;
        }
    }
    if (read_src(SRC_MEMINFO) == 0) {
        if (tscope__proc_key(buf, "MemTotal", &a) || tscope__proc_key(buf, "MemAvailable", &b))
            parse_failed(SRC_MEMINFO);
        else
            emit(ctx, "sys.mem_used_bytes", (double)(a - b));
    }
    if (read_src(SRC_NET) == 0) {
        if (tscope__proc_net_dev(buf, &a, &b))
            parse_failed(SRC_NET);
        else
            rates(SRC_NET, B.net, a, b, now, "sys.net_rx_bytes_per_s", "sys.net_tx_bytes_per_s",
                  emit, ctx);
    }
    if (read_src(SRC_IO) == 0) {
        if (tscope__proc_key(buf, "read_bytes", &a) || tscope__proc_key(buf, "write_bytes", &b))
            parse_failed(SRC_IO);
        else
            rates(SRC_IO, B.io, a, b, now, "proc.io_read_bytes_per_s", "proc.io_write_bytes_per_s",
                  emit, ctx);
    }
    double load;
    if (read_src(SRC_LOAD) == 0) {
        if (tscope__proc_loadavg(buf, &load))
            parse_failed(SRC_LOAD);
        else
            emit(ctx, "sys.loadavg1", load);
    }
}

static void perf_sources(double now, tscope_sample_emit_fn emit, void *ctx)
{
    uint64_t v[NPE], group[1 + PE_CSW + 1];
    int first = 0;
    if (B.pe_group) {
        if (read(B.pe_fd[0], group, sizeof group) != (ssize_t)sizeof group ||
            group[0] != PE_CSW + 1)
            return; /* no counts this time; the next read gives the rates since the last */
        memcpy(v, group + 1, (PE_CSW + 1) * sizeof *v); /* nr, then the values in order */
        first = PE_CSW + 1;
    }
    for (int i = first; i < NPE; i++)
        v[i] = perf_read(B.pe_fd[i]);
    double dt = now - B.pe_prev_t;
    if (B.pe_prev_t > 0 && dt > 0) {
        if (B.pe_fd[PE_TASK_CLOCK] >= 0) {
            emit(ctx, "proc.cpu_cores_used",
                 (double)(v[PE_TASK_CLOCK] - B.pe_prev[PE_TASK_CLOCK]) * 1e-9 / dt);
            emit(ctx, "proc.page_faults_per_s", (double)(v[PE_FAULTS] - B.pe_prev[PE_FAULTS]) / dt);
            emit(ctx, "proc.context_switches_per_s", (double)(v[PE_CSW] - B.pe_prev[PE_CSW]) / dt);
        }
        uint64_t cyc = v[PE_CYCLES] - B.pe_prev[PE_CYCLES];
        if (B.pe_fd[PE_CYCLES] >= 0 && B.pe_fd[PE_INSTR] >= 0 && cyc)
            emit(ctx, "proc.instructions_per_cycle",
                 (double)(v[PE_INSTR] - B.pe_prev[PE_INSTR]) / (double)cyc);
    }
    memcpy(B.pe_prev, v, sizeof v);
    B.pe_prev_t = now;
}

static void power_source(double now, double util, tscope_sample_emit_fn emit, void *ctx)
{
    if (B.rapl_path[0]) {
        char tmp[64];
        unsigned long long uj;
        if (tscope__proc_read(B.rapl_path, tmp, sizeof tmp) || sscanf(tmp, "%llu", &uj) != 1) {
            fprintf(stderr, "taskscope: sampler: %s stopped being readable; power skipped\n",
                    B.rapl_path);
            B.rapl_path[0] = 0;
            return;
        }
        if (B.rapl_prev_t > 0 && now > B.rapl_prev_t && uj >= B.rapl_prev)
            emit(ctx, "power.package_w", (double)(uj - B.rapl_prev) * 1e-6 / (now - B.rapl_prev_t));
        B.rapl_prev = uj;
        B.rapl_prev_t = now;
        return;
    }
    if (util < 0)
        return; /* no utilisation: no estimate */
    double w = (double)B.ncpu * (B.idle_w + (B.max_w - B.idle_w) * util);
    if (B.last_power_t > 0)
        B.energy_j += w * (now - B.last_power_t);
    B.last_power_t = now;
    emit(ctx, "power.estimate_w", w);
    emit(ctx, "energy.estimate_j", B.energy_j);
}

static void system_sample(void *data, double seconds, tscope_sample_emit_fn emit, void *ctx)
{
    (void)data;
    (void)seconds;
    double now = tscope__sampler_now();
    if (B.last_slow == 0 || now - B.last_slow >= 0.1) {
        unsigned long long size, resident;
        if (read_src(SRC_STATM) == 0) {
            if (sscanf(buf, "%llu %llu", &size, &resident) != 2)
                parse_failed(SRC_STATM);
            else
                emit(ctx, "proc.rss_bytes", (double)resident * (double)B.page);
        }
        perf_sources(now, emit, ctx);
        tscope__papi_sample(now, emit, ctx);
        double util = -1;
        proc_sources(now, emit, ctx, &util);
        if (util >= 0)
            B.util = util;
        power_source(now, B.util, emit, ctx);
        B.last_slow = now;
    }
}

const struct tscope__builtin_source tscope__source_system = {
    "taskscope.system", TSCOPE__SOURCE_FIRST, system_sample, system_start, system_stop};
