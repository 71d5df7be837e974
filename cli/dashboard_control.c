/* dashboard_control.c - POST /api/control: a user's control becomes a
 * COMMAND frame (docs/dashboard.md) queued for the ingest thread.
 *
 * The body is {"token", "process": ID or "all", "op", ...the op's fields};
 * the COMMAND carries "id" (a counter from 1, also the answer's "id", which
 * the process's ACK repeats), "op" and every other field of the body as it
 * came ("token" and "process" stay here), so new ops need no change here:
 * the process judges them and says so in its ACK.
 *
 * Order of the checks: a body that is not a JSON object is 400; then the
 * token (the X-Taskscope-Token header or the body's "token", compared in
 * constant time) is 403 and nothing is sent, before anything about the
 * processes is told; then 400 for a bad "process" or "op", 404 for an
 * unknown process, 503 when too many commands wait; else 200 {"sent": N,
 * "id": ID}, N the connected processes it was queued for (0 for a known
 * process that is gone).  Thread-safe (the store and the ingest queue lock).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dashboard.h"
#include "offline/wire.h"

int tscope__dash_same_token(const char *given, const char *token)
{
    size_t n = strlen(token);
    if (!given || strlen(given) != n)
        return 0;
    unsigned char diff = 0;
    for (size_t i = 0; i < n; i++)
        diff |= (unsigned char)(given[i] ^ token[i]);
    return diff == 0;
}

static unsigned error(char **answer, unsigned status, const char *text)
{
    json_t *e = json_pack("{ss}", "error", text);
    *answer = e ? json_dumps(e, JSON_COMPACT) : NULL;
    json_decref(e);
    return status;
}

/* "process": 0 for "all", a positive id, or -1 when it is neither. */
static long process_id(const json_t *v)
{
    if (json_is_string(v) && strcmp(json_string_value(v), "all") == 0)
        return 0;
    if (json_is_integer(v))
        return json_integer_value(v) > 0 ? (long)json_integer_value(v) : -1;
    if (json_is_string(v)) {
        char *end;
        const char *s = json_string_value(v);
        long id = strtol(s, &end, 10);
        return *s && !*end && id > 0 ? id : -1;
    }
    return -1;
}

/* The COMMAND frame of req with id: header, payload and room for the MAC
 * (the ingest thread seals it for each connection), malloc'ed. */
static unsigned char *command_frame(json_t *req, long id, size_t *len)
{
    json_t *cmd = json_object();
    if (!cmd || json_object_set_new(cmd, "id", json_integer(id)) != 0 ||
        json_object_set(cmd, "op", json_object_get(req, "op")) != 0) {
        json_decref(cmd);
        return NULL;
    }
    const char *key;
    json_t *v;
    json_object_foreach(req, key, v)
    {
        if (strcmp(key, "token") != 0 && strcmp(key, "process") != 0 && strcmp(key, "id") != 0 &&
            strcmp(key, "op") != 0 && json_object_set(cmd, key, v) != 0) {
            json_decref(cmd);
            return NULL;
        }
    }
    char *text = json_dumps(cmd, JSON_COMPACT);
    json_decref(cmd);
    if (!text)
        return NULL;
    size_t n = strlen(text);
    unsigned char *frame = malloc(TSCOPE__LIVE_FRAME_BYTES(n));
    if (frame && tscope__live_header(frame, TSCOPE__LIVE_COMMAND, n) == 0) {
        memcpy(frame + TSCOPE__LIVE_HEADER, text, n);
        memset(frame + TSCOPE__LIVE_HEADER + n, 0, TSCOPE__LIVE_MAC);
        *len = TSCOPE__LIVE_FRAME_BYTES(n);
    } else {
        free(frame);
        frame = NULL;
    }
    free(text);
    return frame;
}

unsigned tscope__dash_control(struct tscope__dash *d, const char *header_token, const char *body,
                              size_t n, char **answer)
{
    *answer = NULL;
    json_error_t err;
    json_t *req = json_loadb(body, n, 0, &err);
    if (!json_is_object(req)) {
        json_decref(req);
        char text[256];
        snprintf(text, sizeof text, "the body is not a JSON object: %s",
                 req ? "another JSON value" : err.text);
        return error(answer, 400, text);
    }
    unsigned status;
    const char *op = json_string_value(json_object_get(req, "op"));
    long id = process_id(json_object_get(req, "process"));
    long *ids = NULL;
    long targets;
    if (!tscope__dash_same_token(header_token, d->token) &&
        !tscope__dash_same_token(json_string_value(json_object_get(req, "token")), d->token)) {
        status = error(answer, 403, "a wrong or missing token");
    } else if (id < 0) {
        status = error(answer, 400, "\"process\": expected a process id or \"all\"");
    } else if (!op || !*op) {
        status = error(answer, 400, "\"op\": expected an operation's name");
    } else if (!(ids = malloc(TSCOPE__DASH_MAX_PROCESSES * sizeof *ids))) {
        status = error(answer, 500, "out of memory");
    } else if ((targets = tscope__dash_store_targets(d->store, id, ids,
                                                     TSCOPE__DASH_MAX_PROCESSES)) < 0) {
        char text[64];
        snprintf(text, sizeof text, "no process %ld", id);
        status = error(answer, 404, text);
    } else {
        long cid = atomic_fetch_add(&d->next_command, 1) + 1;
        size_t len = 0;
        unsigned char *frame = command_frame(req, cid, &len);
        if (!frame) {
            status = error(answer, 500, "out of memory");
        } else if (targets > 0 &&
                   tscope__dash_ingest_send(d->ingest, ids, (size_t)targets, frame, len) != 0) {
            status = error(answer, 503, "too many commands are waiting to be sent");
        } else {
            json_t *ok = json_pack("{sI sI}", "sent", (json_int_t)targets, "id", (json_int_t)cid);
            *answer = ok ? json_dumps(ok, JSON_COMPACT) : NULL;
            json_decref(ok);
            status = 200;
        }
        free(frame);
    }
    free(ids);
    json_decref(req);
    return status;
}
