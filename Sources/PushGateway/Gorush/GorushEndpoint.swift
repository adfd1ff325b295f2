import PushCore
import PushGRPC
import PushProto

/// gorush's `POST /api/push` on the API port (HTTP/1.1 and HTTP/2, beside gRPC and Connect): the
/// key is checked from the head before the body is read, the body becomes one Send
/// (``GorushRequest``) delivered as `Push/Send` delivers, and the answer is gorush's
/// (``GorushResponse``) once every token has its result.
enum GorushEndpoint {
    static let path = "/api/push"
    private static let json = [("content-type", "application/json; charset=utf-8")]

    static func route(
        live: LiveSettings, delivery: NotificationDelivery, authorizer: Authorizer, metrics: GatewayMetrics?
    ) -> HTTPRoute {
        HTTPRoute(
            path: path,
            admission: { head in
                do throws(GRPCStatus) {
                    _ = try caller(head, authorizer: authorizer)
                } catch {
                    return refusal(error.code.httpStatus, error.message)
                }
                let type = head.header("content-type")?.split(separator: ";").first?.trimmed.lowercased()
                guard type == nil || type == "application/json" else {
                    return refusal(415, "content-type: expected application/json, not \(TextCap.quoted(type ?? ""))")
                }
                return nil
            },
            refusal: { status, message in refusal(status, message) },
            handler: { request, responder in
                // Resolved again: keys may have been reloaded while the body arrived.
                let caller: Caller
                do throws(GRPCStatus) {
                    caller = try Self.caller(request, authorizer: authorizer)
                } catch {
                    return responder.respond(refusal(error.code.httpStatus, error.message))
                }
                let settings = live.snapshot
                let mapped: GorushRequest
                do throws(GorushRequest.Refusal) {
                    mapped = try GorushRequest(body: request.body, configuration: settings.configuration)
                } catch {
                    return responder.respond(refusal(400, error.message))
                }
                let echoes = mapped.echoes
                do throws(GRPCStatus) {
                    // No client deadline in gorush's protocol: send_timeout_seconds bounds it.
                    _ = try SendRequestMessage.with(mapped.send) { (send) throws(GRPCStatus) in
                        try PushService.startSend(
                            send, caller: caller, settings: settings, delivery: delivery, deadline: nil,
                            metrics: metrics,
                            answer: .response { response in
                                responder.respond(
                                    HTTPRouteResponse(
                                        status: 200, headers: json,
                                        body: GorushResponse.delivered(response.results, echoes: echoes))
                                )
                            })
                    }
                } catch {
                    responder.respond(refusal(error.code.httpStatus, error.message))
                }
            })
    }

    private static func caller(_ request: HTTPRouteRequest, authorizer: Authorizer) throws(GRPCStatus) -> Caller {
        try Caller.resolve(
            keys: authorizer.keys, authorization: request.header("authorization"),
            isLoopbackPeer: request.isLoopbackPeer)
    }

    private static func refusal(_ status: Int, _ message: String) -> HTTPRouteResponse {
        HTTPRouteResponse(status: status, headers: json, body: GorushResponse.refused(status: status, message: message))
    }
}

extension Substring {
    fileprivate var trimmed: Substring {
        let start = firstIndex { $0 != " " } ?? endIndex
        let end = lastIndex { $0 != " " }.map { index(after: $0) } ?? start
        return self[start..<end]
    }
}
