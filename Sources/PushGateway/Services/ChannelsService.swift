import PushAPNs
import PushCore
import PushDelivery
import PushGRPC
import PushPosix
import PushProto
import PushStore

/// `pushgate.v1.Channels`: Live Activity broadcast channels of APNs apps. Channel requests go to
/// Apple's channel management API through the app's channel client (``ChannelClients``: the same
/// engine and provider token as its pushes), broadcasts through its push client; the registry
/// keeps each channel with its storage policy.
///
/// Every method needs a key that may send for the app (as Send does): a channel is the app's
/// broadcast audience, not registry data shared between apps.
struct ChannelsService: Sendable {
    let live: LiveSettings
    let store: any Store
    let authorizer: Authorizer
    let channelClients: ChannelClients

    func make() -> GRPCService {
        GRPCService(
            name: "pushgate.v1.Channels",
            methods: [
                .authorizedUnary("CreateChannel", PushgateV1.CreateChannelRequest.self, authorizer, .anyCaller) {
                    request, caller, context in try await create(request, caller, context)
                },
                .authorizedUnary("GetChannel", PushgateV1.GetChannelRequest.self, authorizer, .anyCaller) {
                    request, caller, context in try await get(request, caller, context)
                },
                .authorizedUnary("ListChannels", PushgateV1.ListChannelsRequest.self, authorizer, .anyCaller) {
                    request, caller, _ in try await list(request, caller)
                },
                .authorizedUnary("DeleteChannel", PushgateV1.DeleteChannelRequest.self, authorizer, .anyCaller) {
                    request, caller, context in try await delete(request, caller, context)
                },
                .authorizedUnary("Broadcast", PushgateV1.BroadcastRequest.self, authorizer, .anyCaller) {
                    request, caller, context in try await broadcast(request, caller, context)
                },
            ])
    }

    // MARK: Calls

    private func create(_ request: PushgateV1.CreateChannelRequest, _ caller: Caller, _ context: GRPCCallContext)
        async throws(GRPCStatus) -> PushgateV1.Channel
    {
        let (app, bundleID) = try apnsApp(request.app, caller)
        guard let policy = MessageStoragePolicy(rawValue: Int(request.messageStoragePolicy.rawValue)) else {
            throw GRPCStatus(
                .invalidArgument,
                "message_storage_policy: must be 0 (no storage) or 1 (most recent), got "
                    + "\(request.messageStoragePolicy.rawValue)")
        }
        let requestID = try Self.requestID(request.requestID)
        let result = try await apnsRequest(
            APNsChannelRequest(.create(policy), bundleID: bundleID, requestID: requestID), app: app, context)
        guard ChannelID.isValid(result.providerID) else {
            throw GRPCStatus(
                .unavailable,
                "APNs created a channel but answered no usable apns-channel-id "
                    + "(\(TextCap.quoted(result.providerID)))")
        }
        let record = ChannelRecord(
            app: app.name, channelID: result.providerID, storagePolicy: policy.rawValue, createdAt: unixMilliseconds())
        try await storeCall("channel_id") { () async throws(StoreError) in try await store.insertChannel(record) }
        return PushgateV1.Channel(record)
    }

    private func get(_ request: PushgateV1.GetChannelRequest, _ caller: Caller, _ context: GRPCCallContext)
        async throws(GRPCStatus) -> PushgateV1.Channel
    {
        let (app, bundleID) = try apnsApp(request.app, caller)
        let record = try await recorded(app: app.name, channelID: request.channelID)
        _ = try await apnsRequest(
            APNsChannelRequest(.read, bundleID: bundleID, channelID: record.channelID), app: app, context,
            forgetOnNotFound: record)
        return PushgateV1.Channel(record)
    }

    private func list(_ request: PushgateV1.ListChannelsRequest, _ caller: Caller) async throws(GRPCStatus)
        -> PushgateV1.ListChannelsResponse
    {
        let (app, _) = try apnsApp(request.app, caller)
        let limit = try pageLimit(request.pageSize)
        let page = try await storeCall("page_token") { () async throws(StoreError) in
            try await store.listChannels(app: app.name, cursor: request.pageToken, limit: limit)
        }
        var response = PushgateV1.ListChannelsResponse()
        response.channels = page.items.map(PushgateV1.Channel.init)
        response.nextPageToken = page.nextCursor ?? ""
        return response
    }

    private func delete(_ request: PushgateV1.DeleteChannelRequest, _ caller: Caller, _ context: GRPCCallContext)
        async throws(GRPCStatus) -> PushgateV1.DeleteChannelResponse
    {
        let (app, bundleID) = try apnsApp(request.app, caller)
        let record = try await recorded(app: app.name, channelID: request.channelID)
        // A channel APNs forgot already is removed all the same, and said to be NOT_FOUND. APNs has
        // been seen to answer a DELETE of an unknown channel 404 BadPath (where its table gives
        // ChannelNotRegistered), so a 404 counts as gone here, for this path that works otherwise.
        _ = try await apnsRequest(
            APNsChannelRequest(.delete, bundleID: bundleID, channelID: record.channelID), app: app, context,
            forgetOnNotFound: record, goneOn404: true)
        _ = try await storeCall("channel_id") { () async throws(StoreError) in
            try await store.deleteChannel(app: app.name, channelID: record.channelID)
        }
        return PushgateV1.DeleteChannelResponse()
    }

    private func broadcast(_ request: PushgateV1.BroadcastRequest, _ caller: Caller, _ context: GRPCCallContext)
        async throws(GRPCStatus) -> PushgateV1.BroadcastResponse
    {
        guard let notification = request.notification else {
            throw GRPCStatus(.invalidArgument, "notification: required (app and live_activity)")
        }
        let (app, bundleID) = try apnsApp(notification.app, caller, field: "notification.app")
        let record = try await recorded(app: app.name, channelID: request.channelID)
        let domain = try NotificationRequest(notification, path: "notification")
        let policy = MessageStoragePolicy(rawValue: record.storagePolicy) ?? .mostRecent
        let prepared: PreparedNotification
        switch NotificationValidator.prepareBroadcast(
            domain, at: "notification", bundleID: bundleID, channelID: record.channelID, policy: policy,
            now: unixMilliseconds() / 1000)
        {
        case .success(let value): prepared = value
        case .failure(let error): throw GRPCStatus(.invalidArgument, error.description)
        }
        guard let push = live.clients[app.name] else {
            throw GRPCStatus(.failedPrecondition, "notification.app: \(app.name) has no APNs client")
        }
        let result = try await send(.apns(prepared), through: push, context)
        if result.status == .rejected && ChannelGone.matches(reason: result.reason) {
            try await forget(record, reason: result)
        }
        var response = PushgateV1.BroadcastResponse()
        response.result = PushgateV1.Result(result)
        return response
    }

    // MARK: Parts

    /// The app named `name` (empty: the first), which must be an APNs app with a bundle id that
    /// `caller` may send for.
    private func apnsApp(_ name: String, _ caller: Caller, field: String = "app") throws(GRPCStatus) -> (
        AppConfiguration, String
    ) {
        let configuration = live.configuration
        guard let app = configuration.app(named: name) else {
            throw GRPCStatus(.notFound, "\(field): unknown app \(TextCap.quoted(name))")
        }
        try caller.requireApp(app.name, field: field)
        guard case .apns(let apns) = app.keys else {
            throw GRPCStatus(
                .failedPrecondition,
                "\(field): app \(app.name) is not an APNs app (channels are APNs broadcast channels)")
        }
        guard !apns.bundleID.isEmpty else {
            throw GRPCStatus(
                .failedPrecondition, "\(field): app \(app.name) has no bundle_id (channels are per bundle id)")
        }
        return (app, apns.bundleID)
    }

    /// The registry's channel, or NOT_FOUND naming it.
    private func recorded(app: String, channelID: String) async throws(GRPCStatus) -> ChannelRecord {
        guard !channelID.isEmpty else { throw GRPCStatus(.invalidArgument, "channel_id: required") }
        guard ChannelID.isValid(channelID) else {
            throw GRPCStatus(.invalidArgument, "channel_id: \(ChannelID.requirement)")
        }
        let record = try await storeCall("channel_id") { () async throws(StoreError) in
            try await store.channel(app: app, channelID: channelID)
        }
        guard let record else {
            throw GRPCStatus(.notFound, "channel_id: app \(app) has no channel \(TextCap.quoted(channelID))")
        }
        return record
    }

    /// Removes a channel APNs does not know (``ChannelGone``) from the registry, and says so as
    /// NOT_FOUND.
    private func forget(_ record: ChannelRecord, reason result: DeliveryResult) async throws(GRPCStatus) -> Never {
        _ = try await storeCall("channel_id") { () async throws(StoreError) in
            try await store.deleteChannel(app: record.app, channelID: record.channelID)
        }
        throw GRPCStatus(
            .notFound,
            "channel_id: APNs does not know channel \(TextCap.quoted(record.channelID)) (\(result.httpStatus) "
                + "\(result.reason)); it is removed from the registry")
    }

    /// One channel management request; its delivered result, or the status its failure maps to (a
    /// channel APNs does not have removes `forgetOnNotFound` from the registry first).
    private func apnsRequest(
        _ request: APNsChannelRequest, app: AppConfiguration, _ context: GRPCCallContext,
        forgetOnNotFound: ChannelRecord? = nil, goneOn404: Bool = false
    ) async throws(GRPCStatus) -> DeliveryResult {
        let client = try channelClients.client(for: app)
        let result = try await send(.apnsChannel(request), through: client, context)
        switch result.status {
        case .delivered:
            return result
        case .rejected where ChannelGone.matches(reason: result.reason) || (goneOn404 && result.httpStatus == 404):
            if let forgetOnNotFound { try await forget(forgetOnNotFound, reason: result) }
            throw GRPCStatus(.notFound, "channel_id: APNs answered \(result.httpStatus) \(result.reason)")
        case .rejected:
            throw GRPCStatus(
                .failedPrecondition, "APNs refused the channel request: \(result.httpStatus) \(result.reason)")
        case .failed:
            throw GRPCStatus(
                .unavailable, "APNs channel request failed after \(result.attempts) attempts: \(result.reason)")
        }
    }

    /// Sends one request through `client`'s queue and waits for its result, until the call's
    /// deadline or `send_timeout_seconds`.
    private func send(_ push: PreparedPush, through client: any DeliveryClient, _ context: GRPCCallContext)
        async throws(GRPCStatus) -> DeliveryResult
    {
        guard client.reserve(1) else {
            throw GRPCStatus(.resourceExhausted, "app \(client.name): its queue is full (queue_limit); retry later")
        }
        // The same deadline as a Send's, answered the same margin before it.
        let now = EventLoop.monotonicNow
        let deadline = PushService.sendDeadline(context.deadlineNanoseconds, live.configuration, now: now)
            .map { NotificationDelivery.answerTime($0, now: now) }
        return await client.sendAndWait(push, deadline: deadline.map(MonotonicDeadline.instant(of:)))[0]
    }

    /// `request_id`: empty, or a UUID (sent lower-case).
    private static func requestID(_ text: String) throws(GRPCStatus) -> String? {
        guard !text.isEmpty else { return nil }
        guard let id = APNsID(text) else { throw GRPCStatus(.invalidArgument, "request_id: \(APNsID.requirement)") }
        return id.uuidString
    }
}

extension PushgateV1.Channel {
    init(_ record: ChannelRecord) {
        self.init()
        app = record.app
        channelID = record.channelID
        messageStoragePolicy = PushgateV1.MessageStoragePolicy(rawValue: Int32(record.storagePolicy))
        createdAt = record.createdAt
    }
}
