import PushAPNs
import PushCore
import PushDelivery
import PushPosix
import PushProto
import PushSync
import PushTLS

/// Sends validated Send requests through the apps' provider clients (APNs, FCM, ADM) and gathers
/// one result per token.
final class NotificationDelivery: Sendable {
    private let live: LiveSettings
    private let queueLimit: Int
    private let events: DeliveryEvents
    private let metrics: GatewayMetrics?

    init(live: LiveSettings, queueLimit: Int, events: DeliveryEvents, metrics: GatewayMetrics? = nil) {
        self.live = live
        self.queueLimit = queueLimit
        self.events = events
        self.metrics = metrics
    }

    /// Starts delivering every (notification, token); `completion` gets one result per token once
    /// each has one, or just before `deadline` with the rest FAILED (`DeadlineExceeded`), on
    /// whichever loop gives the last result. Expiring the returned collector (the client went
    /// away) ends it the same way and drops what was not sent yet.
    /// - Throws: when the apps' queues have no room (nothing was started then).
    @discardableResult
    func deliver(
        _ send: ValidatedSend, clients: [String: any DeliveryClient], deadline: ContinuousClock.Instant?,
        completion: @escaping @Sendable ([DeliveryResult]) -> Void
    ) throws(GRPCStatus) -> DeliveryCollector {
        let reserved = try reserve(send, clients: clients)
        var placeholders: [DeliveryResult] = []
        placeholders.reserveCapacity(send.tokenCount)
        for (index, item) in send.items.enumerated() {
            for token in item.notification.tokens {
                placeholders.append(DeliveryResult(notificationIndex: index, token: token, status: .failed))
            }
        }
        let events = self.events
        let collector: DeliveryCollector
        if send.items.count == 1 {
            // The common case: no array of app names to keep for the events.
            let app = send.items[0].app
            collector = DeliveryCollector(placeholders: placeholders) { result in events.result(result, app: app) }
        } else {
            let apps = send.items.map(\.app)
            collector = DeliveryCollector(placeholders: placeholders) { result in
                events.result(result, app: apps[result.notificationIndex])
            }
        }
        var slot = 0
        for (index, item) in send.items.enumerated() {
            reserved[index].send(item.notification, notificationIndex: index, firstSlot: slot, collector: collector)
            slot += item.notification.tokens.count
        }
        let metrics = self.metrics
        let counts = metrics == nil ? [] : send.items.map { ($0.app, $0.notification.tokens.count) }
        collector.whenDone(deadline: deadline.map(Self.answerTime)) { results in
            if let metrics {
                var slot = 0
                for (app, count) in counts {
                    metrics.notifications(app: app)?.record(results[slot..<(slot + count)])
                    slot += count
                }
            }
            completion(results)
        }
        return collector
    }

    /// Room for every token in the apps' bounded queues, all or nothing.
    /// - Returns: each item's client, in item order.
    private func reserve(_ send: ValidatedSend, clients: [String: any DeliveryClient]) throws(GRPCStatus)
        -> [any DeliveryClient]
    {
        if send.items.count == 1 {
            // The common case, without the dictionaries below.
            let item = send.items[0]
            let client = try client(item.app, in: clients)
            try admitOrigins(item.notification.tokens, on: client)
            try reserve(item.notification.tokens.count, on: client, app: item.app)
            return [client]
        }
        var counts: [String: Int] = [:]
        for item in send.items {
            counts[item.app, default: 0] += item.notification.tokens.count
            try admitOrigins(item.notification.tokens, on: client(item.app, in: clients))
        }
        var reserved: [String: any DeliveryClient] = [:]
        for (name, count) in counts.sorted(by: { $0.key < $1.key }) {
            do {
                let client = try client(name, in: clients)
                try reserve(count, on: client, app: name)
                reserved[name] = client
            } catch {
                for (done, client) in reserved { client.unreserve(counts[done] ?? 0) }
                throw error
            }
        }
        return send.items.map { reserved[$0.app]! }
    }

    private func client(_ name: String, in clients: [String: any DeliveryClient]) throws(GRPCStatus)
        -> any DeliveryClient
    {
        guard let client = clients[name] else {
            // Removed by a reload between validation and delivery.
            throw GRPCStatus(.unavailable, "app \(name) was just removed from the configuration; retry")
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
    static func answerTime(_ deadline: ContinuousClock.Instant) -> ContinuousClock.Instant {
        let remaining = deadline - .now
        let margin = min(max(remaining / 20, .milliseconds(20)), .milliseconds(500))
        return deadline - margin
    }

    func shutdown() {
        for client in live.clients.values { client.shutdown() }
    }
}

extension PushgateV1.Result {
    init(_ result: DeliveryResult) {
        self.init()
        notificationIndex = Int32(result.notificationIndex)
        token = result.token
        switch result.status {
        case .delivered: status = .delivered
        case .rejected: status = .rejected
        case .failed: status = .failed
        }
        httpStatus = Int32(result.httpStatus)
        reason = result.reason
        id = result.providerID
        unregisteredAt = result.unregisteredAt
        attempts = Int32(result.attempts)
        canonicalToken = result.canonicalToken
    }
}
