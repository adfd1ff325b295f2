/// Which of Huawei Push Kit's APIs an app speaks (docs/providers.md, Huawei): `v3` for HarmonyOS NEXT
/// (HarmonyOS 5 and later: `/v3/{projectId}/messages:send`, a self-signed JWT), `v2` for HMS Core
/// devices and HarmonyOS 4 and earlier (`/v1/{appId}/messages:send`, an OAuth access token).
public enum HMSAPI: String, Sendable, Equatable {
    case v3, v2
}

/// A validated Push Kit message with everything the sender needs, computed once and shared by all of
/// its tokens: per token the sender writes `bodyPrefix + token + bodySuffix` (each token is its own
/// request, so each gets its own result; the body's `token` array holds the one token).
public struct PreparedHMSMessage: Sendable, Equatable {
    public var bodyPrefix: [UInt8]
    public var bodySuffix: [UInt8]
    /// v3's `push-type` header (`0` notification, `6` background data); nil for v2.
    public var pushType: String?
    /// Unix seconds after which Huawei would drop it anyway (the TTL from when it was prepared):
    /// no retry past this. nil: Huawei's default TTL.
    public var expiration: Int64?
    public var tokens: [String]

    public init(bodyPrefix: [UInt8], bodySuffix: [UInt8], pushType: String?, expiration: Int64?, tokens: [String]) {
        self.bodyPrefix = bodyPrefix
        self.bodySuffix = bodySuffix
        self.pushType = pushType
        self.expiration = expiration
        self.tokens = tokens
    }

    /// The request body for one token (checked to need no JSON escaping: ``HMSToken``).
    public func body(token: String) -> [UInt8] {
        var body: [UInt8] = []
        body.reserveCapacity(bodyPrefix.count + token.utf8.count + bodySuffix.count)
        body.append(contentsOf: bodyPrefix)
        body.append(contentsOf: token.utf8)
        body.append(contentsOf: bodySuffix)
        return body
    }
}

/// The shape of a Push Kit token: opaque, base64-like text (HMS Core and HarmonyOS tokens are
/// letters, digits and `+/=_-.:`), checked so that it can be spliced into the JSON body unescaped.
public enum HMSToken {
    public static let maxBytes = 1024
    public static let requirement = "Huawei push token must be 1-\(maxBytes) characters from A-Za-z0-9+/=_-.:"

    static let shape = TokenShape(maxBytes: maxBytes, requirement: requirement) { byte in
        TokenShape.isAlphanumeric(byte) || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "/")
            || byte == UInt8(ascii: "=") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
            || byte == UInt8(ascii: ".") || byte == UInt8(ascii: ":")
    }

    public static func validate(_ token: String, field: String) throws(ValidationError) {
        try shape.validate(token, field: field)
    }

    public static func isValid(_ token: String) -> Bool { shape.isValid(token) }
}
