public import PushTLS

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
    /// Request-message bytes one connection may have in memory at once: messages being received
    /// (each counted at its declared size from its length prefix on) and messages a handler has
    /// not taken yet. A message that does not fit gets RESOURCE_EXHAUSTED. At least
    /// `maxMessageSize`. Default 64 MiB.
    public var maxBufferedRequestBytesPerConnection = 64 << 20
    /// The same over all connections together. Default 1 GiB.
    public var maxBufferedRequestBytes = 1 << 30
    /// Response bytes one client may leave unread (queued for its flow-control window or in the
    /// socket) before it is sent GOAWAY and closed; its calls' work goes on without it. Default 64 MiB.
    public var maxUnsentResponseBytes = 64 << 20
    /// A client that has unread response bytes and takes none of them for this long is sent
    /// GOAWAY and closed likewise. Default 30 s; nil: never.
    public var writeTimeout: Duration? = .seconds(30)
    /// Frames without headers or body bytes (WINDOW_UPDATE, PING, PRIORITY, SETTINGS, RST_STREAM,
    /// empty DATA) one client may send in a second; past it the client is sent GOAWAY
    /// (ENHANCE_YOUR_CALM) and closed. nghttp2 limits only the frames it must answer; a flood of
    /// the others cost a core. Default 10,000.
    public var maxControlFramesPerSecond = 10_000
    /// Client connections open at once; more are closed as they arrive. Default 10,000.
    public var maxConnections = 10_000
    /// A connection with no call for this long is sent GOAWAY (`max_idle`) and closed. Default
    /// 5 minutes; nil: never.
    public var idleTimeout: Duration? = .seconds(300)
    /// A unary or server-streaming call whose request is not complete this long after it began is
    /// ended with DEADLINE_EXCEEDED, so a client that starts a request and stalls holds nothing for
    /// long. Default 30 s; nil: never. (Client- and bidirectional-streaming calls are long-lived by
    /// design and bounded by their own deadlines.)
    public var requestTimeout: Duration? = .seconds(30)
    /// A server TLS context (ALPN h2; with client CAs for mTLS): every accepted connection speaks
    /// TLS. nil: HTTP/2 cleartext (h2c with prior knowledge). Default nil.
    public var tls: TLSContext?
    /// Told how every call ended (metrics); nil: nobody.
    public var callObserver: (any GRPCCallObserver)? = nil
    /// When set, a Connect or HTTP-route request whose `Host` (`:authority`) it refuses is answered
    /// 403 before anything else is read: a server that trusts loopback clients uses it against DNS
    /// rebinding (a web page whose own host name resolves to 127.0.0.1 reaching the server from a
    /// browser). gRPC is not checked: browsers cannot speak it.
    public var allowsHost: (@Sendable (String) -> Bool)? = nil

    public init(
        host: String = "127.0.0.1", port: Int = 50051, maxMessageSize: Int = 4 << 20,
        maxConcurrentStreams: UInt32 = 256, maxHeaderListSize: UInt32 = 16 << 10,
        outputHighWaterMark: Int = 4 << 20, tls: TLSContext? = nil
    ) {
        self.host = host
        self.port = port
        self.maxMessageSize = maxMessageSize
        self.maxConcurrentStreams = maxConcurrentStreams
        self.maxHeaderListSize = maxHeaderListSize
        self.outputHighWaterMark = outputHighWaterMark
        self.tls = tls
    }

    public static var defaults: Self { Self() }
}
