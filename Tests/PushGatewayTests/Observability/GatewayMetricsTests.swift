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

    @Test("reason labels stay a bounded set")
    func reasonLabels() {
        #expect(NotificationCounters.reasonLabel("") == "")
        #expect(NotificationCounters.reasonLabel("Unregistered") == "Unregistered")
        #expect(NotificationCounters.reasonLabel("DeadlineExceeded") == "DeadlineExceeded")
        #expect(NotificationCounters.reasonLabel("ProviderUnreachable: connect: refused") == "ProviderUnreachable")
        #expect(NotificationCounters.reasonLabel("StreamReset(internalError)") == "StreamReset")
        #expect(NotificationCounters.reasonLabel("SomethingApple added in 2030") == "other")
        #expect(NotificationCounters.reasonLabel("UNREGISTERED") == "UNREGISTERED")
        #expect(NotificationCounters.reasonLabel("MaxRateExceeded") == "MaxRateExceeded")
        #expect(
            NotificationCounters.reasonLabel("OAuthTokenError: the token endpoint answered 401") == "OAuthTokenError")
        #expect(NotificationCounters.reasonLabel("HTTP 502") == "other")
    }

    @Test("results are counted per status and reason; RPCs per method and code")
    func counting() {
        let app = AppConfiguration(name: "a")
        let metrics = GatewayMetrics(apps: [app])
        let results = [
            DeliveryResult(notificationIndex: 0, token: "t1", status: .delivered),
            DeliveryResult(notificationIndex: 0, token: "t2", status: .delivered),
            DeliveryResult(notificationIndex: 0, token: "t3", status: .rejected, reason: "Unregistered"),
            DeliveryResult(notificationIndex: 0, token: "t4", status: .failed, reason: "ProviderUnreachable: x"),
            DeliveryResult(notificationIndex: 0, token: "t5", status: .failed, reason: "ProviderUnreachable: y"),
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
        #expect(
            DeliveryEvents.configurationHint(reason: "THIRD_PARTY_AUTH_ERROR")?.contains("Firebase console") == true)
        #expect(DeliveryEvents.configurationHint(reason: "PERMISSION_DENIED")?.contains("project_id") == true)
        #expect(DeliveryEvents.configurationHint(reason: "InvalidProviderToken")?.contains("key_id") == true)
        #expect(DeliveryEvents.configurationHint(reason: "UNREGISTERED") == nil)
        #expect(DeliveryEvents.configurationHint(reason: "BadDeviceToken") == nil)
    }
}
