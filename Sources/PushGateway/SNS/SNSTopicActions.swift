import PushAWSQuery
import PushCore
import PushStore

/// The topic actions, on the registry's topics (a topic's ARN is the configured prefix and its name).
enum SNSTopicActions {
    static let pageSize = 100

    static let actions: [SNSAction] = [
        SNSAction("CreateTopic", parameters: ["Name", "Attributes", "Tags", "DataProtectionPolicy"], run: create),
        SNSAction("DeleteTopic", parameters: ["TopicArn"]) { call throws(SNSError) in
            try call.requireAdmin()
            let name = try call.topicName("TopicArn")
            // Idempotent, as in SNS; its subscriptions go with it.
            try await call.store("TopicArn") { () async throws(StoreError) in
                try await call.store.deleteTopic(name: name)
            }
            return nil
        },
        SNSAction("ListTopics", parameters: ["NextToken"]) { call throws(SNSError) in
            let page = try await call.store("NextToken") { () async throws(StoreError) in
                try await call.store.listTopics(cursor: call.optional("NextToken"), limit: pageSize)
            }
            return { xml in
                xml.open("Topics")
                for topic in page.items {
                    xml.open("member")
                    xml.element("TopicArn", call.arns.topic(topic.name))
                    xml.close("member")
                }
                xml.close("Topics")
                xml.nextToken(page.nextCursor)
            }
        },
        SNSAction("GetTopicAttributes", parameters: ["TopicArn"]) { call throws(SNSError) in
            let name = try await call.existingTopic("TopicArn")
            let attributes = [
                (key: "TopicArn", value: call.arns.topic(name)), (key: "Owner", value: call.arns.accountID),
                (key: "DisplayName", value: ""),
            ]
            return { xml in xml.attributes(attributes) }
        },
    ]

    /// Idempotent: an existing topic's ARN is answered again. Only standard topics without
    /// attributes, tags or data protection (docs/sns.md says why).
    @Sendable static func create(_ call: SNSCall) async throws(SNSError) -> SNSResult {
        try call.requireAdmin()
        let name = try call.required("Name")
        if name.hasSuffix(".fifo") {
            throw SNSError.unsupported("Name", "FIFO topics (names ending .fifo)")
        }
        guard SNSNames.isTopicName(name) else {
            throw SNSError.invalidParameter(
                "Topic Name", "must be 1-256 characters of A-Z, a-z, 0-9, _ and -")
        }
        for (key, value) in try call.map("Attributes") {
            if key == "FifoTopic" && value.lowercased() == "false" { continue }
            throw SNSError.unsupported("Attributes", "the topic attribute \(TextCap.quoted(key))")
        }
        let tags: [QueryParameters]
        do {
            tags = try call.parameters.list("Tags", maxMembers: 50)
        } catch {
            throw SNSError.invalidParameter("Tags", error.message)
        }
        if !tags.isEmpty { throw SNSError.unsupported("Tags", "tags") }
        if let policy = call.optional("DataProtectionPolicy"), !policy.isEmpty {
            throw SNSError.unsupported("DataProtectionPolicy", "data protection policies")
        }
        let topic = try await call.store("Name") { () async throws(StoreError) in
            try await call.store.createTopic(name: name)
        }
        let arn = call.arns.topic(topic.name)
        return { xml in xml.element("TopicArn", arn) }
    }
}
