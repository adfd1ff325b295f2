/* libhttp-parser 2.9 (Debian's libhttp-parser-dev): the HTTP/1.1 message parser Node.js used for a
 * decade. Sans-IO: bytes in, callbacks out. Its state is bit fields, which Swift reads through
 * these accessors. */
#pragma once
#include <http_parser.h>

static inline unsigned int pushgate_http_status(const http_parser *p) { return p->status_code; }
static inline unsigned int pushgate_http_method(const http_parser *p) { return p->method; }
static inline unsigned int pushgate_http_errno(const http_parser *p) { return p->http_errno; }
static inline unsigned int pushgate_http_upgrade(const http_parser *p) { return p->upgrade; }
static inline unsigned short pushgate_http_major(const http_parser *p) { return p->http_major; }
static inline unsigned short pushgate_http_minor(const http_parser *p) { return p->http_minor; }

/* URL field `field` (UF_HOST, UF_PORT, ...) of a parsed URL: 1 and its offset and length if set. */
static inline int pushgate_url_field(const struct http_parser_url *u, int field, unsigned *off, unsigned *len) {
    if (!(u->field_set & (1 << field))) return 0;
    *off = u->field_data[field].off;
    *len = u->field_data[field].len;
    return 1;
}

/* The message being read has a chunked body. */
static inline int pushgate_http_chunked(const http_parser *p) { return (p->flags & F_CHUNKED) != 0; }
