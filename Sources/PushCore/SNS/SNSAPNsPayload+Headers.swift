// Priority, topic and expiration for an SNS-published APNs notification.
extension SNSAPNsPayload {
    /// The `apns-expiration` to send for a message that has not expired.
    struct Expiration {
        /// nil sends no header; 0 means "deliver now or never, don't store".
        var header: Int64?
    }

    /// The attribute's priority, else 5 for background and 10 otherwise.
    ///
    /// An explicit 10 on a background push is refused now rather than by APNs for every device
    /// (docs/providers.md A.3: priority 10 is an error for background).
    static func priority(_ explicit: Int?, pushType: PushType) throws(ValidationError) -> Int {
        let isBackground = pushType == .background
        guard let explicit else { return isBackground ? 5 : 10 }
        guard !(isBackground && explicit == 10) else {
            throw ValidationError(
                field: "attributes[\"\(SNSAttributeName.priority)\"]",
                message: "priority 10 is not allowed for background pushes")
        }
        return explicit
    }

    /// The attribute's topic, else the bundle id plus the push type's suffix (docs/providers.md A.3).
    /// Without a bundle id (no app yet), only what holds for every app is checked, and nil returned.
    static func topic(_ explicit: String?, bundleID: String?, pushType: PushType) throws(ValidationError) -> String? {
        let field = "attributes[\"\(SNSAttributeName.topic)\"]"
        // The two "no topic" cases get SNS wording; the rest is the gateway API's own rule.
        if explicit == nil, pushType == .mdm {
            throw ValidationError(field: field, message: "must be set for push type mdm (the MDM certificate's UID)")
        }
        // An explicit topic was checked with the attributes (printable ASCII, not empty).
        guard let bundleID else { return nil }
        if explicit == nil, bundleID.isEmpty {
            throw ValidationError(field: field, message: "no topic: set this attribute or the app's bundle_id")
        }
        do throws(ValidationError) {
            return try NotificationValidator.effectiveTopic(explicit ?? "", bundleID: bundleID, pushType: pushType)
        } catch {
            throw ValidationError(field: field, message: error.message)
        }
    }

    /// The expiration for a TTL counted from `publishedAt`, or nil when it has passed.
    ///
    /// * No TTL: no header. SNS's default of 4 weeks is Apple's own storage policy anyway, so
    ///   leaving the header out gives the same result without inventing a date.
    /// * TTL 0: header `apns-expiration: 0` (APNs tries once and doesn't store). It is never
    ///   treated as expired here: with whole seconds, any dwell at all would drop it, so the
    ///   "now or never" is left to APNs.
    /// * TTL > 0: the absolute time `publishedAt + ttl`, so the time spent queued in the gateway
    ///   is subtracted naturally; past it, the message is dropped.
    static func expiration(ttl: Int64?, publishedAt: Int64, now: Int64) -> Expiration? {
        guard let ttl else { return Expiration(header: nil) }
        guard ttl > 0 else { return Expiration(header: 0) }
        let (sum, overflow) = publishedAt.addingReportingOverflow(ttl)
        let deadline = overflow ? Int64.max : sum
        return now > deadline ? nil : Expiration(header: deadline)
    }
}
