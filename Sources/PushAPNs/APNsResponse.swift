import PushCore

/// What an APNs answer means for one request.
enum APNsOutcome: Equatable {
    /// 200: accepted; the apns-id of the notification.
    case delivered(apnsID: String)
    /// A permanent refusal: sending it again as is will not help.
    case rejected(reason: String, httpStatus: Int, unregisteredAt: Int64)
    /// Transient: may succeed when sent again (how soon depends on `retry`).
    case transient(reason: String, httpStatus: Int, retry: APNsReason.Retry)
}

/// One response as it arrives: `:status`, `apns-id`, then the JSON body of an error.
struct APNsResponse {
    var status = 0
    var apnsID = ""
    var body: [UInt8] = []

    /// Error bodies are `{"reason": …}` (plus `timestamp` for 410); anything much larger is not APNs.
    static let maxBody = 4096

    mutating func append(_ data: UnsafeRawBufferPointer) {
        guard body.count + data.count <= Self.maxBody else { return }
        body.append(contentsOf: data)
    }

    var outcome: APNsOutcome {
        if status == 200 { return .delivered(apnsID: apnsID) }
        var reasonText = ""
        var timestamp: Int64 = 0
        if let json = try? JSONParser.parse(body), case .object(let members) = json {
            for (key, value) in members {
                if key == "reason", case .string(let text) = value { reasonText = text }
                if key == "timestamp", case .number(let text) = value { timestamp = Int64(text) ?? 0 }
            }
        }
        if reasonText.isEmpty {
            // No usable body (a proxy's answer, or a truncated one): the HTTP status decides.
            reasonText = "HTTP \(status)"
            let retry = APNsReason.Retry(httpStatus: status)
            return retry == .never
                ? .rejected(reason: reasonText, httpStatus: status, unregisteredAt: 0)
                : .transient(reason: reasonText, httpStatus: status, retry: retry)
        }
        let reason = APNsReason(reasonText)
        var retry = reason.retry
        if case .other = reason { retry = APNsReason.Retry(httpStatus: status) }
        if retry == .never {
            return .rejected(reason: reasonText, httpStatus: status, unregisteredAt: status == 410 ? timestamp : 0)
        }
        return .transient(reason: reasonText, httpStatus: status, retry: retry)
    }
}
