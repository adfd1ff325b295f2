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
        var text = text
        // Contiguous UTF-8 (every String from protobuf is): one pass over raw bytes with a table.
        guard let kind = text.withUTF8(Self.classify) else { return nil }
        // Reuse the caller's string when it is already canonical (the common case): no copy.
        hex = kind == .lowercase ? text : String(decoding: text.utf8.map(lowercasedASCII), as: UTF8.self)
    }

    private enum Kind { case lowercase, hasUpperCase }

    private static func classify(_ bytes: UnsafeBufferPointer<UInt8>) -> Kind? {
        guard lengthRange.contains(bytes.count) else { return nil }
        var classes: UInt8 = 0
        for byte in bytes { classes |= hexClass[Int(byte)] }
        // 1: lower-case digit or letter, 2: upper-case letter, 4: not hex.
        if classes & 4 != 0 { return nil }
        return classes & 2 != 0 ? .hasUpperCase : .lowercase
    }

    private static let hexClass: [UInt8] = (0..<256).map { value in
        switch UInt8(value) {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"): 1
        case UInt8(ascii: "A")...UInt8(ascii: "F"): 2
        default: 4
        }
    }

    public var description: String { hex }
}
