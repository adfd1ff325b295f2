public import PushPosix
public import PushTransport

/// How a provider client (APNs, FCM, ADM) talks to its provider. Every default is stated; the
/// gateway fills these from its config file.
public struct ProviderClientConfiguration: Sendable {
    /// HTTP/2 connections per app. Default 1.
    public var connections = 1
    /// Requests an app may hold (queued, waiting for a retry, or in flight) before new Sends get
    /// RESOURCE_EXHAUSTED. Default 1,000,000 (about 100 bytes each plus the shared payloads).
    public var queueLimit = 1_000_000
    /// Our own cap on concurrent streams per connection, under the server's
    /// SETTINGS_MAX_CONCURRENT_STREAMS. Default 1000.
    public var maxConcurrentStreams: UInt32 = 1000
    /// Retries of 429/500/503 and transport failures.
    public var retry = RetryPolicy()
    /// Failed connection attempts in a row before queued requests are FAILED (ProviderUnreachable).
    /// Default 3.
    public var maxConnectAttempts = 3
    /// TCP connect plus TLS handshake. Default 10 s.
    public var connectTimeout: Duration = .seconds(10)
    /// A connection that received nothing for this long gets a PING (sooner, after `pingTimeout`,
    /// while requests are in flight). Default 60 s.
    public var pingInterval: Duration = .seconds(60)
    /// No answer to a PING (no bytes at all) within this: the connection is dead and replaced.
    /// Default 10 s.
    public var pingTimeout: Duration = .seconds(10)
    /// A connection with requests waiting or in flight that gets no answer for this long (it
    /// answers PINGs but never its SETTINGS, allows 0 streams, or keeps a zero window) is given
    /// up and replaced; its requests go to the next connection. Default 30 s.
    public var stallTimeout: Duration = .seconds(30)
    /// A provider that keeps refusing our handshake (a TLS alert, a close or GOAWAY before any
    /// answer) is logged when it starts, when its cause changes, and then at most once per this.
    /// Default 60 s.
    public var refusalLogInterval: Duration = .seconds(60)

    /// The HTTP version spoken: HTTP/2 only (APNs requires it), HTTP/1.1 only, or whichever the
    /// server chooses by ALPN (the app's TLS context must offer what this allows). Default HTTP/2.
    public var httpVersion = HTTPVersionPolicy.http2
    /// Which resolved addresses connections may go to: ``AddressAdmission/globalOnly`` for Web
    /// Push (hosts chosen by whoever made a subscription) unless the app sets
    /// `allow_private_addresses`. A refusal fails what waits at once (REJECTED), no retry.
    /// Default ``AddressAdmission/any``.
    public var admission = AddressAdmission.any
    /// The proxy the connections tunnel through (CONNECT), per host; default none.
    public var proxy = ProxyChoice.direct
    /// Origins other than the app's endpoint an app may have pools for at once (a dialect whose
    /// tokens name their origin: Web Push). Default 64.
    public var maxOrigins = 64
    /// Such a pool that held no request for this long is closed. Default 5 minutes.
    public var originIdleTimeout: Duration = .seconds(300)

    public init() {}
}
