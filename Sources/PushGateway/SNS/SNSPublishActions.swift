import PushAWSQuery
import PushCore
import PushProto
import PushStore

/// Publish and PublishBatch, through the gRPC API's Publish (PublishService): a message is checked,
/// committed to the store, and only then answered with its MessageId; the fan-out delivers it.
enum SNSPublishActions {
    static let maxBatchEntries = 10

    static let actions: [SNSAction] = [
        SNSAction(
            "Publish", parameters: SNSPublishInput.parameterNames.union(["TopicArn", "TargetArn", "PhoneNumber"]),
            run: publish),
        SNSAction("PublishBatch", parameters: ["TopicArn", "PublishBatchRequestEntries"], run: publishBatch),
    ]

    @Sendable static func publish(_ call: SNSCall) async throws(SNSError) -> SNSResult {
        if call.optional("PhoneNumber") != nil {
            throw SNSError.unsupported("PhoneNumber", "SMS")
        }
        let hasTopic = call.optional("TopicArn") != nil
        guard hasTopic != (call.optional("TargetArn") != nil) else {
            throw SNSError.invalidParameter("TopicArn or TargetArn", "set exactly one of them")
        }
        var request = PushgateV1.PublishRequest()
        var target: EndpointRecord?
        if hasTopic {
            request.topic = try await call.existingTopic("TopicArn")
        } else {
            let endpoint: EndpointRecord
            do {
                endpoint = try await call.endpoint("TargetArn")
            } catch  where error.code == "NotFound" {
                throw SNSError.invalidParameter("TargetArn", "No endpoint found for the target arn specified")
            }
            // The credential's right to the endpoint's app before anything about the endpoint.
            try await call.shared("TargetArn") { () throws(GRPCStatus) in
                try call.caller.requireApp(endpoint.app, field: "TargetArn")
            }
            guard endpoint.enabled else { throw SNSError("EndpointDisabled", status: 400, "Endpoint is disabled") }
            request.endpointID = endpoint.id
            target = endpoint
        }
        let input = try SNSPublishInput(call.parameters)
        let id = try await publish(input, request, endpoint: target, call)
        return { xml in xml.element("MessageId", id) }
    }

    /// Each entry is published (durably) on its own and answered in `Successful` or `Failed`;
    /// what is wrong with the batch as a whole refuses all of it.
    @Sendable static func publishBatch(_ call: SNSCall) async throws(SNSError) -> SNSResult {
        // Only admin credentials publish to topics: refused whole, before any entry is stored.
        try call.requireAdmin()
        var request = PushgateV1.PublishRequest()
        request.topic = try await call.existingTopic("TopicArn")
        let entries: [QueryParameters]
        do {
            entries = try call.parameters.list("PublishBatchRequestEntries", maxMembers: 1000)
        } catch {
            throw SNSError.invalidParameter("PublishBatchRequestEntries", error.message)
        }
        try checkBatch(entries)
        var successful: [(id: String, messageID: String)] = []
        var failed: [(id: String, error: SNSError)] = []
        for entry in entries {
            let id = entry["Id"] ?? ""
            do throws(SNSError) {
                for name in entry.topLevelNames where name != "Id" && !SNSPublishInput.parameterNames.contains(name) {
                    throw SNSError.invalidParameter(name, "not a member of PublishBatchRequestEntry")
                }
                let input = try SNSPublishInput(entry)
                successful.append((id, try await publish(input, request, call)))
            } catch {
                // Each entry's own answer, the gateway's failures too (SenderFault false): the entries
                // before it are stored already, and a retry of the whole batch would send them again.
                failed.append((id, error))
            }
        }
        return { [successful, failed] xml in
            xml.open("Successful")
            for (id, messageID) in successful {
                xml.open("member")
                xml.element("Id", id)
                xml.element("MessageId", messageID)
                xml.close("member")
            }
            xml.close("Successful")
            xml.open("Failed")
            for (id, error) in failed {
                xml.open("member")
                xml.element("Id", id)
                xml.element("Code", error.code)
                xml.element("Message", error.message)
                xml.element("SenderFault", error.senderFault ? "true" : "false")
                xml.close("member")
            }
            xml.close("Failed")
        }
    }

    /// SNS's batch rules: 1-10 entries, ids of 1-80 of A-Z, a-z, 0-9, `-` and `_`, distinct, and
    /// the messages together within 256 KiB.
    static func checkBatch(_ entries: [QueryParameters]) throws(SNSError) {
        guard !entries.isEmpty else {
            throw SNSError("EmptyBatchRequest", status: 400, "The batch request doesn't contain any entries.")
        }
        guard entries.count <= maxBatchEntries else {
            throw SNSError(
                "TooManyEntriesInBatchRequest", status: 400,
                "The batch request contains more entries than permissible.")
        }
        var ids = Set<String>()
        var bytes = 0
        for entry in entries {
            let id = entry["Id"] ?? ""
            guard id.utf8.count <= 80 else {
                throw SNSError(
                    "InvalidBatchEntryId", status: 400,
                    "The Id of a batch entry in the batch request is too long: \(TextCap.quoted(id))")
            }
            let valid = SNSNames.isWord(id, maxBytes: 80)
            guard valid else {
                throw SNSError(
                    "InvalidBatchEntryId", status: 400,
                    "The Id of a batch entry in the batch request contains an impermissible character: \(TextCap.quoted(id))"
                )
            }
            guard ids.insert(id).inserted else {
                throw SNSError(
                    "BatchEntryIdsNotDistinct", status: 400,
                    "Two or more batch entries in the request have the same Id.")
            }
            bytes += entry["Message"]?.utf8.count ?? 0
        }
        guard bytes <= SNSPublishInput.maxMessageBytes else {
            throw SNSError(
                "BatchRequestTooLong", status: 400,
                "The length of all the messages put together is more than the limit.")
        }
    }

    /// Publishes as `Push/Publish` does; answers the message id.
    private static func publish(
        _ input: SNSPublishInput, _ target: PushgateV1.PublishRequest, endpoint: EndpointRecord? = nil,
        _ call: SNSCall
    ) async throws(SNSError) -> String {
        var request = target
        request.message = input.message
        request.messageStructure = input.structure
        request.attributes = input.attributes
        return try await call.shared("Message") { () async throws(GRPCStatus) in
            try await call.publish.publish(request, caller: call.caller, endpoint: endpoint).messageID
        }
    }
}
