/* command.c - the commands the dashboard sends a measured process
 * (docs/dashboard.md): set a parameter (through the registry, which checks
 * it), and the task debugger's pause, resume, break, clear_break and step;
 * each answered by an acknowledgement saying what happened. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "debug.h"
#include "live_int.h"
#include "proto.h"
#include "taskscope/policy.h"

struct command {
    double id, value;
    int has_id, has_value;
    char op[32], name[256], choice[256];
};

static void command_field(void *ctx, const char *key, size_t klen, int kind, const char *str,
                          size_t slen, double num)
{
    struct command *c = ctx;
#define KEY(k) (klen == sizeof k - 1 && memcmp(key, k, klen) == 0)
    if (KEY("id") && kind == 'n') {
        c->id = num;
        c->has_id = 1;
    } else if (KEY("value") && kind == 'n') {
        c->value = num;
        c->has_value = 1;
    } else if (kind == 's') {
        /* "type" (break) is kept in name */
        char *into = KEY("op")                    ? c->op
                     : KEY("name") || KEY("type") ? c->name
                     : KEY("choice")              ? c->choice
                                                  : NULL;
        size_t cap = KEY("op") ? sizeof c->op : sizeof c->name;
        if (into && tscope__live_unescape(str, slen, into, cap) < 0)
            into[0] = 0;
    }
#undef KEY
}

static void ack(struct tscope__text *t, double id, int ok, const char *text)
{
    tscope__live_put(t, "{\"id\":");
    tscope__live_put_num(t, id);
    tscope__live_put(t, ",\"ok\":%s,\"text\":", ok ? "true" : "false");
    tscope__text_json_str(t, text);
    tscope__live_put(t, "}");
}

void tscope__live_command(const char *payload, size_t len, struct tscope__text *t)
{
    struct command c = {0};
    char text[512];
    if (tscope__live_json_fields(payload, len, command_field, &c)) {
        ack(t, -1, 0, "a command that is not a JSON object");
        return;
    }
    double id = c.has_id ? c.id : -1;
    if (strcmp(c.op, "set") == 0 || strcmp(c.op, "set_choice") == 0) {
        int choice = c.op[3] == '_';
        if (!c.name[0] || (choice ? !c.choice[0] : !c.has_value)) {
            ack(t, id, 0,
                choice ? "set_choice needs \"name\" and \"choice\""
                       : "set needs \"name\" and a number \"value\"");
            return;
        }
        int rc =
            choice ? tscope_param_set_choice(c.name, c.choice) : tscope_param_set(c.name, c.value);
        double now = NAN;
        tscope_param_get(c.name, &now);
        if (rc)
            snprintf(text, sizeof text, "%s", tscope_param_last_error());
        else
            snprintf(text, sizeof text, "%s = %.9g", c.name, now);
        ack(t, id, rc == 0, text);
        return;
    }
    if (strcmp(c.op, "pause") == 0 || strcmp(c.op, "resume") == 0 || strcmp(c.op, "break") == 0 ||
        strcmp(c.op, "clear_break") == 0 || strcmp(c.op, "step") == 0) {
        int ok = tscope__live_debug(c.op, c.name, text, sizeof text);
        ack(t, id, ok, text);
        return;
    }
    snprintf(text, sizeof text, "unknown op \"%s\"", c.op);
    ack(t, id, 0, text);
}
