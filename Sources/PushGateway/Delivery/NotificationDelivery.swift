import PushCore
import PushDelivery

/// Sends validated Send requests through the apps' provider clients (APNs, FCM, ADM) and gathers
/// one result per token.
final class NotificationDelivery: Sendable {
    private let live: LiveSettings
    private let queueLimit: Int
    private let events: DeliveryEvents

    init(live: LiveSettings, queueLimit: Int, events: DeliveryEvents) {
        self.live = live
        self.queueLimit = queueLimit
        self.events = events
    }

    /// Starts delivering every (notification, token); `answer` gets the response (one result per
    /// token) once each has one, or just before `deadline` with the rest FAILED
    /// (`DeadlineExceeded`), on whichever loop gives the last result; the apps' counters and
    /// `metrics`' Send duration (from `started`, ``EventLoop/monotonicNow``) are recorded first. Expiring the returned
    /// collector (the client went away) ends it the same way and drops what was not sent yet.
    /// - Throws: when the apps' queues have no room (nothing was started then).
    @discardableResult
    func deliver(
        _ send: consuming ValidatedSend, deadline: UInt64?, started: UInt64,
        metrics: GatewayMetrics?, answer: SendAnswer
    ) throws(GRPCStatus) -> DeliveryCollector {
        let reserved = try reserve(send)
        var placeholders: [DeliveryResult] = []
        placeholders.reserveCapacity(send.tokenCount)
        // By index, a field at a time: a copy of an item copies its prepared push (a retain per field).
        for index in send.items.indices {
            for token in send.items.tokens(at: index) {
                placeholders.append(
                    DeliveryResult(notificationIndex: index, token: token, status: .failed, code: .deadlineExceeded))
            }
        }
        let collector = SendCompletion(
            send, placeholders: placeholders, events: events, started: started, metrics: metrics, answer: answer)
        var slot = 0
        for index in send.items.indices {
            reserved[index].send(
                send.takeNotification(at: index), notificationIndex: index, firstSlot: slot, collector: collector)
            slot += send.items.tokenCount(at: index)
        }
        collector.whenDone(deadlineNanoseconds: deadline.map { Self.answerTime($0, now: started) })
        return collector
    }

    /// Each item's client, with room reserved.
    private enum Reserved {
        /// A Send of one notification (the common case): no array for its one client.
        case one(any DeliveryClient)
        case each([any DeliveryClient])

        subscript(index: Int) -> any DeliveryClient {
            switch self {
            case .one(let client): client
            case .each(let clients): clients[index]
            }
        }
    }

    /// Room for every token in the apps' bounded queues, all or nothing.
    private func reserve(_ send: ValidatedSend) throws(GRPCStatus) -> Reserved {
        if send.items.isSingle {
            // The common case, without the dictionaries below.
            let route = send.items.head.route
            let client = try client(of: route)
            try admitOrigins(send.items.head.tokens, on: client)
            try reserve(send.items.head.tokenCount, on: client, app: route.name)
            return .one(client)
        }
        var counts: [ObjectIdentifier: (route: AppRoute, count: Int)] = [:]
        for item in send.items {
            counts[ObjectIdentifier(item.route), default: (item.route, 0)].count += item.tokenCount
            try admitOrigins(item.tokens, on: client(of: item.route))
        }
        var reserved: [ObjectIdentifier: any DeliveryClient] = [:]
        for (key, entry) in counts.sorted(by: { $0.value.route.name < $1.value.route.name }) {
            do {
                let client = try client(of: entry.route)
                try reserve(entry.count, on: client, app: entry.route.name)
                reserved[key] = client
            } catch {
                for (done, client) in reserved { client.unreserve(counts[done]?.count ?? 0) }
                throw error
            }
        }
        return .each(send.items.map { reserved[ObjectIdentifier($0.route)]! })
    }

    private func client(of route: AppRoute) throws(GRPCStatus) -> any DeliveryClient {
        guard let client = route.client else {
            // Validated against routes made without clients (cannot happen with a snapshot's).
            throw GRPCStatus(.unavailable, "app \(route.name) has no delivery client; retry")
        }
        return client
    }

    /// Tokens that name more origins than their app may send to at once (Web Push subscriptions
    /// of many push services) make the Send RESOURCE_EXHAUSTED before anything is sent.
    private func admitOrigins(_ tokens: [String], on client: any DeliveryClient) throws(GRPCStatus) {
        if let refusal = client.originRefusal(tokens: tokens) { throw GRPCStatus(.resourceExhausted, refusal) }
    }

    private func reserve(_ count: Int, on client: any DeliveryClient, app: String) throws(GRPCStatus) {
        guard client.reserve(count) else {
            throw GRPCStatus(
                .resourceExhausted,
                "app \(app) already holds \(client.heldRequests) notifications (queue_limit \(queueLimit)); retry later"
            )
        }
    }

    /// Answer a little before the client's deadline, so the results reach it before it gives up.
    /// In ``EventLoop/monotonicNow``'s nanoseconds, `now` on that clock.
    static func answerTime(_ deadline: UInt64, now: UInt64) -> UInt64 {
        let margin = answerMargin(remaining: deadline > now ? deadline - now : 0)
        return deadline > margin ? deadline - margin : 0
    }

    /// A twentieth of the time left, from 20 ms to 500 ms.
    static func answerMargin(remaining nanoseconds: UInt64) -> UInt64 {
        min(max(nanoseconds / 20, 20_000_000), 500_000_000)
    }

    func shutdown() {
        for client in live.clients.values { client.shutdown() }
    }
}
