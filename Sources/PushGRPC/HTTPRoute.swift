/// A plain HTTP endpoint served on the gRPC listener beside gRPC and Connect (over HTTP/1.1 and
/// HTTP/2 alike): a request whose path is a route's goes to its handler whole (body within the
/// server's `maxMessageSize`), and its answer goes back in request order.
public struct HTTPRoute: Sendable {
    /// The exact path (the request target up to any `?`), e.g. `/api/push`.
    public let path: String
    /// The methods it takes; others get 405.
    public let methods: Set<String>
    /// The largest body it takes (never more than the server's `maxMessageSize`); nil: that.
    public let maxBodyBytes: Int?
    public let handler: HTTPRouteHandler
    /// Decides from the head alone (the request with an empty body), before any body byte is
    /// kept: nil lets the body be read; an answer refuses the request with it (a bad API key
    /// costs the server no buffered body, as for gRPC and Connect calls).
    public let admission: (@Sendable (HTTPRouteRequest) -> HTTPRouteResponse?)?
    /// The route's own form of a refusal the server makes for it (a body over the limit, a full
    /// request budget): its status and why. Plain text unless the route says otherwise.
    public let refusal: @Sendable (_ status: Int, _ message: String) -> HTTPRouteResponse

    public init(
        path: String, methods: Set<String> = ["POST"], maxBodyBytes: Int? = nil,
        admission: (@Sendable (HTTPRouteRequest) -> HTTPRouteResponse?)? = nil,
        refusal: @escaping @Sendable (_ status: Int, _ message: String) -> HTTPRouteResponse = HTTPRoute.textRefusal,
        handler: @escaping HTTPRouteHandler
    ) {
        self.path = path
        self.methods = methods
        self.maxBodyBytes = maxBodyBytes
        self.admission = admission
        self.refusal = refusal
        self.handler = handler
    }

    @Sendable public static func textRefusal(_ status: Int, _ message: String) -> HTTPRouteResponse {
        HTTPRouteResponse(
            status: status, headers: [("content-type", "text/plain; charset=utf-8")], body: Array((message + "\n").utf8)
        )
    }
}

extension HTTPRoute {
    /// Hands `request` to the handler once its body is complete: on the connection's loop, or, for
    /// a body over ``RequestDecoding/offLoopBytes``, on a task, since reading such a body (gorush's
    /// JSON) would hold every other client of the loop meanwhile.
    ///
    /// `handled` is called once the handler has returned (it has read the body), on the thread it
    /// ran on: the body's reservation in the request budget is kept until then, so the budget
    /// bounds the bodies waiting for and in their parse.
    func handle(
        _ request: HTTPRouteRequest, _ responder: HTTPRouteResponder,
        offLoop: (@escaping @Sendable () -> Void) -> Void = RequestDecoding.onTask,
        handled: @escaping @Sendable () -> Void
    ) {
        guard request.body.count > RequestDecoding.offLoopBytes else {
            handler(request, responder)
            return handled()
        }
        let handler = self.handler
        offLoop {
            handler(request, responder)
            handled()
        }
    }
}

/// Where request bodies are decoded.
enum RequestDecoding {
    /// Bodies over this are parsed off the event loop (16 MB of JSON held a release build's loop
    /// for ~280 ms, issue 38): below it a task's hop costs more than the parse.
    static let offLoopBytes = 64 << 10

    static func onTask(_ work: @escaping @Sendable () -> Void) {
        Task.detached { work() }
    }
}

/// Handles one request of an ``HTTPRoute``: called once the body is complete, on the connection's
/// loop (or a task, for a large body); answers through `responder`, now or later, from any thread.
public typealias HTTPRouteHandler = @Sendable (_ request: HTTPRouteRequest, _ responder: HTTPRouteResponder) -> Void

/// A request to an ``HTTPRoute``.
public struct HTTPRouteRequest: Sendable {
    public var method: String
    /// The request target: the path and any query.
    public var target: String
    /// Names lowercase, in order.
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]
    /// The client's address, `host:port`, and whether it is a loopback one.
    public var peer: String
    public var isLoopbackPeer: Bool
    public var isTLS: Bool

    /// The first value of header `name` (lowercase).
    public func header(_ name: String) -> String? {
        headers.first { $0.name == name }?.value
    }
}

/// An answer to an ``HTTPRoute`` request.
public struct HTTPRouteResponse: Sendable {
    public var status: Int
    /// `content-length` is added; names as they should be sent.
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]

    public init(status: Int, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

/// Answers one ``HTTPRoute`` request: usable from any thread; only the first answer counts, and
/// none once the client has gone.
public struct HTTPRouteResponder: Sendable {
    let send: @Sendable (HTTPRouteResponse) -> Void

    public func respond(_ response: HTTPRouteResponse) { send(response) }
}

/// The routes of a server by path.
struct HTTPRoutes: Sendable {
    private let routes: [String: HTTPRoute]

    init(_ routes: [HTTPRoute]) {
        self.routes = Dictionary(routes.map { ($0.path, $0) }, uniquingKeysWith: { _, last in last })
    }

    func route(forTarget target: String) -> HTTPRoute? {
        guard !routes.isEmpty else { return nil }
        let path = target.utf8.firstIndex(of: UInt8(ascii: "?")).map { String(target[..<$0]) } ?? target
        return routes[path]
    }
}
