#if canImport(Glibc)
    public import Glibc
#endif
/// Takes a header block's fields as nghttp2 decodes them (see
/// ``HTTP2SessionDelegate/http2Session(_:headerFieldSinkForStream:)``): subclasses override
/// ``headerField(name:value:neverIndexed:)``; this one takes nothing. The buffers are valid only
/// during the call. `neverIndexed`: the peer sent the field as "never indexed".
///
/// A class rather than a protocol so the session can hold the sink of the block being read
/// unmanaged and call it without a retain and release per field (an existential could not be).
open class HTTP2HeaderFieldSink {
    public init() {}

    open func headerField(name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>, neverIndexed: Bool) {}
}

extension UnsafeBufferPointer where Element == UInt8 {
    /// Whether these bytes equal `array`, by `memcmp`: what a sink compares names and values with
    /// (the generic `elementsEqual` walks byte by byte through iterators, dozens of instructions a
    /// byte).
    @inlinable
    public func equals(_ array: [UInt8]) -> Bool {
        guard count == array.count else { return false }
        guard let base = baseAddress, count > 0 else { return true }
        return array.withUnsafeBufferPointer { memcmp($0.baseAddress!, base, count) == 0 }
    }
}
