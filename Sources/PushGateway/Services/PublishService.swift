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

    /// Stores the message (scheduled, with a `deliver_at`) and answers its id; the fan-out starts at
    /// once or at `deliver_at`. Who may publish depends on the target (see each target's check).
    func publish(
        _ request: PushgateV1.PublishRequest, caller: Caller, endpoint known: EndpointRecord? = nil
    ) async throws(GRPCStatus) -> PushgateV1.PublishResponse {
        let targets = [request.topic, request.endpointID, request.userID].count { !$0.isEmpty }
        guard targets == 1 else {
            throw GRPCStatus(.invalidArgument, "topic, endpoint_id, user_id: set exactly one of them")
        }
        let now = unixMilliseconds()
        try check(schedule: request, now: now)
        var record = MessageRecord(
            id: RandomUUID.make(), message: request.message, messageStructure: request.messageStructure,
            attributes: request.attributes, publishedAt: now, deliverAt: request.deliverAt,
            maxPerSecond: request.maxPerSecond, state: request.deliverAt > 0 ? .scheduled : .accepted)
        let target: SNSTarget
        // The apps the message may reach, for the webhooks told when it finishes (nil: any app).
        let reaches: [String]?
        if !request.topic.isEmpty {
            target = try await topicTarget(request.topic, caller: caller)
            record.topic = request.topic
            reaches = nil
        } else if !request.userID.isEmpty {
            record.apps = try await userApps(request.userID, caller: caller)
            record.userID = request.userID
            // A user's endpoints may be on every platform, as a topic's subscribers are.
            target = .topic
            reaches = record.apps.isEmpty ? nil : record.apps
        } else {
            let app: String
            (target, app) = try await endpointTarget(request.endpointID, caller: caller, known: known)
            record.endpointID = request.endpointID
            reaches = [app]
        }
        try Self.check(
            request, target: target,
            platforms: Set(live.configuration.apps.map(\.platformKey)).union([
                .apns, .apnsSandbox, .gcm, .adm, .webpush,
            ]))
        let webhooks = fanOut.events.webhooks
        if !webhooks.isEmpty { record.notify = webhooks.names(wanting: .messageFinished, apps: reaches) }
        try await storeCall("message") { () async throws(StoreError) in try await store.insertMessage(record) }
        fanOut.published(deliverAt: record.deliverAt)
        fanOut.metrics?.message(target: record.target, event: record.deliverAt > 0 ? "scheduled" : "published")
        var response = PushgateV1.PublishResponse()
        response.messageID = record.id
        return response
    }

    /// `deliver_at` is 0 or in (now, now + `fanout.max_schedule_days`]; `max_per_second` ≥ 0.
    private func check(schedule request: PushgateV1.PublishRequest, now: Int64) throws(GRPCStatus) {
        if request.deliverAt != 0 {
            guard request.deliverAt > now else {
                throw GRPCStatus(
                    .invalidArgument,
                    "deliver_at: \(request.deliverAt) is not in the future (now is \(now), Unix ms); 0 delivers at once"
                )
            }
            let days = configuration.fanOut.maxScheduleDays
            let latest = now + Int64(days) * 86_400_000
            guard request.deliverAt <= latest else {
                throw GRPCStatus(
                    .invalidArgument,
                    "deliver_at: \(request.deliverAt) is more than \(days) days ahead (fanout.max_schedule_days; "
                        + "the latest now is \(latest), Unix ms)")
            }
        }
        guard (0...Self.maxPerSecondLimit).contains(request.maxPerSecond) else {
            throw GRPCStatus(
                .invalidArgument,
                "max_per_second: \(request.maxPerSecond) is not 0 (no cap) to \(Self.maxPerSecondLimit)")
        }
    }

    /// The highest rate cap taken: far above what one gateway sends, so it never binds by accident.
    static let maxPerSecondLimit: Int32 = 10_000_000

    /// A topic's subscribers may belong to any app, and its subscriptions are admin-managed, so only
    /// admin keys publish to topics.
    private func topicTarget(_ topic: String, caller: Caller) async throws(GRPCStatus) -> SNSTarget {
        guard caller.isAdmin else {
            throw GRPCStatus(
                .permissionDenied,
                "topic: key \(caller.name.debugDescription) may not publish to a topic (topic Publish needs "
                    + "\"admin\": true; publish to an endpoint_id or user_id of the key's apps instead)")
        }
        try RegistryValidation.topicName(topic, field: "topic")
        let exists = try await storeCall("topic") { () async throws(StoreError) in
            try await store.topicExists(name: topic)
        }
        guard exists else { throw GRPCStatus(.notFound, "topic: no topic \(TextCap.quoted(topic))") }
        return .topic
    }

    /// A user publish reaches the user's endpoints in the apps the key may send for (fixed now, so a
    /// key changed later does not widen it); a user with none there is NOT_FOUND.
    private func userApps(_ userID: String, caller: Caller) async throws(GRPCStatus) -> [String] {
        try RegistryValidation.userID(userID)
        let apps: [String] =
            switch caller.apps {
            case .all: []
            case .only(let names): names.sorted()
            }
        if case .only(let names) = caller.apps, names.isEmpty {
            throw GRPCStatus(
                .permissionDenied, "user_id: key \(caller.name.debugDescription) may not send for any app")
        }
        let found = try await storeCall("user_id") { () async throws(StoreError) in
            try await store.hasEndpoints(userID: userID, apps: apps)
        }
        guard found else {
            let scope = apps.isEmpty ? "" : " in the key's apps"
            throw GRPCStatus(.notFound, "user_id: user \(TextCap.quoted(userID)) has no endpoints\(scope)")
        }
        return apps
    }

    /// A Publish to an endpoint needs a key that may send for the endpoint's app.
    ///
    /// `known`: the endpoint's record when the caller has read it already (the SNS door reads it to
    /// name its errors), so it is not read twice.
    private func endpointTarget(_ endpointID: String, caller: Caller, known: EndpointRecord?)
        async throws(GRPCStatus) -> (SNSTarget, app: String)
    {
        let endpoint: EndpointRecord
        if let known, known.id == endpointID {
            endpoint = known
        } else {
            endpoint = try await storeCall("endpoint_id") { () async throws(StoreError) in
                try await store.endpoint(id: endpointID)
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
        return (.endpoint(app.platformKey), endpoint.app)
    }

    func message(_ request: PushgateV1.GetMessageRequest) async throws(GRPCStatus) -> PushgateV1.Message {
        try RegistryValidation.required(request.messageID, "message_id")
        return PushgateV1.Message(
            try await storeCall("message_id") { () async throws(StoreError) in
                try await store.message(id: request.messageID)
            })
    }

    /// Cancels a message the key could have published (a topic's: admin keys; an endpoint's: keys
    /// of its app; a user's: keys covering the apps it went to).
    func cancel(_ request: PushgateV1.CancelMessageRequest, caller: Caller) async throws(GRPCStatus)
        -> PushgateV1.Message
    {
        try RegistryValidation.required(request.messageID, "message_id")
        let message = try await storeCall("message_id") { () async throws(StoreError) in
            try await store.message(id: request.messageID)
        }
        let apps = await apps(of: message)
        try requirePublisher(message, apps: apps, caller: caller, may: "cancel")
        // Webhooks get the cancel in its own transaction, before the message's end.
        let webhooks = fanOut.events.webhooks
        let notify =
            webhooks.isEmpty ? [] : webhooks.names(wanting: .messageCancelled, apps: message.topic == nil ? apps : nil)
        let cancelled = try await storeCall("message_id") { () async throws(StoreError) in
            try await store.cancelMessage(id: request.messageID, notify: notify, now: unixMilliseconds())
        }
        fanOut.cancelled(messageID: cancelled.id)
        fanOut.metrics?.message(target: cancelled.target, event: "cancelled")
        fanOut.events.messageCancelled(messageID: cancelled.id, cancelled: cancelled.cancelled, apps: apps)
        return PushgateV1.Message(cancelled)
    }

    /// Whoever could have published the message may cancel it or list its deliveries: admin keys;
    /// for an endpoint's, keys of its app; for a user's, keys covering every app it went to (for one
    /// to every app, keys for every app). `apps`: the message's (``apps(of:)``).
    private func requirePublisher(_ message: MessageRecord, apps: [String], caller: Caller, may action: String)
        throws(GRPCStatus)
    {
        guard !caller.isAdmin else { return }
        let covered: Bool =
            switch message.target {
            case .endpoint: !apps.isEmpty && apps.allSatisfy(caller.apps.contains)
            case .user(_, let published):
                published.isEmpty ? caller.apps == .all : published.allSatisfy(caller.apps.contains)
            case .topic, nil: false
            }
        guard covered else {
            throw GRPCStatus(
                .permissionDenied,
                "message_id: key \(caller.name.debugDescription) may not \(action) message \(message.id) (it could "
                    + "not have published it)")
        }
    }

    /// The apps a message goes to (its events' watchers, and who may cancel it): an endpoint's app
    /// (none once deleted), a user publish's apps (for one to every app, those of the user's first
    /// 1000 endpoints); empty for a topic's.
    private func apps(of message: MessageRecord) async -> [String] {
        switch message.target {
        case .endpoint(let id): (try? await store.endpoint(id: id)).map { [$0.app] } ?? []
        case .user(let userID, let apps) where apps.isEmpty:
            Array(
                Set(
                    (try? await store.listEndpoints(app: nil, userID: userID, cursor: nil, limit: 1000))?.items.map(
                        \.app) ?? []))
        case .user(_, let apps): apps
        case .topic, nil: []
        }
    }

    /// Every message, newest first (admin keys: it spans every app).
    func list(_ request: PushgateV1.ListMessagesRequest) async throws(GRPCStatus) -> PushgateV1.ListMessagesResponse {
        let limit = try pageLimit(request.pageSize)
        if !request.topic.isEmpty { try RegistryValidation.topicName(request.topic, field: "topic") }
        let state: MessageState?
        if request.state == .unspecified {
            state = nil
        } else {
            // The one mapping, read backwards.
            guard let known = MessageState.allCases.first(where: { PushgateV1.Message.state($0) == request.state })
            else { throw GRPCStatus(.invalidArgument, "state: unknown message state \(request.state)") }
            state = known
        }
        let page = try await storeCall("page_token") { () async throws(StoreError) in
            try await store.listMessages(
                state: state, topic: request.topic.isEmpty ? nil : request.topic, cursor: request.pageToken,
                limit: limit)
        }
        var response = PushgateV1.ListMessagesResponse()
        response.messages = page.items.map(PushgateV1.Message.init)
        response.nextPageToken = page.nextCursor ?? ""
        return response
    }

    /// The delivery log, newest first: one message's recipients (keys that could have published
    /// it), one endpoint's history (keys of its app), or everything (admin keys).
    func deliveries(_ request: PushgateV1.ListDeliveriesRequest, caller: Caller) async throws(GRPCStatus)
        -> PushgateV1.ListDeliveriesResponse
    {
        let limit = try pageLimit(request.pageSize)
        let status: DeliveryLogRecord.Status?
        switch request.status {
        case .unspecified: status = nil
        case .delivered: status = .delivered
        case .rejected: status = .rejected
        case .failed: status = .failed
        default: throw GRPCStatus(.invalidArgument, "status: unknown status \(request.status)")
        }
        if !request.messageID.isEmpty {
            let message = try await storeCall("message_id") { () async throws(StoreError) in
                try await store.message(id: request.messageID)
            }
            if !caller.isAdmin {
                try requirePublisher(
                    message, apps: await apps(of: message), caller: caller, may: "list the deliveries of")
            }
        }
        if !request.endpointID.isEmpty && !caller.isAdmin {
            // Admin keys may read a deleted endpoint's history; others need its app.
            let endpoint = try await storeCall("endpoint_id") { () async throws(StoreError) in
                try await store.endpoint(id: request.endpointID)
            }
            try caller.requireApp(endpoint.app, field: "endpoint_id")
        }
        if request.messageID.isEmpty && request.endpointID.isEmpty {
            try caller.requireAdmin("ListDeliveries without message_id or endpoint_id")
        }
        let page = try await storeCall("page_token") { () async throws(StoreError) in
            try await store.listDeliveries(
                messageID: request.messageID.isEmpty ? nil : request.messageID,
                endpointID: request.endpointID.isEmpty ? nil : request.endpointID, status: status,
                cursor: request.pageToken, limit: limit)
        }
        var response = PushgateV1.ListDeliveriesResponse()
        response.deliveries = page.items.map(PushgateV1.Delivery.init)
        response.nextPageToken = page.nextCursor ?? ""
        return response
    }

    /// Everything that can be wrong with a publish whatever its recipients: the message structure,
    /// the attributes, and the payload of every platform it reaches (bad JSON rejects the whole
    /// publish).
    /// `platforms`: the payloads to check; a platform no app has (Huawei's, say) adds no refusal.
    static func check(_ request: PushgateV1.PublishRequest, target: SNSTarget, platforms: Set<PlatformKey>)
        throws(GRPCStatus)
    {
        do {
            let message = try SNSMessage.parse(
                message: request.message, structure: request.messageStructure, target: target,
                attributes: request.attributes)
            try message.checkPayloads(attributes: request.attributes, target: target, platforms: platforms)
        } catch {
            throw GRPCStatus(.invalidArgument, error.description)
        }
    }
}
