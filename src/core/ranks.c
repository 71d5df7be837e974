/* ranks.c - what taskscope knows of MPI launchers: which rank of which job
 * this process is, from the environment an MPI launcher (or Slurm) gives its
 * processes, before MPI_Init runs (the adapters start measuring before the
 * program initialises MPI, and `taskscope run` names the rank's output
 * folder before the program starts; the MPI adapter checks the answer
 * against MPI_Comm_rank later); and the launchers' programs by name.
 *
 * The launchers' names are public (tscope_mpi_launcher) because two
 * clients of the public API need them: `taskscope run` refuses to start a
 * launcher (it must come before taskscope run), and the pthread adapter,
 * which only uses the public API, does not measure a launcher or its
 * daemon that inherited its preload.  One table, here, with the other
 * launcher facts, serves both. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/ranks.h"
#include "taskscope/taskscope.h"

/* A whole non-negative decimal number below limit, else -1. */
static long env_num(const char *name, long limit)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return -1;
    char *end;
    long n = strtol(v, &end, 10);
    return *end || n < 0 || n >= limit ? -1 : n;
}

int tscope_rank_from_env(int *rank, int *nranks)
{
    static const char *const vars[][2] = {
        {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"}, /* Open MPI */
        {"PMI_RANK", "PMI_SIZE"},                         /* MPICH's Hydra, Intel MPI */
        {"PMIX_RANK", "OMPI_COMM_WORLD_SIZE"},            /* PMIx launchers */
        {"SLURM_PROCID", "SLURM_NTASKS"},                 /* srun */
    };
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        long n = env_num(vars[i][1], 65537), r = env_num(vars[i][0], 65536);
        if (n >= 1 && r >= 0 && r < n) {
            if (rank)
                *rank = (int)r;
            if (nranks)
                *nranks = (int)n;
            return 1;
        }
    }
    return 0;
}

/* The programs of MPI launchers (Open MPI's mpirun, orterun, prterun and
 * the orted/prted daemons they, or a singleton MPI_Init, start; MPICH's
 * Hydra and its proxy; Slurm's srun and slurmstepd). */
static const struct {
    const char *name;
    int role; /* TSCOPE_LAUNCHER_* */
} launchers[] = {
    {"mpirun", TSCOPE_LAUNCHER_RANKS},           {"mpiexec", TSCOPE_LAUNCHER_RANKS},
    {"orterun", TSCOPE_LAUNCHER_RANKS},          {"prterun", TSCOPE_LAUNCHER_RANKS},
    {"mpiexec.hydra", TSCOPE_LAUNCHER_RANKS},    {"srun", TSCOPE_LAUNCHER_RANKS},
    {"orted", TSCOPE_LAUNCHER_DAEMON},           {"prted", TSCOPE_LAUNCHER_DAEMON},
    {"hydra_pmi_proxy", TSCOPE_LAUNCHER_DAEMON}, {"slurmstepd", TSCOPE_LAUNCHER_DAEMON},
};

int tscope_mpi_launcher(const char *program)
{
    if (!program)
        return 0;
    const char *base = strrchr(program, '/') ? strrchr(program, '/') + 1 : program;
    for (size_t i = 0; i < sizeof launchers / sizeof *launchers; i++)
        if (!strcmp(base, launchers[i].name))
            return launchers[i].role;
    return 0;
}

void tscope__job_id(char *buf, size_t len)
{
    const char *ns = getenv("PMIX_NAMESPACE");
    const char *ompi = getenv("OMPI_MCA_ess_base_jobid");
    const char *slurm = getenv("SLURM_JOB_ID");
    const char *hydra = getenv("PMI_KVSNAME");
    if (ns && *ns)
        snprintf(buf, len, "pmix %s", ns);
    else if (ompi && *ompi)
        snprintf(buf, len, "ompi %s", ompi);
    else if (slurm && *slurm)
        snprintf(buf, len, "slurm %s.%s", slurm,
                 getenv("SLURM_STEP_ID") ? getenv("SLURM_STEP_ID") : "0");
    else if (hydra && *hydra)
        snprintf(buf, len, "pmi %s", hydra);
    else /* the ranks of one node share the launcher's daemon */
        snprintf(buf, len, "parent %ld", (long)getppid());
}
