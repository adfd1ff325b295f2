/* The protobuf-c runtime (Debian 12: 1.4.1). */
#pragma once
#include <pthread.h>
#include <stdlib.h>
#include <protobuf-c/protobuf-c.h>

/// The size of an arena's blocks (cprotobufc_arena).
enum { CPROTOBUFC_BLOCK_SIZE = 32 * 1024 };

/// This thread's spare arena block (below), freed when the thread exits: a thread that decoded a
/// message and ends (a pool's worker) does not leave its block behind. Function-local statics: a
/// header's file-scope ones get no storage in the Swift modules that import it.
static inline void **cprotobufc_spare_slot(void) {
    static _Thread_local void *spare = 0;
    return &spare;
}

/// Runs at the exit of a thread that kept a spare (its thread-locals are still there then).
static void cprotobufc_free_spare(void *unused) {
    (void)unused;
    free(*cprotobufc_spare_slot());
    *cprotobufc_spare_slot() = 0;
}

static inline pthread_key_t *cprotobufc_spare_key(void) {
    static pthread_key_t key;
    return &key;
}

static void cprotobufc_make_spare_key(void) { (void)pthread_key_create(cprotobufc_spare_key(), cprotobufc_free_spare); }

/// Registers cprotobufc_free_spare for this thread's exit, once per thread (a key's value must be
/// non-NULL for its destructor to run).
static inline void cprotobufc_watch_spare(void) {
    static _Thread_local int watched = 0;
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    if (watched) return;
    watched = 1;
    (void)pthread_once(&once, cprotobufc_make_spare_key);
    (void)pthread_setspecific(*cprotobufc_spare_key(), (void *)1);
}

/// Stores `block` as this thread's spare arena block and returns the one stored before (NULL at
/// first). An arena takes its first block from here and gives it back when it is done, so a small
/// message (a 1-token Send and its answer) costs no 32 KiB malloc and free, and no consolidation
/// of glibc's fast bins that a free of that size starts. One block per thread, freed when the
/// thread exits.
static inline void *cprotobufc_exchange_spare_block(void *block) {
    void **spare = cprotobufc_spare_slot();
    void *previous = *spare;
    *spare = block;
    if (block != 0) cprotobufc_watch_spare();
    return previous;
}

/// The C values of one message being decoded or encoded, released as a whole when done: for
/// decoding, what protobuf-c's unpack allocates from instead of malloc (no malloc per string,
/// array and submessage, no free_unpacked walk); for encoding, the C struct ProtoCArena builds
/// from the Swift value for pack. A value on the caller's stack, zeroed to begin; its first block
/// is the thread's spare (above), further blocks and large values are malloc'd and freed by
/// cprotobufc_arena_release, so a large message grows the arena and gives the memory back.
///
/// protobuf-c frees nothing of a message it returns, only its scan records and values a repeated
/// occurrence of a field replaces; those stay until the release (at most what the input holds,
/// 32 bytes per field occurrence).
typedef struct cprotobufc_arena {
    /// What unpack is given (cprotobufc_arena_allocator fills it in).
    ProtobufCAllocator allocator;
    unsigned char *cursor;
    size_t remaining;
    /// The first block (the thread's spare, or malloc'd), handed back to the spare at release.
    void *first;
    /// Further blocks and large values, each behind a header that links to the one before.
    void *more;
} cprotobufc_arena;

/// The header in front of a further block or a large value (16 bytes keep malloc's alignment).
typedef struct cprotobufc_arena_chunk {
    void *next;
    void *unused;
} cprotobufc_arena_chunk;

static inline void *cprotobufc_arena_malloc_chunk(cprotobufc_arena *arena, size_t size) {
    cprotobufc_arena_chunk *chunk = malloc(sizeof(cprotobufc_arena_chunk) + size);
    if (chunk == NULL) return NULL;
    chunk->next = arena->more;
    arena->more = chunk;
    return chunk + 1;
}

static inline void *cprotobufc_arena_alloc_slow(cprotobufc_arena *arena, size_t size) {
    if (size > CPROTOBUFC_BLOCK_SIZE / 4) return cprotobufc_arena_malloc_chunk(arena, size);
    unsigned char *block;
    size_t available = CPROTOBUFC_BLOCK_SIZE;
    if (arena->first == NULL) {
        block = cprotobufc_exchange_spare_block(NULL);
        if (block == NULL) block = malloc(CPROTOBUFC_BLOCK_SIZE);
        if (block == NULL) return NULL;
        arena->first = block;
    } else {
        block = cprotobufc_arena_malloc_chunk(arena, CPROTOBUFC_BLOCK_SIZE - sizeof(cprotobufc_arena_chunk));
        if (block == NULL) return NULL;
        available -= sizeof(cprotobufc_arena_chunk);
    }
    arena->cursor = block + size;
    arena->remaining = available - size;
    return block;
}

/// `size` bytes from the arena (`data`), 16-byte aligned like malloc's on 64-bit Linux (no
/// protobuf-c struct needs more); NULL when malloc fails. protobuf-c's `alloc`.
static inline void *cprotobufc_arena_alloc(void *data, size_t size) {
    cprotobufc_arena *arena = data;
    size = (size + 15) & ~(size_t)15;
    if (size <= arena->remaining) {
        void *pointer = arena->cursor;
        arena->cursor += size;
        arena->remaining -= size;
        return pointer;
    }
    return cprotobufc_arena_alloc_slow(arena, size);
}

/// protobuf-c's `free`: nothing until the release.
static inline void cprotobufc_arena_free(void *data, void *pointer) {
    (void)data;
    (void)pointer;
}

/// The allocator to give a generated `*__unpack` for allocating in `arena`: the message it
/// returns (NULL when the bytes are not one) stays valid until cprotobufc_arena_release, and must
/// not be passed to free_unpacked. Valid while `arena` stays where it is.
static inline ProtobufCAllocator *cprotobufc_arena_allocator(cprotobufc_arena *arena) {
    arena->allocator.alloc = cprotobufc_arena_alloc;
    arena->allocator.free = cprotobufc_arena_free;
    arena->allocator.allocator_data = arena;
    return &arena->allocator;
}

/// Frees what `arena` holds (its first block goes back to the thread's spare) and empties it.
static inline void cprotobufc_arena_release(cprotobufc_arena *arena) {
    void *chunk = arena->more;
    while (chunk != NULL) {
        void *next = ((cprotobufc_arena_chunk *)chunk)->next;
        free(chunk);
        chunk = next;
    }
    if (arena->first != NULL) free(cprotobufc_exchange_spare_block(arena->first));
    arena->cursor = NULL;
    arena->remaining = 0;
    arena->first = NULL;
    arena->more = NULL;
}
