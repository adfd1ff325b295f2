import PushAWSQuery
import PushCore

/// What an action answers: it writes the members of `<ActionResult>`, or nil for an action that
/// has no result.
typealias SNSResult = (@Sendable (inout XMLWriter) -> Void)?

/// One SNS action: the parameters it takes (their first dotted component: `Attributes` for
/// `Attributes.entry.1.key`) and what it does.
struct SNSAction: Sendable {
    let name: String
    let parameters: Set<String>
    let run: @Sendable (SNSCall) async throws(SNSError) -> SNSResult

    init(
        _ name: String, parameters: Set<String>,
        run: @escaping @Sendable (SNSCall) async throws(SNSError) -> SNSResult
    ) {
        self.name = name
        self.parameters = parameters
        self.run = run
    }
}

/// The SNS actions Pushgate answers, and the ones it refuses by name.
enum SNSActions {
    static let version = "2010-03-31"

    static let supported: [String: SNSAction] = Dictionary(
        uniqueKeysWithValues: (SNSApplicationActions.actions + SNSEndpointActions.actions + SNSTopicActions.actions
            + SNSSubscriptionActions.actions + SNSPublishActions.actions).map { ($0.name, $0) })

    /// SNS's other actions (botocore's SNS service model), each refused with why.
    static let refused: [String: String] = [
        "CreatePlatformApplication": "platform applications are the gateway's configured apps",
        "DeletePlatformApplication": "platform applications are the gateway's configured apps",
        "SetPlatformApplicationAttributes": "platform applications are the gateway's configured apps",
        "SetTopicAttributes": "topics have no settable attributes in Pushgate",
        "ConfirmSubscription": "application subscriptions need no confirmation",
        "AddPermission": "access is by the gateway's sns.credentials, not topic policies",
        "RemovePermission": "access is by the gateway's sns.credentials, not topic policies",
        "TagResource": "tags are not kept", "UntagResource": "tags are not kept",
        "ListTagsForResource": "tags are not kept",
        "GetDataProtectionPolicy": "data protection policies are not kept",
        "PutDataProtectionPolicy": "data protection policies are not kept",
        "CheckIfPhoneNumberIsOptedOut": "Pushgate does not send SMS", "GetSMSAttributes": "Pushgate does not send SMS",
        "SetSMSAttributes": "Pushgate does not send SMS", "ListPhoneNumbersOptedOut": "Pushgate does not send SMS",
        "OptInPhoneNumber": "Pushgate does not send SMS", "ListOriginationNumbers": "Pushgate does not send SMS",
        "CreateSMSSandboxPhoneNumber": "Pushgate does not send SMS",
        "DeleteSMSSandboxPhoneNumber": "Pushgate does not send SMS",
        "GetSMSSandboxAccountStatus": "Pushgate does not send SMS",
        "ListSMSSandboxPhoneNumbers": "Pushgate does not send SMS",
        "VerifySMSSandboxPhoneNumber": "Pushgate does not send SMS",
    ]

    /// The action `parameters` ask for, once `Action` and `Version` check out and every parameter is
    /// one the action takes.
    static func action(for parameters: QueryParameters) throws(SNSError) -> SNSAction {
        guard let name = parameters["Action"], !name.isEmpty else {
            throw SNSError("MissingAction", status: 400, "the request has no Action parameter")
        }
        guard let action = supported[name] else {
            if let why = refused[name] {
                throw SNSError(
                    "InvalidAction", status: 400,
                    "the SNS action \(name) is not supported by Pushgate: \(why) (docs/sns.md)")
            }
            throw SNSError(
                "InvalidAction", status: 400, "Could not find operation \(TextCap.quoted(name)) for version \(version)")
        }
        guard let given = parameters["Version"] else {
            throw SNSError("MissingParameter", status: 400, "the request has no Version parameter (\(version))")
        }
        guard given == version else {
            throw SNSError(
                "InvalidParameterValue", status: 400,
                "Version: \(TextCap.quoted(given)) is not a version of SNS's API this gateway speaks (\(version))")
        }
        for name in parameters.topLevelNames.sorted()
        where name != "Action" && name != "Version" && !action.parameters.contains(name) {
            throw SNSError.invalidParameter(name, "not a parameter of \(action.name)")
        }
        return action
    }
}
