/* outfile.c - files written whole or not at all (outfile.h). */
#include "outfile.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

int tscope__outfile_open(struct tscope__outfile *o, const char *path, char *err, size_t errlen)
{
    *o = (struct tscope__outfile){.path = path};
    if (strcmp(path, "-") == 0) {
        o->f = stdout;
        return 0;
    }
    /* what is there and is not a regular file (/dev/null, a FIFO, a
     * terminal) is written into: a rename would replace it with a file */
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        o->f = fopen(path, "w");
        if (!o->f) {
            snprintf(err, errlen, "cannot create %s: %s", path, strerror(errno));
            return -1;
        }
        return 0;
    }
    if ((size_t)snprintf(o->tmp, sizeof o->tmp, "%s.tmp", path) >= sizeof o->tmp) {
        snprintf(err, errlen, "cannot create %s: %s", path, strerror(ENAMETOOLONG));
        return -1;
    }
    o->f = fopen(o->tmp, "w");
    if (!o->f) {
        snprintf(err, errlen, "cannot create %s: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

void tscope__outfile_fail(struct tscope__outfile *o)
{
    if (!o->errnum)
        o->errnum = errno ? errno : EIO;
}

int tscope__outfile_close(struct tscope__outfile *o, int ok, char *err, size_t errlen)
{
    if (!o->f)
        return -1;
    int failed = ferror(o->f) != 0;
    errno = 0;
    int bad = o->f == stdout ? fflush(o->f) : fclose(o->f);
    if (bad && !o->errnum)
        o->errnum = errno ? errno : EIO;
    if ((failed || bad) && !o->errnum)
        o->errnum = EIO;
    o->f = NULL;
    if (o->errnum)
        snprintf(err, errlen, "writing %s failed: %s", o->path, strerror(o->errnum));
    if (ok && !o->errnum)
        return 0;
    tscope__outfile_discard(o);
    return -1;
}

int tscope__outfile_commit(struct tscope__outfile *o, char *err, size_t errlen)
{
    if (!o->tmp[0] || rename(o->tmp, o->path) == 0) {
        o->tmp[0] = 0;
        return 0;
    }
    snprintf(err, errlen, "cannot write %s: %s", o->path, strerror(errno));
    tscope__outfile_discard(o);
    return -1;
}

void tscope__outfile_discard(struct tscope__outfile *o)
{
    if (o->tmp[0])
        remove(o->tmp);
    o->tmp[0] = 0;
}

int tscope__outfile_finish(struct tscope__outfile *o, int ok, char *err, size_t errlen)
{
    if (tscope__outfile_close(o, ok, err, errlen))
        return -1;
    return tscope__outfile_commit(o, err, errlen);
}
