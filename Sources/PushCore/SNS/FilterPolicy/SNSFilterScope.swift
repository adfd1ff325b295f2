/// What a subscription's filter policy applies to (SNS's `FilterPolicyScope`), as the store keeps it.
public enum SNSFilterScope {
    /// Message attributes: SNS's default, `MessageAttributes`; stored as `""`.
    public static let messageAttributes = ""
    /// The message's JSON body: `MessageBody`.
    public static let messageBody = "MessageBody"

    /// The stored form of SNS's name (`MessageAttributes`, `MessageBody`; empty: the default); nil
    /// for anything else.
    public static func stored(named name: String) -> String? {
        switch name {
        case "", "MessageAttributes": messageAttributes
        case "MessageBody": messageBody
        default: nil
        }
    }

    /// SNS's name of a stored scope.
    public static func name(ofStored stored: String) -> String {
        stored == messageBody ? "MessageBody" : "MessageAttributes"
    }

    /// Whether a policy of this scope nests (a body's keys).
    public static func nests(_ stored: String) -> Bool { stored == messageBody }
}
