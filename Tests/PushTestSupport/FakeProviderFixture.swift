public import PushCore
public import PushDelivery
public import PushPosix
import PushTLS
import PushTransport

/// A ``LoopbackProvider`` and an engine client of it speaking ``FakeDialect``, on a group of two
/// loops: the engine's sockets, retries and pools without any real provider's rules.
public struct FakeProviderFixture: Sendable {
    public let group: EventLoopGroup
    public let server: LoopbackProvider
    public let client: ProviderClient<FakeDialect>

    /// - Parameters:
    ///   - responseDelay: how long the server waits before each answer.
    ///   - adjust: the client's engine settings (retries are quick by default).
    public init(
        responseDelay: Duration = .zero, maxConcurrentStreams: UInt32 = 100,
        client adjust: (inout ProviderClientConfiguration) -> Void = { _ in }
    ) throws {
        group = try EventLoopGroup(loopCount: 2, namePrefix: "fake-provider")
        server = try LoopbackProvider(
            group: group, responseDelay: responseDelay, maxConcurrentStreams: maxConcurrentStreams)
        var configuration = ProviderClientConfiguration()
        configuration.retry = RetryPolicy(
            maxAttempts: 5, initialBackoff: .milliseconds(10), maxBackoff: .milliseconds(50))
        adjust(&configuration)
        let endpoint = HTTPSOrigin(host: "127.0.0.1", port: server.localPort)
        client = ProviderClient(
            name: "fake", endpoint: endpoint, dialect: FakeDialect(authority: endpoint.authority),
            tlsContext: try TLSContext.client(caPEM: server.certificatePEM, useSystemRoots: false),
            configuration: configuration, group: group)
    }

    /// Sends one push to `tokens` and waits for every result (or the deadline).
    public func send(tokens: [String], deadline: ContinuousClock.Instant? = .now + .seconds(30)) async
        -> [DeliveryResult]
    {
        await client.send(tokens: tokens, deadline: deadline)
    }

    public func stop() {
        client.shutdown()
        server.close()
        group.shutdown()
    }
}

extension ProviderClient where Dialect == FakeDialect {
    /// Reserves room for `tokens` and sends them one ``FakeDialect/push(tokens:)``; the results
    /// in token order once all are in or `deadline` passed (FAILED `DeadlineExceeded` then).
    public func send(tokens: [String], deadline: ContinuousClock.Instant?) async -> [DeliveryResult] {
        let collector = DeliveryCollector(
            placeholders: tokens.map {
                DeliveryResult(notificationIndex: 0, token: $0, status: .failed, code: .deadlineExceeded)
            })
        _ = reserve(tokens.count)
        send(FakeDialect.push(tokens: tokens), notificationIndex: 0, firstSlot: 0, collector: collector)
        return await collector.results(deadline: deadline)
    }
}
