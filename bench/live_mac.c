/* live_mac.c - what the live channel's authentication costs per frame
 * (`scripts/bench live`, bench/live.sh): sealing a frame (sequence number and
 * keyed BLAKE2b-256, src/live/auth.c: what the process's live thread does per
 * snapshot and the dashboard per command) and checking one (what the
 * dashboard's ingest thread does per snapshot), for payloads of the sizes a
 * snapshot has (0.8 KB small, 4.6 KB as tests/live/fakeproc --pad 30, 16 KB
 * large), and the whole handshake (both sides' computations, no network).
 *
 *   usage: live_mac [ROUNDS]     one JSON line per measurement
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "live/auth.h"

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void line(const char *variant, const char *metric, double v, const char *unit)
{
    printf("{\"bench\":\"live\",\"variant\":\"%s\",\"metric\":\"%s\",\"value\":%.6g,"
           "\"unit\":\"%s\"}\n",
           variant, metric, v, unit);
}

int main(int argc, char **argv)
{
    long rounds = argc > 1 ? atol(argv[1]) : 20000;
    char why[600];
    if (rounds < 1 || tscope__live_crypto(why, sizeof why)) {
        fprintf(stderr, "live_mac: %s\n", rounds < 1 ? "usage: live_mac [ROUNDS]" : why);
        return 1;
    }
    unsigned char secret[TSCOPE__LIVE_SECRET];
    tscope__live_random(secret, sizeof secret);
    /* a proven pair of sessions, as after a connection's handshake */
    struct tscope__live_session p, d;
    unsigned char c1[TSCOPE__LIVE_CHALLENGE_BYTES], c2[TSCOPE__LIVE_CHALLENGE_BYTES];
    unsigned char proof[TSCOPE__LIVE_PROOF_BYTES];
    struct tscope__live_frame f;
    size_t used;
    double t0 = now_ns();
    long hs = rounds / 10 + 1;
    for (long r = 0; r < hs; r++) {
        tscope__live_session_begin(&p, TSCOPE__LIVE_SIDE_PROCESS, secret, c1);
        tscope__live_session_begin(&d, TSCOPE__LIVE_SIDE_DASHBOARD, secret, NULL);
        tscope__live_parse(c1, sizeof c1, &f, &used);
        tscope__live_session_challenged(&d, &f, c2);
        tscope__live_parse(c2, sizeof c2, &f, &used);
        if (tscope__live_session_answer(&p, &f, proof))
            return 1;
        tscope__live_parse(proof, sizeof proof, &f, &used);
        if (tscope__live_session_proven(&d, &f))
            return 1;
    }
    line("live_auth", "handshake_us", (now_ns() - t0) / (double)hs / 1e3, "us");
    static const struct {
        const char *name;
        size_t bytes;
    } sizes[] = {{"800B", 800}, {"4600B", 4600}, {"16KB", 16384}};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        size_t len = TSCOPE__LIVE_FRAME_BYTES(sizes[k].bytes);
        unsigned char *frame = malloc(len);
        if (!frame)
            return 1;
        memset(frame + TSCOPE__LIVE_HEADER, 'x', sizes[k].bytes);
        tscope__live_header(frame, TSCOPE__LIVE_SNAPSHOT, sizes[k].bytes);
        double seal = 0, open = 0;
        for (long r = 0; r < rounds; r++) {
            double a = now_ns();
            tscope__live_seal(&p, ++p.send_seq, frame, len);
            double b = now_ns();
            const char *bad;
            tscope__live_parse(frame, len, &f, &used);
            if (tscope__live_open(&d, frame, used, &f, &bad))
                return 1;
            open += now_ns() - b;
            seal += b - a;
        }
        char metric[64];
        snprintf(metric, sizeof metric, "seal_us_%s", sizes[k].name);
        line("live_auth", metric, seal / (double)rounds / 1e3, "us");
        snprintf(metric, sizeof metric, "check_us_%s", sizes[k].name);
        line("live_auth", metric, open / (double)rounds / 1e3, "us");
        free(frame);
    }
    return 0;
}
