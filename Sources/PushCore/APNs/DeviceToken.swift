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

    enum Kind { case lowercase, hasUpperCase }

    private static func classify(_ bytes: UnsafeBufferPointer<UInt8>) -> Kind? {
        guard lengthRange.contains(bytes.count) else { return nil }
        var hasUpperCase = false
        var index = 0
        // Eight digits at a time (a token is 64 or more) with word arithmetic, the rest with the
        // table: a table look-up per digit is the slow part of a token's check.
        while bytes.count - index >= 8 {
            let word = UnsafeRawPointer(bytes.baseAddress!).loadUnaligned(fromByteOffset: index, as: UInt64.self)
            switch classify(word: word) {
            case nil: return nil
            case .hasUpperCase: hasUpperCase = true
            case .lowercase: break
            }
            index += 8
        }
        var classes: UInt8 = 0
        while index < bytes.count {
            classes |= hexClass[Int(bytes[index])]
            index += 1
        }
        // 1: lower-case digit or letter, 2: upper-case letter, 4: not hex.
        if classes & 4 != 0 { return nil }
        return hasUpperCase || classes & 2 != 0 ? .hasUpperCase : .lowercase
    }

    /// The eight bytes of `word` classified at once: nil when one is not a hex digit. Per byte
    /// below 0x80, `x + (0x80 - lo)` has its high bit set when `x >= lo`, and `x + (0x7F - hi)`
    /// when `x > hi`; no lane carries into the next.
    static func classify(word: UInt64) -> Kind? {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        guard word & highs == 0 else { return nil }
        func inRange(_ lo: UInt64, _ hi: UInt64) -> UInt64 {
            (word &+ ones &* (0x80 - lo)) & ~(word &+ ones &* (0x7F - hi)) & highs
        }
        let upper = inRange(0x41, 0x46)
        guard inRange(0x30, 0x39) | inRange(0x61, 0x66) | upper == highs else { return nil }
        return upper != 0 ? .hasUpperCase : .lowercase
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
