/// What a handler knows about its call besides the messages.
public struct GRPCCallContext: Sendable {
    /// `/package.Service/Method`.
    public let path: String
    /// When the client stops waiting (from `grpc-timeout`), on the continuous clock; nil: no deadline.
    public let deadline: ContinuousClock.Instant?
    /// The request's custom metadata and call-definition headers (not pseudo-headers), lowercase names.
    public let metadata: [(name: String, value: String)]
    /// The client's address, `host:port`.
    public let peer: String
    /// Whether the client connects from a loopback address.
    public let isLoopbackPeer: Bool
    /// Whether the call came over TLS.
    public let isTLS: Bool
    /// The subject CN of the client's certificate, verified against the server's client CAs (mTLS);
    /// nil without TLS, without client certificates, or when the certificate has no CN.
    public let clientCertificateCommonName: String?

    public init(
        path: String, deadline: ContinuousClock.Instant?, metadata: [(name: String, value: String)],
        peer: String, isLoopbackPeer: Bool, isTLS: Bool = false, clientCertificateCommonName: String? = nil
    ) {
        self.path = path
        self.deadline = deadline
        self.metadata = metadata
        self.peer = peer
        self.isLoopbackPeer = isLoopbackPeer
        self.isTLS = isTLS
        self.clientCertificateCommonName = clientCertificateCommonName
    }

    /// The first value of a metadata entry.
    public func metadataValue(_ name: String) -> String? {
        metadata.first { $0.name == name }?.value
    }
}
