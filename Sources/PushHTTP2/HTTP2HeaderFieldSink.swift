import CNGHTTP2

#if canImport(Glibc)
    public import Glibc
#endif
/// Takes a header block's fields as nghttp2 decodes them (see
/// ``HTTP2SessionDelegate/http2Session(_:headerFieldSinkForStream:)``): subclasses override
/// ``headerField(name:value:neverIndexed:)``, or ``headerField(_:_:neverIndexed:)`` to see the
/// buffers the bytes are in; this one takes nothing. The bytes are valid only during the call.
/// `neverIndexed`: the peer sent the field as "never indexed".
///
/// A class rather than a protocol so the session can hold the sink of the block being read
/// unmanaged and call it without a retain and release per field (an existential could not be).
open class HTTP2HeaderFieldSink {
    public init() {}

    open func headerField(name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>, neverIndexed: Bool) {}

    /// The field as the session receives it; by default, its bytes to
    /// ``headerField(name:value:neverIndexed:)``.
    open func headerField(_ name: HTTP2FieldBuffer, _ value: HTTP2FieldBuffer, neverIndexed: Bool) {
        headerField(name: name.bytes, value: value.bytes, neverIndexed: neverIndexed)
    }
}

/// A received field's name or value: its bytes, and the reference-counted buffer nghttp2 holds
/// them in. For a field the peer sent as an HPACK index, nghttp2 hands out its table entry's own
/// buffer (the static table's for a static entry) each time, so a sink that keeps a buffer
/// (``HTTP2KeptField``) knows a repeated field by the buffer alone, without comparing bytes.
public struct HTTP2FieldBuffer {
    @usableFromInline let buffer: OpaquePointer
    /// Valid only during the sink's call (unless the buffer is kept).
    public let bytes: UnsafeBufferPointer<UInt8>

    init(_ buffer: OpaquePointer) {
        self.buffer = buffer
        let vector = nghttp2_rcbuf_get_buf(buffer)
        bytes = UnsafeBufferPointer(start: vector.base, count: vector.len)
    }
}

/// A field's name and value buffers kept past the sink's call: a reference to each, so their
/// bytes stay valid and their identity stays theirs (no other buffer can take their address).
/// Made and dropped on the session's thread: nghttp2's reference counts are not atomic, and the
/// session's HPACK table holds these buffers too.
public final class HTTP2KeptField {
    @usableFromInline let nameBuffer: OpaquePointer
    @usableFromInline let valueBuffer: OpaquePointer
    public let name: UnsafeBufferPointer<UInt8>
    public let value: UnsafeBufferPointer<UInt8>

    public init(name: HTTP2FieldBuffer, value: HTTP2FieldBuffer) {
        nghttp2_rcbuf_incref(name.buffer)
        nghttp2_rcbuf_incref(value.buffer)
        nameBuffer = name.buffer
        valueBuffer = value.buffer
        self.name = name.bytes
        self.value = value.bytes
    }

    deinit {
        nghttp2_rcbuf_decref(nameBuffer)
        nghttp2_rcbuf_decref(valueBuffer)
    }

    /// Whether `name` and `value` are in the very buffers kept here: then their bytes are equal.
    @inlinable
    public func isSame(name: HTTP2FieldBuffer, value: HTTP2FieldBuffer) -> Bool {
        name.buffer == nameBuffer && value.buffer == valueBuffer
    }
}

extension UnsafeBufferPointer where Element == UInt8 {
    /// Whether these bytes equal `array`, by `memcmp`: what a sink compares names and values with
    /// (the generic `elementsEqual` walks byte by byte through iterators).
    @inlinable
    public func equals(_ array: [UInt8]) -> Bool {
        guard count == array.count else { return false }
        guard let base = baseAddress, count > 0 else { return true }
        return array.withUnsafeBufferPointer { memcmp($0.baseAddress!, base, count) == 0 }
    }
}
