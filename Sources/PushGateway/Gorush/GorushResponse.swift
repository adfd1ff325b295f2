import PushCore
import PushProto

/// gorush's answers: `{"counts", "logs", "success": "ok"}` for a delivered request (its sync
/// mode: every token's outcome known), `{"code", "message"}` for one refused whole.
enum GorushResponse {
    /// The 200 body: `counts` is every token sent, `logs` one `failed-push` entry per token not
    /// DELIVERED, its `error` Pushgate's reason (the provider's own, e.g. `BadDeviceToken`).
    static func delivered(_ results: [PushgateV1.Result], echoes: [GorushRequest.Echo]) -> [UInt8] {
        var writer = JSONWriter(reservingCapacity: 64 + results.count * 16)
        writer.beginObject()
        writer.key("counts")
        writer.int(results.count)
        writer.key("logs")
        writer.beginArray()
        for result in results where result.status != .delivered {
            let index = Int(result.notificationIndex)
            let echo =
                echoes.indices.contains(index)
                ? echoes[index] : GorushRequest.Echo(platform: "", message: "", notifID: "")
            writer.beginObject()
            writer.member("notif_id", nonEmpty: echo.notifID)
            writer.member("type", string: "failed-push")
            writer.member("platform", string: echo.platform)
            writer.member("token", string: result.token)
            writer.member("message", string: echo.message)
            writer.member("error", string: reason(result))
            writer.endObject()
        }
        writer.endArray()
        writer.member("success", string: "ok")
        writer.endObject()
        return writer.bytes
    }

    /// A refused request: gorush's error body, with the HTTP status as its `code`.
    static func refused(status: Int, message: String) -> [UInt8] {
        var writer = JSONWriter(reservingCapacity: 32 + message.utf8.count)
        writer.beginObject()
        writer.key("code")
        writer.int(status)
        writer.member("message", string: message)
        writer.endObject()
        return writer.bytes
    }

    private static func reason(_ result: PushgateV1.Result) -> String {
        if !result.reason.isEmpty { return result.reason }
        return result.status == .rejected ? "Rejected" : "Failed"
    }
}
