public import PushHTTP2
public import PushPosix

extension HTTPTransport {
    /// Connects a cleartext HTTP/2 client (prior knowledge, what gRPC "insecure" channels speak) to
    /// `host:port`: the one way the gRPC clients (``GRPCClient``'s connection, the load generator's)
    /// open theirs. `attached` gets the new transport on `loop` before it connects; this returns
    /// once it is connected, which without TLS is once it is ready.
    public static func connectCleartextHTTP2(
        host: String, port: Int, loop: EventLoop, timeout: Duration,
        client: some HTTP2SessionDelegate & HTTPTransportOwner & Sendable,
        attached: @escaping @Sendable (HTTPTransport) -> Void
    ) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            loop.execute {
                do {
                    let transport = try HTTPTransport(
                        loop: loop, tls: nil, role: .client, settings: .clientDefaults, sessionDelegate: client,
                        owner: client)
                    attached(transport)
                    transport.connect(host: host, port: port, timeout: timeout) { continuation.resume(with: $0) }
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
    }
}
