/* format.c - small formatting helpers shared by the exporters. */
#include <math.h>
#include <string.h>

#include "core/core.h"
#include "core/json_escape.h"
#include "export.h"

void tscope__fmt_json_string(FILE *f, const char *s)
{
    char buf[8];
    fputc('"', f);
    size_t n;
    for (const unsigned char *c = (const unsigned char *)s; *c; c += n) {
        const char *e = tscope__json_escape(c, buf, &n);
        if (e)
            fputs(e, f);
        else
            fwrite(c, 1, n, f);
    }
    fputc('"', f);
}

void tscope__fmt_dot_text(FILE *f, const char *s)
{
    for (const unsigned char *c = (const unsigned char *)s; *c;) {
        size_t n = *c >= 0x80 ? tscope__utf8_len(c, SIZE_MAX) : 1;
        if (n > 1) {
            fwrite(c, 1, n, f);
            c += n;
            continue;
        }
        if (*c >= 0x80) { /* U+0080..U+00FF */
            fputc(0xC0 | (*c >> 6), f);
            fputc(0x80 | (*c & 0x3F), f);
        } else if (*c == '"' || *c == '\\') {
            fputc('\\', f);
            fputc(*c, f);
        } else if (*c == '\n') {
            fputs("\\n", f);
        } else {
            fputc(*c < 0x20 || *c == 0x7F ? ' ' : *c, f);
        }
        c++;
    }
}

void tscope__fmt_csv_field(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\n\r")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

void tscope__fmt_json_number(FILE *f, double v)
{
    if (!isfinite(v))
        v = 0;
    fprintf(f, "%.17g", v);
}

int64_t tscope__ns_whole(double ns)
{
    return ns >= 0.5 && ns < 9e18 ? (int64_t)(ns + 0.5) : 0;
}

/* Bin b summed over the threads' rows (a thread without one adds 0). */
static int64_t threads_bin(double *const *rows, uint32_t n, uint32_t b)
{
    double sum = 0;
    for (uint32_t t = 0; t < n; t++)
        if (rows[t])
            sum += rows[t][b];
    return tscope__ns_whole(sum);
}

int64_t tscope__profile_busy_bin(const struct tscope__profile *p, uint32_t b)
{
    return threads_bin(p->tl.thread, p->tl.nthread, b);
}

int64_t tscope__profile_wait_bin(const struct tscope__profile *p, uint32_t b)
{
    return threads_bin(p->tl.wait, p->tl.nwait, b);
}

double tscope__profile_total_self(const struct tscope__profile *p)
{
    double total = 0;
    for (uint32_t i = 0; i < p->ntypes; i++)
        total += p->types[i].self_total;
    return total;
}

const char *tscope__fmt_ended_by(const struct tscope__profile *p, char *buf, size_t len)
{
    if (p->ended_by == TSCOPE__ENDED_BY_EXIT)
        return "_exit";
    const char *abbrev = p->ended_by > 0 ? sigabbrev_np(p->ended_by) : NULL;
    if (abbrev)
        snprintf(buf, len, "SIG%s", abbrev);
    else
        snprintf(buf, len, "signal %d", p->ended_by);
    return buf;
}

void tscope__fmt_loss_note(const struct tscope__profile *p, FILE *f, const char *prefix)
{
    const tscope_totals_t *t = &p->totals;
    if (t->events_dropped)
        fprintf(f,
                "%sWARNING: %llu events were dropped (full rings, TASKSCOPE_FULL_POLICY=drop); "
                "numbers below are incomplete\n",
                prefix, (unsigned long long)t->events_dropped);
    if (t->instances_cut_off)
        fprintf(f,
                "%snote: instance graph capped: %llu tasks not recorded (TASKSCOPE_INSTANCE_CAP)\n",
                prefix, (unsigned long long)t->instances_cut_off);
    if (t->tasks_unfinished)
        fprintf(f, "%snote: %llu tasks began and never ended\n", prefix,
                (unsigned long long)t->tasks_unfinished);
}
