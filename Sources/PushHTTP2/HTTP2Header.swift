/// One header field as bytes.
///
/// Bytes rather than `String` because the hot path (APNs client) sends the same names and
/// most of the same values thousands of times: callers build each `HTTP2Header` once and reuse
/// it, and the `[UInt8]` storage is shared copy-on-write, never re-encoded per request.
public struct HTTP2Header: Sendable, Equatable {
    public var name: [UInt8]
    public var value: [UInt8]
    /// Whether nghttp2 may add the field to the HPACK dynamic table. Set false for values that
    /// change per request or are secret (`:path`, `authorization`), as Apple's APNs guidance
    /// asks: indexing them only evicts useful entries and, for secrets, invites CRIME-style
    /// probing. Sent as `NGHTTP2_NV_FLAG_NO_INDEX`. On received headers it reflects the
    /// peer's "never indexed" marking.
    public var indexable: Bool = true

    /// Names must be lowercase (HTTP/2 requires it; nghttp2 lower-cases copies anyway).
    public init(_ name: String, _ value: String) {
        self.name = Array(name.utf8)
        self.value = Array(value.utf8)
    }

    public init(name: [UInt8], value: [UInt8]) {
        self.name = name
        self.value = value
    }

    public init(name: [UInt8], value: [UInt8], indexable: Bool) {
        self.name = name
        self.value = value
        self.indexable = indexable
    }

    public var nameString: String { String(decoding: name, as: UTF8.self) }
    public var valueString: String { String(decoding: value, as: UTF8.self) }
}

extension HTTP2Header: CustomStringConvertible {
    public var description: String { "\(nameString): \(valueString)" }
}
