/// The device tokens bench sends, in each provider's shape and distinct for each number. The APNs
/// ones are also what `pushgate load-subscribers` loads, so that a test can tell which subscriber a
/// delivery was for.
public enum BenchTokens {
    /// Token `i`: 64 hex digits, distinct for each i.
    public static func apns(_ i: Int) -> String {
        let hex = String(i, radix: 16)
        // A fixed "b" first, then zero-padding: "b" padding would make 0xb and 0xbb the same token.
        return "b" + String(repeating: "0", count: 63 - hex.count) + hex
    }

    /// FCM token `i`: `bench-<i in hex>:APA91b` and filler from FCM's alphabet up to 152 bytes (real
    /// registration tokens are 150-250 bytes), distinct for each i.
    static func fcm(_ i: Int) -> String {
        let head = "bench-" + String(i, radix: 16) + ":APA91b"
        return head + String(fcmTokenFiller.prefix(152 - head.count))
    }

    private static let fcmTokenFiller = String(
        repeating: "Bq3xK9_mZ-7vLw2cT8nRj4Yh0dEsUa5o", count: 5)

    /// ADM registration id `i`: `amzn1.adm-registration.v3.bench-<i in hex>.` and base64-looking
    /// filler up to 700 bytes (real v3 ids are about that long), distinct for each i.
    static func adm(_ i: Int) -> String {
        let head = "amzn1.adm-registration.v3.bench-" + String(i, radix: 16) + "."
        return head + String(admTokenFiller.prefix(700 - head.count))
    }

    /// Huawei push token `i`: `bench<i in hex>` and base64-looking filler up to 130 bytes (HarmonyOS
    /// tokens are about that long), distinct for each i.
    static func hms(_ i: Int) -> String {
        let head = "MAMzLg" + String(i, radix: 16) + "_"
        return head + String(admTokenFiller.prefix(130 - head.count))
    }

    private static let admTokenFiller = String(
        repeating: "Y29tLmFtYXpvbi5EZXZpY2VNZXNzYWdpbmcuUmVnaXN0cmF0aW9uSWRFbmNyeXB0aW9uS2V5", count: 10)
}
