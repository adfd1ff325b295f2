import PushAPNs
import PushDelivery
import PushCore
import PushPosix
import PushProto
import PushTLS

/// Sends validated Send requests through the apps' APNs clients and gathers one result per token.
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

    /// Delivers every (notification, token) and answers once each has a result, or just before
    /// `deadline` with the rest FAILED (`DeadlineExceeded`). Cancelling the task (the client went
    /// away) ends it the same way and drops what was not sent yet.
    /// - Parameter clients: the APNs clients of the configuration `send` was validated against.
    func deliver(
        _ send: ValidatedSend, clients: [String: any DeliveryClient], deadline: ContinuousClock.Instant?
    ) async throws(GRPCStatus) -> [DeliveryResult] {
        let reserved = try reserve(send, clients: clients)
        var placeholders: [DeliveryResult] = []
        placeholders.reserveCapacity(send.tokenCount)
        for (index, item) in send.items.enumerated() {
            for token in item.notification.tokens {
                placeholders.append(DeliveryResult(notificationIndex: index, token: token, status: .failed))
            }
        }
        let apps = send.items.map(\.app.name)
        let events = self.events
        let collector = DeliveryCollector(placeholders: placeholders) { result in
            events.result(result, app: apps[result.notificationIndex])
        }
        var slot = 0
        for (index, item) in send.items.enumerated() {
            guard let client = reserved[item.app.name] else { continue }
            client.send(item.notification, notificationIndex: index, firstSlot: slot, collector: collector)
            slot += item.notification.tokens.count
        }
        let results = await withTaskCancellationHandler {
            await collector.results(deadline: deadline.map(Self.answerTime))
        } onCancel: {
            collector.expire()
        }
        if let metrics {
            var slot = 0
            for item in send.items {
                let count = item.notification.tokens.count
                metrics.notifications(app: item.app.name)?.record(results[slot..<(slot + count)])
                slot += count
            }
        }
        return results
    }

    /// Room for every token in the apps' bounded queues, all or nothing.
    private func reserve(_ send: ValidatedSend, clients: [String: any DeliveryClient]) throws(GRPCStatus) -> [String: any DeliveryClient] {
        var counts: [String: Int] = [:]
        for item in send.items { counts[item.app.name, default: 0] += item.notification.tokens.count }
        var reserved: [String: any DeliveryClient] = [:]
        for (name, count) in counts.sorted(by: { $0.key < $1.key }) {
            guard let client = clients[name] else {
                // Removed by a reload between validation and delivery.
                throw GRPCStatus(.unavailable, "app \(name) was just removed from the configuration; retry")
            }
            guard client.reserve(count) else {
                for (done, client) in reserved { client.unreserve(counts[done] ?? 0) }
                throw GRPCStatus(
                    .resourceExhausted,
                    "app \(name) already holds \(client.heldRequests) notifications (queue_limit \(queueLimit)); "
                        + "retry later")
            }
            reserved[name] = client
        }
        return reserved
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
        id = result.apnsID
        unregisteredAt = result.unregisteredAt
        attempts = Int32(result.attempts)
        canonicalToken = result.canonicalToken
    }
}
