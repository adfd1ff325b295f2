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
        metrics: GatewayMetrics? = nil
    ) -> GRPCService {
        GRPCService(name: "pushgate.v1.Push", methods: [
            .unary("Send", PushgateV1.SendRequest.self) { request, context in
                try await send(
                    request, configuration: configuration, delivery: delivery, deadline: context.deadline,
                    metrics: metrics)
            },
            .bidirectionalStreaming("SendStream") { requests, responses, context in
                try await OrderedPipeline.run(
                    requests, window: sendStreamWindow,
                    process: { bytes in
                        let request = try decode(PushgateV1.SendRequest.self, bytes)
                        return try await send(
                            request, configuration: configuration, delivery: delivery, deadline: context.deadline,
                            metrics: metrics)
                    },
                    emit: { response in await responses.send(response.serializedBytes()) })
            },
            .unary("Publish", PushgateV1.PublishRequest.self) { request, _ in try await publish.publish(request) },
            .unary("GetMessage", PushgateV1.GetMessageRequest.self) { request, _ in try await publish.message(request) },
        ])
    }

    static func send(
        _ request: PushgateV1.SendRequest, configuration: GatewayConfiguration, delivery: NotificationDelivery,
        deadline: ContinuousClock.Instant?, metrics: GatewayMetrics? = nil
    ) async throws(GRPCStatus) -> PushgateV1.SendResponse {
        let started = ContinuousClock.now
        defer { metrics?.sendSeconds.observe(.now - started) }
        let validated = try SendRequestValidation.validate(request, configuration: configuration)
        let results = try await delivery.deliver(validated, deadline: deadline)
        var response = PushgateV1.SendResponse()
        response.results = results.map(PushgateV1.Result.init)
        return response
    }
}
