public import PushHTTP1
public import PushHTTP2
public import PushPosix
public import PushTLS

/// What the owner of an ``HTTPTransport`` hears besides HTTP events (which go to the session's
/// delegate).
public protocol HTTPTransportOwner: AnyObject {
    /// The transport can carry HTTP: at once for cleartext, after the TLS handshake (with the
    /// protocol agreed by ALPN) otherwise; ``HTTPTransport/version`` says which.
    func transportDidBecomeReady(_ transport: HTTPTransport)
    /// The socket is closed. `error` says why when it was not a clean close.
    func transport(_ transport: HTTPTransport, didCloseWith error: (any Error)?)
}

/// The HTTP version a transport carries.
public enum HTTPVersion: String, Sendable {
    case http2 = "2"
    case http1 = "1.1"
}

/// Which HTTP versions a client speaks.
public enum HTTPVersionPolicy: String, Sendable, CaseIterable {
    /// The server's ALPN choice between `h2` and `http/1.1`.
    case auto
    case http2 = "2"
    case http1 = "1.1"

    /// The ALPN protocols a client offers for this (its TLS context's `alpn`).
    public var alpn: [String] {
        switch self {
        case .auto: ["h2", "http/1.1"]
        case .http2: ["h2"]
        case .http1: ["http/1.1"]
        }
    }
}

/// Why a transport gave up.
public struct TransportError: Error, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// What a server transport offering both versions (``HTTPTransport/init(loop:tls:owner:choosing:)``)
/// carries once the client's ALPN choice is known.
public enum HTTPServerSession {
    case http2(HTTP2Settings, delegate: HTTP2SessionDelegate)
    case http1(HTTP1ServerSession)
}

/// HTTP/2 or HTTP/1.1, over TLS or cleartext, on one socket: bytes from the socket go through TLS
/// into the session (nghttp2's, or an ``HTTP1ClientSession``); what the session produces goes
/// through TLS to the socket. A client that offers both lets the server's ALPN choice decide
/// (``init(loop:tls:http2Settings:http2Delegate:http1Delegate:owner:)``).
///
/// Output is batched per loop turn: ``setNeedsFlush()`` asks for one flush at the end of the turn,
/// so every frame produced in the turn becomes one plaintext chunk, a few TLS records and one
/// socket write. Confined to its connection's loop (hence `@unchecked Sendable`).
///
/// Its set-up and controls are here, its I/O (socket events, the session's bytes through TLS) in
/// HTTPTransport+IO.swift; the state both change is module-internal for that.
public final class HTTPTransport: ConnectionHandler, @unchecked Sendable {
    public let loop: EventLoop
    /// nil until a client connection is established.
    public internal(set) var connection: Connection?
    /// The HTTP/2 session; nil while the version is not chosen yet, or when it is HTTP/1.1.
    public internal(set) var session: HTTP2Session!
    /// Client role: the HTTP/1.1 session, when the server chose HTTP/1.1.
    public internal(set) var http1Session: HTTP1ClientSession?
    /// Server role: the HTTP/1.1 session of a transport made for one.
    public internal(set) var http1ServerSession: HTTP1ServerSession?
    /// Whichever HTTP/1.1 session this carries.
    var http1: (any HTTP1Session)?
    /// The version carried; nil until it is chosen (a client offering both, before the handshake).
    public var version: HTTPVersion? { session != nil ? .http2 : http1 != nil ? .http1 : nil }
    /// Held strongly until the transport closes (the loop keeps the connection, the connection its
    /// handler, this transport, and so the owner alive); released after `didCloseWith`.
    public internal(set) var owner: (any HTTPTransportOwner)?
    /// Unsent bytes buffered for the peer before the transport stops producing (and reading).
    public var outputHighWaterMark = 4 << 20
    public internal(set) var isReady = false
    public internal(set) var isClosed = false
    /// When bytes last arrived (the loop's monotonic nanoseconds): liveness checks compare it with
    /// the time a PING was sent.
    public internal(set) var lastReceivedAt: UInt64 = 0

    let tls: TLSConnection?
    /// Where `tls` puts the records of a flush: the socket's send queue, with no copy in between.
    let sendQueue = SendQueueSink()
    var plaintextIn: [UInt8] = []
    var plaintextOut: [UInt8] = []
    /// nghttp2 cannot produce output from inside its callbacks, so flushes wait until it returns.
    var receiving = false
    private var flushScheduled = false
    var readingPaused = false
    /// Server HTTP/1.1: reading stopped while the client has too many requests unanswered.
    var pipelinePaused = false
    /// The last flush left output in the session because of `outputHighWaterMark`: the next drain
    /// of the socket must flush again.
    var outputHeldBack = false
    var closeError: (any Error)?
    /// ``flushAndClose(error:)`` was asked for while the session was receiving.
    var closeAfterReceive = false
    /// Streams to reset with NO_ERROR once what was submitted for them is serialized.
    var resetsAfterFlush: [Int32] = []
    /// For a client offering both versions: how to make the chosen session.
    var chooser: VersionChooser?
    /// For a server offering both versions: makes the session for the client's choice.
    var serverChooser: ((HTTPTransport, HTTPVersion) throws -> HTTPServerSession)?
    /// Cleartext with a chooser: the first bytes, until they tell the version.
    var sniffed: [UInt8] = []

    struct VersionChooser {
        let policy: HTTPVersionPolicy
        let http2Settings: HTTP2Settings
        let http2Delegate: HTTP2SessionDelegate
        let http1Delegate: any HTTP1ParserDelegate
    }

    /// A transport over an accepted connection (server role) or, before `attach`, for a connect.
    public init(
        loop: EventLoop, tls: TLSConnection?, role: HTTP2Session.Role, settings: HTTP2Settings,
        sessionDelegate: HTTP2SessionDelegate, owner: any HTTPTransportOwner
    ) throws(HTTP2Error) {
        self.loop = loop
        self.tls = tls
        self.owner = owner
        session = try HTTP2Session(role: role, settings: settings, delegate: sessionDelegate)
        plaintextOut.reserveCapacity(64 * 1024)
    }

    /// A client transport over TLS whose `tls` offers what `policy` allows (``HTTPVersionPolicy/alpn``):
    /// the session is made once the handshake says which version the server chose, HTTP/2 with
    /// `http2Settings` reporting to `http2Delegate`, or HTTP/1.1 reporting answers to
    /// `http1Delegate`. A server that chooses nothing gets HTTP/1.1, as RFC 7301 allows, unless
    /// the policy is HTTP/2 only.
    public init(
        loop: EventLoop, tls: TLSConnection, policy: HTTPVersionPolicy, http2Settings: HTTP2Settings,
        http2Delegate: HTTP2SessionDelegate, http1Delegate: any HTTP1ParserDelegate, owner: any HTTPTransportOwner
    ) {
        self.loop = loop
        self.tls = tls
        self.owner = owner
        chooser = VersionChooser(
            policy: policy, http2Settings: http2Settings, http2Delegate: http2Delegate, http1Delegate: http1Delegate)
        plaintextOut.reserveCapacity(64 * 1024)
    }

    /// A server transport speaking HTTP/1.1 through `session` (over TLS whose context offers
    /// `http/1.1`, or cleartext).
    public init(
        loop: EventLoop, tls: TLSConnection?, http1Server session: HTTP1ServerSession, owner: any HTTPTransportOwner
    ) {
        self.loop = loop
        self.tls = tls
        self.owner = owner
        http1ServerSession = session
        http1 = session
        plaintextOut.reserveCapacity(64 * 1024)
    }

    /// A server transport offering both HTTP versions: over TLS (whose context offers `h2` and
    /// `http/1.1`) once the handshake says which one the client chose (HTTP/1.1 when it chose none,
    /// as RFC 7301 allows); over cleartext (`tls` nil) once the first bytes say whether they are
    /// the HTTP/2 preface (``HTTPVersionSniffer``). `choose` makes the session for it, before the
    /// owner hears that the transport is ready.
    public init(
        loop: EventLoop, tls: TLSConnection?, owner: any HTTPTransportOwner,
        choosing choose: @escaping (HTTPTransport, HTTPVersion) throws -> HTTPServerSession
    ) {
        self.loop = loop
        self.tls = tls
        self.owner = owner
        serverChooser = choose
        plaintextOut.reserveCapacity(64 * 1024)
    }

    /// Starts using `connection` (the one accepted, or the one `connect` produced).
    public func attach(_ connection: Connection) {
        self.connection = connection
        lastReceivedAt = loop.now
        connection.handler = self
        if let tls {
            do {
                if chooser != nil || session?.role == .client { try tls.startHandshake() }
            } catch {
                fail(error)
                return
            }
        } else if serverChooser == nil {
            becomeReady()
        }
        setNeedsFlush()
    }

    /// Response or request bytes produced for the peer and not yet taken by the kernel: body bytes
    /// still queued in the session (waiting for the peer's flow-control window, or HTTP/1.1
    /// answers it could write but has not drained yet) and bytes in the socket's send buffer.
    public var unsentBytes: Int {
        let queued = session?.queuedBodyBytes ?? http1ServerSession?.writableAnswerBytes ?? 0
        return queued + (connection?.pendingWriteBytes ?? 0)
    }

    /// Grows whenever the peer takes output: body bytes framed (its window let them go) or bytes
    /// written to the socket. Unchanged while ``unsentBytes`` stays above 0: the peer reads nothing.
    public var outputProgress: Int { (session?.framedBodyBytes ?? 0) &+ (connection?.bytesWritten ?? 0) }

    /// Connects to `host:port` and attaches; `completion` runs on `loop` with the transport or the
    /// reason it could not connect. Readiness (TLS done) is reported to the owner separately.
    /// `admission` applies to the addresses `host` resolves to; through a proxy the proxy
    /// resolves `host`, so only an IP literal `host` is checked here.
    public func connect(
        host: String, port: Int, timeout: Duration, proxy: HTTPProxy? = nil, admission: AddressAdmission = .any,
        completion: @escaping (Result<Void, any Error>) -> Void
    ) {
        let attachWhenOpen: (Result<Connection, any Error>) -> Void = { [self] result in
            switch result {
            case .success(let connection):
                guard !isClosed else {
                    // Closed while connecting: drop the socket that arrived too late.
                    connection.close(flushFirst: false)
                    return
                }
                attach(connection)
                completion(.success(()))
            case .failure(let error):
                isClosed = true
                completion(.failure(error))
            }
        }
        guard let proxy else {
            Connection.connect(
                host: host, port: port, on: loop, handler: self, timeout: timeout, admission: admission,
                completion: attachWhenOpen)
            return
        }
        if let refusal = admission.refusal(ofLiteral: host) {
            // Not inside the caller's own call, as every other outcome.
            loop.executeAtEndOfTurn { attachWhenOpen(.failure(refusal)) }
            return
        }
        // Through the proxy: a tunnel to host:port first; TLS (with SNI for `host`) starts on it.
        let tunnel = ProxyTunnel(host: host, port: port, proxy: proxy) { result in
            attachWhenOpen(result.mapError { $0 })
        }
        Connection.connect(host: proxy.host, port: proxy.port, on: loop, handler: tunnel, timeout: timeout) { result in
            switch result {
            case .success(let connection):
                tunnel.start(connection)
            case .failure(let error):
                attachWhenOpen(.failure(TransportError("proxy \(proxy): \(error)")))
            }
        }
    }

    /// Runs after each flush that handed the session's output to the socket: body bytes queued
    /// for a stream may have gone out, so a writer waiting for them to drain can look again.
    public var onFlushed: (() -> Void)?

    /// Asks for one flush at the end of this loop turn.
    public func setNeedsFlush() {
        guard !flushScheduled, !isClosed else { return }
        flushScheduled = true
        loop.executeAtEndOfTurn { [self] in
            flushScheduled = false
            flush()
        }
    }

    /// Resets `streamID` with NO_ERROR right after the frames already submitted for it are written:
    /// the way a server stops a client's upload after answering early (a reset submitted at once
    /// would make nghttp2 drop the answer).
    public func resetAfterFlush(_ streamID: Int32) {
        resetsAfterFlush.append(streamID)
        setNeedsFlush()
    }

    /// Serializes what the session holds now (a GOAWAY just submitted, say) and closes, with one
    /// attempt to send it all: for giving up on a peer that may not take it.
    public func flushAndClose(error: (any Error)? = nil) {
        guard !receiving else {
            // Inside the session's callbacks nothing can be serialized: right after them.
            closeAfterReceive = true
            closeError = closeError ?? error
            return
        }
        flush()
        close(flushFirst: true, error: error)
    }

    /// Closes: TLS close_notify and what is buffered go out first when `flushFirst`.
    public func close(flushFirst: Bool = true, error: (any Error)? = nil) {
        guard !isClosed else { return }
        isClosed = true
        closeError = closeError ?? error
        guard let connection else {
            notifyClosed(closeError)
            return
        }
        if flushFirst, let tls {
            tls.shutdown()
            Self.sendCiphertext(of: tls, on: connection)
        }
        connection.close(flushFirst: flushFirst)
    }
}
