import PushCore
import PushProto
import PushStore
import PushTestSupport
import Testing

@testable import PushGateway

/// Publish and GetMessage against a real store (SQLite in a temporary directory): who may publish
/// where, what is refused before anything is committed (the check of every payload the message
/// becomes on the platforms it reaches), and what is committed.
@Suite("Publish service", .timeLimit(.minutes(1)))
struct PublishServiceTests {
    /// An APNs app `ios` and an ADM app `fire`, a store, and a publish service whose fan-out is
    /// stopped (what is committed stays as it is).
    struct Rig {
        let directory: TemporaryDirectory
        let store: any Store
        let service: PublishService

        init() async throws {
            directory = try TemporaryDirectory()
            store = try await SQLiteStore.open(path: directory.path(of: "store.sqlite"))
            var configuration = GatewayConfiguration()
            configuration.apps = [
                AppConfiguration(name: "ios", bundleID: "com.example.ios"),
                AppConfiguration(name: "fire", keys: .adm(AppConfiguration.ADMKeys())),
            ]
            let live = LiveSettings(configuration: configuration, clients: [:], metrics: nil)
            let fanOut = FanOut(
                store: store, live: live, events: DeliveryEvents(log: Log(level: .error), logTokens: false),
                log: Log(level: .error))
            fanOut.stop()
            service = PublishService(live: live, store: store, fanOut: fanOut)
        }

        /// Runs `body` on a new rig, closed and removed afterwards whatever happens.
        static func run(_ body: (Rig) async throws -> Void) async throws {
            let rig = try await Rig()
            do {
                try await body(rig)
            } catch {
                await rig.close()
                throw error
            }
            await rig.close()
        }

        func close() async {
            await store.close()
            directory.remove()
        }

        /// A new enabled endpoint of `app`; its id.
        func endpoint(app: String, token: Int = 1) async throws -> String {
            try await store.createEndpoint(
                app: app, normalizedToken: TestTokens.hex64(token), customUserData: "", now: 0
            ).endpoint.id
        }

        /// The status Publish answers `request` with, or nil when it is accepted.
        func refusal(_ request: PushgateV1.PublishRequest, caller: Caller = .admin) async -> GRPCStatus? {
            do {
                _ = try await service.publish(request, caller: caller)
                return nil
            } catch {
                return error
            }
        }
    }

    static func request(
        topic: String = "", endpointID: String = "", message: String = "hello", json: Bool = false,
        attributes: [String: String] = [:]
    ) -> PushgateV1.PublishRequest {
        var request = PushgateV1.PublishRequest()
        request.topic = topic
        request.endpointID = endpointID
        request.message = message
        request.messageStructure = json ? "json" : ""
        request.attributes = attributes
        return request
    }

    @Test("a publish to an endpoint is committed as sent and answered with its id; GetMessage reads it back")
    func committed() async throws {
        try await Rig.run { rig in
            let endpoint = try await rig.endpoint(app: "ios")
            let request = Self.request(
                endpointID: endpoint, message: #"{"default":"hi","APNS":"{\"aps\":{\"alert\":\"hey\"}}"}"#, json: true,
                attributes: ["AWS.SNS.MOBILE.APNS.TTL": "60"])
            let response = try await rig.service.publish(request, caller: .admin)
            #expect(response.messageID.count == 36)
            #expect(response.messageID.split(separator: "-").map(\.count) == [8, 4, 4, 4, 12])
            let stored = try await rig.store.message(id: response.messageID)
            #expect(stored.endpointID == endpoint)
            #expect(stored.topic == nil)
            #expect(stored.message == request.message)
            #expect(stored.messageStructure == "json")
            #expect(stored.attributes == ["AWS.SNS.MOBILE.APNS.TTL": "60"])

            var get = PushgateV1.GetMessageRequest()
            get.messageID = response.messageID
            let message = try await rig.service.message(get)
            #expect(message.messageID == response.messageID)
            #expect(message.publishedAt == stored.publishedAt)
        }
    }

    @Test("exactly one of topic and endpoint_id; a topic must exist and needs an admin key")
    func targets() async throws {
        try await Rig.run { rig in
            let endpoint = try await rig.endpoint(app: "ios")
            let both = await rig.refusal(Self.request(topic: "news", endpointID: endpoint))
            #expect(both == GRPCStatus(.invalidArgument, "topic, endpoint_id, user_id: set exactly one of them"))
            #expect(await rig.refusal(Self.request()) == both)

            let sender = Caller(name: "sender", isAdmin: false, apps: .all)
            let notAdmin = await rig.refusal(Self.request(topic: "news"), caller: sender)
            #expect(notAdmin?.code == .permissionDenied)
            #expect(notAdmin?.message.hasPrefix(#"topic: key "sender" may not publish to a topic"#) == true)

            #expect(await rig.refusal(Self.request(topic: "news")) == GRPCStatus(.notFound, #"topic: no topic "news""#))
            _ = try await rig.store.createTopic(name: "news")
            #expect(await rig.refusal(Self.request(topic: "news")) == nil)
        }
    }

    @Test("an endpoint must be enabled, of a configured app the key may send for")
    func endpoints() async throws {
        try await Rig.run { rig in
            let endpoint = try await rig.endpoint(app: "ios")
            let other = Caller(name: "other", isAdmin: false, apps: .only(["fire"]))
            let denied = await rig.refusal(Self.request(endpointID: endpoint), caller: other)
            #expect(denied == GRPCStatus(.permissionDenied, #"endpoint_id: key "other" may not send for app "ios""#))

            try await rig.store.disableEndpoint(id: endpoint, reason: "Unregistered")
            #expect(
                await rig.refusal(Self.request(endpointID: endpoint))
                    == GRPCStatus(
                        .failedPrecondition,
                        "endpoint_id: EndpointDisabled: endpoint \(endpoint) is disabled (Unregistered)"))

            let gone = try await rig.endpoint(app: "watch", token: 2)
            #expect(
                await rig.refusal(Self.request(endpointID: gone))
                    == GRPCStatus(.failedPrecondition, #"endpoint_id: the endpoint's app "watch" is not configured"#))
        }
    }

    @Test("the payload of every platform a publish reaches is checked before it is committed")
    func payloadsChecked() async throws {
        try await Rig.run { rig in
            _ = try await rig.store.createTopic(name: "news")
            let ios = try await rig.endpoint(app: "ios")
            let fire = try await rig.endpoint(app: "fire", token: 2)

            // 5,000 bytes of text: over APNs's 4 KB, within ADM's 6 KB.
            let long = String(repeating: "x", count: 5000)
            let tooLongForAPNs = GRPCStatus(
                .invalidArgument,
                "message: the APNs payload for 'APNS' is 5020 bytes, over the limit of 4096 bytes for push type alert")
            #expect(await rig.refusal(Self.request(endpointID: ios, message: long)) == tooLongForAPNs)
            #expect(await rig.refusal(Self.request(topic: "news", message: long)) == tooLongForAPNs)
            #expect(await rig.refusal(Self.request(endpointID: fire, message: long)) == nil)

            // APNs's rules on the attributes, for APNs recipients only.
            let background = ["AWS.SNS.MOBILE.APNS.PUSH_TYPE": "background", "AWS.SNS.MOBILE.APNS.PRIORITY": "10"]
            let priority = GRPCStatus(
                .invalidArgument,
                #"attributes["AWS.SNS.MOBILE.APNS.PRIORITY"]: priority 10 is not allowed for background pushes"#)
            #expect(await rig.refusal(Self.request(endpointID: ios, attributes: background)) == priority)
            #expect(await rig.refusal(Self.request(topic: "news", attributes: background)) == priority)
            #expect(await rig.refusal(Self.request(endpointID: fire, attributes: background)) == nil)

            // An MDM push names its topic; any other default topic is the app's bundle id.
            let mdm = ["AWS.SNS.MOBILE.APNS.PUSH_TYPE": "mdm"]
            #expect(
                await rig.refusal(Self.request(endpointID: ios, attributes: mdm))
                    == GRPCStatus(
                        .invalidArgument,
                        #"attributes["AWS.SNS.MOBILE.APNS.TOPIC"]: must be set for push type mdm (the MDM certificate's UID)"#
                    ))
            let mdmTopic = mdm.merging(["AWS.SNS.MOBILE.APNS.TOPIC": "com.apple.mgmt.External.1"]) { $1 }
            #expect(await rig.refusal(Self.request(endpointID: ios, attributes: mdmTopic)) == nil)

            // Over ADM's 6 KB as well: refused for the ADM endpoint, naming the message.
            let adm = await rig.refusal(Self.request(endpointID: fire, message: String(repeating: "x", count: 7000)))
            #expect(adm?.code == .invalidArgument)
            #expect(adm?.message.hasPrefix("message: ") == true, "\(String(describing: adm))")
        }
    }

    @Test("GetMessage needs a message_id and answers NOT_FOUND for an unknown one")
    func getMessage() async throws {
        try await Rig.run { rig in
            await #expect(throws: GRPCStatus(.invalidArgument, "message_id: required")) {
                try await rig.service.message(PushgateV1.GetMessageRequest())
            }
            var get = PushgateV1.GetMessageRequest()
            get.messageID = "00000000-0000-4000-8000-000000000000"
            let missing = await #expect(throws: GRPCStatus.self) { try await rig.service.message(get) }
            #expect(missing?.code == .notFound)
        }
    }

    @Test("deliver_at: 0 or in the future within fanout.max_schedule_days; max_per_second not negative")
    func scheduleAndRate() async throws {
        try await Rig.run { rig in
            let endpoint = try await rig.endpoint(app: "ios")
            var request = Self.request(endpointID: endpoint)
            let now = unixMilliseconds()
            request.deliverAt = now - 1
            #expect(await rig.refusal(request)?.message.hasPrefix("deliver_at: ") == true)
            request.deliverAt = now + 31 * 86_400_000
            let tooFar = await rig.refusal(request)
            #expect(tooFar?.code == .invalidArgument)
            #expect(tooFar?.message.contains("more than 30 days ahead (fanout.max_schedule_days") == true)
            request.deliverAt = now + 60_000
            request.maxPerSecond = -1
            let rate = await rig.refusal(request)
            #expect(rate?.code == .invalidArgument && rate?.message.hasPrefix("max_per_second: ") == true)
            request.maxPerSecond = 5
            let response = try await rig.service.publish(request, caller: .admin)
            let stored = try await rig.store.message(id: response.messageID)
            #expect(stored.state == .scheduled && stored.deliverAt == request.deliverAt && stored.maxPerSecond == 5)
        }
    }

    @Test("a user publish: the user's endpoints in the key's apps; none there is NOT_FOUND; user_id checked")
    func userTarget() async throws {
        try await Rig.run { rig in
            _ = try await rig.store.createEndpoint(
                app: "fire", normalizedToken: "amzn1.adm-registration.v3.x", customUserData: "", userID: "u1",
                enabled: nil, now: 0)
            var request = Self.request()
            request.userID = "u1"
            let both = await rig.refusal(
                {
                    var r = request
                    r.topic = "news"
                    return r
                }())
            #expect(both?.message == "topic, endpoint_id, user_id: set exactly one of them")
            let iosOnly = Caller(name: "ios-key", isAdmin: false, apps: .only(["ios"]))
            let none = await rig.refusal(request, caller: iosOnly)
            #expect(
                none?.code == .notFound && none?.message == "user_id: user \"u1\" has no endpoints in the key's apps")
            request.userID = String(repeating: "u", count: 257)
            #expect(await rig.refusal(request)?.message == "user_id: 257 bytes, over the limit of 256 bytes")
            request.userID = "u1"
            let fireKey = Caller(name: "fire-key", isAdmin: false, apps: .only(["fire", "ios"]))
            let response = try await rig.service.publish(request, caller: fireKey)
            let stored = try await rig.store.message(id: response.messageID)
            #expect(stored.target == .user("u1", apps: ["fire", "ios"]))

            // Cancelling: keys that could have published it; a finished message is FAILED_PRECONDITION.
            var cancel = PushgateV1.CancelMessageRequest()
            cancel.messageID = response.messageID
            await #expect(throws: GRPCStatus.self) { _ = try await rig.service.cancel(cancel, caller: iosOnly) }
            let cancelled = try await rig.service.cancel(cancel, caller: fireKey)
            #expect(cancelled.state == .cancelled && cancelled.cancelled == 1 && cancelled.userID == "u1")
            // A key for every app (not admin) publishes to every app, and may cancel that.
            let everyApp = Caller(name: "every-app", isAdmin: false, apps: .all)
            request.userID = "u1"
            var mine = PushgateV1.CancelMessageRequest()
            mine.messageID = try await rig.service.publish(request, caller: everyApp).messageID
            #expect(try await rig.store.message(id: mine.messageID).apps == [])
            await #expect(throws: GRPCStatus.self) { _ = try await rig.service.cancel(mine, caller: fireKey) }
            #expect(try await rig.service.cancel(mine, caller: everyApp).state == .cancelled)
            do {
                _ = try await rig.service.cancel(cancel, caller: .admin)
                Issue.record("a cancelled message was cancelled again")
            } catch let error as GRPCStatus {
                #expect(error.code == .failedPrecondition)
            }
        }
    }
}

extension Caller {
    static let admin = Caller(name: "admin", isAdmin: true, apps: .all)
}
