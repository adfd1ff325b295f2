/* The protobuf-c runtime (Debian 12: 1.4.1). */
#pragma once
#include <protobuf-c/protobuf-c.h>

/// Stores `block` as this thread's spare packing block and returns the one stored before (NULL at
/// first). ProtoCArena takes its first block from here and gives it back when it is done, so a
/// small message (a 1-token Send's answer) costs no 32 KiB malloc and free, and no consolidation
/// of glibc's fast bins that a free of that size starts. One block per thread, never freed.
static inline void *cprotobufc_exchange_spare_block(void *block) {
    static _Thread_local void *spare = 0;
    void *previous = spare;
    spare = block;
    return previous;
}
