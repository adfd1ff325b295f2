import PushCore
import PushStore
import Testing

@testable import PushGateway

/// Which recipients a published message goes to: filter policies on attributes and, with the
/// MessageBody scope, on the body each platform is sent.
@Suite("Message plan: filter policies")
struct MessagePlanTests {
    static let apps: [String: AppConfiguration] = [
        "ios": AppConfiguration(name: "ios", bundleID: "com.example.ios"),
        "fire": AppConfiguration(name: "fire", keys: .adm(AppConfiguration.ADMKeys())),
    ]

    static func target(
        app: String, policy: String, scope: String = SNSFilterScope.messageAttributes, id: String = "e"
    ) -> FanOutTarget {
        FanOutTarget(
            subscription: SubscriptionRecord(
                id: "s", topic: "t", endpointID: id, filterPolicyJSON: policy, filterPolicyScope: scope),
            endpoint: EndpointRecord(
                id: id, app: app, token: String(repeating: "a", count: 64), enabled: true, customUserData: "",
                createdAt: 0, disabledReason: ""),
            position: 0)
    }

    static func plan(_ message: String, structure: String = "", attributes: [String: String] = [:]) throws
        -> MessagePlan
    {
        try MessagePlan(
            MessageRecord(
                id: "m", topic: "t", message: message, messageStructure: structure, attributes: attributes,
                publishedAt: 0),
            target: .topic, apps: apps)
    }

    @Test func attributePoliciesReadTheAttributes() throws {
        var plan = try Self.plan(#"{"tier": "silver"}"#, attributes: ["tier": "gold"])
        #expect(plan.decide(Self.target(app: "ios", policy: #"{"tier": ["gold"]}"#)) == .send)
        #expect(plan.decide(Self.target(app: "ios", policy: #"{"tier": ["silver"]}"#)) == .skip)
    }

    @Test func bodyPoliciesReadTheBody() throws {
        var plan = try Self.plan(#"{"tier": "silver"}"#, attributes: ["tier": "gold"])
        let body = SNSFilterScope.messageBody
        #expect(plan.decide(Self.target(app: "ios", policy: #"{"tier": ["silver"]}"#, scope: body)) == .send)
        #expect(plan.decide(Self.target(app: "ios", policy: #"{"tier": ["gold"]}"#, scope: body)) == .skip)
    }

    @Test func aJSONMessageOffersEachPlatformItsOwnBody() throws {
        let message =
            #"{"default": "{\"kind\": \"news\"}", "APNS": "{\"aps\": {\"alert\": \"hi\"}, \"kind\": \"alert\"}"}"#
        var plan = try Self.plan(message, structure: "json")
        let body = SNSFilterScope.messageBody
        #expect(plan.decide(Self.target(app: "ios", policy: #"{"kind": ["alert"]}"#, scope: body)) == .send)
        #expect(plan.decide(Self.target(app: "fire", policy: #"{"kind": ["alert"]}"#, scope: body)) == .skip)
        #expect(plan.decide(Self.target(app: "fire", policy: #"{"kind": ["news"]}"#, scope: body)) == .send)
    }
}
