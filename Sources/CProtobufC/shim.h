/* The protobuf-c runtime (Debian 12: 1.4.1). */
#pragma once
#include <protobuf-c/protobuf-c.h>

/// Whether the NUL-terminated `s` is well-formed UTF-8 (RFC 3629: no overlong forms, no
/// surrogates, nothing above U+10FFFF).
static inline int cprotobufc_is_utf8(const unsigned char *s) {
    while (*s) {
        unsigned char c = *s++;
        if (c < 0x80) continue;
        int more;
        unsigned int min, cp;
        if (c >= 0xC2 && c <= 0xDF) { more = 1; min = 0x80; cp = c & 0x1F; }
        else if (c >= 0xE0 && c <= 0xEF) { more = 2; min = 0x800; cp = c & 0x0F; }
        else if (c >= 0xF0 && c <= 0xF4) { more = 3; min = 0x10000; cp = c & 0x07; }
        else return 0;
        while (more--) {
            unsigned char next = *s++;
            if ((next & 0xC0) != 0x80) return 0;
            cp = (cp << 6) | (next & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    }
    return 1;
}

/// The name of the first `string` field of an unpacked message (nested messages and map entries
/// included, depth first) whose value is not valid UTF-8; NULL when all are. protobuf-c 1.4 does
/// not check UTF-8 when it unpacks, while proto3 requires it of `string` fields (stock parsers
/// refuse such messages); Swift would otherwise repair them with U+FFFD without a word.
static inline const char *cprotobufc_first_invalid_utf8(const ProtobufCMessage *message) {
    const ProtobufCMessageDescriptor *d = message->descriptor;
    for (unsigned i = 0; i < d->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &d->fields[i];
        if (f->type != PROTOBUF_C_TYPE_STRING && f->type != PROTOBUF_C_TYPE_MESSAGE) continue;
        const char *field = (const char *)message + f->offset;
        size_t count = 1;
        void *const *items = (void *const *)field;
        if (f->label == PROTOBUF_C_LABEL_REPEATED) {
            count = *(const size_t *)((const char *)message + f->quantifier_offset);
            items = *(void *const *const *)field;
        } else if ((f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF)
                   && *(const uint32_t *)((const char *)message + f->quantifier_offset) != f->id) {
            continue;  /* another member of the oneof is set */
        }
        for (size_t j = 0; j < count && items; j++) {
            if (items[j] == NULL) continue;
            if (f->type == PROTOBUF_C_TYPE_STRING) {
                if (!cprotobufc_is_utf8((const unsigned char *)items[j])) return f->name;
            } else {
                const char *inner = cprotobufc_first_invalid_utf8((const ProtobufCMessage *)items[j]);
                if (inner) return inner;
            }
        }
    }
    return NULL;
}
