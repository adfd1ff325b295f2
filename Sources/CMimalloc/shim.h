// mimalloc (Debian libmimalloc-dev). Linked into every Pushgate binary (through PushPosix), it takes
// over malloc and free for the whole process (Swift runtime, nghttp2, protobuf-c, OpenSSL): docs/development.md says why.
#include <mimalloc.h>
