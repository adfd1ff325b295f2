import PushCore
import PushGRPC
import PushMetrics
import Testing

@testable import PushGateway

@Suite("Gateway metrics")
struct GatewayMetricsTests {
    @Test("metrics_listen: off by default, host:port, empty turns it off, garbage is an error")
    func metricsListen() throws {
        #expect(try GatewayConfiguration.parse(json: Array("{}".utf8)).metricsListen == nil)
        let config = try GatewayConfiguration.parse(json: Array(#"{"metrics_listen": "[::1]:9464"}"#.utf8))
        #expect(config.metricsListen?.host == "::1" && config.metricsListen?.port == 9464)
        #expect(try GatewayConfiguration.parse(json: Array(#"{"metrics_listen": ""}"#.utf8)).metricsListen == nil)
        #expect(throws: ConfigurationError.self) {
            try GatewayConfiguration.parse(json: Array(#"{"metrics_listen": "9464"}"#.utf8))
        }
    }

    @Test("reason labels stay a bounded set, chosen by the result's code")
    func reasonLabels() {
        func label(_ code: DeliveryCode, _ reason: String, platform: String = "fcm") -> String {
            let status: DeliveryStatus = code == .rejectedByProvider ? .rejected : .failed
            return NotificationCounters.reasonLabel(
                DeliveryResult(notificationIndex: 0, token: "t", status: status, code: code, reason: reason),
                platform: platform)
        }
        #expect(label(.rejectedByProvider, "") == "")
        #expect(label(.rejectedByProvider, "Unregistered") == "Unregistered")
        #expect(label(.deadlineExceeded, "DeadlineExceeded") == "DeadlineExceeded")
        #expect(label(.unreachable, "ProviderUnreachable: connect: refused") == "ProviderUnreachable")
        #expect(label(.connectionLost, "ConnectionLost") == "ConnectionLost")
        #expect(label(.streamReset, "StreamReset(internalError)") == "StreamReset")
        #expect(label(.streamRefused, "StreamRefused: the provider refused the stream 9 times") == "StreamRefused")
        #expect(label(.expired, "Expired") == "Expired")
        #expect(label(.shutdown, "Shutdown") == "Shutdown")
        #expect(label(.wrongPlatform, "WrongPlatform: app a is not a FCM app") == "WrongPlatform")
        #expect(label(.rejectedByProvider, "SomethingApple added in 2030") == "other")
        #expect(label(.rejectedByProvider, "UNREGISTERED") == "UNREGISTERED")
        #expect(label(.providerUnavailable, "MaxRateExceeded") == "MaxRateExceeded")
        // APNs' own Shutdown, retried until the attempts ran out, is APNs' reason, not the gateway stopping.
        #expect(label(.providerUnavailable, "Shutdown") == "Shutdown")
        #expect(label(.noCredential, "OAuthTokenError: the token endpoint answered 401") == "OAuthTokenError")
        #expect(label(.noCredential, "ProviderTokenError: no key", platform: "apns") == "ProviderTokenError")
        #expect(label(.providerUnavailable, "HTTP 502") == "other")
        #expect(label(.unroutableToken, "InvalidToken: app a has no origin to send this token to") == "other")
        #expect(label(.tooManyOrigins, "TooManyOrigins: app a already sends to 2 other origins") == "other")
        #expect(label(.unsendable, "WebPush: token: not a subscription") == "other")
        // A reason that only looks like one of Pushgate's is the provider's, and not a known one.
        #expect(label(.rejectedByProvider, "Expired: soon") == "other")
    }

    @Test("results are counted per status and reason; RPCs per method and code")
    func counting() {
        let app = AppConfiguration(name: "a")
        let metrics = GatewayMetrics(apps: [app])
        let results = [
            DeliveryResult(notificationIndex: 0, token: "t1", status: .delivered, code: .delivered),
            DeliveryResult(notificationIndex: 0, token: "t2", status: .delivered, code: .delivered),
            DeliveryResult(
                notificationIndex: 0, token: "t3", status: .rejected, code: .rejectedByProvider, reason: "Unregistered"),
            DeliveryResult(
                notificationIndex: 0, token: "t4", status: .failed, code: .unreachable, reason: "ProviderUnreachable: x"
            ),
            DeliveryResult(
                notificationIndex: 0, token: "t5", status: .failed, code: .unreachable, reason: "ProviderUnreachable: y"
            ),
        ]
        metrics.notifications(app: "a")?.record(results)
        #expect(metrics.notifications(app: "nope") == nil)
        metrics.rpc.callFinished(
            GRPCCallSummary(
                path: "/pushgate.v1.Push/Send", status: GRPCStatus(.ok), nanoseconds: 2_000_000, requestID: "r",
                peer: "p"))
        metrics.rpc.callFinished(
            GRPCCallSummary(
                path: "/pushgate.v1.Push/Send", status: GRPCStatus(.ok), nanoseconds: 3_000_000, requestID: "r",
                peer: "p"))
        metrics.rpc.callFinished(
            GRPCCallSummary(
                path: nil, status: GRPCStatus(.unimplemented), nanoseconds: 1_000, requestID: "r", peer: "p"))
        // By method index (what the gRPC server gives): the same series as by path; an index another
        // path had is taken over, and each path still counts on its own.
        for (path, code) in [
            ("/pushgate.v1.Push/Publish", GRPCStatusCode.ok), ("/pushgate.v1.Push/Publish", .ok),
            ("/pushgate.v1.Push/Publish", .notFound), ("/pushgate.v1.Push/Other", .ok),
            ("/pushgate.v1.Push/Publish", .ok),
        ] {
            metrics.rpc.callFinished(
                GRPCCallSummary(
                    path: path, status: GRPCStatus(code), nanoseconds: 1_000, requestID: "r", peer: "p", methodIndex: 3)
            )
        }
        let text = metrics.registry.render()
        #expect(text.contains(#"pushgate_rpc_total{method="pushgate.v1.Push/Publish",code="OK"} 3"#))
        #expect(text.contains(#"pushgate_rpc_total{method="pushgate.v1.Push/Publish",code="NOT_FOUND"} 1"#))
        #expect(text.contains(#"pushgate_rpc_total{method="pushgate.v1.Push/Other",code="OK"} 1"#))
        #expect(text.contains(#"pushgate_rpc_seconds_count{method="pushgate.v1.Push/Publish"} 4"#))
        let n = "pushgate_notifications_total"
        #expect(text.contains(#"\#(n){app="a",platform="apns",status="delivered",reason=""} 2"#))
        #expect(text.contains(#"\#(n){app="a",platform="apns",status="rejected",reason="Unregistered"} 1"#))
        #expect(text.contains(#"\#(n){app="a",platform="apns",status="failed",reason="ProviderUnreachable"} 2"#))
        #expect(text.contains(#"pushgate_rpc_total{method="pushgate.v1.Push/Send",code="OK"} 2"#))
        #expect(text.contains(#"pushgate_rpc_total{method="unknown",code="UNIMPLEMENTED"} 1"#))
        #expect(text.contains(#"pushgate_rpc_seconds_count{method="pushgate.v1.Push/Send"} 2"#))
        #expect(text.contains(#"pushgate_rpc_seconds_sum{method="pushgate.v1.Push/Send"} 0.005"#))
    }
}

@Suite("Delivery log hints")
struct DeliveryLogHintTests {
    @Test("credential refusals get a hint saying what to fix; token problems do not")
    func hints() {
        func hint(_ answer: ClassifiedAnswer) -> String? {
            guard case .rejected(_, _, _, _, let code) = answer else { return nil }
            return DeliveryEvents.configurationHint(code)
        }
        func fcm(_ status: Int, _ body: String) -> ClassifiedAnswer {
            FCMResponseClassifier.outcome(status: status, body: Array(body.utf8), retryAfter: nil, now: 0)
        }
        func apns(_ status: Int, _ reason: String) -> ClassifiedAnswer {
            APNsResponseClassifier.outcome(status: status, body: Array(#"{"reason":"\#(reason)"}"#.utf8))
        }
        let thirdParty = #"{"error":{"status":"UNAUTHENTICATED","details":[{"errorCode":"THIRD_PARTY_AUTH_ERROR"}]}}"#
        #expect(hint(fcm(401, thirdParty))?.contains("Firebase console") == true)
        #expect(hint(fcm(403, #"{"error":{"status":"PERMISSION_DENIED"}}"#))?.contains("project_id") == true)
        for reason in [
            "InvalidProviderToken", "BadCertificate", "BadCertificateEnvironment", "BadEnvironmentKeyIdInToken",
            "BadEnvironmentKeyInToken", "UnrelatedKeyIdInToken",
        ] {
            #expect(hint(apns(403, reason))?.contains("key_id") == true, "\(reason)")
        }
        #expect(hint(fcm(404, #"{"error":{"status":"NOT_FOUND","details":[{"errorCode":"UNREGISTERED"}]}}"#)) == nil)
        #expect(hint(apns(400, "BadDeviceToken")) == nil)
        #expect(DeliveryEvents.configurationHint(.unauthenticated) == nil)
        #expect(DeliveryEvents.configurationHint(.providerUnavailable) == nil)
    }
}
