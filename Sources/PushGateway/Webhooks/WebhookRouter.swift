import PushProto
import PushStore
import Synchronization

/// Which webhooks get which events (their `events`, `apps` and `delivered_sample_every`), and the
/// events' JSON as they are stored in the outbox. Empty when no webhook is configured: then every
/// question is one check of an empty list.
final class WebhookRouter: Sendable {
    private final class Route: Sendable {
        let configuration: WebhookConfiguration
        /// Successes seen, for `delivered_sample_every`.
        let delivered = Atomic<Int>(0)

        init(_ configuration: WebhookConfiguration) { self.configuration = configuration }
    }

    private let routes: [Route]

    init(_ webhooks: [WebhookConfiguration]) {
        routes = webhooks.map(Route.init)
    }

    var isEmpty: Bool { routes.isEmpty }

    /// Whether any webhook wants `kind` about `apps` (nil: about a message that may reach any app).
    func wants(_ kind: WebhookConfiguration.EventKind, apps: [String]?) -> Bool {
        routes.contains { $0.configuration.wants(kind, apps: apps) }
    }

    /// The outbox rows of `event` for the webhooks that want it; `delivered` ones sampled per webhook.
    func rows(
        for event: PushgateV1.DeliveryEvent, kind: WebhookConfiguration.EventKind, apps: [String]?, now: Int64
    ) -> [OutboxEvent] {
        var rows: [OutboxEvent] = []
        var json: String?
        for route in routes where route.configuration.wants(kind, apps: apps) {
            if kind == .delivered {
                let seen = route.delivered.add(1, ordering: .relaxed).newValue
                guard seen % route.configuration.deliveredSampleEvery == 0 else { continue }
            }
            let text = json ?? String(decoding: event.jsonBytes(), as: UTF8.self)
            json = text
            rows.append(OutboxEvent(webhook: route.configuration.name, json: text, createdAt: now))
        }
        return rows
    }

    /// The webhooks that want `kind` about `apps` (as for ``wants(_:apps:)``): a message's end or
    /// cancel, written by the store when it happens.
    func names(wanting kind: WebhookConfiguration.EventKind, apps: [String]?) -> [String] {
        routes.filter { $0.configuration.wants(kind, apps: apps) }.map(\.configuration.name)
    }

    /// The `events` element of a finished message: its final state and counts.
    static func messageFinished(_ message: MessageRecord, at time: Int64) -> String {
        var event = PushgateV1.DeliveryEvent()
        event.kind = .messageFinished
        event.messageID = message.id
        event.time = time
        event.message = PushgateV1.Message(message)
        return String(decoding: event.jsonBytes(), as: UTF8.self)
    }

    /// The `events` element of a cancel: the recipients it counted cancelled.
    static func messageCancelled(_ messageID: String, cancelled: Int64, at time: Int64) -> String {
        var event = PushgateV1.DeliveryEvent()
        event.kind = .messageCancelled
        event.messageID = messageID
        event.cancelled = cancelled
        event.time = time
        return String(decoding: event.jsonBytes(), as: UTF8.self)
    }

    /// The `events` element telling a webhook that `dropped` of its events were dropped.
    static func eventsDropped(_ dropped: Int, at time: Int64) -> String {
        var event = PushgateV1.DeliveryEvent()
        event.kind = .eventsDropped
        event.dropped = Int64(dropped)
        event.time = time
        return String(decoding: event.jsonBytes(), as: UTF8.self)
    }
}
