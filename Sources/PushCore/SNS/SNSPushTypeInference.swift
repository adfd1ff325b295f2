/// SNS's choice of `apns-push-type` when `AWS.SNS.MOBILE.APNS.PUSH_TYPE` is not set
/// (docs/providers.md C.5): only ever `alert` or `background`.
///
/// This is deliberately *not* ``PushType/infer(fromPayload:)``, which the gateway's own API uses
/// and which is stricter. For SNS publishes the point is to behave like SNS, since the payloads
/// were written and tested against it. The two rules differ in two places:
///
/// * `content-available` may be the integer `1` or the boolean `true`. docs/providers.md C.5 sends to `alert` a value
///   that is "not an integer or boolean", so a boolean is judged by its value like an integer.
///   `1.0` and `"1"` are neither, so they give `alert`.
/// * Only `alert`, `badge` and `sound` inside `aps` rule out `background`; other `aps` keys
///   (`thread-id`, `mutable-content`, …) don't, and neither do custom keys beside `aps`.
public enum SNSPushTypeInference {
    /// The `aps` keys that make a push user-visible.
    static let interactionKeys: Set<String> = ["alert", "badge", "sound"]

    /// `background` when `aps` has `content-available` of `1`/`true` and no alert, badge or sound.
    public static func infer(fromPayload payload: JSONValue) -> PushType {
        guard let aps = payload["aps"]?.objectMembers else { return .alert }
        var contentAvailable = false
        for (key, value) in aps {
            if interactionKeys.contains(key) { return .alert }
            if key == "content-available" { contentAvailable = value == .number("1") || value == .bool(true) }
        }
        return contentAvailable ? .background : .alert
    }
}
