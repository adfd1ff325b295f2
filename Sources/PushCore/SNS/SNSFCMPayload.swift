/// FCM payloads for SNS publishes.
public enum SNSFCMPayload {
    /// The data message an Android app receives when only `default` reaches it (protocols.md C.3):
    /// `{"data":{"default":"<text>"}}`, read with `remoteMessage.getData().get("default")`.
    /// No `notification` block, so nothing shows unless the app builds it, as with SNS.
    public static func defaultData(text: String) -> [UInt8] {
        JSONWriter.encode(.object([("data", .object([("default", .string(text))]))]))
    }
}
