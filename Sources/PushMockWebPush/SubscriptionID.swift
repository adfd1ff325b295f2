/// Subscription ids: the last path segment of an endpoint (`/wpush/v2/<id>`), 1 to 128 characters
/// of the base64url alphabet, so an id needs no escaping in a URL or JSON.
public enum SubscriptionID {
    public static let maxLength = 128

    /// True when `id` is a valid subscription id.
    public static func isValid(_ id: some StringProtocol) -> Bool {
        let bytes = id.utf8
        return (1...maxLength).contains(bytes.count) && bytes.allSatisfy(isIDByte)
    }

    /// True when `prefix` may start ids (it may be empty).
    static func isValidPrefix(_ prefix: String) -> Bool {
        prefix.utf8.count < maxLength && prefix.utf8.allSatisfy(isIDByte)
    }

    static func isIDByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
            true
        default: false
        }
    }
}

/// A subscription id that is not one (``SubscriptionID/isValid(_:)``).
public struct InvalidSubscriptionID: Error, Sendable, CustomStringConvertible {
    public let id: String
    public var description: String {
        "subscription id \(id.debugDescription): expected 1 to \(SubscriptionID.maxLength) characters of A-Z a-z 0-9 - _"
    }
}
