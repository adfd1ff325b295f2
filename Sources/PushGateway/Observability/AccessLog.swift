import PushCore
import PushGRPC

/// One log line per call that did not end OK, and per call at debug, with its request id: enough
/// to find a failed call from the client's side without logging every success. A failure that is
/// the gateway's (UNAVAILABLE, INTERNAL, DATA_LOSS, UNKNOWN) is a warning or an error; a client's
/// mistake (INVALID_ARGUMENT, NOT_FOUND, …) stays at info.
final class AccessLog: GRPCCallObserver {
    let log: Log

    init(log: Log) { self.log = log }

    func callFinished(_ call: GRPCCallSummary) {
        let ok = call.status.code == .ok
        guard !ok || log.level <= .debug else { return }
        let fields: KeyValuePairs<String, String> = [
            "method": call.path.map { String($0.dropFirst()) } ?? "unknown", "code": call.status.code.name,
            "message": call.status.message, "ms": "\(call.nanoseconds / 1_000_000)", "request_id": call.requestID,
            "peer": call.peer,
        ]
        switch call.status.code {
        case .ok: log.debug("call", fields)
        case .internalError, .dataLoss, .unknown: log.error("call failed", fields)
        case .unavailable: log.warning("call failed", fields)
        default: log.info("call failed", fields)
        }
    }

    /// Every protection is a warning: each one means a client misbehaved or a limit is too small.
    func serverEvent(_ event: GRPCServerEvent) {
        switch event {
        case .requestBudgetExceeded(let peer, let path):
            log.warning(
                "request budget exceeded",
                [
                    "method": path.map { String($0.dropFirst()) } ?? "unknown", "peer": peer,
                    "hint":
                        "raise max_buffered_request_bytes_per_connection / max_buffered_request_bytes if this client is legitimate",
                ])
        case .unreadClientClosed(let peer, let unsent, let reason):
            log.warning(
                "client closed: it does not read its responses",
                ["peer": peer, "unsent_bytes": "\(unsent)", "reason": reason])
        case .controlFrameFlood(let peer, let frames):
            log.warning(
                "client closed: a flood of control frames (WINDOW_UPDATE, PING, PRIORITY, ...)",
                ["peer": peer, "frames_in_a_second": "\(frames)"])
        case .responseNotSent(let peer, let path, let error):
            log.warning(
                "response not sent; stream reset",
                ["method": path.map { String($0.dropFirst()) } ?? "unknown", "peer": peer, "error": error])
        }
    }
}
