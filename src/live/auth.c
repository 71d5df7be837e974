/* auth.c - the live channel's handshake and frame MACs (auth.h), and the
 * value of TASKSCOPE_LIVE.  libsodium is opened with dlopen at the first
 * tscope__live_crypto, by the SONAME found at build time. */
#include "auth.h"

#include <stdio.h>
#include <string.h>

#ifdef TSCOPE_HAVE_SODIUM

#include <sodium.h>

#include "common/lazylib.h"

#define SODIUM_FUNCS(X)                                                                            \
    X(sodium_init)                                                                                 \
    X(crypto_generichash)                                                                          \
    X(sodium_memcmp)                                                                               \
    X(randombytes_buf)                                                                             \
    X(sodium_memzero)

SODIUM_FUNCS(TSCOPE__LAZY_DECLARE)
static const struct tscope__lazy_sym sodium_syms[] = {SODIUM_FUNCS(TSCOPE__LAZY_SYM)};

int tscope__live_crypto(char *why, size_t cap)
{
    static int state, ready;
    char reason[512] = "";
    if (tscope__lazy_load(&state, TSCOPE_SODIUM_SONAME, sodium_syms,
                          sizeof sodium_syms / sizeof *sodium_syms, reason, sizeof reason)) {
        if (why)
            snprintf(why, cap, "%s", reason[0] ? reason : "libsodium could not be loaded");
        return -1;
    }
    if (!ready && p_sodium_init() < 0) {
        if (why)
            snprintf(why, cap, "libsodium could not start (sodium_init)");
        return -1;
    }
    ready = 1;
    return 0;
}

void tscope__live_random(void *buf, size_t n)
{
    p_randombytes_buf(buf, n);
}

/* BLAKE2b-256 keyed with a 32-byte key: a MAC (RFC 7693), ~3 times faster
 * than HMAC-SHA-256 in libsodium here, which matters to the dashboard that
 * checks every process's snapshots. */
static void mac(unsigned char out[32], const unsigned char *in, size_t n, const unsigned char *key)
{
    p_crypto_generichash(out, 32, in, n, key, 32);
}

/* In constant time. */
static int mac_ok(const unsigned char want[32], const unsigned char *in, size_t n,
                  const unsigned char *key)
{
    unsigned char got[32];
    mac(got, in, n, key);
    return p_sodium_memcmp(got, want, 32) == 0;
}

static void wipe(void *p, size_t n)
{
    p_sodium_memzero(p, n);
}

#else /* built without libsodium-dev: the live channel is off */

int tscope__live_crypto(char *why, size_t cap)
{
    if (why)
        snprintf(why, cap,
                 "taskscope was built without libsodium-dev, which the live channel's "
                 "authentication needs");
    return -1;
}

/* Unreachable: tscope__live_crypto failed, so nobody gets this far. */
void tscope__live_random(void *buf, size_t n)
{
    memset(buf, 0, n);
}

static void mac(unsigned char out[32], const unsigned char *in, size_t n, const unsigned char *key)
{
    (void)in;
    (void)n;
    (void)key;
    memset(out, 0, 32);
}

static int mac_ok(const unsigned char want[32], const unsigned char *in, size_t n,
                  const unsigned char *key)
{
    (void)want;
    (void)in;
    (void)n;
    (void)key;
    return 0;
}

static void wipe(void *p, size_t n)
{
    volatile unsigned char *v = p;
    while (n--)
        *v++ = 0;
}

#endif

/* ---- TASKSCOPE_LIVE's value ---- */

static int hexval(char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

int tscope__live_secret_parse(const char *hex, size_t n, unsigned char secret[TSCOPE__LIVE_SECRET])
{
    if (n != TSCOPE__LIVE_SECRET_HEX)
        return -1;
    for (size_t i = 0; i < TSCOPE__LIVE_SECRET; i++) {
        int hi = hexval(hex[2 * i]), lo = hexval(hex[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return -1;
        secret[i] = (unsigned char)(hi << 4 | lo);
    }
    return 0;
}

void tscope__live_secret_hex(const unsigned char secret[TSCOPE__LIVE_SECRET],
                             char out[TSCOPE__LIVE_SECRET_HEX + 1])
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < TSCOPE__LIVE_SECRET; i++) {
        out[2 * i] = digits[secret[i] >> 4];
        out[2 * i + 1] = digits[secret[i] & 15];
    }
    out[TSCOPE__LIVE_SECRET_HEX] = 0;
}

int tscope__live_value(const char *s, char *host, size_t hostlen, char *port, size_t portlen,
                       unsigned char secret[TSCOPE__LIVE_SECRET])
{
    const char *slash = strrchr(s, '/');
    if (!slash || tscope__live_secret_parse(slash + 1, strlen(slash + 1), secret))
        return -1;
    const char *colon = NULL;
    for (const char *p = s; p < slash; p++)
        if (*p == ':')
            colon = p;
    if (!colon || colon == s || colon + 1 == slash || (size_t)(slash - colon - 1) >= portlen)
        return -1;
    const char *h = s;
    size_t n = (size_t)(colon - s);
    if (h[0] == '[') { /* [v6]:port */
        if (n < 3 || h[n - 1] != ']')
            return -1;
        h++;
        n -= 2;
    }
    if (n >= hostlen)
        return -1;
    for (const char *p = colon + 1; p < slash; p++)
        if (*p < '0' || *p > '9')
            return -1;
    memcpy(host, h, n);
    host[n] = 0;
    memcpy(port, colon + 1, (size_t)(slash - colon - 1));
    port[slash - colon - 1] = 0;
    return 0;
}

/* ---- the handshake ---- */

#define LABEL "taskscope-live-2"
#define LABEL_LEN 16

#define MATERIAL (LABEL_LEN + 1 + 2 * TSCOPE__LIVE_NONCE)

/* What H(S, ...) is taken over: the label, the tag byte, Np, Nd. */
static void material(const struct tscope__live_session *s, char tag, unsigned char in[MATERIAL])
{
    memcpy(in, LABEL, LABEL_LEN);
    in[LABEL_LEN] = (unsigned char)tag;
    memcpy(in + LABEL_LEN + 1, s->np, TSCOPE__LIVE_NONCE);
    memcpy(in + LABEL_LEN + 1 + TSCOPE__LIVE_NONCE, s->nd, TSCOPE__LIVE_NONCE);
}

/* H(S, tag Np Nd): a proof (tags 'D', 'P') or a session key ('d', 'p'). */
static void derive(const struct tscope__live_session *s, char tag, unsigned char out[32])
{
    unsigned char in[MATERIAL];
    material(s, tag, in);
    mac(out, in, sizeof in, s->secret);
}

/* Whether proof is H(S, tag Np Nd), in constant time. */
static int proof_ok(const struct tscope__live_session *s, char tag, const unsigned char *proof)
{
    unsigned char in[MATERIAL];
    material(s, tag, in);
    return mac_ok(proof, in, sizeof in, s->secret);
}

static void keys(struct tscope__live_session *s)
{
    int process = s->side == TSCOPE__LIVE_SIDE_PROCESS;
    derive(s, process ? 'p' : 'd', s->send_key);
    derive(s, process ? 'd' : 'p', s->recv_key);
    s->send_seq = s->recv_seq = 0;
    s->proven = 1;
}

/* A handshake frame of kind: header, payload, the MAC given (or zeros). */
static void handshake_frame(unsigned char *out, unsigned kind, const unsigned char *payload,
                            size_t len, const unsigned char *proof)
{
    tscope__live_header(out, kind, len);
    if (len)
        memcpy(out + TSCOPE__LIVE_HEADER, payload, len);
    if (proof)
        memcpy(out + TSCOPE__LIVE_HEADER + len, proof, TSCOPE__LIVE_MAC);
    else
        memset(out + TSCOPE__LIVE_HEADER + len, 0, TSCOPE__LIVE_MAC);
}

void tscope__live_session_begin(struct tscope__live_session *s, int side,
                                const unsigned char secret[TSCOPE__LIVE_SECRET], unsigned char *out)
{
    memset(s, 0, sizeof *s);
    memcpy(s->secret, secret, TSCOPE__LIVE_SECRET);
    s->side = side;
    if (side == TSCOPE__LIVE_SIDE_PROCESS) {
        tscope__live_random(s->np, sizeof s->np);
        handshake_frame(out, TSCOPE__LIVE_CHALLENGE, s->np, sizeof s->np, NULL);
    }
}

int tscope__live_session_challenged(struct tscope__live_session *s,
                                    const struct tscope__live_frame *f, unsigned char *out)
{
    if (f->kind != TSCOPE__LIVE_CHALLENGE || f->len != TSCOPE__LIVE_NONCE || f->seq != 0)
        return -1;
    memcpy(s->np, f->payload, TSCOPE__LIVE_NONCE);
    tscope__live_random(s->nd, sizeof s->nd);
    unsigned char proof[32];
    derive(s, 'D', proof);
    handshake_frame(out, TSCOPE__LIVE_CHALLENGE, s->nd, sizeof s->nd, proof);
    return 0;
}

int tscope__live_session_answer(struct tscope__live_session *s, const struct tscope__live_frame *f,
                                unsigned char *out)
{
    if (f->kind != TSCOPE__LIVE_CHALLENGE || f->len != TSCOPE__LIVE_NONCE || f->seq != 0)
        return -1;
    memcpy(s->nd, f->payload, TSCOPE__LIVE_NONCE);
    if (!proof_ok(s, 'D', f->mac))
        return -1;
    unsigned char proof[32];
    derive(s, 'P', proof);
    handshake_frame(out, TSCOPE__LIVE_PROOF, NULL, 0, proof);
    keys(s);
    return 0;
}

int tscope__live_session_proven(struct tscope__live_session *s, const struct tscope__live_frame *f)
{
    if (f->kind != TSCOPE__LIVE_PROOF || f->len != 0 || f->seq != 0)
        return -1;
    if (!proof_ok(s, 'P', f->mac))
        return -1;
    keys(s);
    return 0;
}

/* ---- every frame after it ---- */

void tscope__live_seal(const struct tscope__live_session *s, uint64_t seq, unsigned char *frame,
                       size_t len)
{
    for (int i = 0; i < 8; i++)
        frame[12 + i] = (unsigned char)(seq >> (8 * i));
    mac(frame + len - TSCOPE__LIVE_MAC, frame, len - TSCOPE__LIVE_MAC, s->send_key);
}

int tscope__live_open(struct tscope__live_session *s, const unsigned char *frame, size_t used,
                      const struct tscope__live_frame *f, const char **why)
{
    if (f->seq != s->recv_seq + 1) {
        *why = "a frame out of sequence (replayed, reordered or lost)";
        return -1;
    }
    if (!mac_ok(f->mac, frame, used - TSCOPE__LIVE_MAC, s->recv_key)) {
        *why = "a frame whose MAC does not match (changed on the way, or not made with the "
               "secret)";
        return -1;
    }
    s->recv_seq++;
    return 0;
}

void tscope__live_session_clear(struct tscope__live_session *s)
{
    wipe(s, sizeof *s);
}
