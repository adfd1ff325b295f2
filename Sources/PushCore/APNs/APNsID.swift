/// An `apns-id`: a canonical UUID, `8-4-4-4-12` hex digits, sent in lower case.
///
/// APNs answers `400 BadMessageId` to anything else, so it is checked before sending.
public struct APNsID: Sendable, Hashable, CustomStringConvertible {
    /// The error text for a malformed id, used verbatim in validation messages.
    public static let requirement = "must be a UUID (8-4-4-4-12 hex digits)"

    /// The UUID in lower case.
    public let uuidString: String

    /// Validates `text` (either case) and lower-cases it, or returns nil.
    public init?(_ text: String) {
        let utf8 = text.utf8
        guard utf8.count == 36 else { return nil }
        var hasUpperCase = false
        for (i, byte) in utf8.enumerated() {
            if i == 8 || i == 13 || i == 18 || i == 23 {
                guard byte == UInt8(ascii: "-") else { return nil }
            } else {
                guard hexValue(byte) != nil else { return nil }
                if byte >= UInt8(ascii: "A"), byte <= UInt8(ascii: "F") { hasUpperCase = true }
            }
        }
        uuidString = hasUpperCase ? String(decoding: utf8.map(lowercasedASCII), as: UTF8.self) : text
    }

    public var description: String { uuidString }
}
