/* procfs.h - parsers for the /proc files the sampler reads.  Each takes the
 * file's text (so the tests run them on fixture copies) and returns 0, or -1
 * when the text does not have what was asked. */
#ifndef TSCOPE_SAMPLER_PROCFS_H
#define TSCOPE_SAMPLER_PROCFS_H

#include <stdint.h>

/* /proc/stat, the aggregate "cpu" line: busy and total jiffies (total =
 * user+nice+system+idle+iowait+irq+softirq+steal; busy = total - idle -
 * iowait). */
int tscope__proc_stat_cpu(const char *text, uint64_t *busy, uint64_t *total);
/* "Key:   123 kB" or "key: 123" lines (/proc/self/status, /proc/meminfo,
 * /proc/self/io): the value in bytes when the unit is kB, else as is. */
int tscope__proc_key(const char *text, const char *key, uint64_t *value);
/* /proc/net/dev: received and transmitted bytes over every interface but lo. */
int tscope__proc_net_dev(const char *text, uint64_t *rx, uint64_t *tx);
/* /proc/loadavg: the 1-minute load average. */
int tscope__proc_loadavg(const char *text, double *load1);
/* Reads a whole (small) file into buf (NUL-terminated); 0 or -1. */
int tscope__proc_read(const char *path, char *buf, unsigned long len);
/* The same from a descriptor kept open, from offset 0 (the kernel makes the
 * text anew): no open and close per read (~10 us on this VM while the
 * program keeps the CPUs busy). */
int tscope__proc_pread(int fd, char *buf, unsigned long len);

#endif
