/// The shape of an ADM registration id, the token of an app instance on a Fire device.
///
/// The id goes, unescaped, into the request path (`/messaging/registrations/<id>/messages`), so
/// only bytes that stand for themselves in a URL path segment are accepted: RFC 3986's unreserved
/// `A-Za-z0-9-._~`, plus `=` in case an id keeps its base64 padding.
///
/// Why this alphabet: real ids look like `amzn1.adm-registration.v3.Y29tLmFtYXpvbi5E…` (v1, v2 and v3
/// seen in client code and tests): a dotted prefix and then base64 of ASCII text
/// (`com.amazon.DeviceMessaging.RegistrationIdEncryptionKey!1!…`). Base64 of bytes below 0x80 only
/// yields `+` or `/` for the bytes `>`, `?`, `~` and DEL, which that text never holds, so the ids
/// seen are `[A-Za-z0-9.-]` with the padding dropped (about 700 bytes for v3). Refused on purpose:
/// `/` (it would split the path), `%` (an escape would be decoded by ADM into a different id), `+`
/// (some servers decode it as a space in paths), and everything outside ASCII. The
/// `amzn1.adm-registration.` prefix is not required, so test and mock ids stay short.
public enum ADMRegistrationID {
    /// The longest id accepted, in bytes: room for longer future formats (v3 ids are ~700 bytes)
    /// while keeping the request line short.
    public static let maxBytes = 2048

    /// What a valid id looks like, for error messages.
    public static let requirement = "ADM registration id must be 1-\(maxBytes) characters from A-Za-z0-9-._~="

    /// Checks that `id` is a plausible registration id that can go into the path as it is.
    ///
    /// - Parameter field: the id's place in the request (`notifications[2].tokens[0]`), used as
    ///   the error's field.
    /// - Throws: ``ValidationError`` naming `field` when the id is empty, longer than
    ///   ``maxBytes`` or has a byte outside `[A-Za-z0-9-._~=]` (the offset of the first is given).
    public static func validate(_ id: String, field: String) throws(ValidationError) {
        try shape.validate(id, field: field)
    }

    /// True when `id` passes ``validate(_:field:)``.
    public static func isValid(_ id: String) -> Bool { shape.isValid(id) }

    /// The length and alphabet rules.
    static let shape = TokenShape(maxBytes: maxBytes, requirement: requirement) { byte in
        TokenShape.isAlphanumeric(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
            || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "~") || byte == UInt8(ascii: "=")
    }
}
