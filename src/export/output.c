/* output.c - orchestrates the outputs of a run into one fresh folder:
 * the files of each output format selected, in the list's order
 * (core/formats.h, export/list.c).
 *
 * Every file is written to NAME.tmp and renamed when complete
 * (core/outfile.h), so a full disk or a crash never leaves a truncated file
 * under the final name.
 */
#include "output.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/core.h"
#include "core/outfile.h"
#include "core/ranks.h"
#include "export.h"
#include "sampler/sampler.h"

/* 1 if dir exists and holds no entries. */
/* Empty but for the launcher's markers of running processes
 * (.taskscope-PID.running, lifecycle.c) and its descendants' records
 * (.taskscope-PID.descendant, below). */
static int dir_is_empty(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    struct dirent *e;
    int empty = 1;
    while (empty && (e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
            strncmp(e->d_name, ".taskscope-", 11) != 0)
            empty = 0;
    closedir(d);
    return empty;
}

/* The folders above `want` (not want itself); 0, or -1 with errno. */
static int make_parents(const char *want)
{
    char path[1100];
    snprintf(path, sizeof path, "%s", want);
    for (char *c = path + 1; *c; c++) {
        if (*c != '/')
            continue;
        *c = 0;
        if (mkdir(path, 0777) && errno != EEXIST)
            return -1;
        *c = '/';
    }
    return 0;
}

/* Whose the run's folder is, decided once per process (a forked child
 * decides again: its pid differs): the process the launcher started (its
 * parent is the launcher, TASKSCOPE_LAUNCHER_PID; an exec keeps the pid and
 * the parent), or a descendant of it, which gets a folder of its own. */
static struct {
    long pid;       /* the process the answer below is for; 0: none yet */
    int descendant; /* 1: not the process the launcher started */
    char dir[1100]; /* the folder prepared for this process ("": none) */
} prep;

static void prep_decide(void)
{
    long self = (long)getpid();
    if (prep.pid == self)
        return;
    prep.pid = self;
    prep.descendant = 0;
    prep.dir[0] = 0;
    const char *run = getenv("TASKSCOPE_OUTPUT_DIR_PREPARED");
    if (!run || !*run || strlen(run) >= sizeof prep.dir)
        return;
    const char *launcher = getenv("TASKSCOPE_LAUNCHER_PID");
    char *end = NULL;
    long parent = launcher && *launcher ? strtol(launcher, &end, 10) : 0;
    if (!launcher || !*launcher || (end && !*end && parent == (long)getppid()))
        snprintf(prep.dir, sizeof prep.dir, "%s", run); /* (without the pid: as it says) */
    else
        prep.descendant = 1;
}

/* The program's name as a folder name's part: [A-Za-z0-9._+-], others '_'. */
static void name_part(char *out, size_t len)
{
    extern char *program_invocation_short_name;
    const char *name = program_invocation_short_name && *program_invocation_short_name
                           ? program_invocation_short_name
                           : "program";
    size_t i = 0;
    for (; name[i] && i + 1 < len && i < 64; i++) {
        char c = name[i];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '.' || c == '_' || c == '+' || c == '-';
        out[i] = ok ? c : '_';
    }
    out[i] = 0;
}

/* A descendant's folder RUN.PROG.PID (RUN.PROG.PID.1, ... should an earlier
 * process of the same pid have left one), and its record
 * RUN/.taskscope-PID.descendant naming it for the launcher. */
static void make_descendant_dir(const char *run)
{
    char prog[72], want[1024];
    name_part(prog, sizeof prog);
    if (strlen(run) > 900)
        return; /* (TASKSCOPE_OUTPUT_DIR takes 1023 bytes): its outputs go where it says */
    snprintf(want, sizeof want, "%.900s.%s.%ld", run, prog, prep.pid);
    for (int i = 0; i < 100 && !prep.dir[0]; i++) {
        if (i)
            snprintf(prep.dir, sizeof prep.dir, "%s.%d", want, i);
        else
            snprintf(prep.dir, sizeof prep.dir, "%s", want);
        if (mkdir(prep.dir, 0777) == 0)
            break;
        int err = errno;
        prep.dir[0] = 0;
        if (err != EEXIST) {
            fprintf(stderr, "taskscope: error: cannot create output folder %s: %s\n", want,
                    strerror(err));
            return;
        }
    }
    if (!prep.dir[0])
        return;
    /* the record: the folder, then the program's name; one write, read by
     * the launcher once the program it started has ended */
    char record[1200], text[1200];
    snprintf(record, sizeof record, "%s/.taskscope-%ld.descendant", run, prep.pid);
    int n = snprintf(text, sizeof text, "%s\n%s\n", prep.dir, prog);
    int fd = open(record, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd >= 0) {
        if (n <= 0 || write(fd, text, (size_t)n) != n)
            unlink(record); /* the launcher then does not list it; the outputs are there */
        close(fd);
    }
}

const char *tscope__output_prepared(int make)
{
    prep_decide();
    if (make && prep.descendant && !prep.dir[0]) {
        /* only while its output folder is still the run's: one the program
         * that started it chose is its own */
        const char *run = getenv("TASKSCOPE_OUTPUT_DIR_PREPARED");
        const char *want = getenv("TASKSCOPE_OUTPUT_DIR");
        if (want && strcmp(want, run) == 0)
            make_descendant_dir(run);
    }
    return prep.dir[0] ? prep.dir : NULL;
}

/* The folder prepared for this process when `want` is the run's folder
 * (the process's TASKSCOPE_OUTPUT_DIR is the launcher's) and still empty,
 * else NULL; *again: a descendant's own folder, no longer empty (a second
 * init), whose numbering (MINE.1, ...) a fresh folder then takes. */
static const char *prepared_for(const char *want, const char **again)
{
    const char *run = getenv("TASKSCOPE_OUTPUT_DIR_PREPARED");
    const char *mine = tscope__output_prepared(0);
    *again = NULL;
    if (!mine || !run || strcmp(run, want) != 0)
        return NULL;
    if (dir_is_empty(mine))
        return mine;
    if (prep.descendant)
        *again = mine;
    return NULL;
}

int tscope__output_make_dir(const char *want, char *out, size_t len)
{
    /* `taskscope run` creates the folder before starting the program and
     * names it here, so the program and the CLI agree on where output goes;
     * a descendant of that program has its own (tscope__output_prepared) */
    const char *again, *prepared = prepared_for(want, &again);
    if (prepared) {
        snprintf(out, len, "%s", prepared);
        return 0;
    }
    if (again)
        want = again;
    if (make_parents(want))
        return TSCOPE_EIO;
    for (int i = 0; i < 10000; i++) {
        if (i == 0)
            snprintf(out, len, "%s", want);
        else
            snprintf(out, len, "%s.%d", want, i);
        if (mkdir(out, 0777) == 0)
            return 0;
        if (errno != EEXIST)
            return TSCOPE_EIO;
    }
    errno = EEXIST;
    return TSCOPE_EIO;
}

/* Claims folder dir for job: 1 when it is the job's (claimed now or by
 * another rank of it), 0 when it belongs to another job or holds files of
 * another run, -1 on an error.  The marker .taskscope-job is made whole
 * under a name of this process first and linked into place: link() fails
 * when it exists, so exactly one rank creates it and every rank reads it
 * complete. */
/* Whose the marker says the folder is: 1 job's, 0 another's, -1 no marker
 * (errno ENOENT) or unreadable. */
static int marker_is(const char *mark, const char *job)
{
    char have[300];
    FILE *f = fopen(mark, "r");
    if (!f)
        return -1;
    size_t n = fread(have, 1, sizeof have - 1, f);
    fclose(f);
    have[n] = 0;
    return strcmp(have, job) == 0;
}

static int claim_run_dir(const char *dir, const char *job)
{
    if (mkdir(dir, 0777) && errno != EEXIST)
        return -1;
    char mark[1200], tmp[1320];
    snprintf(mark, sizeof mark, "%s/.taskscope-job", dir);
    for (int attempt = 0; attempt < 2; attempt++) {
        int is = marker_is(mark, job);
        if (is >= 0)
            return is;
        if (errno != ENOENT)
            return -1;
        if (!dir_is_empty(dir)) {
            /* a rank of this job may have claimed it since the look above
             * (the marker comes before any rank's folder): look once more */
            is = marker_is(mark, job);
            return is > 0;
        }
        if (attempt)
            return 0;
        char host[64] = "";
        gethostname(host, sizeof host - 1);
        snprintf(tmp, sizeof tmp, "%s/.taskscope-job.%.63s.%ld", dir, host, (long)getpid());
        FILE *f = fopen(tmp, "w");
        if (!f)
            return -1;
        int bad = fputs(job, f) < 0;
        bad = fclose(f) || bad;
        int linked = !bad && link(tmp, mark) == 0;
        int err = errno;
        unlink(tmp);
        if (linked)
            return 1;
        if (bad || err != EEXIST)
            return -1;
        /* another rank made it first: read it */
    }
    return 0;
}

int tscope__output_make_rank_dir(const char *want, int rank, int nranks, char *out, size_t len,
                                 char *run, size_t runlen)
{
    run[0] = 0;
    if (nranks <= 1)
        return tscope__output_make_dir(want, out, len);
    const char *again, *prepared = prepared_for(want, &again);
    const char *prun = getenv("TASKSCOPE_RUN_DIR");
    if (prepared && prun && *prun) {
        snprintf(out, len, "%s", prepared);
        snprintf(run, runlen, "%s", prun);
        return 0;
    }
    char job[256];
    tscope__job_id(job, sizeof job);
    if (make_parents(want))
        return TSCOPE_EIO;
    for (int i = 0; i < 10000; i++) {
        if (i == 0)
            snprintf(run, runlen, "%s", want);
        else
            snprintf(run, runlen, "%s.%d", want, i);
        int c = claim_run_dir(run, job);
        if (c < 0) {
            run[0] = 0;
            return TSCOPE_EIO;
        }
        if (c) {
            char mine[1200];
            snprintf(mine, sizeof mine, "%s/rank-%d", run, rank);
            return tscope__output_make_dir(mine, out, len);
        }
    }
    run[0] = 0;
    errno = EEXIST;
    return TSCOPE_EIO;
}

int tscope__output_write_file(const char *dir, const char *name, tscope__writer_fn fn,
                              const struct tscope__profile *p)
{
    char path[1200], err[1400] = "";
    snprintf(path, sizeof path, "%s/%s", dir, name);
    struct tscope__outfile o;
    int rc = tscope__outfile_open(&o, path, err, sizeof err);
    if (rc == 0) {
        rc = fn(p, o.f);
        if (rc && ferror(o.f)) /* errno: why the write failed */
            tscope__outfile_fail(&o);
        if (rc) /* said more precisely below when a write failed */
            snprintf(err, sizeof err, "writing %s failed: %s", path, tscope_strerror(rc));
        if (tscope__outfile_finish(&o, rc == 0, err, sizeof err))
            rc = TSCOPE_EIO;
    } else {
        rc = TSCOPE_EIO;
    }
    if (rc)
        fprintf(stderr, "taskscope: error: %s\n", err);
    return rc;
}

const struct tscope__output_entry *tscope__output_find(const char *word)
{
    for (unsigned i = 0; i < tscope__noutputs; i++)
        if (tscope__format_is(tscope__outputs[i].id, word, strlen(word)))
            return &tscope__outputs[i];
    return NULL;
}

void tscope__output_file_name(const char *name, int rank, char *out, size_t len)
{
    const char *at = strstr(name, "RANK");
    if (at)
        snprintf(out, len, "%.*s%d%s", (int)(at - name), name, rank, at + 4);
    else
        snprintf(out, len, "%s", name);
}

/* The folder a file's name has in it (tau/), made in dir; 0 or TSCOPE_EIO
 * after one line. */
static int make_file_folder(const char *dir, const char *name)
{
    const char *slash = strrchr(name, '/');
    if (!slash)
        return 0;
    char path[1200];
    snprintf(path, sizeof path, "%s/%.*s", dir, (int)(slash - name), name);
    if (mkdir(path, 0777) && errno != EEXIST) {
        fprintf(stderr, "taskscope: error: cannot create %s: %s\n", path, strerror(errno));
        return TSCOPE_EIO;
    }
    return 0;
}

int tscope__output_write_files(const char *dir, int outputs, int sampled,
                               const struct tscope__profile *p, char *written, size_t len)
{
    int first = 0;
    if (written && len)
        written[0] = 0;
    for (unsigned i = 0; i < tscope__noutputs; i++) {
        if (!(outputs & tscope__outputs[i].id->bit))
            continue;
        const struct tscope__output_file *files = tscope__outputs[i].format->files, *file;
        int failed[sizeof tscope__outputs[i].format->files /
                   sizeof tscope__outputs[i].format->files[0]] = {0};
        for (file = files; file->name; file++) {
            if (file->sampled && !sampled)
                continue;
            int skip = 0; /* a script whose data failed: it would draw nothing */
            for (const struct tscope__output_file *d = files; file->needs && d < file; d++)
                skip |= failed[d - files] && strcmp(d->name, file->needs) == 0;
            if (skip)
                continue;
            char name[256];
            tscope__output_file_name(file->name, p->rank, name, sizeof name);
            int rc = make_file_folder(dir, name);
            if (!rc)
                rc = tscope__output_write_file(dir, name, file->write, p);
            failed[file - files] = rc != 0;
            if (rc && !first)
                first = rc;
            if (!rc && written && len) {
                strncat(written, written[0] ? ", " : "", len - strlen(written) - 1);
                strncat(written, name, len - strlen(written) - 1);
            }
        }
    }
    return first;
}
