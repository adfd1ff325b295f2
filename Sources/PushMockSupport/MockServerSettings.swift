/// Where a request/response mock (mock-fcm, mock-adm) listens and how its connections behave.
public struct MockServerSettings: Sendable {
    /// Listen address. 127.0.0.1 by default: this is a test tool.
    public var host = "127.0.0.1"
    /// 0 = an ephemeral port (see the server's `localPort`).
    public var port = 0
    public var identity = MockServerIdentity.loopback
    /// The HTTP version spoken: HTTP/2 (ALPN h2) or HTTP/1.1 (ALPN http/1.1, keep-alive, requests
    /// answered in order), as the real service does.
    public var http1 = false
    /// Offer both HTTP/2 and HTTP/1.1 by ALPN (`h2` preferred) and speak what each client picks
    /// (HTTP/1.1 when it offers neither); `http1` is then ignored. Web Push services sit behind
    /// load balancers that speak both.
    public var offersBothVersions = false
    /// SETTINGS_MAX_CONCURRENT_STREAMS (about 100 has been observed at FCM, docs/providers.md B.6).
    public var maxConcurrentStreams: UInt32 = 100
    /// Waits this long (on loop timers, never blocking) before answering each request.
    public var responseDelay: Duration = .zero
    /// After this many streams on a connection, send GOAWAY (NO_ERROR, last-stream-id = the Nth
    /// stream), answer the streams up to it and close. HTTP/1.1: the Nth answer says
    /// `Connection: close`, and the connection closes after it.
    public var goAwayAfterStreams: Int?
    /// Request bodies longer than this are not kept: the mock sees the first `maxBodyBytes + 1`
    /// bytes and the full length, and answers at once (its "too big" answer).
    public var maxBodyBytes = 64 << 10

    public init() {}
}

/// A mock's configuration: its own settings, and the ``MockServerSettings`` it shares with the
/// other mocks, whose members read and write as its own (`configuration.maxConcurrentStreams = 40`).
@dynamicMemberLookup
public protocol MockServerConfiguration: Sendable {
    var server: MockServerSettings { get set }
}

extension MockServerConfiguration {
    public subscript<Value>(dynamicMember member: WritableKeyPath<MockServerSettings, Value>) -> Value {
        get { server[keyPath: member] }
        set { server[keyPath: member] = newValue }
    }
}
