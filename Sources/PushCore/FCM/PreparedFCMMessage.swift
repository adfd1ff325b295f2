/// A validated FCM HTTP v1 message with everything the sender needs, computed once and shared by
/// all of its tokens: per token the sender only writes `bodyPrefix + token + bodySuffix`.
///
/// The body is the whole `messages:send` request, `{"message":{"token":"…",…}}`; tokens are checked
/// to need no JSON escaping (``FCMToken``), so they are spliced in as they are. A topic target
/// (`/topics/<name>`) gets `{"message":{"topic":"<name>",…}}` instead.
public struct PreparedFCMMessage: Sendable, Equatable {
    /// The request body up to the token's first byte.
    public var bodyPrefix: [UInt8]
    /// The request body after the token's last byte.
    public var bodySuffix: [UInt8]
    /// Unix seconds after which FCM would drop it anyway (`android.ttl` counted from when it was
    /// prepared): no retry past this. nil: no TTL was set (FCM's default, 4 weeks).
    public var expiration: Int64?
    /// The registration tokens, in request order.
    public var tokens: [String]

    public init(bodyPrefix: [UInt8], bodySuffix: [UInt8], expiration: Int64?, tokens: [String]) {
        self.bodyPrefix = bodyPrefix
        self.bodySuffix = bodySuffix
        self.expiration = expiration
        self.tokens = tokens
    }

    /// The request body for one token; a topic target (`/topics/<name>`) is sent as `"topic"`, an
    /// installation (`fid:<FID>`) as `"fid"`.
    public func body(token: String) -> [UInt8] {
        var body: [UInt8] = []
        body.reserveCapacity(bodyPrefix.count + token.utf8.count + bodySuffix.count)
        if let topic = FCMToken.topicName(token), bodyPrefix == FCMMessageRules.bodyPrefix {
            body.append(contentsOf: FCMMessageRules.topicBodyPrefix)
            body.append(contentsOf: topic.utf8)
        } else if let installation = FCMToken.installationID(token), bodyPrefix == FCMMessageRules.bodyPrefix {
            body.append(contentsOf: FCMMessageRules.installationBodyPrefix)
            body.append(contentsOf: installation.utf8)
        } else {
            body.append(contentsOf: bodyPrefix)
            body.append(contentsOf: token.utf8)
        }
        body.append(contentsOf: bodySuffix)
        return body
    }
}
