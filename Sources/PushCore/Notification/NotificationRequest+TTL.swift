// A notification's `expiration` as the relative TTL that FCM (`android.ttl`) and ADM
// (`expiresAfter`) take instead of APNs's absolute `apns-expiration`.
extension NotificationRequest {
    /// Seconds from `now` until ``expiration``, clamped into `range`; nil when no expiration is set.
    ///
    /// An expiration already past gives `range.lowerBound` (FCM: 0, "now or never"; ADM: its
    /// shortest TTL), and one beyond the provider's longest TTL gives `range.upperBound`: the
    /// provider would keep the message no longer anyway.
    func secondsToExpiration(now: Int64, within range: ClosedRange<Int64>) -> Int64? {
        guard expiration != 0 else { return nil }
        return min(max(expiration - now, range.lowerBound), range.upperBound)
    }
}
