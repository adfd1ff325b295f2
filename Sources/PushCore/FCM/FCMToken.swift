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
        if let id = installationID(token) {
            try installationShape.validate(String(id), field: field)
        } else {
            try shape.validate(token, field: field)
        }
    }

    /// True when `token` passes ``validate(_:field:)``.
    public static func isValid(_ token: String) -> Bool {
        installationID(token).map { installationShape.isValid(String($0)) } ?? shape.isValid(token)
    }

    /// A target that is a Firebase Installation ID rather than a registration token (Google is
    /// moving apps to them): `fid:<FID>` becomes the v1 message's `"fid":"<FID>"`. Unambiguous: a
    /// registration token starts with its 22-character FID, never with `fid:`.
    public static let installationPrefix = "fid:"

    /// What a valid installation target looks like, for error messages.
    public static let installationRequirement =
        "FCM installation target must be fid: followed by a Firebase Installation ID, 1-256 characters from A-Za-z0-9_-"

    /// The installation id when `token` is an installation target, else nil.
    static func installationID(_ token: String) -> Substring? {
        token.hasPrefix(installationPrefix) ? token.dropFirst(installationPrefix.count) : nil
    }

    /// An FID is base64url (22 characters as Firebase makes them; FCM itself checks no shape).
    static let installationShape = TokenShape(maxBytes: 256, requirement: installationRequirement) { byte in
        TokenShape.isAlphanumeric(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
    }

    /// A Send's target that is an FCM topic rather than a device: `/topics/<name>` (the form FCM's
    /// legacy `to` took) becomes the v1 message's `"topic":"<name>"`.
    public static let topicPrefix = "/topics/"

    /// What a valid topic target looks like, for error messages.
    public static let topicRequirement =
        "FCM topic must be /topics/ followed by 1-900 characters from A-Za-z0-9-_.~%"

    /// The topic's name when `token` is a topic target, else nil.
    static func topicName(_ token: String) -> Substring? {
        token.hasPrefix(topicPrefix) ? token.dropFirst(topicPrefix.count) : nil
    }

    /// Checks a Send's targets: registration tokens, or topics (`/topics/<name>`). Registry
    /// endpoints stay devices (``validate(_:field:)``): a topic has no device to register.
    static func validateTargets(_ tokens: [String]) throws(ValidationError) {
        guard !tokens.isEmpty else {
            throw ValidationError(field: "tokens", message: "at least one token is required")
        }
        for (i, token) in tokens.enumerated() {
            guard let name = topicName(token) else {
                try validate(token, field: "tokens[\(i)]")
                continue
            }
            guard topicShape.isValid(String(name)) else {
                throw ValidationError(field: "tokens[\(i)]", message: topicRequirement)
            }
        }
    }

    /// FCM's topic name pattern, `[a-zA-Z0-9-_.~%]+` (bounded here: the name sits in every body).
    static let topicShape = TokenShape(maxBytes: 900, requirement: topicRequirement) { byte in
        TokenShape.isAlphanumeric(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
            || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "~") || byte == UInt8(ascii: "%")
    }

    /// The length and alphabet rules.
    static let shape = TokenShape(maxBytes: maxBytes, requirement: requirement) { byte in
        TokenShape.isAlphanumeric(byte) || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ":")
            || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-")
    }
}
