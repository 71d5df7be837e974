/* auth.h - the live channel's authentication (docs/dashboard.md), shared by
 * both ends: the measured process (src/live/stream.c) and `taskscope
 * dashboard` (cli/dashboard_ingest.c, through offline/wire.h).
 *
 * Both know a 32-byte secret, which the dashboard makes (or reads from
 * --secret-file) and prints inside the value of TASKSCOPE_LIVE:
 * HOST:PORT/SECRET, SECRET 64 hex digits.  It never crosses the wire.
 *
 * Handshake (frames of proto.h, sequence number 0), before anything else:
 *   process   -> dashboard  CHALLENGE  payload Np (32 random bytes), MAC 0
 *   dashboard -> process    CHALLENGE  payload Nd, MAC = H(S, "D" Np Nd)
 *   process   -> dashboard  PROOF      no payload, MAC = H(S, "P" Np Nd)
 * H is BLAKE2b-256 keyed with the secret S (its MAC mode, RFC 7693) over
 * "taskscope-live-2", a tag byte and both nonces.  The process checks the dashboard's proof before
 * it sends anything about itself; the dashboard checks the process's before it takes any frame.
 * Then every frame in each direction carries the next sequence number (1, 2, ...) and a MAC = keyed
 * BLAKE2b-256 over its header and payload under that direction's session key, H(S, "p" Np Nd) from
 * the process, H(S, "d" Np Nd) from the dashboard: nothing can be changed, injected, reordered or
 * replayed - a frame of an earlier connection was made under other nonces, so its MAC fails here.
 *
 * The crypto is libsodium's (crypto_generichash, sodium_memcmp,
 * randombytes_buf),
 * opened with dlopen at its first use (src/common/lazylib.h): a program
 * without TASKSCOPE_LIVE never loads it.  Built without libsodium-dev,
 * tscope__live_crypto says so and the live channel is off.
 *
 * Thread safety: tscope__live_crypto serialises nothing itself - call it
 * once from one thread (tscope_init, the dashboard's start) before the
 * rest; a session is its owner's alone.
 */
#ifndef TSCOPE_LIVE_AUTH_H
#define TSCOPE_LIVE_AUTH_H

#include <stddef.h>
#include <stdint.h>

#include "proto.h"

#define TSCOPE__LIVE_SECRET 32u
#define TSCOPE__LIVE_NONCE 32u
#define TSCOPE__LIVE_SECRET_HEX (2 * TSCOPE__LIVE_SECRET)
/* the handshake's frames, whole */
#define TSCOPE__LIVE_CHALLENGE_BYTES TSCOPE__LIVE_FRAME_BYTES(TSCOPE__LIVE_NONCE)
#define TSCOPE__LIVE_PROOF_BYTES TSCOPE__LIVE_FRAME_BYTES(0)

/* Loads libsodium (once; later calls answer at once): 0, or -1 with why
 * (cap bytes) saying what is missing. */
int tscope__live_crypto(char *why, size_t cap);
/* n random bytes (after tscope__live_crypto succeeded). */
void tscope__live_random(void *buf, size_t n);

/* Splits TASKSCOPE_LIVE's value "HOST:PORT/SECRET" (HOST may be [v6]):
 * 0, or -1 when it is not one. */
int tscope__live_value(const char *s, char *host, size_t hostlen, char *port, size_t portlen,
                       unsigned char secret[TSCOPE__LIVE_SECRET]);
/* 64 hex digits into secret: 0, or -1. */
int tscope__live_secret_parse(const char *hex, size_t n, unsigned char secret[TSCOPE__LIVE_SECRET]);
/* The secret as 64 lowercase hex digits and a NUL. */
void tscope__live_secret_hex(const unsigned char secret[TSCOPE__LIVE_SECRET],
                             char out[TSCOPE__LIVE_SECRET_HEX + 1]);

enum { TSCOPE__LIVE_SIDE_PROCESS = 0, TSCOPE__LIVE_SIDE_DASHBOARD = 1 };

struct tscope__live_session {
    unsigned char secret[TSCOPE__LIVE_SECRET];
    unsigned char np[TSCOPE__LIVE_NONCE], nd[TSCOPE__LIVE_NONCE];
    unsigned char send_key[32], recv_key[32];
    uint64_t send_seq; /* the last sequence number sealed by its owner */
    uint64_t recv_seq; /* the last one received and checked */
    int side;
    int proven; /* the handshake is done: the peer knows the secret */
};

/* Begins a connection's handshake on side.  The process's CHALLENGE frame
 * (TSCOPE__LIVE_CHALLENGE_BYTES, a fresh nonce) goes to out when side is
 * the process's; out is not used on the dashboard's side (NULL). */
void tscope__live_session_begin(struct tscope__live_session *s, int side,
                                const unsigned char secret[TSCOPE__LIVE_SECRET],
                                unsigned char *out);
/* Dashboard: the process's CHALLENGE f; writes its own into out
 * (TSCOPE__LIVE_CHALLENGE_BYTES, a fresh nonce and its proof).  0, or -1
 * when f is not a CHALLENGE. */
int tscope__live_session_challenged(struct tscope__live_session *s,
                                    const struct tscope__live_frame *f, unsigned char *out);
/* Process: the dashboard's CHALLENGE f.  When its proof holds, the session
 * is proven and the PROOF frame (TSCOPE__LIVE_PROOF_BYTES) goes to out:
 * 0.  -1: f is no CHALLENGE or its proof fails. */
int tscope__live_session_answer(struct tscope__live_session *s, const struct tscope__live_frame *f,
                                unsigned char *out);
/* Dashboard: the process's PROOF f.  0 and the session proven, or -1. */
int tscope__live_session_proven(struct tscope__live_session *s, const struct tscope__live_frame *f);

/* Seals frame[0, len) (a whole frame: header, payload, room for the MAC)
 * as number seq of s's sending direction: writes seq and the MAC.  The
 * caller numbers its frames 1, 2, ... in the order they go out. */
void tscope__live_seal(const struct tscope__live_session *s, uint64_t seq, unsigned char *frame,
                       size_t len);
/* Checks a received frame f (its whole bytes: frame[0, used)) of a proven
 * session: the next sequence number and its MAC.  0 (counted), or -1
 * (*why: what failed). */
int tscope__live_open(struct tscope__live_session *s, const unsigned char *frame, size_t used,
                      const struct tscope__live_frame *f, const char **why);

/* Forgets the secret and the keys (zeroed). */
void tscope__live_session_clear(struct tscope__live_session *s);

#endif
