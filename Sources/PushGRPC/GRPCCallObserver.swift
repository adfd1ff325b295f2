import PushCore

/// How one call ended, for metrics and the access log.
public struct GRPCCallSummary: Sendable {
    /// `/package.Service/Method` of a call that reached a method; nil for a call that did not
    /// (unknown method, invalid `grpc-timeout`), whatever its `:path` was.
    public var path: String?
    /// The status sent, or CANCELLED when the client reset the stream or went away.
    public var status: GRPCStatus
    /// From the request's HEADERS to the status.
    public var nanoseconds: UInt64
    /// The client's `x-request-id`, or one made up for the call; also in ``GRPCCallContext``.
    public var requestID: String
    /// The client's address.
    public var peer: String

    public init(path: String?, status: GRPCStatus, nanoseconds: UInt64, requestID: String, peer: String) {
        self.path = path
        self.status = status
        self.nanoseconds = nanoseconds
        self.requestID = requestID
        self.peer = peer
    }
}

/// Told how each call ended. Called on the call's event loop: keep it quick.
public protocol GRPCCallObserver: Sendable {
    func callFinished(_ call: GRPCCallSummary)
}

/// Several observers as one.
public struct GRPCCallObservers: GRPCCallObserver {
    public let observers: [any GRPCCallObserver]

    public init(_ observers: [any GRPCCallObserver]) { self.observers = observers }

    public func callFinished(_ call: GRPCCallSummary) {
        for observer in observers { observer.callFinished(call) }
    }
}
