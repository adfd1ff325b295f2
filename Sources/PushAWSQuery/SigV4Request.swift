/// A request as received, for ``SigV4Verifier``: nothing is normalized before the check.
public struct SigV4Request: Sendable {
    public var method: String
    /// The raw request target: the path and an optional `?query`, as received.
    public var target: String
    /// Header names lowercase, in the order received, repeats kept. Over HTTP/2, `:authority`
    /// stands in for an absent `host` (as AWS allows).
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]

    public init(method: String, target: String, headers: [(name: String, value: String)], body: [UInt8]) {
        self.method = method
        self.target = target
        self.headers = headers
        self.body = body
    }
}
