import PushAWSQuery
import PushCore
import PushStore

/// The subscription actions: protocol `application` only (an endpoint of the registry), with SNS
/// filter policies on message attributes.
enum SNSSubscriptionActions {
    static let pageSize = 100

    static let actions: [SNSAction] = [
        SNSAction(
            "Subscribe", parameters: ["TopicArn", "Protocol", "Endpoint", "Attributes", "ReturnSubscriptionArn"],
            run: subscribe),
        SNSAction("Unsubscribe", parameters: ["SubscriptionArn"]) { call throws(SNSError) in
            try call.requireAdmin()
            // Idempotent: a subscription that is not there is gone already.
            guard let subscription = try await subscription(call, required: false) else { return nil }
            try await call.store("SubscriptionArn") { () async throws(StoreError) in
                try await call.store.unsubscribe(id: subscription.id)
            }
            return nil
        },
        SNSAction("ListSubscriptions", parameters: ["NextToken"]) { call throws(SNSError) in
            try await list(call, topic: nil)
        },
        SNSAction("ListSubscriptionsByTopic", parameters: ["TopicArn", "NextToken"]) { call throws(SNSError) in
            try await list(call, topic: try await call.existingTopic("TopicArn"))
        },
        SNSAction("GetSubscriptionAttributes", parameters: ["SubscriptionArn"]) { call throws(SNSError) in
            guard let subscription = try await subscription(call, required: true),
                let endpoint = try await endpointARN(call, subscription.endpointID)
            else { throw SNSError.notFound("Subscription does not exist") }
            var attributes = [
                (key: "SubscriptionArn", value: call.arns.subscription(topic: subscription.topic, id: subscription.id)),
                (key: "TopicArn", value: call.arns.topic(subscription.topic)),
                (key: "Owner", value: call.arns.accountID), (key: "Protocol", value: "application"),
                (key: "Endpoint", value: endpoint), (key: "PendingConfirmation", value: "false"),
                (key: "ConfirmationWasAuthenticated", value: "true"), (key: "RawMessageDelivery", value: "false"),
            ]
            if !subscription.filterPolicyJSON.isEmpty {
                attributes.append((key: "FilterPolicy", value: subscription.filterPolicyJSON))
                attributes.append(
                    (key: "FilterPolicyScope", value: SNSFilterScope.name(ofStored: subscription.filterPolicyScope)))
            }
            return { [attributes] xml in xml.attributes(attributes) }
        },
        SNSAction(
            "SetSubscriptionAttributes", parameters: ["SubscriptionArn", "AttributeName", "AttributeValue"],
            run: setAttribute),
    ]

    @Sendable static func subscribe(_ call: SNSCall) async throws(SNSError) -> SNSResult {
        try call.requireAdmin()
        let topic = try await call.existingTopic("TopicArn")
        let proto = try call.required("Protocol")
        guard proto == "application" else {
            guard ["http", "https", "email", "email-json", "sms", "sqs", "lambda", "firehose"].contains(proto) else {
                throw SNSError.invalidParameter(
                    "Amazon SNS does not support this protocol string: \(TextCap.prefix(proto, maxBytes: 128))")
            }
            throw SNSError.unsupported(
                "Protocol", "the protocol \(proto); Pushgate delivers to application endpoints only")
        }
        _ = try call.boolean("ReturnSubscriptionArn")  // the ARN is always answered: no confirmation is pending
        let endpoint = try await call.endpoint("Endpoint")
        // nil: not given (an existing subscription's stays, and is not compared).
        var givenPolicy: String?
        var givenScope: String?
        for (key, value) in try call.map("Attributes") {
            switch key {
            case "FilterPolicy": givenPolicy = value == "{}" ? "" : value
            case "FilterPolicyScope": givenScope = try Self.scope(value, parameter: "Attributes")
            case "RawMessageDelivery", "DeliveryPolicy", "RedrivePolicy", "SubscriptionRoleArn", "ReplayPolicy":
                throw SNSError.unsupported("Attributes", "the subscription attribute \(key) for protocol application")
            default:
                throw SNSError.invalidParameter(
                    "Attributes", "Invalid attribute name: \(TextCap.prefix(key, maxBytes: 128))")
            }
        }
        let policy = givenPolicy ?? ""
        let scope = givenScope ?? SNSFilterScope.messageAttributes
        if !policy.isEmpty { try filterPolicy(policy, scope: scope, parameter: "Attributes") }
        // SNS: subscribing again answers the same ARN; with attributes that differ from the
        // subscription's it is refused, not applied (those it does not give are not compared).
        let existing = try await call.store("Endpoint") { () async throws(StoreError) in
            try await call.store.listSubscriptions(topic: topic, endpointID: endpoint.id, cursor: nil, limit: 1)
        }
        let id: String
        if let found = existing.items.first {
            if let givenPolicy, givenPolicy != found.filterPolicyJSON {
                throw SNSError.invalidParameter("Attributes", "Subscription already exists with different attributes")
            }
            if let givenScope, givenScope != found.filterPolicyScope {
                throw SNSError.invalidParameter("Attributes", "Subscription already exists with different attributes")
            }
            id = found.id
        } else {
            id = try await call.store("Endpoint") { () async throws(StoreError) in
                try await call.store.subscribe(
                    topic: topic, endpointID: endpoint.id, filterPolicyJSON: policy, filterPolicyScope: scope)
            }.subscription.id
        }
        let arn = call.arns.subscription(topic: topic, id: id)
        return { xml in xml.element("SubscriptionArn", arn) }
    }

    @Sendable static func setAttribute(_ call: SNSCall) async throws(SNSError) -> SNSResult {
        try call.requireAdmin()
        guard let subscription = try await subscription(call, required: true) else { return nil }
        let name = try call.required("AttributeName")
        let value = call.optional("AttributeValue") ?? ""
        var policy = subscription.filterPolicyJSON
        var scope = subscription.filterPolicyScope
        var change: (policy: String?, scope: String?)
        switch name {
        case "FilterPolicy":
            // An empty value (or `{}`) removes the policy: every message passes again.
            policy = value == "{}" ? "" : value
            change.policy = policy
        case "FilterPolicyScope":
            scope = try Self.scope(value, parameter: "AttributeValue")
            change.scope = scope
        case "RawMessageDelivery", "DeliveryPolicy", "RedrivePolicy", "SubscriptionRoleArn", "ReplayPolicy":
            throw SNSError.unsupported("AttributeName", "the subscription attribute \(name) for protocol application")
        default:
            throw SNSError.invalidParameter("AttributeName")
        }
        // The policy must read under its scope (nesting is for MessageBody only).
        if !policy.isEmpty { try filterPolicy(policy, scope: scope, parameter: "AttributeValue") }
        // By id, the one field alone: an Unsubscribe meanwhile is NotFound, never a new subscription.
        do {
            _ = try await call.store.updateSubscription(
                id: subscription.id, filterPolicyJSON: change.policy, filterPolicyScope: change.scope)
        } catch  where error.code == .notFound {
            throw SNSError.notFound("Subscription does not exist")
        } catch {
            throw SNSError(GRPCStatus(error, field: "SubscriptionArn"), parameter: "SubscriptionArn")
        }
        return nil
    }

    /// The subscription a `SubscriptionArn` names; nil when it does not exist and is not `required`.
    private static func subscription(_ call: SNSCall, required: Bool) async throws(SNSError) -> SubscriptionRecord? {
        let arn = try call.required("SubscriptionArn")
        guard let (topic, id) = call.arns.readSubscription(arn) else {
            throw SNSError.invalidParameter("SubscriptionArn", "not a subscription ARN of \(call.arns.prefix)…")
        }
        let record: SubscriptionRecord
        do {
            record = try await call.store.subscription(id: id)
        } catch  where error.code == .notFound {
            if required { throw SNSError.notFound("Subscription does not exist") }
            return nil
        } catch {
            throw SNSError(GRPCStatus(error, field: "SubscriptionArn"), parameter: "SubscriptionArn")
        }
        guard record.topic == topic else {
            if required { throw SNSError.notFound("Subscription does not exist") }
            return nil
        }
        return record
    }

    private static func list(_ call: SNSCall, topic: String?) async throws(SNSError) -> SNSResult {
        let page = try await call.store("NextToken") { () async throws(StoreError) in
            try await call.store.listSubscriptions(
                topic: topic, endpointID: nil, cursor: call.optional("NextToken"), limit: pageSize)
        }
        var members: [(subscription: SubscriptionRecord, endpoint: String)] = []
        members.reserveCapacity(page.items.count)
        for subscription in page.items {
            // An endpoint deleted a moment ago took its subscription with it: not listed.
            guard let endpoint = try await endpointARN(call, subscription.endpointID) else { continue }
            members.append((subscription, endpoint))
        }
        let owner = call.arns.accountID
        return { [members] xml in
            xml.open("Subscriptions")
            for (subscription, endpoint) in members {
                xml.open("member")
                xml.element("SubscriptionArn", call.arns.subscription(topic: subscription.topic, id: subscription.id))
                xml.element("Owner", owner)
                xml.element("Protocol", "application")
                xml.element("Endpoint", endpoint)
                xml.element("TopicArn", call.arns.topic(subscription.topic))
                xml.close("member")
            }
            xml.close("Subscriptions")
            xml.nextToken(page.nextCursor)
        }
    }

    /// The ARN of a subscription's endpoint (its app's platform is in the ARN); nil when it is gone.
    private static func endpointARN(_ call: SNSCall, _ id: String) async throws(SNSError) -> String? {
        do {
            return call.arn(of: try await call.store.endpoint(id: id))
        } catch  where error.code == .notFound {
            return nil
        } catch {
            throw SNSError(GRPCStatus(error, field: "Endpoint"), parameter: "Endpoint")
        }
    }

    /// Checks a policy as its scope reads it.
    private static func filterPolicy(_ json: String, scope: String, parameter: String) throws(SNSError) {
        do {
            _ = try SNSFilterPolicy.parse(json, nested: SNSFilterScope.nests(scope))
        } catch {
            throw SNSError.invalidParameter(parameter, "FilterPolicy: \(error.description)")
        }
    }

    /// `MessageAttributes` or `MessageBody`, as the store keeps it.
    private static func scope(_ value: String, parameter: String) throws(SNSError) -> String {
        guard !value.isEmpty, let stored = SNSFilterScope.stored(named: value) else {
            throw SNSError.invalidParameter(
                parameter, "FilterPolicyScope: expected MessageAttributes or MessageBody, got \(TextCap.quoted(value))")
        }
        return stored
    }
}
