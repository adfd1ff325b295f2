import PushCore
import PushGRPC
import PushProto
import PushStore

/// `pushgate.v1.Registry`: the configured apps, and the endpoints, topics and subscriptions kept in
/// the store, with SNS's semantics (idempotent creates, ALREADY_EXISTS naming the existing endpoint).
///
/// Every method needs a valid caller (``Caller``); the writes (Create/Update/DeleteEndpoint,
/// Create/DeleteTopic, Subscribe, Unsubscribe) need an admin key; the reads (ListApplications,
/// GetEndpoint, ListEndpoints, ListTopics, ListSubscriptions) any valid key, a key limited to some
/// apps seeing only their endpoints and subscriptions (topics are shared by every app).
struct RegistryService: Sendable {
    let live: LiveSettings
    var configuration: GatewayConfiguration { live.configuration }
    let store: any Store
    let authorizer: Authorizer

    func make() -> GRPCService {
        GRPCService(
            name: "pushgate.v1.Registry",
            methods: [
                .authorizedUnary("ListApplications", PushgateV1.ListApplicationsRequest.self, authorizer, .anyCaller) {
                    request, caller, _ in
                    // A key limited to some apps lists only those.
                    try Self.listApplications(
                        request, apps: configuration.apps.filter { caller.apps.contains($0.name) })
                },
                .authorizedUnary("CreateEndpoint", PushgateV1.CreateEndpointRequest.self, authorizer, .admin) {
                    request, _, context in try await createEndpoint(request, context)
                },
                .authorizedUnary("GetEndpoint", PushgateV1.GetEndpointRequest.self, authorizer, .anyCaller) {
                    request, caller, _ in
                    try RegistryValidation.required(request.id, "id")
                    let endpoint = try await storeCall("id") { () async throws(StoreError) in
                        try await store.endpoint(id: request.id)
                    }
                    // A key limited to some apps sees only their endpoints: another app's is as
                    // unknown to it as one that does not exist.
                    guard caller.apps.contains(endpoint.app) else {
                        throw GRPCStatus(.notFound, "id: no endpoint \(TextCap.quoted(request.id))")
                    }
                    return PushgateV1.Endpoint(endpoint)
                },
                .authorizedUnary("UpdateEndpoint", PushgateV1.UpdateEndpointRequest.self, authorizer, .admin) {
                    request, _, context in try await updateEndpoint(request, context)
                },
                .authorizedUnary("DeleteEndpoint", PushgateV1.DeleteEndpointRequest.self, authorizer, .admin) {
                    request, _, _ in
                    try RegistryValidation.required(request.id, "id")
                    try await storeCall("id") { () async throws(StoreError) in
                        try await store.deleteEndpoint(id: request.id)
                    }
                    return PushgateV1.DeleteEndpointResponse()
                },
                .authorizedUnary("ListEndpoints", PushgateV1.ListEndpointsRequest.self, authorizer, .anyCaller) {
                    request, caller, context in try await listEndpoints(request, caller, context)
                },
                .authorizedUnary("CreateTopic", PushgateV1.CreateTopicRequest.self, authorizer, .admin) {
                    request, _, _ in
                    try RegistryValidation.topicName(request.name)
                    var topic = PushgateV1.Topic()
                    topic.name = try await storeCall("name") { () async throws(StoreError) in
                        try await store.createTopic(name: request.name)
                    }.name
                    return topic
                },
                .authorizedUnary("DeleteTopic", PushgateV1.DeleteTopicRequest.self, authorizer, .admin) {
                    request, _, _ in
                    try RegistryValidation.topicName(request.name)
                    try await storeCall("name") { () async throws(StoreError) in
                        try await store.deleteTopic(name: request.name)
                    }
                    return PushgateV1.DeleteTopicResponse()
                },
                .authorizedUnary("ListTopics", PushgateV1.ListTopicsRequest.self, authorizer, .anyCaller) {
                    request, _, context in try await listTopics(request, context)
                },
                .authorizedUnary("Subscribe", PushgateV1.SubscribeRequest.self, authorizer, .admin) {
                    request, _, context in try await subscribe(request, context)
                },
                .authorizedUnary("Unsubscribe", PushgateV1.UnsubscribeRequest.self, authorizer, .admin) {
                    request, _, _ in
                    try RegistryValidation.required(request.subscriptionID, "subscription_id")
                    try await storeCall("subscription_id") { () async throws(StoreError) in
                        try await store.unsubscribe(id: request.subscriptionID)
                    }
                    return PushgateV1.UnsubscribeResponse()
                },
                .authorizedUnary("ListSubscriptions", PushgateV1.ListSubscriptionsRequest.self, authorizer, .anyCaller)
                { request, caller, context in try await listSubscriptions(request, caller, context) },
            ])
    }

    // MARK: Endpoints

    private func createEndpoint(_ request: PushgateV1.CreateEndpointRequest, _ context: GRPCCallContext)
        async throws(GRPCStatus) -> PushgateV1.Endpoint
    {
        try RegistryValidation.required(request.app, "app")
        guard let app = configuration.apps.first(where: { $0.name == request.app }) else {
            throw GRPCStatus(.notFound, "app: unknown app \(TextCap.quoted(request.app))")
        }
        let token = try RegistryValidation.normalizedToken(request.token, app: app)
        try RegistryValidation.customUserData(request.customUserData)
        try RegistryValidation.userID(request.userID, allowEmpty: true)
        let (endpoint, _) = try await storeCall("token") { () async throws(StoreError) in
            try await store.createEndpoint(
                app: request.app, normalizedToken: token, customUserData: request.customUserData,
                userID: request.userID, enabled: nil, now: unixMilliseconds())
        }
        return PushgateV1.Endpoint(endpoint)
    }

    private func updateEndpoint(_ request: PushgateV1.UpdateEndpointRequest, _ context: GRPCCallContext)
        async throws(GRPCStatus) -> PushgateV1.Endpoint
    {
        try RegistryValidation.required(request.id, "id")
        var token: String?
        if let newToken = request.token {
            // The token's form depends on the endpoint's app (APNs hex, FCM registration token).
            let existing = try await storeCall("id") { () async throws(StoreError) in
                try await store.endpoint(id: request.id)
            }
            let app = configuration.apps.first { $0.name == existing.app } ?? AppConfiguration(name: existing.app)
            token = try RegistryValidation.normalizedToken(newToken, app: app)
        }
        if let data = request.customUserData { try RegistryValidation.customUserData(data) }
        if let userID = request.userID { try RegistryValidation.userID(userID, allowEmpty: true) }
        let updated = try await storeCall(token == nil ? "id" : "token") { () async throws(StoreError) in
            try await store.updateEndpoint(
                id: request.id, normalizedToken: token, enabled: request.enabled,
                customUserData: request.customUserData, userID: request.userID)
        }
        return PushgateV1.Endpoint(updated)
    }

    /// A key limited to some apps: the apps whose endpoints (and their subscriptions) it sees, or
    /// nil for every app.
    static func visibleApps(_ caller: Caller) -> [String]? {
        switch caller.apps {
        case .all: nil
        case .only(let names): names.sorted()
        }
    }

    private func listEndpoints(
        _ request: PushgateV1.ListEndpointsRequest, _ caller: Caller, _ context: GRPCCallContext
    ) async throws(GRPCStatus) -> PushgateV1.ListEndpointsResponse {
        let limit = try pageLimit(request.pageSize)
        // Before the app is looked up: a limited key naming an app not its own learns nothing of
        // which apps exist (as for Send).
        if !request.app.isEmpty { try caller.requireApp(request.app, field: "app") }
        if !request.userID.isEmpty { try RegistryValidation.userID(request.userID) }
        var token: String?
        if !request.token.isEmpty {
            guard !request.app.isEmpty else {
                throw GRPCStatus(.invalidArgument, "token: needs app (a token is unique within its app)")
            }
            guard let app = configuration.apps.first(where: { $0.name == request.app }) else {
                throw GRPCStatus(.notFound, "app: unknown app \(TextCap.quoted(request.app))")
            }
            token = try RegistryValidation.normalizedToken(request.token, app: app)
        }
        let page = try await storeCall("page_token") { () async throws(StoreError) in
            try await store.listEndpoints(
                app: request.app.isEmpty ? nil : request.app, userID: request.userID.isEmpty ? nil : request.userID,
                token: token, apps: Self.visibleApps(caller), cursor: request.pageToken, limit: limit)
        }
        var response = PushgateV1.ListEndpointsResponse()
        response.endpoints = page.items.map(PushgateV1.Endpoint.init)
        response.nextPageToken = page.nextCursor ?? ""
        return response
    }

    // MARK: Topics and subscriptions

    private func listTopics(_ request: PushgateV1.ListTopicsRequest, _ context: GRPCCallContext)
        async throws(GRPCStatus) -> PushgateV1.ListTopicsResponse
    {
        let limit = try pageLimit(request.pageSize)
        let page = try await storeCall("page_token") { () async throws(StoreError) in
            try await store.listTopics(
                cursor: request.pageToken, limit: limit, countingSubscribers: request.subscriberCounts)
        }
        var response = PushgateV1.ListTopicsResponse()
        response.topics = page.items.map { record in
            var topic = PushgateV1.Topic()
            topic.name = record.name
            topic.subscribers = record.subscribers
            return topic
        }
        response.nextPageToken = page.nextCursor ?? ""
        return response
    }

    private func subscribe(_ request: PushgateV1.SubscribeRequest, _ context: GRPCCallContext)
        async throws(GRPCStatus) -> PushgateV1.Subscription
    {
        try RegistryValidation.topicName(request.topic, field: "topic")
        try RegistryValidation.required(request.endpointID, "endpoint_id")
        guard let scope = SNSFilterScope.stored(named: request.filterPolicyScope) else {
            throw GRPCStatus(
                .invalidArgument,
                "filter_policy_scope: expected MessageAttributes or MessageBody, got "
                    + TextCap.quoted(request.filterPolicyScope))
        }
        if !request.filterPolicyJSON.isEmpty {
            do {
                _ = try SNSFilterPolicy.parse(request.filterPolicyJSON, nested: SNSFilterScope.nests(scope))
            } catch {
                throw GRPCStatus(.invalidArgument, error.description)
            }
        }
        let (subscription, _) = try await storeCall("topic, endpoint_id") { () async throws(StoreError) in
            try await store.subscribe(
                topic: request.topic, endpointID: request.endpointID, filterPolicyJSON: request.filterPolicyJSON,
                filterPolicyScope: scope)
        }
        return PushgateV1.Subscription(subscription)
    }

    private func listSubscriptions(
        _ request: PushgateV1.ListSubscriptionsRequest, _ caller: Caller, _ context: GRPCCallContext
    ) async throws(GRPCStatus) -> PushgateV1.ListSubscriptionsResponse {
        let limit = try pageLimit(request.pageSize)
        let page = try await storeCall("page_token") { () async throws(StoreError) in
            try await store.listSubscriptions(
                topic: request.topic.isEmpty ? nil : request.topic,
                endpointID: request.endpointID.isEmpty ? nil : request.endpointID, apps: Self.visibleApps(caller),
                cursor: request.pageToken, limit: limit)
        }
        var response = PushgateV1.ListSubscriptionsResponse()
        response.subscriptions = page.items.map(PushgateV1.Subscription.init)
        response.nextPageToken = page.nextCursor ?? ""
        return response
    }

    // MARK: Applications

    static func listApplications(
        _ request: PushgateV1.ListApplicationsRequest, apps: [AppConfiguration]
    ) throws(GRPCStatus) -> PushgateV1.ListApplicationsResponse {
        let page = try Paging(pageSize: request.pageSize, pageToken: request.pageToken)
        var response = PushgateV1.ListApplicationsResponse()
        let slice = apps.dropFirst(page.offset).prefix(page.size)
        response.applications = slice.map { app in
            var application = PushgateV1.Application()
            application.name = app.name
            switch app.keys {
            case .apns(let apns):
                application.platform = apns.sandbox ? .apnsSandbox : .apns
                application.bundleID = apns.bundleID
            case .fcm: application.platform = .fcm
            case .adm: application.platform = .adm
            case .webpush: application.platform = .webpush
            case .hms: application.platform = .hms
            }
            return application
        }
        let next = page.offset + slice.count
        response.nextPageToken = next < apps.count ? Paging.token(offset: next) : ""
        return response
    }
}

/// page_size / page_token for lists kept in memory (the configured apps): the token is an offset.
struct Paging {
    static let defaultSize = 100
    static let maxSize = 1000

    let offset: Int
    let size: Int

    init(pageSize: Int32, pageToken: String) throws(GRPCStatus) {
        guard pageSize >= 0 else {
            throw GRPCStatus(.invalidArgument, "page_size: must not be negative")
        }
        size = pageSize == 0 ? Self.defaultSize : min(Int(pageSize), Self.maxSize)
        if pageToken.isEmpty {
            offset = 0
        } else if pageToken.hasPrefix("o"), let value = Int(pageToken.dropFirst()), value >= 0 {
            offset = value
        } else {
            throw GRPCStatus(.invalidArgument, "page_token: not a page token from this server")
        }
    }

    static func token(offset: Int) -> String { "o\(offset)" }
}
