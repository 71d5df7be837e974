/* wire.h - what `taskscope dashboard` (cli/dashboard*.c) shares with the
 * measured processes' live stream (src/live/stream.c): the protocol's
 * frames and the flat JSON reader of commands, one definition for both
 * ends (src/live/proto.h, proto.c in libtaskscope), the handshake and the
 * frames' MACs (src/live/auth.h, auth.c), the growable text
 * both write (core/text.h) and the UTF-8 check of JSON strings
 * (core/json_escape.h).  The dashboard is an
 * executable of its own and needs nothing else of offline.h. */
#ifndef TSCOPE_OFFLINE_WIRE_H
#define TSCOPE_OFFLINE_WIRE_H

#include "core/json_escape.h"
#include "core/text.h"
#include "live/auth.h"
#include "live/proto.h"

#endif
