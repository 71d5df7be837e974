/* client.h - the measured process's side of the live channel (src/live/auth.h)
 * on a blocking socket, for the programs that play measured processes:
 * tests/live/fakeproc.c and bench/live_sim.c.  Header-only.
 *
 * live_client_handshake: sends the CHALLENGE, reads the dashboard's, checks
 * its proof and sends the PROOF; live_client_frame: a frame sealed with the
 * session's next sequence number.  The library's own side (stream.c) does
 * the same on its non-blocking socket. */
#ifndef TSCOPE_TESTS_LIVE_CLIENT_H
#define TSCOPE_TESTS_LIVE_CLIENT_H

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "live/auth.h"

/* Sends all of p[0, n): 0, or -1. */
static inline int live_client_send(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n > 0) {
        ssize_t k = send(fd, c, n, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        c += k;
        n -= (size_t)k;
    }
    return 0;
}

/* Reads exactly n bytes within ms: 0, or -1 (closed, error, time out). */
static inline int live_client_read(int fd, unsigned char *p, size_t n, int ms)
{
    while (n > 0) {
        struct pollfd pf = {.fd = fd, .events = POLLIN};
        int rc = poll(&pf, 1, ms);
        if (rc < 0 && errno == EINTR)
            continue;
        if (rc <= 0)
            return -1;
        ssize_t k = recv(fd, p, n, 0);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/* The dashboard's CHALLENGE after ours was sent (*s begun): 0, or -1. */
static inline int live_client_their_challenge(int fd, unsigned char *buf,
                                              struct tscope__live_frame *f)
{
    size_t used;
    if (live_client_read(fd, buf, TSCOPE__LIVE_CHALLENGE_BYTES, 10000) != 0 ||
        tscope__live_parse(buf, TSCOPE__LIVE_CHALLENGE_BYTES, f, &used) != TSCOPE__LIVE_OK)
        return -1;
    return 0;
}

/* The whole handshake on fd with secret: 0 and *s proven, or -1 (*why). */
static inline int live_client_handshake(int fd, const unsigned char *secret,
                                        struct tscope__live_session *s, const char **why)
{
    unsigned char mine[TSCOPE__LIVE_CHALLENGE_BYTES], theirs[TSCOPE__LIVE_CHALLENGE_BYTES];
    unsigned char proof[TSCOPE__LIVE_PROOF_BYTES];
    struct tscope__live_frame f;
    tscope__live_session_begin(s, TSCOPE__LIVE_SIDE_PROCESS, secret, mine);
    if (live_client_send(fd, mine, sizeof mine) != 0 ||
        live_client_their_challenge(fd, theirs, &f) != 0) {
        *why = "no challenge from the dashboard";
        return -1;
    }
    if (tscope__live_session_answer(s, &f, proof) != 0) {
        *why = "the dashboard's proof fails under this secret";
        return -1;
    }
    if (live_client_send(fd, proof, sizeof proof) != 0) {
        *why = "the dashboard closed the connection";
        return -1;
    }
    return 0;
}

/* A frame of kind with payload[0, len), sealed with the next sequence
 * number of s (malloc'ed, *n bytes); NULL when too large or out of memory. */
static inline unsigned char *live_client_frame(struct tscope__live_session *s, unsigned kind,
                                               const void *payload, size_t len, size_t *n)
{
    unsigned char *b = malloc(TSCOPE__LIVE_FRAME_BYTES(len));
    if (!b || tscope__live_header(b, kind, len) != 0) {
        free(b);
        return NULL;
    }
    memcpy(b + TSCOPE__LIVE_HEADER, payload, len);
    *n = TSCOPE__LIVE_FRAME_BYTES(len);
    tscope__live_seal(s, ++s->send_seq, b, *n);
    return b;
}

#endif
