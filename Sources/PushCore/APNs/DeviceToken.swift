/// An APNs device token: 64–200 hex digits, kept in lower case.
///
/// Apple says not to assume a length (it's 64 digits today); the upper bound only keeps
/// nonsense out of `:path`.
public struct DeviceToken: Sendable, Hashable, CustomStringConvertible {
    /// The error text for a malformed token, used verbatim in validation messages.
    public static let requirement = "APNs device token must be 64-200 hex digits"
    /// The accepted lengths, in hex digits.
    public static let lengthRange = 64...200

    /// The token in lower-case hex, as it goes into `/3/device/<token>`.
    public let hex: String

    /// Validates and normalizes `text`, or returns nil (see ``requirement``).
    public init?(_ text: String) {
        let utf8 = text.utf8
        guard Self.lengthRange.contains(utf8.count) else { return nil }
        var hasUpperCase = false
        for byte in utf8 {
            guard hexValue(byte) != nil else { return nil }
            if byte >= UInt8(ascii: "A"), byte <= UInt8(ascii: "F") { hasUpperCase = true }
        }
        // Reuse the caller's string when it is already canonical (the common case): no copy.
        hex = hasUpperCase ? String(decoding: utf8.map(lowercasedASCII), as: UTF8.self) : text
    }

    public var description: String { hex }
}
