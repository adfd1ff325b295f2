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
    /// A received field whose name is in the session's table (``HTTP2HeaderInterning``): its name
    /// and value arrays are shared, so a later field with the same bytes comes as the very same
    /// arrays, and a receiver may key what it derives from them by the arrays' identity.
    public internal(set) var isInterned = false

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

    /// Equal names, values and indexing (how the arrays are shared does not matter).
    public static func == (lhs: HTTP2Header, rhs: HTTP2Header) -> Bool {
        lhs.name == rhs.name && lhs.value == rhs.value && lhs.indexable == rhs.indexable
    }

    public var nameString: String { String(decoding: name, as: UTF8.self) }
    public var valueString: String { String(decoding: value, as: UTF8.self) }
}

extension HTTP2Header: CustomStringConvertible {
    public var description: String { "\(nameString): \(valueString)" }
}
