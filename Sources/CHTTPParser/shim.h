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
