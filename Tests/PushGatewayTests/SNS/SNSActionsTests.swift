import PushAWSQuery
import PushCore
import PushStore
import PushTestSupport
import Testing

@testable import PushGateway

/// The SNS actions on a real store (SQLite in a temporary directory), without sockets or
/// signatures: what each answers, and the SNS error each refusal is.
@Suite("SNS actions", .timeLimit(.minutes(1)))
struct SNSActionsTests {
    struct Rig {
        let directory: TemporaryDirectory
        let store: any Store
        let configuration: GatewayConfiguration
        let publish: PublishService

        init() async throws {
            directory = try TemporaryDirectory()
            store = try await SQLiteStore.open(path: directory.path(of: "store.sqlite"))
            var configuration = GatewayConfiguration()
            configuration.apps = [
                AppConfiguration(name: "ios", bundleID: "com.example.ios"),
                AppConfiguration(name: "fire", keys: .adm(AppConfiguration.ADMKeys())),
            ]
            configuration.sns.region = "eu-west-1"
            configuration.sns.accountID = "123456789012"
            self.configuration = configuration
            let live = LiveSettings(configuration: configuration, clients: [:], metrics: nil)
            let fanOut = FanOut(
                store: store, live: live, events: DeliveryEvents(log: Log(level: .error), logTokens: false),
                log: Log(level: .error))
            fanOut.stop()
            publish = PublishService(live: live, store: store, fanOut: fanOut)
        }

        static func run(_ body: (Rig) async throws -> Void) async throws {
            let rig = try await Rig()
            do {
                try await body(rig)
            } catch {
                await rig.store.close()
                rig.directory.remove()
                throw error
            }
            await rig.store.close()
            rig.directory.remove()
        }

        static let admin = Caller(name: "admin", isAdmin: true, apps: .all)

        /// Runs `action` with these parameters (Version added); the XML of its result.
        func run(
            _ action: String, _ parameters: [(String, String)], caller: Caller = Rig.admin
        ) async throws(SNSError) -> String {
            let query = QueryParameters(
                [("Action", action), ("Version", "2010-03-31")] + parameters.map { ($0.0, $0.1) })
            let found = try SNSActions.action(for: query)
            let call = SNSCall(
                action: action, parameters: query, caller: caller, configuration: configuration, store: store,
                publish: publish)
            guard let result = try await found.run(call) else { return "" }
            var xml = XMLWriter()
            result(&xml)
            return String(decoding: xml.bytes, as: UTF8.self)
        }

        /// The error `action` is refused with.
        func refusal(
            _ action: String, _ parameters: [(String, String)], caller: Caller = Rig.admin
        ) async -> SNSError? {
            do {
                _ = try await run(action, parameters, caller: caller)
                return nil
            } catch {
                return error
            }
        }

        /// A new endpoint of the APNs app; its ARN.
        func endpoint(_ token: Int, data: String = "") async throws -> String {
            let xml = try await run(
                "CreatePlatformEndpoint",
                [
                    ("PlatformApplicationArn", "arn:aws:sns:eu-west-1:123456789012:app/APNS/ios"),
                    ("Token", TestTokens.hex64(token)), ("CustomUserData", data),
                ])
            return try #require(SNSActionsTests.element("EndpointArn", in: xml))
        }
    }

    static let app = "arn:aws:sns:eu-west-1:123456789012:app/APNS/ios"
    static let topic = "arn:aws:sns:eu-west-1:123456789012:news"

    static func element(_ name: String, in xml: String) -> String? {
        guard let open = xml.firstRange(of: "<\(name)>"),
            let close = xml[open.upperBound...].firstRange(of: "</\(name)>")
        else { return nil }
        return String(xml[open.upperBound..<close.lowerBound])
    }

    @Test func requestsNameAKnownActionAndVersionAndOnlyItsParameters() async throws {
        try await Rig.run { rig in
            func code(_ pairs: [(String, String)]) -> String? {
                do {
                    _ = try SNSActions.action(for: QueryParameters(pairs))
                    return nil
                } catch { return error.code }
            }
            #expect(code([("Version", "2010-03-31")]) == "MissingAction")
            #expect(code([("Action", "Frobnicate"), ("Version", "2010-03-31")]) == "InvalidAction")
            #expect(code([("Action", "ListTopics")]) == "MissingParameter")
            #expect(code([("Action", "ListTopics"), ("Version", "2012-01-01")]) == "InvalidParameterValue")
            #expect(
                code([("Action", "ListTopics"), ("Version", "2010-03-31"), ("Color", "red")]) == "InvalidParameter")
            #expect(code([("Action", "ListTopics"), ("Version", "2010-03-31"), ("NextToken", "")]) == nil)
            let sms = await rig.refusal("SetSMSAttributes", [])
            #expect(sms?.code == "InvalidAction")
            #expect(sms?.message.contains("SMS") == true)
        }
    }

    @Test func platformApplicationsAreTheConfiguredAppsWithoutCredentials() async throws {
        try await Rig.run { rig in
            let xml = try await rig.run("ListPlatformApplications", [])
            #expect(xml.contains("<PlatformApplicationArn>\(Self.app)</PlatformApplicationArn>"))
            #expect(xml.contains("arn:aws:sns:eu-west-1:123456789012:app/ADM/fire"))
            #expect(xml.contains("<key>ApplePlatformBundleID</key><value>com.example.ios</value>"))
            let one = try await rig.run("GetPlatformApplicationAttributes", [("PlatformApplicationArn", Self.app)])
            #expect(one.contains("<key>Enabled</key><value>true</value>"))
            let wrongPlatform = await rig.refusal(
                "GetPlatformApplicationAttributes",
                [("PlatformApplicationArn", "arn:aws:sns:eu-west-1:123456789012:app/GCM/ios")])
            #expect(wrongPlatform?.code == "NotFound")
            let otherRegion = await rig.refusal(
                "GetPlatformApplicationAttributes",
                [("PlatformApplicationArn", "arn:aws:sns:us-east-1:123456789012:app/APNS/ios")])
            #expect(otherRegion?.code == "InvalidParameter")
        }
    }

    @Test func createPlatformEndpointIsIdempotentAndNamesTheEndpointInTheWay() async throws {
        try await Rig.run { rig in
            let first = try await rig.endpoint(1, data: "alice")
            #expect(first.hasPrefix("arn:aws:sns:eu-west-1:123456789012:endpoint/APNS/ios/"))
            #expect(try await rig.endpoint(1, data: "alice") == first)
            let conflict = await rig.refusal(
                "CreatePlatformEndpoint",
                [("PlatformApplicationArn", Self.app), ("Token", TestTokens.hex64(1)), ("CustomUserData", "bob")])
            #expect(conflict?.code == "InvalidParameter")
            #expect(conflict?.status == 400)
            #expect(conflict?.message.contains(first) == true)
            let badToken = await rig.refusal(
                "CreatePlatformEndpoint", [("PlatformApplicationArn", Self.app), ("Token", "xyz")])
            #expect(badToken?.message.hasPrefix("Invalid parameter: Token") == true)
            let reader = Caller(name: "reader", isAdmin: false, apps: .all)
            let denied = await rig.refusal(
                "CreatePlatformEndpoint", [("PlatformApplicationArn", Self.app), ("Token", TestTokens.hex64(2))],
                caller: reader)
            #expect(denied?.code == "AuthorizationError")
            #expect(denied?.status == 403)
        }
    }

    @Test func endpointAttributesAreReadAndSetAndTheEndpointIsTheRegistrysOwn() async throws {
        try await Rig.run { rig in
            let arn = try await rig.endpoint(3, data: "carol")
            let id = String(arn.split(separator: "/").last!)
            let attributes = try await rig.run("GetEndpointAttributes", [("EndpointArn", arn)])
            #expect(attributes.contains("<key>Enabled</key><value>true</value>"))
            #expect(attributes.contains("<key>CustomUserData</key><value>carol</value>"))
            _ = try await rig.run(
                "SetEndpointAttributes",
                [("EndpointArn", arn), ("Attributes.entry.1.key", "Enabled"), ("Attributes.entry.1.value", "false")])
            #expect(try await rig.store.endpoint(id: id).enabled == false)
            let unknown = await rig.refusal(
                "SetEndpointAttributes",
                [("EndpointArn", arn), ("Attributes.entry.1.key", "Colour"), ("Attributes.entry.1.value", "x")])
            #expect(unknown?.code == "InvalidParameter")
            _ = try await rig.run("DeleteEndpoint", [("EndpointArn", arn)])
            _ = try await rig.run("DeleteEndpoint", [("EndpointArn", arn)])  // idempotent
            #expect(await rig.refusal("GetEndpointAttributes", [("EndpointArn", arn)])?.code == "NotFound")
        }
    }

    @Test func topicsAndSubscriptionsFollowSNSRules() async throws {
        try await Rig.run { rig in
            let created = try await rig.run("CreateTopic", [("Name", "news")])
            #expect(Self.element("TopicArn", in: created) == Self.topic)
            #expect(try await rig.run("CreateTopic", [("Name", "news")]) == created)
            #expect(await rig.refusal("CreateTopic", [("Name", "orders.fifo")])?.code == "InvalidParameter")
            let endpoint = try await rig.endpoint(4)
            let policy = #"{"tier":["gold"]}"#
            let subscribed = try await rig.run(
                "Subscribe",
                [
                    ("TopicArn", Self.topic), ("Protocol", "application"), ("Endpoint", endpoint),
                    ("Attributes.entry.1.key", "FilterPolicy"), ("Attributes.entry.1.value", policy),
                ])
            let arn = try #require(Self.element("SubscriptionArn", in: subscribed))
            #expect(arn.hasPrefix(Self.topic + ":"))
            // Again without attributes: the same ARN (its policy stays); with another policy: refused.
            let again = try await rig.run(
                "Subscribe", [("TopicArn", Self.topic), ("Protocol", "application"), ("Endpoint", endpoint)])
            #expect(Self.element("SubscriptionArn", in: again) == arn)
            let other = await rig.refusal(
                "Subscribe",
                [
                    ("TopicArn", Self.topic), ("Protocol", "application"), ("Endpoint", endpoint),
                    ("Attributes.entry.1.key", "FilterPolicy"), ("Attributes.entry.1.value", #"{"tier":["silver"]}"#),
                ])
            #expect(other?.code == "InvalidParameter")
            let email = await rig.refusal(
                "Subscribe", [("TopicArn", Self.topic), ("Protocol", "email"), ("Endpoint", "a@example.com")])
            #expect(email?.message.contains("Protocol") == true)
            let attributes = try await rig.run("GetSubscriptionAttributes", [("SubscriptionArn", arn)])
            #expect(attributes.contains("<key>Endpoint</key><value>\(endpoint)</value>"))
            #expect(attributes.contains("<key>FilterPolicyScope</key><value>MessageAttributes</value>"))
            let byTopic = try await rig.run("ListSubscriptionsByTopic", [("TopicArn", Self.topic)])
            #expect(byTopic.contains("<SubscriptionArn>\(arn)</SubscriptionArn>"))
            _ = try await rig.run("Unsubscribe", [("SubscriptionArn", arn)])
            #expect(await rig.refusal("GetSubscriptionAttributes", [("SubscriptionArn", arn)])?.code == "NotFound")
            let missing = await rig.refusal("ListSubscriptionsByTopic", [("TopicArn", Self.topic + "x")])
            #expect(missing?.code == "NotFound")
        }
    }

    @Test func aMessageBodyScopeIsKeptAndItsPolicyReadNested() async throws {
        try await Rig.run { rig in
            _ = try await rig.run("CreateTopic", [("Name", "news")])
            let endpoint = try await rig.endpoint(6)
            let nested = #"{"order": {"status": ["paid"]}}"#
            let onAttributes = await rig.refusal(
                "Subscribe",
                [
                    ("TopicArn", Self.topic), ("Protocol", "application"), ("Endpoint", endpoint),
                    ("Attributes.entry.1.key", "FilterPolicy"), ("Attributes.entry.1.value", nested),
                ])
            #expect(onAttributes?.code == "InvalidParameter")  // nesting needs the MessageBody scope
            let subscribed = try await rig.run(
                "Subscribe",
                [
                    ("TopicArn", Self.topic), ("Protocol", "application"), ("Endpoint", endpoint),
                    ("Attributes.entry.1.key", "FilterPolicy"), ("Attributes.entry.1.value", nested),
                    ("Attributes.entry.2.key", "FilterPolicyScope"), ("Attributes.entry.2.value", "MessageBody"),
                ])
            let arn = try #require(Self.element("SubscriptionArn", in: subscribed))
            let attributes = try await rig.run("GetSubscriptionAttributes", [("SubscriptionArn", arn)])
            #expect(attributes.contains("<key>FilterPolicyScope</key><value>MessageBody</value>"))
            let id = String(arn.split(separator: ":").last!)
            #expect(try await rig.store.subscription(id: id).filterPolicyScope == SNSFilterScope.messageBody)
            // Back to attributes: the nested policy no longer reads, so the change is refused.
            let back = await rig.refusal(
                "SetSubscriptionAttributes",
                [
                    ("SubscriptionArn", arn), ("AttributeName", "FilterPolicyScope"),
                    ("AttributeValue", "MessageAttributes"),
                ])
            #expect(back?.code == "InvalidParameter")
            _ = try await rig.run(
                "SetSubscriptionAttributes",
                [("SubscriptionArn", arn), ("AttributeName", "FilterPolicy"), ("AttributeValue", #"{"kind": ["x"]}"#)])
            _ = try await rig.run(
                "SetSubscriptionAttributes",
                [
                    ("SubscriptionArn", arn), ("AttributeName", "FilterPolicyScope"),
                    ("AttributeValue", "MessageAttributes"),
                ])
            #expect(try await rig.store.subscription(id: id).filterPolicyScope == SNSFilterScope.messageAttributes)
        }
    }

    @Test func publishIsRefusedWithSNSsCodes() async throws {
        try await Rig.run { rig in
            let endpoint = try await rig.endpoint(5)
            let message = try await rig.run("Publish", [("TargetArn", endpoint), ("Message", "hello")])
            #expect(Self.element("MessageId", in: message)?.isEmpty == false)
            let id = String(endpoint.split(separator: "/").last!)
            try await rig.store.disableEndpoint(id: id, reason: "Unregistered")
            let disabled = await rig.refusal("Publish", [("TargetArn", endpoint), ("Message", "hello")])
            #expect(disabled?.code == "EndpointDisabled")
            #expect(disabled?.status == 400)
            #expect(
                await rig.refusal("Publish", [("PhoneNumber", "+15555550100"), ("Message", "x")])?.code
                    == "InvalidParameter")
            _ = try await rig.run("CreateTopic", [("Name", "news")])
            // A standard topic takes MessageGroupId (it reaches no application endpoint), not a deduplication id.
            _ = try await rig.run("Publish", [("TopicArn", Self.topic), ("Message", "x"), ("MessageGroupId", "g")])
            let dedup = await rig.refusal(
                "Publish", [("TopicArn", Self.topic), ("Message", "x"), ("MessageDeduplicationId", "d")])
            #expect(dedup?.message.contains("MessageDeduplicationId") == true)
            let binary = await rig.refusal(
                "Publish",
                [
                    ("TopicArn", Self.topic), ("Message", "x"), ("MessageAttributes.entry.1.Name", "blob"),
                    ("MessageAttributes.entry.1.Value.DataType", "Binary"),
                    ("MessageAttributes.entry.1.Value.BinaryValue", "AAEC"),
                ])
            #expect(binary?.code == "InvalidParameter")
            let number = await rig.refusal(
                "Publish",
                [
                    ("TopicArn", Self.topic), ("Message", "x"), ("MessageAttributes.entry.1.Name", "n"),
                    ("MessageAttributes.entry.1.Value.DataType", "Number"),
                    ("MessageAttributes.entry.1.Value.StringValue", "ten"),
                ])
            #expect(number?.message.contains("number") == true)
            let json = await rig.refusal(
                "Publish", [("TopicArn", Self.topic), ("Message", #"{"APNS":"{}"}"#), ("MessageStructure", "json")])
            #expect(json?.code == "InvalidParameter")  // a topic's json message needs "default"
            let reader = Caller(name: "reader", isAdmin: false, apps: .all)
            let denied = await rig.refusal("Publish", [("TopicArn", Self.topic), ("Message", "x")], caller: reader)
            #expect(denied?.code == "AuthorizationError")
        }
    }

    @Test func publishBatchAnswersEachEntryAndRefusesABadBatchWhole() async throws {
        try await Rig.run { rig in
            _ = try await rig.run("CreateTopic", [("Name", "news")])
            func entry(_ n: Int, _ id: String, _ message: String) -> [(String, String)] {
                [
                    ("PublishBatchRequestEntries.member.\(n).Id", id),
                    ("PublishBatchRequestEntries.member.\(n).Message", message),
                ]
            }
            let xml = try await rig.run(
                "PublishBatch",
                [("TopicArn", Self.topic)] + entry(1, "a", "one") + entry(2, "b", #"{"x":1}"#)
                    + [("PublishBatchRequestEntries.member.2.MessageStructure", "json")])
            #expect(xml.contains("<Successful><member><Id>a</Id><MessageId>"))
            #expect(xml.contains("<Failed><member><Id>b</Id><Code>InvalidParameter</Code>"))
            #expect(xml.contains("<SenderFault>true</SenderFault>"))
            let empty = await rig.refusal("PublishBatch", [("TopicArn", Self.topic)])
            #expect(empty?.code == "EmptyBatchRequest")
            let eleven = (1...11).flatMap { entry($0, "e\($0)", "m") }
            #expect(
                await rig.refusal("PublishBatch", [("TopicArn", Self.topic)] + eleven)?.code
                    == "TooManyEntriesInBatchRequest")
            let twice = entry(1, "same", "m") + entry(2, "same", "m")
            #expect(
                await rig.refusal("PublishBatch", [("TopicArn", Self.topic)] + twice)?.code
                    == "BatchEntryIdsNotDistinct")
            #expect(
                await rig.refusal("PublishBatch", [("TopicArn", Self.topic)] + entry(1, "no spaces", "m"))?.code
                    == "InvalidBatchEntryId")
            let big = String(repeating: "x", count: 200_000)
            #expect(
                await rig.refusal("PublishBatch", [("TopicArn", Self.topic)] + entry(1, "a", big) + entry(2, "b", big))?
                    .code
                    == "BatchRequestTooLong")
        }
    }
}
