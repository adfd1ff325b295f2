import PushCore
import PushGRPC

/// One log line per call that did not end OK (at info), and per call at debug, with its request id:
/// enough to find a failed call from the client's side without logging every success.
struct AccessLog: GRPCCallObserver {
    let log: Log

    func callFinished(_ call: GRPCCallSummary) {
        let ok = call.status.code == .ok
        guard !ok || log.level <= .debug else { return }
        let fields: KeyValuePairs<String, String> = [
            "method": call.path.map { String($0.dropFirst()) } ?? "unknown", "code": call.status.code.name,
            "message": call.status.message, "ms": "\(call.nanoseconds / 1_000_000)", "request_id": call.requestID,
            "peer": call.peer,
        ]
        if ok { log.debug("call", fields) } else { log.info("call failed", fields) }
    }
}
