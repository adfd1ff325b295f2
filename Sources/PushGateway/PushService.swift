import PushCore
import PushGRPC
import PushProto

/// `pushgate.v1.Push`: Send and SendStream validate every field now; delivery, Publish and
/// GetMessage arrive with their issues and answer UNIMPLEMENTED until then.
enum PushService {
    static let deliveryUnavailable =
        "delivery to providers is not in this build yet (it arrives with the APNs delivery engine); "
        + "the request was valid and nothing was sent"
    static let publishUnavailable =
        "Publish and GetMessage are not in this build yet (they arrive with the registry and durable Publish)"

    static func make(configuration: GatewayConfiguration) -> GRPCService {
        GRPCService(name: "pushgate.v1.Push", methods: [
            .unary("Send", PushgateV1.SendRequest.self) { request, _ -> PushgateV1.SendResponse in
                _ = try SendRequestValidation.validate(request, configuration: configuration)
                throw GRPCStatus(.unimplemented, deliveryUnavailable)
            },
            .bidirectionalStreaming("SendStream") { requests, _, _ in
                for await bytes in requests {
                    let request = try decode(PushgateV1.SendRequest.self, bytes)
                    _ = try SendRequestValidation.validate(request, configuration: configuration)
                    throw GRPCStatus(.unimplemented, deliveryUnavailable)
                }
            },
            .notYetAvailable("Publish", publishUnavailable),
            .notYetAvailable("GetMessage", publishUnavailable),
        ])
    }
}
