/* procfs.c - parsers for /proc/stat, /proc/self/status, /proc/meminfo,
 * /proc/self/io, /proc/net/dev and /proc/loadavg (procfs.h).  Formats as in
 * proc(5); fields the kernel may add later are ignored. */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "procfs.h"

int tscope__proc_pread(int fd, char *buf, unsigned long len)
{
    unsigned long n = 0;
    while (n + 1 < len) {
        unsigned long want = len - 1 - n;
        ssize_t got = pread(fd, buf + n, want, (off_t)n);
        if (got <= 0)
            break;
        n += (unsigned long)got;
        if ((unsigned long)got < want)
            break; /* a short read of a /proc file is its end: no second call */
    }
    buf[n] = 0;
    return n ? 0 : -1;
}

int tscope__proc_read(const char *path, char *buf, unsigned long len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int rc = tscope__proc_pread(fd, buf, len);
    close(fd);
    return rc;
}

int tscope__proc_stat_cpu(const char *text, uint64_t *busy, uint64_t *total)
{
    const char *p = text;
    while (p && strncmp(p, "cpu ", 4) != 0) {
        p = strchr(p, '\n');
        if (p)
            p++;
    }
    if (!p)
        return -1;
    uint64_t v[8] = {0};
    int n = sscanf(p + 4,
                   "%" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64
                   " %" SCNu64 " %" SCNu64,
                   &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]);
    if (n < 4)
        return -1;
    uint64_t t = 0;
    for (int i = 0; i < 8; i++)
        t += v[i];
    *total = t;
    *busy = t - v[3] - v[4];
    return 0;
}

int tscope__proc_key(const char *text, const char *key, uint64_t *value)
{
    size_t klen = strlen(key);
    for (const char *p = text; p && *p;) {
        if (strncmp(p, key, klen) == 0 && p[klen] == ':') {
            char *end;
            unsigned long long v = strtoull(p + klen + 1, &end, 10);
            if (end == p + klen + 1)
                return -1;
            while (*end == ' ' || *end == '\t')
                end++;
            *value = (uint64_t)v * (strncmp(end, "kB", 2) == 0 ? 1024u : 1u);
            return 0;
        }
        p = strchr(p, '\n');
        if (p)
            p++;
    }
    return -1;
}

int tscope__proc_net_dev(const char *text, uint64_t *rx, uint64_t *tx)
{
    uint64_t r = 0, t = 0;
    int found = 0;
    for (const char *p = text; p && *p;) {
        const char *colon = strchr(p, ':'), *nl = strchr(p, '\n');
        if (colon && (!nl || colon < nl)) {
            const char *name = p;
            while (*name == ' ')
                name++;
            unsigned long long v[9];
            if (sscanf(colon + 1, "%llu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1],
                       &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8]) == 9) {
                if (!(colon - name == 2 && strncmp(name, "lo", 2) == 0)) {
                    r += v[0];
                    t += v[8];
                }
                found = 1;
            }
        }
        p = nl ? nl + 1 : NULL;
    }
    if (!found)
        return -1;
    *rx = r;
    *tx = t;
    return 0;
}

int tscope__proc_loadavg(const char *text, double *load1)
{
    return sscanf(text, "%lf", load1) == 1 ? 0 : -1;
}
