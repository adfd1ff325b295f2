/// A validated ADM message with everything the sender needs, computed once and shared by all of
/// its tokens: the JSON body (`{"data":{…},"consolidationKey":…,"expiresAfter":…}`) is the same for
/// every registration id; per token only the `:path`
/// (`/messaging/registrations/<registration id>/messages`) differs.
public struct PreparedADMMessage: Sendable, Equatable {
    /// The request body shared by every token's request.
    public var body: [UInt8]
    /// Unix seconds after which ADM would drop it anyway (`expiresAfter` counted from when it was
    /// prepared): no retry past this. nil: ADM's default (one week).
    public var expiration: Int64?
    /// The registration ids, in request order.
    public var tokens: [String]

    public init(body: [UInt8], expiration: Int64?, tokens: [String]) {
        self.body = body
        self.expiration = expiration
        self.tokens = tokens
    }
}
