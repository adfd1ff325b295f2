import Testing

@testable import PushCore

/// Live Activity pushes against the payloads Apple documents ("Starting and updating Live
/// Activities with ActivityKit push notifications"), compared member by member whatever the key
/// order, and every refusal naming its field.
@Suite("Live Activity payloads")
struct LiveActivityPayloadTests {
    static let token = String(repeating: "ab", count: 32)
    static let now: Int64 = 1_685_952_000

    func prepare(_ n: NotificationRequest) -> Result<PreparedNotification, ValidationError> {
        var n = n
        n.tokens = [Self.token]
        return NotificationValidator.prepare(n, at: "notifications[0]", bundleID: "com.example.rangers", now: Self.now)
    }

    func payload(_ n: NotificationRequest) throws -> JSONValue {
        Self.sorted(try JSONParser.parse(try prepare(n).get().payload))
    }

    func error(_ n: NotificationRequest) -> String? {
        if case .failure(let error) = prepare(n) { return error.description }
        return nil
    }

    /// Objects with their members in key order, so two payloads compare by content.
    static func sorted(_ value: JSONValue) -> JSONValue {
        switch value {
        case .object(let members): .object(members.map { ($0.0, sorted($0.1)) }.sorted { $0.0 < $1.0 })
        case .array(let items): .array(items.map(sorted))
        default: value
        }
    }

    static func apple(_ json: String) throws -> JSONValue { sorted(try JSONParser.parse(json.utf8)) }

    @Test("update with a localized alert and a sound: Apple's example")
    func update() throws {
        let n = NotificationRequest(
            alert: .init(
                titleLocKey: "%@ is on an adventure!", titleLocArgs: ["Power Panda"], locKey: "%@ found a sword!",
                locArgs: ["Power Panda"]),
            sound: "chime.aiff",
            liveActivity: .init(
                event: "update",
                contentStateJSON: #"{"currentHealthLevel": 0.941, "eventDescription": "Power Panda found a sword!"}"#))
        #expect(
            try payload(n)
                == Self.apple(
                    #"""
                    {"aps": {"timestamp": 1685952000, "event": "update",
                             "content-state": {"currentHealthLevel": 0.941, "eventDescription": "Power Panda found a sword!"},
                             "alert": {"title": {"loc-key": "%@ is on an adventure!", "loc-args": ["Power Panda"]},
                                       "body": {"loc-key": "%@ found a sword!", "loc-args": ["Power Panda"]},
                                       "sound": "chime.aiff"}}}
                    """#))
        let prepared = try prepare(n).get()
        #expect(prepared.pushType == .liveactivity)
        #expect(prepared.topic == "com.example.rangers.push-type.liveactivity")
        #expect(prepared.priority == 10)
    }

    @Test("push-to-start with attributes and an alert: Apple's example")
    func start() throws {
        let n = NotificationRequest(
            alert: .init(title: "Power Panda is on an adventure!", body: "Adventure has begun!"), sound: "default",
            liveActivity: .init(
                event: "start",
                contentStateJSON: #"{"currentHealthLevel": 100, "eventDescription": "Adventure has begun!"}"#,
                timestamp: 1_705_560_370, attributesType: "AdventureAttributes",
                attributesJSON: #"{"currentHealthLevel": 100, "eventDescription": "Adventure has begun!"}"#))
        #expect(
            try payload(n)
                == Self.apple(
                    #"""
                    {"aps": {"timestamp": 1705560370, "event": "start",
                             "content-state": {"currentHealthLevel": 100, "eventDescription": "Adventure has begun!"},
                             "attributes-type": "AdventureAttributes",
                             "attributes": {"currentHealthLevel": 100, "eventDescription": "Adventure has begun!"},
                             "alert": {"title": "Power Panda is on an adventure!", "body": "Adventure has begun!",
                                       "sound": "default"}}}
                    """#))
    }

    @Test("end with a final state and a dismissal date: Apple's example")
    func end() throws {
        let n = NotificationRequest(
            liveActivity: .init(
                event: "end",
                contentStateJSON:
                    #"{"currentHealthLevel": 0.0, "eventDescription": "Adventure over! Power Panda is taking a nap."}"#,
                dismissalDate: 1_663_177_260))
        #expect(
            try payload(n)
                == Self.apple(
                    #"""
                    {"aps": {"timestamp": 1685952000, "event": "end", "dismissal-date": 1663177260,
                             "content-state": {"currentHealthLevel": 0.0, "eventDescription": "Adventure over! Power Panda is taking a nap."}}}
                    """#))
        #expect(
            try payload(NotificationRequest(liveActivity: .init(event: "end")))
                == Self.apple(#"{"aps":{"timestamp":1685952000,"event":"end"}}"#))
    }

    @Test("stale date, relevance score, and iOS 18's input-push-token and input-push-channel")
    func optionalMembers() throws {
        let base = NotificationRequest.LiveActivity(
            event: "update", contentStateJSON: "{}", staleDate: 1_685_955_600, relevanceScore: 75)
        #expect(
            try payload(NotificationRequest(liveActivity: base))
                == Self.apple(
                    #"{"aps":{"timestamp":1685952000,"event":"update","content-state":{},"stale-date":1685955600,"relevance-score":75}}"#
                ))
        var fractional = base
        fractional.relevanceScore = 0.5
        #expect(
            try payload(NotificationRequest(liveActivity: fractional))
                == Self.apple(
                    #"{"aps":{"timestamp":1685952000,"event":"update","content-state":{},"stale-date":1685955600,"relevance-score":0.5}}"#
                ))
        let start = NotificationRequest.LiveActivity(
            event: "start", contentStateJSON: "{}", attributesType: "A", attributesJSON: "{}", inputPushToken: true)
        #expect(
            try payload(NotificationRequest(liveActivity: start))
                == Self.apple(
                    #"{"aps":{"timestamp":1685952000,"event":"start","content-state":{},"attributes-type":"A","attributes":{},"input-push-token":1}}"#
                ))
        var channel = start
        channel.inputPushToken = false
        channel.inputPushChannel = "dHN0LXNyY2gtY2hubA=="
        #expect(
            try payload(NotificationRequest(liveActivity: channel))
                == Self.apple(
                    #"{"aps":{"timestamp":1685952000,"event":"start","content-state":{},"attributes-type":"A","attributes":{},"input-push-channel":"dHN0LXNyY2gtY2hubA=="}}"#
                ))
    }

    @Test("every refusal names its field")
    func refusals() {
        let update = NotificationRequest.LiveActivity(event: "update", contentStateJSON: "{}")
        func with(_ change: (inout NotificationRequest.LiveActivity) -> Void) -> NotificationRequest {
            var activity = update
            change(&activity)
            return NotificationRequest(liveActivity: activity)
        }
        let cases: [(NotificationRequest, String)] = [
            (with { $0.event = "begin" }, "notifications[0].live_activity.event: must be start, update or end"),
            (
                with { $0.contentStateJSON = "" },
                "notifications[0].live_activity.content_state_json: is required for update"
            ),
            (
                with { $0.contentStateJSON = "[1]" },
                "notifications[0].live_activity.content_state_json: must be a JSON object"
            ),
            (with { $0.contentStateJSON = "{" }, "notifications[0].live_activity.content_state_json:"),
            (
                with { $0.attributesType = "A" },
                "notifications[0].live_activity.attributes_type: is only for event start"
            ),
            (
                with { $0.attributesJSON = "{}" },
                "notifications[0].live_activity.attributes_json: is only for event start"
            ),
            (
                with { $0.inputPushToken = true },
                "notifications[0].live_activity.input_push_token: is only for event start"
            ),
            (
                with { $0.inputPushChannel = "c" },
                "notifications[0].live_activity.input_push_channel: is only for event start"
            ),
            (with { $0.dismissalDate = 5 }, "notifications[0].live_activity.dismissal_date: is only for event end"),
            (with { $0.staleDate = -1 }, "notifications[0].live_activity.stale_date: must not be negative"),
            (
                with { $0.relevanceScore = -1 },
                "notifications[0].live_activity.relevance_score: must be a number of 0 or more"
            ),
            (with { $0.relevanceScore = .nan }, "notifications[0].live_activity.relevance_score:"),
            (with { $0.event = "start" }, "notifications[0].live_activity.attributes_type: is required for start"),
            (
                with {
                    $0.event = "start"
                    $0.attributesType = "A"
                }, "notifications[0].live_activity.attributes_json: is required for start"
            ),
            (
                with {
                    $0.event = "start"
                    $0.attributesType = "A"
                    $0.attributesJSON = "[]"
                }, "notifications[0].live_activity.attributes_json: must be a JSON object"
            ),
            (
                with {
                    $0.event = "start"
                    $0.attributesType = "A"
                    $0.attributesJSON = "{}"
                    $0.inputPushToken = true
                    $0.inputPushChannel = "c"
                },
                "notifications[0].live_activity.input_push_channel: cannot be set with input_push_token"
            ),
            (
                NotificationRequest(badge: 1, liveActivity: update),
                "notifications[0].badge: cannot be set with live_activity"
            ),
            (
                NotificationRequest(category: "c", liveActivity: update),
                "notifications[0].category: cannot be set with live_activity"
            ),
            (
                NotificationRequest(contentAvailable: true, liveActivity: update),
                "notifications[0].content_available: cannot be set with live_activity"
            ),
            (
                NotificationRequest(dataJSON: "{}", liveActivity: update),
                "notifications[0].data_json: cannot be set with live_activity"
            ),
            (
                NotificationRequest(payloadJSON: "{}", liveActivity: update),
                "notifications[0].payload_json: cannot be set with live_activity"
            ),
            (
                NotificationRequest(alert: .init(subtitle: "s"), liveActivity: update),
                "notifications[0].alert.subtitle: cannot be set with live_activity"
            ),
            (
                NotificationRequest(alert: .init(title: "t", titleLocKey: "k"), liveActivity: update),
                "notifications[0].alert.title: cannot be set with live_activity"
            ),
            (
                NotificationRequest(pushType: .alert, liveActivity: update),
                "notifications[0].push_type: must be liveactivity (or unset) with live_activity"
            ),
        ]
        for (n, message) in cases {
            #expect(error(n)?.hasPrefix(message) == true, "\(message) — got \(error(n) ?? "no error")")
        }
    }

    @Test("the other providers refuse live_activity")
    func otherProviders() {
        let n = NotificationRequest(tokens: ["t"], alert: .init(body: "b"), liveActivity: .init(event: "end"))
        if case .failure(let error) = FCMMessageBuilder.prepare(n, at: "n", now: 0) {
            #expect(error.field == "n.live_activity")
        } else {
            Issue.record("FCM took it")
        }
        if case .failure(let error) = ADMMessageBuilder.prepare(n, at: "n", now: 0) {
            #expect(error.field == "n.live_activity")
        } else {
            Issue.record("ADM took it")
        }
        if case .failure(let error) = WebPushMessageBuilder.prepare(n, at: "n", now: 0) {
            #expect(error.field == "n.live_activity")
        } else {
            Issue.record("Web Push took it")
        }
    }
}
