/// What a subscription's filter policy applies to (SNS's `FilterPolicyScope`), as the store keeps it.
public enum SNSFilterScope {
    /// Message attributes: SNS's default, `MessageAttributes`; stored as `""`.
    public static let messageAttributes = ""
    /// The message's JSON body: `MessageBody`.
    public static let messageBody = "MessageBody"
}
