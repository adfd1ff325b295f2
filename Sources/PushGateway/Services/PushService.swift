import PushCore
import PushDelivery
import PushGRPC
import PushMetrics
import PushPosix
import PushProto

/// `pushgate.v1.Push`: Send and SendStream deliver now; Publish stores and fans out in the background.
enum PushService {
    /// SendRequests of one SendStream being delivered at once; the stream reads no further until
    /// the oldest is answered.
    static let sendStreamWindow = 16

    static func make(
        live: LiveSettings, delivery: NotificationDelivery, publish: PublishService,
        events: DeliveryEvents, authorizer: Authorizer, metrics: GatewayMetrics?, stats: GatewayStats
    ) -> GRPCService {
        GRPCService(
            name: "pushgate.v1.Push",
            methods: [
                // Without a task per call: the busiest method, and a one-token Send is mostly overhead.
                // Its request read where protobuf-c unpacked it (SendRequestMessage), not decoded
                // into a SendRequest first.
                .authorizedImmediateUnary(
                    "Send", PushgateV1.SendRequest.self, PushgateV1.SendResponse.self, authorizer, .anyCaller
                ) {
                    (bytes: [UInt8], caller, context, responder) throws(GRPCStatus) in
                    let collector = try SendRequestMessage.unpack(bytes) { (request) throws(GRPCStatus) in
                        try startSend(
                            request, caller: caller, settings: live.snapshot, delivery: delivery,
                            deadline: context.deadlineNanoseconds, metrics: metrics,
                            answer: .grpc(responder.responder))
                    }
                    // The client went away or its deadline passed: the rest is dropped, not sent.
                    responder.onCancel { collector.expire() }
                },
                // Each request goes the way of a Send (startSend) on the call's loop, answered in
                // request order.
                GRPCMethod.orderedStream("SendStream", window: sendStreamWindow) { bytes, context, responder in
                    do throws(GRPCStatus) {
                        guard let admitted = context.admission as? StreamCaller else {
                            throw GRPCStatus(.internalError, "the call reached its handler without being authorized")
                        }
                        // Checked again once the keys were reloaded: a key removed (or narrowed) by
                        // SIGHUP stops working on streams opened before, too.
                        let caller =
                            authorizer.generation == admitted.generation
                            ? admitted.caller : try authorizer.caller(context, access: .anyCaller, method: "SendStream")
                        let collector = try SendRequestMessage.unpack(bytes) { (request) throws(GRPCStatus) in
                            try startSend(
                                request, caller: caller, settings: live.snapshot, delivery: delivery,
                                deadline: context.deadlineNanoseconds, metrics: metrics, answer: .grpc(responder))
                        }
                        responder.onCancel { collector.expire() }
                    } catch {
                        responder.fail(error)
                    }
                }
                .admitting { context throws(GRPCStatus) in
                    // The generation first: keys replaced while resolving are checked again.
                    let generation = authorizer.generation
                    return StreamCaller(
                        caller: try authorizer.caller(context, access: .anyCaller, method: "SendStream"),
                        generation: generation)
                },
                .authorizedUnary("Publish", PushgateV1.PublishRequest.self, authorizer, .anyCaller) {
                    request, caller, _ in
                    try await publish.publish(request, caller: caller)
                },
                .authorizedUnary("GetMessage", PushgateV1.GetMessageRequest.self, authorizer, .anyCaller) {
                    request, _, _ in
                    try await publish.message(request)
                },
                .authorizedUnary("CancelMessage", PushgateV1.CancelMessageRequest.self, authorizer, .anyCaller) {
                    request, caller, _ in
                    try await publish.cancel(request, caller: caller)
                },
                .authorizedUnary("ListMessages", PushgateV1.ListMessagesRequest.self, authorizer, .admin) {
                    request, _, _ in
                    try await publish.list(request)
                },
                .authorizedUnary("GetStats", PushgateV1.GetStatsRequest.self, authorizer, .anyCaller) {
                    _, caller, _ in stats.stats(for: caller)
                },
                .authorizedUnary("ListDeliveries", PushgateV1.ListDeliveriesRequest.self, authorizer, .anyCaller) {
                    request, caller, _ in
                    try await publish.deliveries(request, caller: caller)
                },
                GRPCMethod.protoServerStreaming(
                    "WatchEvents", PushgateV1.WatchEventsRequest.self, PushgateV1.DeliveryEvent.self
                ) {
                    request, writer, context in
                    let configuration = live.configuration
                    /// The watch's apps against `caller`'s grant.
                    func requireApps(_ caller: Caller) throws(GRPCStatus) {
                        for (index, app) in request.apps.enumerated() {
                            guard !app.isEmpty, configuration.app(named: app) != nil else {
                                throw GRPCStatus(.notFound, "apps[\(index)]: unknown app \(TextCap.quoted(app))")
                            }
                            try caller.requireApp(app, field: "apps[\(index)]")
                        }
                        // A key limited to some apps watches only those (an empty list means all of them).
                        if request.apps.isEmpty {
                            for app in configuration.apps { try caller.requireApp(app.name, field: "apps") }
                        }
                    }
                    try requireApps(try Caller.admitted(context))
                    guard request.deliveredSampleEvery >= 0 else {
                        throw GRPCStatus(.invalidArgument, "delivered_sample_every: must not be negative")
                    }
                    var generation = authorizer.generation
                    for await event in events.watch(apps: request.apps, sampleEvery: Int(request.deliveredSampleEvery))
                    {
                        if authorizer.generation != generation {
                            // Keys reloaded: the watch goes on only if its key still grants its apps.
                            generation = authorizer.generation
                            try requireApps(try authorizer.caller(context, access: .anyCaller, method: "WatchEvents"))
                        }
                        await writer.send(event)
                    }
                }
                .admitting(authorizer.admission(.anyCaller, method: "WatchEvents")),
            ])
    }

    /// SendStream's admission: the caller, and the keys' generation it was resolved against.
    private final class StreamCaller: Sendable {
        let caller: Caller
        let generation: Int

        init(caller: Caller, generation: Int) {
            self.caller = caller
            self.generation = generation
        }
    }

    /// The one way a Send is delivered (Push/Send, and each request of SendStream): checks the
    /// request and starts its delivery; `answer` gets the response, on the loop that gives the
    /// last result.
    /// - Returns: the delivery's collector, to expire if the call ends first.
    static func startSend(
        _ request: borrowing SendRequestMessage, caller: Caller, settings: LiveSettings.Snapshot,
        delivery: NotificationDelivery, deadline: UInt64?, metrics: GatewayMetrics? = nil,
        answer: SendAnswer
    ) throws(GRPCStatus) -> DeliveryCollector {
        let started = EventLoop.monotonicNow
        do {
            // One snapshot for the whole call: validated and delivered with the same apps.
            let validated = try check(request, caller: caller, settings: settings)
            return try delivery.deliver(
                validated, deadline: sendDeadline(deadline, settings.configuration, now: started), started: started,
                metrics: metrics, answer: answer)
        } catch {
            metrics?.sendSeconds.observe(nanoseconds: EventLoop.monotonicNow &- started)
            throw error
        }
    }

    /// The client's deadline, or `send_timeout_seconds` from now when that comes first (or the
    /// client set none): a Send whose provider never answers (a stalled connection) ends, FAILED
    /// `DeadlineExceeded` for what was not delivered, instead of waiting for ever.
    /// All in ``EventLoop/monotonicNow``'s nanoseconds (``MonotonicDeadline``), `now` being the
    /// Send's start.
    static func sendDeadline(_ client: UInt64?, _ configuration: GatewayConfiguration, now: UInt64) -> UInt64? {
        guard configuration.sendTimeoutSeconds > 0 else { return client }
        let bound = now &+ UInt64(configuration.sendTimeoutSeconds) &* 1_000_000_000
        guard let client else { return bound }
        return min(client, bound)
    }

    private static func check(
        _ request: borrowing SendRequestMessage, caller: Caller, settings: LiveSettings.Snapshot
    ) throws(GRPCStatus) -> ValidatedSend {
        try authorize(request, caller: caller, routes: settings.routes)
        return try SendRequestValidation.validate(
            request, routes: settings.routes, configuration: settings.configuration)
    }

    /// Every notification's app must be one the caller may send for; checked for all of them before
    /// any field is validated. An empty `app` means the first app, and is checked as that app. A
    /// restricted key naming an unknown app gets PERMISSION_DENIED too (not NOT_FOUND, whose message
    /// lists the configured apps).
    static func authorize(
        _ request: borrowing SendRequestMessage, caller: Caller, routes: AppRoutes
    ) throws(GRPCStatus) {
        guard caller.apps != .all else { return }
        for index in 0..<request.count {
            let named = try request.app(index)
            let app = routes.route(named: named)?.name ?? named
            try caller.requireApp(app, field: "notifications[\(index)].app")
        }
    }

    /// ``authorize(_:caller:routes:)-…`` for a request built in Swift.
    static func authorize(
        _ request: PushgateV1.SendRequest, caller: Caller, routes: AppRoutes
    ) throws(GRPCStatus) {
        try SendRequestMessage.with(request) { (message) throws(GRPCStatus) in
            try authorize(message, caller: caller, routes: routes)
        }
    }
}
