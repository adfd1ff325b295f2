extension NotificationValidator {
    /// Validates a Live Activity update or end sent on a broadcast channel and prepares it: one
    /// request to `POST /4/broadcasts/apps/<bundle id>` with the channel in `apns-channel-id`
    /// (docs/providers.md A.10).
    ///
    /// Besides the Live Activity rules of a token push: `tokens` and `topic` stay empty (the
    /// channel and the bundle id are the target), the event is `update` or `end` (a broadcast
    /// cannot start an activity; push-to-start names the channel in `input_push_channel`), a
    /// channel that stores nothing (policy 0) takes only `expiration` 0, and `apns-expiration` is
    /// always sent (Apple requires it on every broadcast; 0 when none is given). The payload may
    /// be up to 5,120 bytes.
    ///
    /// - Parameters:
    ///   - path: where `n` sits in the request, prefixed to every error's field (`notification`).
    ///   - channelID: a checked channel id (``ChannelID``).
    ///   - policy: the channel's storage policy, from the registry.
    public static func prepareBroadcast(
        _ n: NotificationRequest, at path: String, bundleID: String, channelID: String,
        policy: MessageStoragePolicy, now: Int64 = 0
    ) -> Result<PreparedNotification, ValidationError> {
        ValidationError.result(at: path) { () throws(ValidationError) in
            guard n.tokens.isEmpty else {
                throw ValidationError(
                    field: "tokens", message: "must be empty for a broadcast: the channel is the target")
            }
            guard n.topic.isEmpty else {
                throw ValidationError(
                    field: "topic", message: "must be empty for a broadcast: the bundle id goes in the path")
            }
            guard let activity = n.liveActivity else {
                throw ValidationError(
                    field: "live_activity", message: "is required: broadcasts carry Live Activity pushes")
            }
            guard activity.event == "update" || activity.event == "end" else {
                throw ValidationError(
                    field: "live_activity.event",
                    message: "must be update or end on a channel (start a Live Activity by push-to-start with "
                        + "input_push_channel)")
            }
            if policy == .noStorage && n.expiration != 0 {
                throw ValidationError(
                    field: "expiration",
                    message: "must be 0: the channel's message_storage_policy is 0 (no storage), and APNs "
                        + "takes only apns-expiration 0 on it")
            }
            var prepared = try build(
                n, tokens: [channelID], bundleID: bundleID, now: now, maxPayloadBytes: maxBroadcastPayloadBytes)
            prepared.broadcastBundleID = bundleID
            prepared.expiration = n.expiration
            return prepared
        }
    }
}
