/// Checks every field of a ``NotificationRequest`` and turns it into a ``PreparedNotification``.
///
/// The first problem found is reported with its place, using the proto's snake_case names:
/// `notifications[3].tokens[7]: APNs device token must be 64-200 hex digits`. Checks run in field
/// order (tokens, headers, then the payload), so the same request always gives the same error.
public enum NotificationValidator {
    /// The interruption levels APNs knows (docs/providers.md A.4).
    public static let interruptionLevels: Set<String> = ["passive", "active", "time-sensitive", "critical"]
    /// The largest `apns-collapse-id` APNs accepts, in bytes.
    public static let maxCollapseIDBytes = 64

    /// Validates `n` and computes what the sender needs.
    ///
    /// - Parameters:
    ///   - path: where `n` sits in the request, prefixed to every error's field (`notifications[3]`).
    ///   - bundleID: the app's bundle id, the default topic; may be empty if `n.topic` is set.
    ///   - now: Unix seconds; a Live Activity's `timestamp` defaults to it.
    public static func prepare(
        _ n: NotificationRequest, at path: String, bundleID: String, now: Int64 = 0
    ) -> Result<PreparedNotification, ValidationError> {
        ValidationError.result(at: path) { () throws(ValidationError) in try prepare(n, bundleID: bundleID, now: now) }
    }

    /// The same, throwing its error relative to `n` (`tokens[7]`, `priority`): for a caller that
    /// places it itself, without a `Result` around the prepared notification.
    public static func prepare(_ n: NotificationRequest, bundleID: String, now: Int64 = 0) throws(ValidationError)
        -> PreparedNotification
    {
        try build(n, tokens: normalizedTokens(n.tokens), bundleID: bundleID, now: now)
    }

    /// A WidgetKit push's whole payload (push types `widgets` and `controls`).
    static let contentChangedPayload = Array(#"{"aps":{"content-changed":true}}"#.utf8)
    /// The longest `filter_criteria` taken (Apple gives no bound; a Focus filter's identifier is short).
    public static let maxFilterCriteriaBytes = 64

    /// The largest broadcast payload APNs takes (docs/providers.md A.10), above a token push's 4,096.
    public static let maxBroadcastPayloadBytes = 5120

    /// Everything after the tokens: headers, then the payload (shared with broadcasts, whose one
    /// "token" is a channel id).
    /// `maxPayloadBytes`: the push type's limit unless given (a broadcast's is larger).
    static func build(
        _ n: NotificationRequest, tokens: [String], bundleID: String, now: Int64, maxPayloadBytes: Int? = nil
    ) throws(ValidationError) -> PreparedNotification {
        try checkScalars(n)
        try n.refuseWebPushOnlyFields(provider: "APNs")
        try n.refuseFCMOnlyFields(provider: "APNs")
        let apnsID = try normalizedID(n.id)
        let built: APNsPayloadBuilder.Built
        if let activity = n.liveActivity {
            guard n.pushType == nil || n.pushType == .liveactivity else {
                throw ValidationError(field: "push_type", message: "must be liveactivity (or unset) with live_activity")
            }
            built = .init(bytes: try LiveActivityPayload.build(n, activity, now: now), inferredPushType: .liveactivity)
        } else if let type = n.pushType, type == .widgets || type == .controls, n.payloadJSON.isEmpty {
            // WidgetKit reloads the widget's (or control's) timeline; the push carries nothing else
            // (Apple, "Updating widgets with WidgetKit push notifications"; docs/providers.md A.3).
            if let field = n.firstPayloadBuildingField {
                throw ValidationError(
                    field: field,
                    message: "must be empty for push type \(type.rawValue): its payload is "
                        + #"{"aps":{"content-changed":true}}, which Pushgate builds"#)
            }
            built = .init(bytes: Self.contentChangedPayload, inferredPushType: type)
        } else if let type = n.pushType, type == .widgets || type == .controls {
            built = try APNsPayloadBuilder.prepare(n)
            guard case .object(let members)? = try? JSONParser.parse(built.bytes),
                case .object(let aps)? = members.first(where: { $0.0 == "aps" })?.1,
                aps.count == 1, aps[0].0 == "content-changed"
            else {
                throw ValidationError(
                    field: "payload_json",
                    message: "must have an aps of content-changed alone for push type \(type.rawValue) (WidgetKit "
                        + "reloads the timeline; an alert is not shown)")
            }
        } else {
            built = try APNsPayloadBuilder.prepare(n)
        }
        let pushType = n.pushType ?? built.inferredPushType
        let priority = try effectivePriority(n.priority, pushType: pushType)
        let topic = try effectiveTopic(n.topic, bundleID: bundleID, pushType: pushType)
        let limit = maxPayloadBytes ?? pushType.maxPayloadBytes
        guard built.bytes.count <= limit else {
            throw ValidationError(
                field: "",
                message: "payload is \(built.bytes.count) bytes, over the APNs limit of \(limit) bytes for "
                    + (maxPayloadBytes == nil ? "push type \(pushType.rawValue)" : "a broadcast"))
        }
        return PreparedNotification(
            payload: built.bytes, pushType: pushType, topic: topic, priority: priority,
            expiration: n.expiration == 0 ? nil : n.expiration,
            collapseID: n.collapseID.isEmpty ? nil : n.collapseID, apnsID: apnsID, tokens: tokens)
    }

    /// The tokens, validated, in lower case. Nearly every request sends them in lower case already:
    /// then its own array is the result (no array made, no retain per token); a new one is made
    /// from the first token that changes.
    private static func normalizedTokens(_ tokens: [String]) throws(ValidationError) -> [String] {
        guard !tokens.isEmpty else {
            throw ValidationError(field: "tokens", message: "at least one token is required")
        }
        var normalized: [String] = []
        var changed = false
        for i in tokens.indices {
            guard let token = DeviceToken(tokens[i]) else {
                throw ValidationError(field: "tokens[\(i)]", message: DeviceToken.requirement)
            }
            if !changed, token.hex != tokens[i] {
                changed = true
                normalized.reserveCapacity(tokens.count)
                normalized.append(contentsOf: tokens[..<i])
            }
            if changed { normalized.append(token.hex) }
        }
        return changed ? normalized : tokens
    }

    /// The fields checked on their own: badge, interruption level, priority, expiration, collapse id.
    /// FCM messages carry the same APNs fields, so ``FCMMessageBuilder`` checks them here too.
    static func checkScalars(_ n: NotificationRequest) throws(ValidationError) {
        if let badge = n.badge, badge < 0 {
            throw ValidationError(field: "badge", message: "must not be negative")
        }
        if !n.interruptionLevel.isEmpty, !interruptionLevels.contains(n.interruptionLevel) {
            throw ValidationError(
                field: "interruption_level", message: "must be passive, active, time-sensitive or critical")
        }
        guard [0, 1, 5, 10].contains(n.priority) else {
            throw ValidationError(field: "priority", message: "must be 0, 1, 5 or 10")
        }
        guard n.expiration >= 0 else {
            throw ValidationError(field: "expiration", message: "must not be negative")
        }
        guard n.collapseID.utf8.count <= maxCollapseIDBytes else {
            throw ValidationError(field: "collapse_id", message: "must be at most \(maxCollapseIDBytes) bytes")
        }
        guard isHeaderSafe(n.collapseID) else {
            throw ValidationError(field: "collapse_id", message: "must not contain control characters")
        }
        try n.checkCriticalSound()
        guard n.filterCriteria.utf8.count <= maxFilterCriteriaBytes, isHeaderSafe(n.filterCriteria) else {
            throw ValidationError(
                field: "filter_criteria",
                message: "must be at most \(maxFilterCriteriaBytes) bytes without control characters")
        }
    }

    private static func normalizedID(_ id: String) throws(ValidationError) -> String? {
        guard !id.isEmpty else { return nil }
        guard let apnsID = APNsID(id) else { throw ValidationError(field: "id", message: APNsID.requirement) }
        return apnsID.uuidString
    }
}
