/* proto.h - the live protocol between a measured process and `taskscope
 * dashboard` (docs/dashboard.md): frames over one TCP connection, each a
 * 12-byte header and a JSON object.  Shared by the process's streamer
 * (src/live/stream.c, in libtaskscope) and the dashboard (cli/), so both
 * ends frame and unframe alike; the JSON inside is written by the sender
 * and read by the receiver with what it has (the dashboard: jansson; the
 * process: the flat reader below, enough for commands).
 *
 * Header, little-endian: "TSLV", u16 version (TSCOPE__LIVE_VERSION), u16
 * kind (TSCOPE__LIVE_*), u32 payload length (at most TSCOPE__LIVE_FRAME_MAX),
 * u64 sequence number; then the payload; then a 32-byte MAC over header and
 * payload (auth.h says how both are made and checked: version 2 is the
 * authenticated one).  A frame of an unknown kind is skipped (newer senders
 * may add kinds) once its MAC and sequence are checked; a wrong magic,
 * version or an oversized length ends the connection, since nothing after
 * it can be trusted to be a frame.
 */
#ifndef TSCOPE_LIVE_PROTO_H
#define TSCOPE_LIVE_PROTO_H

#include <stddef.h>
#include <stdint.h>

#define TSCOPE__LIVE_MAGIC "TSLV"
#define TSCOPE__LIVE_VERSION 2u
#define TSCOPE__LIVE_HEADER 20u
#define TSCOPE__LIVE_MAC 32u              /* the trailer: keyed BLAKE2b-256 */
#define TSCOPE__LIVE_FRAME_MAX (1u << 20) /* payload bytes */
/* The bytes of a frame with len payload bytes. */
#define TSCOPE__LIVE_FRAME_BYTES(len) (TSCOPE__LIVE_HEADER + (size_t)(len) + TSCOPE__LIVE_MAC)

enum tscope__live_kind {
    TSCOPE__LIVE_HELLO = 1,     /* process -> dashboard: who it is, once per connection */
    TSCOPE__LIVE_SNAPSHOT = 2,  /* process -> dashboard: the periodic snapshot */
    TSCOPE__LIVE_COMMAND = 3,   /* dashboard -> process: set a parameter, pause, ... */
    TSCOPE__LIVE_ACK = 4,       /* process -> dashboard: a command's outcome */
    TSCOPE__LIVE_CHALLENGE = 5, /* both ways, first: a nonce (and the dashboard's proof) */
    TSCOPE__LIVE_PROOF = 6,     /* process -> dashboard: the process's proof */
    TSCOPE__LIVE_KIND_MAX = 6
};

enum tscope__live_parse {
    TSCOPE__LIVE_OK = 0,   /* a whole frame: *f set, *used its bytes */
    TSCOPE__LIVE_MORE = 1, /* not a whole frame yet: read more */
    TSCOPE__LIVE_SKIP = 2, /* a whole frame of an unknown kind: drop *used bytes */
    TSCOPE__LIVE_BAD_MAGIC = -1,
    TSCOPE__LIVE_BAD_VERSION = -2,
    TSCOPE__LIVE_TOO_LARGE = -3
};

struct tscope__live_frame {
    unsigned kind, version;
    const char *payload; /* into the buffer; not NUL-terminated */
    uint32_t len;
    uint64_t seq;
    const unsigned char *mac; /* the trailer, TSCOPE__LIVE_MAC bytes after the payload */
};

/* Writes the header of a frame of kind with len payload bytes into
 * hdr[TSCOPE__LIVE_HEADER], sequence number 0 (tscope__live_seal sets it);
 * -1 when len is too large. */
int tscope__live_header(unsigned char *hdr, unsigned kind, size_t len);
/* Looks for one frame at the start of buf[0, n); *used counts its MAC. */
enum tscope__live_parse tscope__live_parse(const unsigned char *buf, size_t n,
                                           struct tscope__live_frame *f, size_t *used);
/* A one-line text for a parse result (the negative ones). */
const char *tscope__live_parse_text(enum tscope__live_parse r);

/* ---- a flat JSON object reader (commands) ----
 * Reads {"key": value, ...} where values are strings, numbers, true, false
 * or null; nested objects and arrays are skipped whole (unknown fields).
 * Calls field(ctx, key, klen, kind, str, slen, num) per member: kind 's'
 * (str[0, slen) raw, escapes undone into the caller's view by
 * tscope__live_unescape), 'n' (num), 'b' (num 0 or 1), 'z' (null), 'o'
 * (skipped object or array).  0, or -1 for text that is not one JSON
 * object (the rest is not read). */
int tscope__live_json_fields(const char *s, size_t n,
                             void (*field)(void *ctx, const char *key, size_t klen, int kind,
                                           const char *str, size_t slen, double num),
                             void *ctx);
/* Undoes a JSON string's escapes from raw[0, n) into out (at most cap - 1
 * bytes, NUL-terminated; \u escapes become UTF-8); the length written, or
 * -1 when it does not fit or an escape is bad. */
int tscope__live_unescape(const char *raw, size_t n, char *out, size_t cap);

#endif
