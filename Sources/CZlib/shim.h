/* zlib 1.2 (Debian's zlib1g-dev): deflate and inflate with gzip framing, for gRPC's `gzip` message
 * encoding. inflateInit2 and deflateInit2 are macros (they pass zlib's version and struct size),
 * which Swift cannot call; these functions do. */
#pragma once
#include <zlib.h>

/* windowBits 15 + 16: a gzip header and trailer (RFC 1952), not zlib's own framing. */
static inline int pushgate_inflate_init_gzip(z_stream *stream) { return inflateInit2(stream, 15 + 16); }

static inline int pushgate_deflate_init_gzip(z_stream *stream, int level) {
    return deflateInit2(stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
}
