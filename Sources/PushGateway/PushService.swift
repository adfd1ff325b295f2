import PushCore
import PushGRPC
import PushProto

/// `pushgate.v1.Push`: Send and SendStream deliver now; Publish stores and fans out in the background.
enum PushService {
    /// SendRequests of one SendStream being delivered at once; the stream reads no further until
    /// the oldest is answered.
    static let sendStreamWindow = 16

    static func make(
        configuration: GatewayConfiguration, delivery: NotificationDelivery, publish: PublishService,
        events: DeliveryEvents
    ) -> GRPCService {
        GRPCService(name: "pushgate.v1.Push", methods: [
            .unary("Send", PushgateV1.SendRequest.self) { request, context in
                try await send(request, configuration: configuration, delivery: delivery, deadline: context.deadline)
            },
            .bidirectionalStreaming("SendStream") { requests, responses, context in
                try await OrderedPipeline.run(
                    requests, window: sendStreamWindow,
                    process: { bytes in
                        let request = try decode(PushgateV1.SendRequest.self, bytes)
                        return try await send(
                            request, configuration: configuration, delivery: delivery, deadline: context.deadline)
                    },
                    emit: { response in await responses.send(response.serializedBytes()) })
            },
            .unary("Publish", PushgateV1.PublishRequest.self) { request, _ in try await publish.publish(request) },
            .unary("GetMessage", PushgateV1.GetMessageRequest.self) { request, _ in try await publish.message(request) },
            .serverStreaming("WatchEvents", PushgateV1.WatchEventsRequest.self, PushgateV1.DeliveryEvent.self) {
                request, writer, _ in
                for (index, app) in request.apps.enumerated() where configuration.app(named: app) == nil || app.isEmpty {
                    throw GRPCStatus(.notFound, "apps[\(index)]: unknown app \(app.debugDescription)")
                }
                guard request.deliveredSampleEvery >= 0 else {
                    throw GRPCStatus(.invalidArgument, "delivered_sample_every: must not be negative")
                }
                for await event in events.watch(apps: request.apps, sampleEvery: Int(request.deliveredSampleEvery)) {
                    await writer.send(event)
                }
            },
        ])
    }

    static func send(
        _ request: PushgateV1.SendRequest, configuration: GatewayConfiguration, delivery: NotificationDelivery,
        deadline: ContinuousClock.Instant?
    ) async throws(GRPCStatus) -> PushgateV1.SendResponse {
        let validated = try SendRequestValidation.validate(request, configuration: configuration)
        let results = try await delivery.deliver(validated, deadline: deadline)
        var response = PushgateV1.SendResponse()
        response.results = results.map(PushgateV1.Result.init)
        return response
    }
}
