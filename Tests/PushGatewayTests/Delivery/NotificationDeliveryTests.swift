import PushCore
import PushDelivery
import PushPosix
import PushProto
import PushSync
import PushTestSupport
import Testing

@testable import PushGateway

/// A validated Send through ``NotificationDelivery``: room reserved in every app's queue first (all
/// or nothing), each notification handed to its app's client with its slots, and one result per
/// token in request order to the answer.
@Suite("Notification delivery", .timeLimit(.minutes(1)))
struct NotificationDeliveryTests {
    static let token = String(repeating: "ab", count: 32)

    /// Two APNs apps, `a` and `b`, with the given clients.
    struct Rig {
        let a: FakeDeliveryClient
        let b: FakeDeliveryClient
        let live: LiveSettings
        let delivery: NotificationDelivery

        init(
            a: FakeDeliveryClient = FakeDeliveryClient(name: "a"), b: FakeDeliveryClient = FakeDeliveryClient(name: "b")
        ) {
            self.a = a
            self.b = b
            var configuration = GatewayConfiguration()
            configuration.apps = [
                AppConfiguration(name: "a", bundleID: "com.example.a"),
                AppConfiguration(name: "b", bundleID: "com.example.b"),
            ]
            live = LiveSettings(configuration: configuration, clients: ["a": a, "b": b], metrics: nil)
            delivery = NotificationDelivery(
                live: live, queueLimit: 100, events: DeliveryEvents(log: Log(level: .error), logTokens: false))
        }

        /// A validated Send of one notification per entry: its app and its tokens.
        func send(_ notifications: [(app: String, tokens: [String])]) throws -> ValidatedSend {
            var request = PushgateV1.SendRequest()
            request.notifications = notifications.map { entry in
                var n = PushgateV1.Notification()
                n.app = entry.app
                n.tokens = entry.tokens
                var alert = PushgateV1.Alert()
                alert.body = "Hello"
                n.alert = alert
                return n
            }
            let snapshot = live.snapshot
            return try SendRequestValidation.validate(
                request, routes: snapshot.routes, configuration: snapshot.configuration)
        }

        /// Delivers `send` and waits for its response (nil if none came within 10 s).
        func deliver(_ send: consuming ValidatedSend, deadline: UInt64? = nil) async throws
            -> PushgateV1.SendResponse?
        {
            let answer = Locked<PushgateV1.SendResponse?>(nil)
            try delivery.deliver(
                send, deadline: deadline, started: EventLoop.monotonicNow, metrics: nil,
                answer: .response { response in answer.withLock { $0 = response } })
            _ = await eventually { answer.withLock { $0 != nil } }
            return answer.withLock { $0 }
        }
    }

    static func tokens(_ count: Int, offset: Int = 0) -> [String] { TestTokens.hex64(count: count, offset: offset) }

    @Test("one notification: its app's client gets the push for every token, and the answer a result per token")
    func oneNotification() async throws {
        let rig = Rig()
        let response = try #require(await rig.deliver(try rig.send([("a", Self.tokens(3))])))
        #expect(response.results.map(\.token) == Self.tokens(3))
        #expect(response.results.allSatisfy { $0.status == .delivered })
        #expect(response.results.map(\.id) == ["a-0", "a-1", "a-2"])
        #expect(rig.a.sent.count == 1)
        #expect(rig.a.sent.first?.firstSlot == 0)
        guard case .apns(let notification) = rig.a.sent.first?.push else {
            Issue.record("app a's push is not an APNs notification")
            return
        }
        #expect(notification.topic == "com.example.a")
        #expect(rig.b.sent.isEmpty)
        #expect(rig.a.heldRequests == 0, "every answered token gave its room back")
    }

    @Test("several notifications over two apps: slots follow request order, each to its app's client")
    func severalNotifications() async throws {
        let rig = Rig()
        let send = try rig.send([
            ("b", Self.tokens(2)), ("a", Self.tokens(1, offset: 2)), ("b", Self.tokens(3, offset: 3)),
        ])
        let response = try #require(await rig.deliver(send))
        #expect(response.results.map(\.token) == Self.tokens(6))
        #expect(response.results.map(\.id) == ["b-0", "b-1", "a-2", "b-3", "b-4", "b-5"])
        #expect(rig.b.sent.map(\.firstSlot) == [0, 3])
        #expect(rig.b.sent.map(\.notificationIndex) == [0, 2])
        #expect(rig.a.sent.map(\.firstSlot) == [2])
        #expect(rig.a.sent.map(\.notificationIndex) == [1])
    }

    @Test("a full queue refuses the whole Send RESOURCE_EXHAUSTED, and the room taken in other apps is given back")
    func fullQueue() throws {
        let rig = Rig(b: FakeDeliveryClient(name: "b", capacity: 2))
        _ = rig.b.reserve(1)
        let send = try rig.send([("a", Self.tokens(2)), ("b", Self.tokens(2, offset: 2))])
        let refusal = #expect(throws: GRPCStatus.self) {
            try rig.delivery.deliver(
                send, deadline: nil, started: EventLoop.monotonicNow, metrics: nil, answer: .response { _ in })
        }
        #expect(refusal?.code == .resourceExhausted)
        #expect(refusal?.message == "app b already holds 1 notifications (queue_limit 100); retry later")
        #expect(rig.a.heldRequests == 0, "a's reservation was given back")
        #expect(rig.a.sent.isEmpty && rig.b.sent.isEmpty, "nothing was sent")
    }

    @Test(
        "tokens needing more origins than the app may have refuse the Send RESOURCE_EXHAUSTED before any room is taken")
    func originRefusal() throws {
        let rig = Rig(a: FakeDeliveryClient(name: "a", refusal: "TooManyOrigins: max_origins is 1"))
        let send = try rig.send([("a", Self.tokens(2))])
        let refusal = #expect(throws: GRPCStatus.self) {
            try rig.delivery.deliver(
                send, deadline: nil, started: EventLoop.monotonicNow, metrics: nil, answer: .response { _ in })
        }
        #expect(refusal?.code == .resourceExhausted)
        #expect(refusal?.message == "TooManyOrigins: max_origins is 1")
        #expect(rig.a.heldRequests == 0)
        #expect(rig.a.sent.isEmpty)
    }

    @Test("at the deadline the tokens not yet answered are FAILED DeadlineExceeded")
    func deadline() async throws {
        let rig = Rig(a: FakeDeliveryClient(name: "a", answers: false))
        let send = try rig.send([("a", Self.tokens(2)), ("b", Self.tokens(1, offset: 2))])
        let response = try #require(
            await rig.deliver(send, deadline: EventLoop.monotonicNow + 200_000_000))
        #expect(response.results.map(\.token) == Self.tokens(3))
        #expect(response.results.map(\.status) == [.failed, .failed, .delivered])
        #expect(response.results.prefix(2).allSatisfy { $0.reason == "DeadlineExceeded" })
    }

    @Test("shutdown shuts every app's client down")
    func shutdown() {
        let rig = Rig()
        rig.delivery.shutdown()
        #expect(rig.a.isShutDown && rig.b.isShutDown)
    }
}
