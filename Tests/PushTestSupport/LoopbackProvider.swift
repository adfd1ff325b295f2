import PushHTTP2
import PushMockSupport
public import PushPosix
public import PushTLS

/// The server end of ``FakeDialect``: TLS and HTTP/2 on 127.0.0.1 (PushMockSupport's listener),
/// answering every request 200 with `fake-id: <path>`, after `responseDelay` if one is set.
public final class LoopbackProvider: Sendable {
    private let listener: MockHTTP2Server
    private let recorder: MockStatsRecorder<LoopbackProviderStats>

    /// - Parameters:
    ///   - identity: the server's certificate (several servers one client trusts share one);
    ///     nil: a fresh one (``certificatePEM``).
    ///   - responseDelay: how long each answer waits (on loop timers).
    public init(
        group: EventLoopGroup, identity: SelfSignedCertificate? = nil, responseDelay: Duration = .zero,
        maxConcurrentStreams: UInt32 = 100
    ) throws {
        var settings = MockServerSettings()
        if let identity {
            settings.identity = .pem(certificateChain: identity.certificatePEM, privateKey: identity.privateKeyPEM)
        }
        settings.responseDelay = responseDelay
        settings.maxConcurrentStreams = maxConcurrentStreams
        let recorder = MockStatsRecorder<LoopbackProviderStats>(recordLimit: 0)
        self.recorder = recorder
        listener = try MockHTTP2Server(
            settings: settings, commonName: "loopback provider", handler: Answerer(), events: recorder, group: group)
    }

    /// The certificate a client must trust.
    public var certificatePEM: String { listener.certificatePEM! }

    public var localPort: Int { listener.localPort }

    /// Connections accepted so far.
    public var connectionsOpened: Int { recorder.snapshot().counters.connectionsOpened }
    /// Connections that have closed so far.
    public var connectionsClosed: Int { recorder.snapshot().counters.connectionsClosed }
    /// Requests answered so far.
    public var requests: Int { recorder.snapshot().counters.requests }
    /// The most streams open at once on one connection.
    public var maxInFlight: Int { recorder.snapshot().counters.maxInFlight }

    /// Stops accepting; open connections finish what is in flight and close.
    public func close() { listener.close() }

    private final class Answerer: MockRequestHandler {
        func handle(_ request: MockRequest, now: UInt64) -> MockResponse {
            MockResponse(status: 200, headers: [HTTP2Header("fake-id", request.path)])
        }
    }
}

struct LoopbackProviderStats: MockServerStats {
    var counters = MockServerCounters()
    var recentMessages: [String] = []
}
