/// Limits and addresses of a ``GRPCServer``.
public struct GRPCServerConfiguration: Sendable {
    /// The address to listen on. Default `127.0.0.1`.
    public var host: String
    /// The port; 0 picks a free one. Default 50051.
    public var port: Int
    /// The largest request message accepted; larger ones get RESOURCE_EXHAUSTED. Default 4 MiB.
    public var maxMessageSize: Int
    /// SETTINGS_MAX_CONCURRENT_STREAMS advertised to each client. Default 256.
    public var maxConcurrentStreams: UInt32
    /// SETTINGS_MAX_HEADER_LIST_SIZE: the largest request header block. Default 16 KiB.
    public var maxHeaderListSize: UInt32
    /// Unsent bytes buffered for one client before Pushgate stops reading from it. Default 4 MiB.
    public var outputHighWaterMark: Int
    /// Told how every call ended (metrics); nil: nobody.
    public var callObserver: (any GRPCCallObserver)? = nil

    public init(
        host: String = "127.0.0.1", port: Int = 50051, maxMessageSize: Int = 4 << 20,
        maxConcurrentStreams: UInt32 = 256, maxHeaderListSize: UInt32 = 16 << 10,
        outputHighWaterMark: Int = 4 << 20
    ) {
        self.host = host
        self.port = port
        self.maxMessageSize = maxMessageSize
        self.maxConcurrentStreams = maxConcurrentStreams
        self.maxHeaderListSize = maxHeaderListSize
        self.outputHighWaterMark = outputHighWaterMark
    }

    public static var defaults: Self { Self() }
}
