import PushCore
import Testing

@testable import PushProto

@Suite("A SendRequest read where protobuf-c unpacked it")
struct SendRequestMessageTests {
    /// A notification with every field set, each to a value of its own.
    static let everyField: PushgateV1.Notification = {
        var n = PushgateV1.Notification()
        n.app = "demo"
        n.tokens = ["aa", "bb"]
        var alert = PushgateV1.Alert()
        alert.title = "Grüße 👋"
        alert.subtitle = "sub"
        alert.body = "body"
        alert.launchImage = "launch.png"
        alert.titleLocKey = "TK"
        alert.titleLocArgs = ["t1", "t2"]
        alert.locKey = "LK"
        alert.locArgs = ["l1"]
        alert.image = "https://example.com/i.png"
        alert.actionLocKey = "AK"
        n.alert = alert
        n.badge = 0
        n.sound = "ping.aiff"
        n.category = "cat"
        n.threadID = "thread"
        n.contentAvailable = true
        n.mutableContent = true
        n.interruptionLevel = "time-sensitive"
        n.dataJSON = #"{"k":1}"#
        n.payloadJSON = #"{"aps":{}}"#
        n.pushType = .init(PushType.liveactivity)
        n.priority = 5
        n.expiration = 1_900_000_000
        n.collapseID = "c1"
        n.topic = "com.example.app.push-type.liveactivity"
        n.id = "123e4567-e89b-12d3-a456-426614174000"
        n.urgency = "high"
        var live = PushgateV1.LiveActivity()
        live.event = "update"
        live.contentStateJSON = #"{"s":2}"#
        live.timestamp = 1_800_000_000
        live.staleDate = 1_800_000_600
        live.dismissalDate = 1_800_000_900
        live.relevanceScore = 0.5
        live.attributesType = "Attrs"
        live.attributesJSON = #"{"a":3}"#
        live.inputPushToken = true
        live.inputPushChannel = "chan"
        n.liveActivity = live
        var critical = PushgateV1.CriticalSound()
        critical.volume = 0.25
        n.criticalSound = critical
        var fcm = PushgateV1.FCMOptions()
        fcm.androidIcon = "icon"
        fcm.androidColor = "#ff0000"
        fcm.androidTag = "tag"
        fcm.androidChannelID = "channel"
        fcm.analyticsLabel = "label"
        n.fcm = fcm
        return n
    }()

    static let everyFieldDomain = NotificationRequest(
        app: "demo", tokens: ["aa", "bb"],
        alert: .init(
            title: "Grüße 👋", subtitle: "sub", body: "body", launchImage: "launch.png", titleLocKey: "TK",
            titleLocArgs: ["t1", "t2"], locKey: "LK", locArgs: ["l1"], image: "https://example.com/i.png",
            actionLocKey: "AK"),
        badge: 0, sound: "ping.aiff", category: "cat", threadID: "thread", contentAvailable: true,
        mutableContent: true, interruptionLevel: "time-sensitive", dataJSON: #"{"k":1}"#,
        payloadJSON: #"{"aps":{}}"#, pushType: .liveactivity, priority: 5, expiration: 1_900_000_000,
        collapseID: "c1", topic: "com.example.app.push-type.liveactivity",
        id: "123e4567-e89b-12d3-a456-426614174000", urgency: "high",
        liveActivity: .init(
            event: "update", contentStateJSON: #"{"s":2}"#, timestamp: 1_800_000_000, staleDate: 1_800_000_600,
            dismissalDate: 1_800_000_900, relevanceScore: 0.5, attributesType: "Attrs", attributesJSON: #"{"a":3}"#,
            inputPushToken: true, inputPushChannel: "chan"),
        criticalSound: .init(volume: 0.25),
        fcm: .init(
            androidIcon: "icon", androidColor: "#ff0000", androidTag: "tag", androidChannelID: "channel",
            analyticsLabel: "label"))

    /// Notification `index` of `bytes` mapped to its domain value, or the status it gives.
    static func domain(_ bytes: [UInt8], _ index: Int = 0) throws(GRPCStatus) -> NotificationRequest? {
        try SendRequestMessage.unpack(bytes) { (request) throws(GRPCStatus) in
            var n = NotificationRequest()
            return try request.assign(index, to: &n) ? n : nil
        }
    }

    @Test("every field maps from the wire to the domain, received or built in Swift")
    func everyFieldMaps() throws {
        var request = PushgateV1.SendRequest()
        var sparse = PushgateV1.Notification()
        sparse.app = "other"
        sparse.tokens = ["cc"]
        request.notifications = [Self.everyField, sparse]
        let bytes = request.serializedBytes()
        #expect(try Self.domain(bytes, 0) == Self.everyFieldDomain)
        // Unset fields keep init()'s defaults: no alert, no badge (0 is a badge), no sub-messages.
        #expect(try Self.domain(bytes, 1) == NotificationRequest(app: "other", tokens: ["cc"]))
        #expect(NotificationRequest(proto: Self.everyField) == Self.everyFieldDomain)
        try SendRequestMessage.with(request) { (message) throws(GRPCStatus) in
            #expect(message.count == 2)
            #expect(message.tokenCount(0) == 2 && message.tokenCount(1) == 1)
            #expect(try message.app(1) == "other")
            var n = NotificationRequest()
            #expect(try message.assign(0, to: &n))
            #expect(n == Self.everyFieldDomain)
        }
    }

    @Test("an empty request has no notifications; one that does not unpack is INVALID_ARGUMENT")
    func emptyAndGarbage() throws {
        #expect(try SendRequestMessage.unpack([]) { (request) throws(GRPCStatus) in request.count } == 0)
        for bytes: [UInt8] in [[0xff, 0xff, 0xff], [0x0a, 0x05, 0x01], [0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f]] {
            #expect(
                throws: GRPCStatus(.invalidArgument, "the request is not a valid pushgate.v1.SendRequest message")
            ) { try SendRequestMessage.unpack(bytes) { (request) throws(GRPCStatus) in request.count } }
        }
    }

    @Test("a string that is not UTF-8 is INVALID_ARGUMENT naming its field; an unknown push type is no value")
    func refusals() throws {
        func request(app: [UInt8] = Array("demo".utf8), title: [UInt8], pushType: UInt8? = nil) -> [UInt8] {
            let alert: [UInt8] = [0x0a, UInt8(title.count)] + title
            var notification: [UInt8] = [0x0a, UInt8(app.count)] + app + [0x1a, UInt8(alert.count)] + alert
            // push_type is field 13 (varint).
            if let pushType { notification += [0x68, pushType] }
            return [0x0a, UInt8(notification.count)] + notification
        }
        let titleError = GRPCStatus(
            .invalidArgument,
            "the request is not a valid pushgate.v1.SendRequest message: string field title is not valid UTF-8")
        for bad: [UInt8] in [[0xff], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80]] {
            #expect(throws: titleError) { try Self.domain(request(title: bad)) }
        }
        #expect(
            throws: GRPCStatus(
                .invalidArgument,
                "the request is not a valid pushgate.v1.SendRequest message: string field app is not valid UTF-8")
        ) {
            try SendRequestMessage.unpack(request(app: [0x64, 0xc3], title: [0x78])) {
                (request) throws(GRPCStatus) in try request.app(0)
            }
        }
        #expect(try Self.domain(request(title: [0x78], pushType: 99)) == nil)
        #expect(
            try SendRequestMessage.unpack(request(title: [0x78], pushType: 99)) { (request) throws(GRPCStatus) in
                request.pushTypeNumber(0)
            } == 99)
        #expect(try Self.domain(request(title: [0x78], pushType: 1))?.pushType == PushType.allCases[0])
    }
}
