import PushCore

/// Told how each call ended, for metrics. Called on the call's event loop: keep it quick.
public protocol GRPCCallObserver: Sendable {
    /// - Parameters:
    ///   - path: `/package.Service/Method` of a call that reached a method; nil for a call that
    ///     did not (unknown method, invalid `grpc-timeout`), whatever its `:path` was.
    ///   - code: the status sent, or `CANCELLED` when the client reset the stream or went away.
    ///   - nanoseconds: from the request's HEADERS to the status.
    func callFinished(path: String?, code: GRPCStatusCode, nanoseconds: UInt64)
}
