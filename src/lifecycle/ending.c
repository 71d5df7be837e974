/* ending.c - settle, snapshot, write: the end of every run.
 *
 * tscope_finalize (lifecycle.c) ends a run this process measured; the
 * recovery (recover.c) ends one whose process died, from the store it
 * rebuilt out of the crash journal.  Both close what still runs at the end,
 * make the store final, mark the measurement finalised (queries and the
 * snapshot then read the run as ended), and write the same outputs from one
 * snapshot: what differs between them is in struct tscope__ending, not in
 * two copies of this sequence.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "export/pictures.h"
#include "export/export.h"
#include "export/output.h"
#include "profile/profile.h"
#include "profile/shard.h"
#include "profile/store.h"
#include "ending.h"

/* The outputs into this process's rank folder (made now unless the trace
 * made it at init), or into e->outdir. */
static int write_outputs(const struct tscope__ending *e, const struct tscope__config *cfg,
                         const struct tscope__profile *p)
{
    char written[512] = "";
    if (e->outdir)
        return tscope__output_write_files(e->outdir, cfg->outputs, e->sampled, p, written,
                                          sizeof written);
    if (!tscope__g.outdir[0] &&
        tscope__output_make_rank_dir(cfg->output_dir, tscope__g.rank, tscope__g.nranks,
                                     tscope__g.outdir, sizeof tscope__g.outdir, tscope__g.rundir,
                                     sizeof tscope__g.rundir)) {
        fprintf(stderr, "taskscope: error: cannot create output folder %s: %s; no files written\n",
                cfg->output_dir, strerror(errno));
        tscope__g.outdir[0] = 0;
        return TSCOPE_EIO;
    }
    const char *prepared = tscope__output_prepared(0); /* (a descendant's own, RUN.PROG.PID) */
    if (!tscope__g.rundir[0] && strcmp(tscope__g.outdir, cfg->output_dir) != 0 &&
        !(prepared && strcmp(tscope__g.outdir, prepared) == 0))
        tscope__note("%s already exists; writing to %s instead\n", cfg->output_dir,
                     tscope__g.outdir);
    int rc = tscope__output_write_files(tscope__g.outdir, cfg->outputs, e->sampled, p, written,
                                        sizeof written);
    /* under `taskscope run` the launcher lists them, pictures included (a
     * descendant's too): said once */
    if (!prepared)
        tscope__note("outputs in %s/ (%s)\n", tscope__g.outdir, written);
    return rc;
}

int tscope__settle_snapshot_write(struct tscope__store *s, struct tscope__ending *e,
                                  double *elapsed_s)
{
    pthread_mutex_lock(&s->lock);
    if (e->from_journal)
        tscope__shards_recover(s, &e->end);
    else
        tscope__shards_complete(s, e->end);
    tscope__store_complete(s, e->end);
    pthread_mutex_unlock(&s->lock);
    if (e->from_journal) {
        char parts[1024];
        int named = tscope__shards_damage_parts(parts, sizeof parts) > 0;
        if (tscope__shards_damaged())
            fprintf(stderr,
                    "taskscope: warning: %s.map: %llu bytes in it are damaged (not whole blocks); "
                    "what they held is lost (%s), the rest is recovered\n",
                    e->journal, (unsigned long long)tscope__shards_damaged(),
                    named ? parts : "no thread's shard or slot pointed there");
        else if (named) /* whole blocks, but a pointer, block header or count in them is not */
            fprintf(stderr,
                    "taskscope: warning: %s.map: parts of it are damaged (a pointer or block "
                    "header that leads to no whole block, a count that disagrees with the "
                    "entries); what they held is lost (%s), the rest is recovered\n",
                    e->journal, parts);
    }
    tscope__g.end_ticks = e->end;
    tscope__g.initialised = 0;
    tscope__g.finalised = 1;

    const struct tscope__config *cfg = &s->cfg;
    if (!e->write || (!cfg->summary && !cfg->outputs && !elapsed_s))
        return 0;
    struct tscope__profile *p = tscope__profile_snapshot();
    if (p && e->program) {
        free(p->program);
        if (!(p->program = strdup(e->program))) {
            tscope__profile_free(p);
            p = NULL;
        }
    }
    if (!p)
        return TSCOPE_ENOMEM;
    if (elapsed_s)
        *elapsed_s = p->totals.elapsed_ns / 1e9;
    if (cfg->summary && e->summary) {
        tscope__export_summary(p, e->summary, cfg->summary_sort, cfg->summary_rows);
        fflush(e->summary);
    }
    tscope__pictures_use(cfg->pictures); /* the process's (a recovery's: the dead one's) */
    int rc = cfg->outputs ? write_outputs(e, cfg, p) : 0;
    tscope__profile_free(p);
    return rc;
}
