/// The shape of an opaque provider token: a length limit and an alphabet of ASCII bytes.
///
/// FCM registration tokens (``FCMToken``) and ADM registration ids (``ADMRegistrationID``) are
/// opaque strings checked only for shape; this is the one place that does it, so every provider
/// reports a bad token with the same wording.
struct TokenShape: Sendable {
    /// The longest token accepted, in bytes.
    let maxBytes: Int
    /// What a valid token looks like, appended to every error message.
    let requirement: String
    /// True for the bytes a token may contain.
    let allows: @Sendable (UInt8) -> Bool

    /// Checks one token.
    ///
    /// - Parameter field: the token's place in the request (`tokens[0]`), the error's field.
    /// - Throws: ``ValidationError`` naming `field` when the token is empty, longer than
    ///   ``maxBytes`` or has a byte outside the alphabet (its offset is reported).
    func validate(_ token: String, field: String) throws(ValidationError) {
        let bytes = token.utf8
        guard !bytes.isEmpty else {
            throw ValidationError(field: field, message: "must not be empty; " + requirement)
        }
        guard bytes.count <= maxBytes else {
            throw ValidationError(field: field, message: "is \(bytes.count) bytes; " + requirement)
        }
        if let bad = bytes.firstIndex(where: { !allows($0) }) {
            let offset = bytes.distance(from: bytes.startIndex, to: bad)
            throw ValidationError(field: field, message: "has a disallowed byte at offset \(offset); " + requirement)
        }
    }

    /// Checks a notification's tokens: at least one, each of this shape (`tokens[i]`).
    func validate(tokens: [String]) throws(ValidationError) {
        guard !tokens.isEmpty else {
            throw ValidationError(field: "tokens", message: "at least one token is required")
        }
        for (i, token) in tokens.enumerated() {
            try validate(token, field: "tokens[\(i)]")
        }
    }

    /// True when `token` passes ``validate(_:field:)``.
    func isValid(_ token: String) -> Bool {
        let bytes = token.utf8
        return !bytes.isEmpty && bytes.count <= maxBytes && bytes.allSatisfy(allows)
    }

    /// True for `A-Za-z0-9`.
    static func isAlphanumeric(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default: false
        }
    }
}
