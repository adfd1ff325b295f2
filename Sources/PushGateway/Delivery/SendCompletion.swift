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
    /// Each item's app and counters (and its token count, to find its results).
    private enum Items: Sendable {
        /// The common case: no arrays.
        case one(app: String, counters: NotificationCounters?)
        case many([(app: String, counters: NotificationCounters?, count: Int)])
    }

    private let events: DeliveryEvents
    private let items: Items
    /// When the Send began (``EventLoop/monotonicNow``): nanoseconds, because a `Duration`'s
    /// seconds for the histogram took a 128-bit division.
    private let started: UInt64
    private let metrics: GatewayMetrics?
    private let answer: SendAnswer

    /// - Parameter placeholders: as ``DeliveryCollector/init(placeholders:onResult:)`` takes them.
    init(
        _ send: borrowing ValidatedSend, placeholders: [DeliveryResult], events: DeliveryEvents, started: UInt64,
        metrics: GatewayMetrics?, answer: SendAnswer
    ) {
        if send.items.count == 1 {
            items = .one(app: send.items[0].app, counters: send.items[0].route.counters)
        } else {
            items = .many(send.items.map { ($0.app, $0.route.counters, $0.tokenCount) })
        }
        self.events = events
        self.started = started
        self.metrics = metrics
        self.answer = answer
        super.init(placeholders: placeholders)
    }

    override func resultFinal(_ result: DeliveryResult) {
        switch items {
        case .one(let app, _): events.result(result, app: app)
        case .many(let items): events.result(result, app: items[result.notificationIndex].app)
        }
    }

    override func resultsDone(_ results: [DeliveryResult]) {
        switch items {
        case .one(_, let counters):
            counters?.record(results[...])
        case .many(let items):
            var slot = 0
            for item in items {
                item.counters?.record(results[slot..<(slot + item.count)])
                slot += item.count
            }
        }
        metrics?.sendSeconds.observe(nanoseconds: EventLoop.monotonicNow &- started)
        switch answer {
        case .grpc(let responder):
            responder.respond(
                prefixed: PushgateV1.SendResponse.serializedBytes(
                    of: results, reservingPrefix: GRPCMessageFramer.prefixSize))
        case .response(let respond):
            respond(Self.response(results))
        }
    }

    static func response(_ results: [DeliveryResult]) -> PushgateV1.SendResponse {
        var response = PushgateV1.SendResponse()
        response.results = results.map(PushgateV1.Result.init)
        return response
    }
}
