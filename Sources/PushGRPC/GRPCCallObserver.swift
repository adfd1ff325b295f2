public import PushCore

/// How one call ended, for metrics and the access log.
///
/// The optional fields are spelled `Optional<…>`: a `T?` starts as nil, so the initializer's stores
/// were assignments and the summary was built aside and copied out, a retain and a release per
/// field, for every call (scripts/bench/analysis.md, third pass).
// swift-format-ignore: UseShorthandTypeNames
public struct GRPCCallSummary: Sendable {
    /// `/package.Service/Method` of a call that reached a method; nil for a call that did not
    /// (unknown method, invalid `grpc-timeout`), whatever its `:path` was.
    public var path: Optional<String>
    /// The status sent, or CANCELLED when the client reset the stream or went away.
    public var status: GRPCStatus
    /// From the request's HEADERS to the status.
    public var nanoseconds: UInt64
    /// The client's `x-request-id`, or one made up for the call; also in ``GRPCCallContext``.
    public var requestID: String {
        get { callRequestID.string }
        set { callRequestID = .given(newValue) }
    }
    /// Written out only when read (``GRPCCallRequestID``).
    var callRequestID: GRPCCallRequestID
    /// The client's address.
    public var peer: String
    /// The method's place among its server's methods, the same for every call of `path`: an index
    /// for what an observer keeps per method, found with the method (no lookup of `path` per call).
    /// nil when the call did not come with one (no method, a Connect call); `path` says which.
    public var methodIndex: Optional<Int>

    public init(
        path: String?, status: GRPCStatus, nanoseconds: UInt64, requestID: String, peer: String,
        methodIndex: Int? = nil
    ) {
        self.init(
            path: path, status: status, nanoseconds: nanoseconds, callRequestID: .given(requestID), peer: peer,
            methodIndex: methodIndex)
    }

    init(
        path: String?, status: GRPCStatus, nanoseconds: UInt64, callRequestID: GRPCCallRequestID, peer: String,
        methodIndex: Int?
    ) {
        self.path = path
        self.status = status
        self.nanoseconds = nanoseconds
        self.callRequestID = callRequestID
        self.peer = peer
        self.methodIndex = methodIndex
    }
}

/// What a server did to protect itself from a client, for logs and metrics.
public enum GRPCServerEvent: Sendable, Equatable {
    /// A call's request message did not fit the connection's or the server's request budget; the
    /// call got RESOURCE_EXHAUSTED.
    case requestBudgetExceeded(peer: String, path: String?)
    /// A client that did not take its answers was sent GOAWAY and closed: its unsent bytes went
    /// over the limit, or it took none of them for the write timeout. `reason` says which.
    case unreadClientClosed(peer: String, unsentBytes: Int, reason: String)
    /// A response frame (headers, data or trailers) could not be sent; its stream was reset.
    case responseNotSent(peer: String, path: String?, error: String)
    /// A client sent more frames without headers or body bytes (WINDOW_UPDATE, PING, PRIORITY, …)
    /// in a second than the limit allows; it was sent GOAWAY and closed.
    case controlFrameFlood(peer: String, frames: Int)

    /// A short name for a metric label.
    public var kind: String {
        switch self {
        case .requestBudgetExceeded: "request_budget_exceeded"
        case .unreadClientClosed: "unread_client_closed"
        case .responseNotSent: "response_not_sent"
        case .controlFrameFlood: "control_frame_flood"
        }
    }
}

/// Told how each call ended, and of each ``GRPCServerEvent``. Called on the call's event loop:
/// keep it quick.
///
/// A class: every call reaches its connection's observer once, and a class existential is a
/// retain to take, where a value one was copied out of its box (and its fields retained) per call.
public protocol GRPCCallObserver: AnyObject, Sendable {
    func callFinished(_ call: GRPCCallSummary)
    func serverEvent(_ event: GRPCServerEvent)
}

extension GRPCCallObserver {
    public func serverEvent(_ event: GRPCServerEvent) {}
}

/// Several observers as one.
public final class GRPCCallObservers: GRPCCallObserver {
    public let observers: [any GRPCCallObserver]

    public init(_ observers: [any GRPCCallObserver]) { self.observers = observers }

    public func callFinished(_ call: GRPCCallSummary) {
        for observer in observers { observer.callFinished(call) }
    }

    public func serverEvent(_ event: GRPCServerEvent) {
        for observer in observers { observer.serverEvent(event) }
    }
}
