/// The shape of an FCM registration token.
///
/// FCM tokens are opaque, but every token Firebase issues is URL-safe base64 plus `:` (the
/// `<instance id>:APA91b…` form), so a token outside `[A-Za-z0-9_:.-]` is a caller mistake and is
/// refused before it reaches FCM. The narrow alphabet is also what lets the sender splice a token
/// into the JSON body without escaping (``PreparedFCMMessage/body(token:)``).
public enum FCMToken {
    /// The longest token accepted, in bytes. Real tokens are about 150-250 bytes; the slack leaves
    /// room for future formats while keeping a request far below FCM's body limits.
    public static let maxBytes = 4096

    /// What a valid token looks like, for error messages.
    public static let requirement = "FCM registration token must be 1-\(maxBytes) characters from A-Za-z0-9_:.-"

    /// Checks that `token` is a plausible registration token.
    ///
    /// - Parameter field: the token's place in the request (`notifications[2].tokens[0]`), used
    ///   as the error's field.
    /// - Throws: ``ValidationError`` naming `field` when the token is empty, too long or has a
    ///   byte outside `[A-Za-z0-9_:.-]`.
    public static func validate(_ token: String, field: String) throws(ValidationError) {
        let bytes = token.utf8
        guard !bytes.isEmpty else {
            throw ValidationError(field: field, message: "must not be empty; " + requirement)
        }
        guard bytes.count <= maxBytes else {
            throw ValidationError(field: field, message: "is \(bytes.count) bytes; " + requirement)
        }
        if let bad = bytes.firstIndex(where: { !isTokenByte($0) }) {
            let offset = bytes.distance(from: bytes.startIndex, to: bad)
            throw ValidationError(field: field, message: "has a disallowed byte at offset \(offset); " + requirement)
        }
    }

    /// True when `token` passes ``validate(_:field:)``.
    public static func isValid(_ token: String) -> Bool {
        let bytes = token.utf8
        return !bytes.isEmpty && bytes.count <= maxBytes && bytes.allSatisfy(isTokenByte)
    }

    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: ":"), UInt8(ascii: "."),
            UInt8(ascii: "-"):
            true
        default: false
        }
    }
}
