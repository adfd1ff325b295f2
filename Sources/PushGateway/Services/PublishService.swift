import PushCore
import PushProto
import PushStore

/// Publish and GetMessage: a published message is checked, committed to the store, and only then
/// answered with its id; the fan-out delivers it in the background.
struct PublishService: Sendable {
    let live: LiveSettings
    var configuration: GatewayConfiguration { live.configuration }
    let store: any Store
    let fanOut: FanOut

    /// A topic's subscribers may belong to any app, and its subscriptions are admin-managed, so only
    /// admin keys publish to topics; a Publish to an endpoint needs a key that may send for the
    /// endpoint's app.
    ///
    /// `endpoint`: the record of `request.endpointID` when the caller has read it already (the SNS
    /// door reads it to name its errors), so it is not read twice.
    func publish(
        _ request: PushgateV1.PublishRequest, caller: Caller, endpoint known: EndpointRecord? = nil
    ) async throws(GRPCStatus) -> PushgateV1.PublishResponse {
        let hasTopic = !request.topic.isEmpty
        let hasEndpoint = !request.endpointID.isEmpty
        guard hasTopic != hasEndpoint else {
            throw GRPCStatus(.invalidArgument, "topic, endpoint_id: set exactly one of them")
        }
        let target: SNSTarget
        if hasTopic {
            guard caller.isAdmin else {
                throw GRPCStatus(
                    .permissionDenied,
                    "topic: key \(caller.name.debugDescription) may not publish to a topic (topic Publish needs "
                        + "\"admin\": true; publish to an endpoint_id of the key's apps instead)")
            }
            try RegistryValidation.topicName(request.topic, field: "topic")
            let exists = try await storeCall("topic") { () async throws(StoreError) in
                try await store.topicExists(name: request.topic)
            }
            guard exists else { throw GRPCStatus(.notFound, "topic: no topic \(TextCap.quoted(request.topic))") }
            target = .topic
        } else {
            let endpoint: EndpointRecord
            if let known, known.id == request.endpointID {
                endpoint = known
            } else {
                endpoint = try await storeCall("endpoint_id") { () async throws(StoreError) in
                    try await store.endpoint(id: request.endpointID)
                }
            }
            try caller.requireApp(endpoint.app, field: "endpoint_id")
            guard endpoint.enabled else {
                let reason = endpoint.disabledReason.isEmpty ? "" : " (\(endpoint.disabledReason))"
                throw GRPCStatus(
                    .failedPrecondition, "endpoint_id: EndpointDisabled: endpoint \(endpoint.id) is disabled\(reason)")
            }
            guard let app = configuration.app(named: endpoint.app), !endpoint.app.isEmpty else {
                throw GRPCStatus(
                    .failedPrecondition,
                    "endpoint_id: the endpoint's app \(endpoint.app.debugDescription) is not configured")
            }
            target = .endpoint(app.platformKey)
        }
        try Self.check(request, target: target)
        let record = MessageRecord(
            id: RandomUUID.make(), topic: hasTopic ? request.topic : nil,
            endpointID: hasEndpoint ? request.endpointID : nil, message: request.message,
            messageStructure: request.messageStructure, attributes: request.attributes,
            publishedAt: unixMilliseconds())
        try await storeCall("message") { () async throws(StoreError) in try await store.insertMessage(record) }
        fanOut.published()
        var response = PushgateV1.PublishResponse()
        response.messageID = record.id
        return response
    }

    func message(_ request: PushgateV1.GetMessageRequest) async throws(GRPCStatus) -> PushgateV1.Message {
        try RegistryValidation.required(request.messageID, "message_id")
        return PushgateV1.Message(
            try await storeCall("message_id") { () async throws(StoreError) in
                try await store.message(id: request.messageID)
            })
    }

    /// Everything that can be wrong with a publish whatever its recipients: the message structure,
    /// the attributes, and the payload of every platform it reaches (bad JSON rejects the whole
    /// publish).
    static func check(_ request: PushgateV1.PublishRequest, target: SNSTarget) throws(GRPCStatus) {
        do {
            let message = try SNSMessage.parse(
                message: request.message, structure: request.messageStructure, target: target,
                attributes: request.attributes)
            try message.checkPayloads(attributes: request.attributes, target: target)
        } catch {
            throw GRPCStatus(.invalidArgument, error.description)
        }
    }
}
