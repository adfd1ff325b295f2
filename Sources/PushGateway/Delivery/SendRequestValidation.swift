import PushCore
import PushProto
import PushWebPush

/// A validated Send request: every notification prepared for its app's provider (payload built
/// once, headers derived), each with the app it goes through.
struct ValidatedSend: Sendable {
    struct Item: Sendable {
        /// The app, with its client and series (a reference: an item is copied a few times per Send).
        let route: AppRoute
        /// `notification`'s tokens, read out once: reading them out of the enum copies its whole payload.
        let tokens: [String]
        /// nil once the delivery took it (``ValidatedSend/takeNotification(at:)``).
        fileprivate(set) var notification: PreparedPush?
        var tokenCount: Int { tokens.count }

        var app: String { route.name }
    }

    /// The items in request order, the first one inline: a Send of one notification (the common
    /// case) makes no array for it, which would be allocated and at the end destroyed through the
    /// runtime's generic value witnesses. The delivery
    /// path reads fields of an item where it is (``tokens(at:)``, ``head``): the collection's
    /// subscript returns a copy, and a copy of an item copies its prepared push.
    struct Items: RandomAccessCollection, Sendable {
        /// Item 0.
        fileprivate(set) var head: Item
        /// Items 1 and on.
        fileprivate(set) var tail: [Item]

        var startIndex: Int { 0 }
        var endIndex: Int { 1 + tail.count }
        var isSingle: Bool { tail.isEmpty }

        subscript(position: Int) -> Item { position == 0 ? head : tail[position - 1] }

        func tokens(at index: Int) -> [String] { index == 0 ? head.tokens : tail[index - 1].tokens }
        func tokenCount(at index: Int) -> Int { index == 0 ? head.tokenCount : tail[index - 1].tokenCount }
    }

    private(set) var items: Items
    let tokenCount: Int

    /// Item `index`'s prepared push, moved out for its app's client (each is sent once): copying
    /// it out of the array was a retain and a release per field of the prepared message.
    mutating func takeNotification(at index: Int) -> PreparedPush {
        index == 0 ? items.head.notification.take()! : items.tail[index - 1].notification.take()!
    }
}

/// Checks every field of a Send request before anything is sent, and names the place of the first
/// problem (`notifications[3].tokens[7]: …`).
enum SendRequestValidation {
    /// - Parameter now: Unix seconds (FCM's `android.ttl` is counted from it).
    static func validate(
        _ request: PushgateV1.SendRequest, configuration: GatewayConfiguration, now: Int64 = unixMilliseconds() / 1000
    ) throws(GRPCStatus) -> ValidatedSend {
        try validate(request, routes: AppRoutes(configuration: configuration), configuration: configuration, now: now)
    }

    /// The same against a snapshot's routes (`routes` are `configuration`'s apps), for a request
    /// built in Swift (gorush's endpoint, tests): read as a received one is.
    static func validate(
        _ request: PushgateV1.SendRequest, routes: AppRoutes, configuration: GatewayConfiguration,
        now: Int64 = unixMilliseconds() / 1000
    ) throws(GRPCStatus) -> ValidatedSend {
        try SendRequestMessage.with(request) { (message) throws(GRPCStatus) in
            try validate(message, routes: routes, configuration: configuration, now: now)
        }
    }

    /// The same for a request where protobuf-c unpacked it: each notification goes from its C
    /// message to its domain value, with no proto value between (``SendRequestMessage``).
    static func validate(
        _ request: borrowing SendRequestMessage, routes: AppRoutes, configuration: GatewayConfiguration,
        now: Int64 = unixMilliseconds() / 1000
    ) throws(GRPCStatus) -> ValidatedSend {
        guard request.count > 0 else {
            throw GRPCStatus(.invalidArgument, "notifications: at least one notification is required")
        }
        var tokens = 0
        for index in 0..<request.count { tokens += request.tokenCount(index) }
        guard tokens <= configuration.maxTokensPerSend else {
            throw GRPCStatus(
                .invalidArgument,
                "notifications: \(tokens) tokens in one Send, over the limit of \(configuration.maxTokensPerSend) "
                    + "(max_tokens_per_send); split the request or use SendStream")
        }
        let first = try validate(request, at: 0, routes: routes, configuration: configuration, now: now)
        var preparedTokens = first.tokenCount
        var rest: [ValidatedSend.Item] = []
        if request.count > 1 {
            rest.reserveCapacity(request.count - 1)
            for index in 1..<request.count {
                let item = try validate(request, at: index, routes: routes, configuration: configuration, now: now)
                preparedTokens += item.tokenCount
                rest.append(item)
            }
        }
        return ValidatedSend(items: .init(head: first, tail: rest), tokenCount: preparedTokens)
    }

    private static func validate(
        _ request: borrowing SendRequestMessage, at index: Int, routes: AppRoutes,
        configuration: GatewayConfiguration, now: Int64
    ) throws(GRPCStatus) -> ValidatedSend.Item {
        let path = index < notificationPaths.count ? notificationPaths[index] : "notifications[\(index)]"
        var domain = NotificationRequest()
        guard try request.assign(index, to: &domain) else {
            throw GRPCStatus(.invalidArgument, "\(path).push_type: unknown push type \(request.pushTypeNumber(index))")
        }
        guard let route = routes.route(named: domain.app) else {
            throw unknownApp(domain.app, path: path, configuration: configuration)
        }
        // Each case builds its item straight from the typed prepared message: a `Result` of the
        // enum, switched on, copied the prepared push out of it (a retain per field) to read its
        // tokens.
        switch route.platform {
        case .apns(let bundleID, let usesCertificate):
            if usesCertificate, domain.liveActivity != nil {
                throw GRPCStatus(
                    .invalidArgument,
                    "\(path).live_activity: Live Activity pushes need token auth (team_id, key_id, key_file); "
                        + "app \(route.name) uses a certificate (cert_file)")
            }
            let prepared: PreparedNotification
            do throws(ValidationError) {
                prepared = try NotificationValidator.prepare(domain, bundleID: bundleID, now: now)
            } catch {
                throw invalid(error.located(at: path))
            }
            return .init(route: route, tokens: prepared.tokens, notification: .apns(prepared))
        case .fcm:
            switch FCMMessageBuilder.prepare(domain, at: path, now: now) {
            case .success(let message): return .init(route: route, tokens: message.tokens, notification: .fcm(message))
            case .failure(let error): throw invalid(error)
            }
        case .adm:
            switch ADMMessageBuilder.prepare(domain, at: path, now: now) {
            case .success(let message): return .init(route: route, tokens: message.tokens, notification: .adm(message))
            case .failure(let error): throw invalid(error)
            }
        case .webpush(let allowedHosts):
            switch WebPushMessageBuilder.prepare(domain, at: path, now: now) {
            case .success(let message):
                do throws(ValidationError) {
                    try WebPushSubscription.validate(tokens: message.tokens, hosts: allowedHosts)
                } catch {
                    throw invalid(error.located(at: path))
                }
                return .init(route: route, tokens: message.tokens, notification: .webpush(message))
            case .failure(let error): throw invalid(error)
            }
        case .hms(let api):
            switch HMSMessageBuilder.prepare(domain, at: path, api: api, now: now) {
            case .success(let message): return .init(route: route, tokens: message.tokens, notification: .hms(message))
            case .failure(let error): throw invalid(error)
            }
        }
    }

    private static func invalid(_ error: ValidationError) -> GRPCStatus {
        GRPCStatus(.invalidArgument, error.description)
    }

    /// The first notifications' places, made once: one is passed down for error messages with every
    /// notification, and at 16 bytes it is too long for an inline string (an allocation each).
    private static let notificationPaths = (0..<64).map { "notifications[\($0)]" }

    private static func unknownApp(_ name: String, path: String, configuration: GatewayConfiguration) -> GRPCStatus {
        if configuration.apps.isEmpty {
            return GRPCStatus(.notFound, "\(path).app: no apps are configured (add one under \"apps\" in the config)")
        }
        let known = configuration.apps.map(\.name).joined(separator: ", ")
        return GRPCStatus(.notFound, "\(path).app: unknown app \(TextCap.quoted(name)) (configured: \(known))")
    }
}

extension NotificationRequest {
    /// The domain form of a protobuf notification (``NotificationRequest/init(proto:)``); an
    /// unknown push type number, the one thing the wire holds that the domain cannot, is
    /// INVALID_ARGUMENT here. Every other field is checked by the provider's builder.
    init(_ n: borrowing PushgateV1.Notification, path: String) throws(GRPCStatus) {
        guard let domain = NotificationRequest(proto: n) else {
            throw GRPCStatus(.invalidArgument, "\(path).push_type: unknown push type \(n.pushType.rawValue)")
        }
        self = domain
    }
}
