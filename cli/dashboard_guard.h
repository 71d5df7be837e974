/* dashboard_guard.h - the HTTP side's bounds on its connections
 * (dashboard_guard.c), called from libmicrohttpd's callbacks in
 * dashboard_http.c only; apart from dashboard.h so that only these two
 * files see libmicrohttpd's types.
 */
#ifndef TSCOPE_CLI_DASHBOARD_GUARD_H
#define TSCOPE_CLI_DASHBOARD_GUARD_H

#include <microhttpd.h>

struct tscope__dash_guard;
/* A guard that keeps at most limit connections and cuts a request that is
 * not whole within request_ms (see dashboard_guard.c), its thread started;
 * room for slots connections tracked at once (libmicrohttpd's own limit).
 * NULL after a line on stderr. */
struct tscope__dash_guard *tscope__dash_guard_new(unsigned request_ms, unsigned limit,
                                                  unsigned slots);
/* Stops its thread and frees g, once libmicrohttpd calls it no more. */
void tscope__dash_guard_free(struct tscope__dash_guard *g);

/* libmicrohttpd's accept policy (cls: the guard): MHD_YES, having cut a
 * waiting connection when limit are open, or MHD_NO when none waits. */
enum MHD_Result tscope__dash_guard_accept(void *cls, const struct sockaddr *addr, socklen_t len);
/* libmicrohttpd's connection notification (cls: the guard). */
void tscope__dash_guard_notify(void *cls, struct MHD_Connection *conn, void **socket_context,
                               enum MHD_ConnectionNotificationCode code);
/* conn's request is whole and being answered: no deadline until it ends;
 * authenticated: it carried the token (the connection is kept before
 * others when room is needed). */
void tscope__dash_guard_answering(struct tscope__dash_guard *g, struct MHD_Connection *conn,
                                  int authenticated);
/* conn's answer ended: the next request's deadline begins now. */
void tscope__dash_guard_answered(struct tscope__dash_guard *g, struct MHD_Connection *conn);

#endif
