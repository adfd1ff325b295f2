// The header values that depend on the push type: priority and topic.
extension NotificationValidator {
    /// `apns-priority`: explicit, else 10 (5 for background, which APNs requires: docs/providers.md A.3).
    static func effectivePriority(_ priority: Int32, pushType: PushType) throws(ValidationError) -> Int {
        if pushType == .background {
            guard priority != 10 else {
                throw ValidationError(field: "priority", message: "priority 10 is not allowed for background pushes")
            }
            return priority == 0 ? 5 : Int(priority)
        }
        return priority == 0 ? 10 : Int(priority)
    }

    /// `apns-topic`: explicit, else the bundle id plus the push type's suffix.
    static func effectiveTopic(_ topic: String, bundleID: String, pushType: PushType) throws(ValidationError)
        -> String
    {
        // An MDM topic is the UID in the MDM push certificate, never derived from a bundle id (docs/providers.md A.3).
        if pushType == .mdm, topic.isEmpty {
            throw ValidationError(field: "topic", message: "must be set for push type mdm (the MDM certificate's UID)")
        }
        let suffix = pushType.topicSuffix
        let resolved = topic.isEmpty ? (bundleID.isEmpty || suffix.isEmpty ? bundleID : bundleID + suffix) : topic
        guard !resolved.isEmpty else {
            throw ValidationError(field: "topic", message: "no topic: set topic or the app's bundle_id")
        }
        // The topic becomes a header value; bundle ids and MDM UIDs are visible ASCII.
        guard resolved.allUTF8({ $0 > 0x20 && $0 < 0x7F }) else {
            throw ValidationError(field: "topic", message: "must be printable ASCII without spaces")
        }
        return resolved
    }

    /// True when `value` can go into an HTTP/2 header value: no control characters (RFC 9113 §8.2.1).
    static func isHeaderSafe(_ value: String) -> Bool {
        value.isEmpty || value.allUTF8 { $0 >= 0x20 && $0 != 0x7F }
    }
}
