import PushCore
import PushDelivery
import PushGRPC
import PushMetrics
import PushPosix
import PushProto

/// Where a Send's response goes.
enum SendAnswer: Sendable {
    /// A gRPC call's (Push/Send, a SendStream request): the response's bytes are written straight
    /// from the results, after room for the gRPC prefix, with no `SendResponse` value between.
    case grpc(GRPCUnaryResponder)
    /// As a `SendResponse` (gorush's endpoint maps it to its own JSON).
    case response(@Sendable (PushgateV1.SendResponse) -> Void)
}

/// One Send's collector and what it does with its results: each final result to the events, and
/// once all are in the apps' counters, the Send's duration and the response. One object per Send
/// (its collector, its completion), instead of a collector with an observer, or a chain of
/// closures, each an object to allocate and free per Send.
final class SendCompletion: DeliveryCollector, @unchecked Sendable {
    // Plain fields, not enums of them: a `switch` over a stored enum copied its payload out (a
    // retain per field) on every result and every Send.
    private let events: DeliveryEvents
    /// A one-notification Send's app and counters (the common case: no array).
    private let app: String
    private let counters: NotificationCounters?
    /// With several notifications: each item's app, counters and token count (to find its results).
    private let items: [(app: String, counters: NotificationCounters?, count: Int)]?
    /// When the Send began (``EventLoop/monotonicNow``): nanoseconds, because a `Duration`'s
    /// seconds for the histogram took a 128-bit division.
    private let started: UInt64
    private let metrics: GatewayMetrics?
    /// Where the response goes (``SendAnswer``): one of the two.
    private let responder: GRPCUnaryResponder?
    private let respond: (@Sendable (PushgateV1.SendResponse) -> Void)?

    /// - Parameter placeholders: as ``DeliveryCollector/init(placeholders:onResult:)`` takes them.
    init(
        _ send: borrowing ValidatedSend, placeholders: [DeliveryResult], events: DeliveryEvents, started: UInt64,
        metrics: GatewayMetrics?, answer: SendAnswer
    ) {
        app = send.items.head.app
        counters = send.items.head.route.counters
        items = send.items.isSingle ? nil : send.items.map { ($0.app, $0.route.counters, $0.tokenCount) }
        self.events = events
        self.started = started
        self.metrics = metrics
        switch answer {
        case .grpc(let responder):
            self.responder = responder
            respond = nil
        case .response(let respond):
            responder = nil
            self.respond = respond
        }
        super.init(placeholders: placeholders)
    }

    override func resultFinal(_ result: DeliveryResult) {
        if let items {
            events.result(result, app: items[result.notificationIndex].app)
        } else {
            events.result(result, app: app)
        }
    }

    override func resultsDone(_ results: [DeliveryResult]) {
        if let items {
            var slot = 0
            for item in items {
                item.counters?.record(results[slot..<(slot + item.count)])
                slot += item.count
            }
        } else {
            counters?.record(results[...])
        }
        metrics?.sendSeconds.observe(nanoseconds: EventLoop.monotonicNow &- started)
        if let responder {
            responder.respond(
                prefixed: PushgateV1.SendResponse.serializedBytes(
                    of: results, reservingPrefix: GRPCMessageFramer.prefixSize))
        } else {
            respond?(Self.response(results))
        }
    }

    static func response(_ results: [DeliveryResult]) -> PushgateV1.SendResponse {
        var response = PushgateV1.SendResponse()
        response.results = results.map(PushgateV1.Result.init)
        return response
    }
}
