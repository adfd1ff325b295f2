import Testing

@testable import PushCore

@Suite("NotificationValidator")
struct NotificationValidatorTests {
    static let token = String(repeating: "ab", count: 32)
    static let path = "notifications[3]"

    private func valid(_ configure: (inout NotificationRequest) -> Void = { _ in }) -> NotificationRequest {
        var n = NotificationRequest(tokens: [Self.token], alert: .init(body: "Hello"))
        configure(&n)
        return n
    }

    private func prepare(_ n: NotificationRequest, bundleID: String = "com.example.app") throws -> PreparedNotification
    {
        try NotificationValidator.prepare(n, at: Self.path, bundleID: bundleID).get()
    }

    private func message(_ n: NotificationRequest, bundleID: String = "com.example.app") -> String? {
        switch NotificationValidator.prepare(n, at: Self.path, bundleID: bundleID) {
        case .success: nil
        case .failure(let error): error.description
        }
    }

    @Test("a plain alert gets the defaults")
    func defaults() throws {
        let prepared = try prepare(valid { $0.tokens = [Self.token.uppercased(), Self.token] })
        #expect(
            prepared
                == PreparedNotification(
                    payload: Array(#"{"aps":{"alert":{"body":"Hello"}}}"#.utf8), pushType: .alert,
                    topic: "com.example.app",
                    priority: 10, expiration: nil, collapseID: nil, apnsID: nil, tokens: [Self.token, Self.token]))
    }

    @Test("tokens are lower-cased wherever the first upper-case one is")
    func tokensLowerCased() throws {
        let upper = Self.token.uppercased()
        let other = String(repeating: "0f", count: 32)
        for tokens in [[Self.token, other], [Self.token, upper, other.uppercased()], [Self.token, other, upper]] {
            let prepared = try prepare(valid { $0.tokens = tokens })
            #expect(prepared.tokens == tokens.map { $0.lowercased() })
        }
        let bad = message(valid { $0.tokens = [Self.token, upper, "xyz"] })
        #expect(bad?.hasPrefix("notifications[3].tokens[2]:") == true)
    }

    @Test("explicit headers are carried over, id lower-cased")
    func explicit() throws {
        let prepared = try prepare(
            valid {
                $0.priority = 5
                $0.expiration = 1_700_000_000
                $0.collapseID = String(repeating: "c", count: 64)
                $0.id = "123E4567-E89B-12D3-A456-426614174000"
                $0.topic = "com.other.app"
            })
        #expect(prepared.priority == 5)
        #expect(prepared.expiration == 1_700_000_000)
        #expect(prepared.collapseID == String(repeating: "c", count: 64))
        #expect(prepared.apnsID == "123e4567-e89b-12d3-a456-426614174000")
        #expect(prepared.topic == "com.other.app")
    }

    @Test("background is inferred and defaults to priority 5")
    func background() throws {
        let n = NotificationRequest(tokens: [Self.token], contentAvailable: true, dataJSON: #"{"custom":1}"#)
        let prepared = try prepare(n)
        #expect(prepared.pushType == .background)
        #expect(prepared.priority == 5)
        var low = n
        low.priority = 1
        #expect(try prepare(low).priority == 1)
    }

    @Test("priority 10 is refused for background pushes, explicit or inferred")
    func backgroundPriority() {
        let expected = "notifications[3].priority: priority 10 is not allowed for background pushes"
        #expect(message(NotificationRequest(tokens: [Self.token], contentAvailable: true, priority: 10)) == expected)
        #expect(
            message(
                valid {
                    $0.pushType = .background
                    $0.priority = 10
                }) == expected)
    }

    @Test("the topic defaults to the bundle id plus the push type's suffix")
    func topics() throws {
        #expect(try prepare(valid { $0.pushType = .voip }).topic == "com.example.app.voip")
        #expect(try prepare(valid { $0.pushType = .liveactivity }).topic == "com.example.app.push-type.liveactivity")
        #expect(
            try prepare(
                valid {
                    $0.pushType = .voip
                    $0.topic = "x.y"
                }
            ).topic == "x.y")
        #expect(try prepare(valid { $0.topic = "x.y" }, bundleID: "").topic == "x.y")
    }

    @Test(
        "every field error names its place",
        arguments: [
            (
                NotificationRequest(tokens: [], alert: .init(body: "b")),
                "notifications[3].tokens: at least one token is required"
            ),
            (
                NotificationRequest(tokens: [token, token, "zz"], alert: .init(body: "b")),
                "notifications[3].tokens[2]: APNs device token must be 64-200 hex digits"
            ),
            (NotificationRequest(tokens: [token], badge: -1), "notifications[3].badge: must not be negative"),
            (
                NotificationRequest(tokens: [token], alert: .init(body: "b"), interruptionLevel: "urgent"),
                "notifications[3].interruption_level: must be passive, active, time-sensitive or critical"
            ),
            (
                NotificationRequest(tokens: [token], alert: .init(body: "b"), priority: 3),
                "notifications[3].priority: must be 0, 1, 5 or 10"
            ),
            (
                NotificationRequest(tokens: [token], alert: .init(body: "b"), expiration: -1),
                "notifications[3].expiration: must not be negative"
            ),
            (
                NotificationRequest(
                    tokens: [token], alert: .init(body: "b"), collapseID: String(repeating: "é", count: 33)),
                "notifications[3].collapse_id: must be at most 64 bytes"
            ),
            (
                NotificationRequest(tokens: [token], alert: .init(body: "b"), collapseID: "a\r\nb"),
                "notifications[3].collapse_id: must not contain control characters"
            ),
            (
                NotificationRequest(tokens: [token], alert: .init(body: "b"), id: "not-a-uuid"),
                "notifications[3].id: must be a UUID (8-4-4-4-12 hex digits)"
            ),
            (
                NotificationRequest(tokens: [token], dataJSON: "{\"a\":01}"),
                "notifications[3].data_json: leading zeros are not allowed at byte 5"
            ),
            (
                NotificationRequest(tokens: [token], payloadJSON: "[]"),
                "notifications[3].payload_json: must be a JSON object"
            ),
            (
                NotificationRequest(tokens: [token], sound: "x", payloadJSON: "{}"),
                "notifications[3].sound: must be empty when payload_json is set"
            ),
            (
                NotificationRequest(tokens: [token]),
                "notifications[3]: notification has nothing to send: set alert, badge, sound, content_available, data_json or payload_json"
            ),
            (
                NotificationRequest(tokens: [token], alert: .init(body: "b"), topic: "com.example app"),
                "notifications[3].topic: must be printable ASCII without spaces"
            ),
        ])
    func fieldErrors(n: NotificationRequest, expected: String) {
        #expect(message(n) == expected)
    }

    @Test("no topic and no bundle id is an error")
    func noTopic() {
        #expect(message(valid(), bundleID: "") == "notifications[3].topic: no topic: set topic or the app's bundle_id")
    }

    @Test("mdm needs an explicit topic")
    func mdmTopic() throws {
        #expect(
            message(valid { $0.pushType = .mdm })
                == "notifications[3].topic: must be set for push type mdm (the MDM certificate's UID)")
        #expect(
            try prepare(
                valid {
                    $0.pushType = .mdm
                    $0.topic = "com.apple.mgmt.External.1234"
                }
            ).topic
                == "com.apple.mgmt.External.1234")
    }

    @Test("the payload size limit depends on the push type")
    func payloadSize() throws {
        // {"aps":{"alert":{"body":"…"}}} is 29 bytes plus the body.
        let fits = valid { $0.alert = .init(body: String(repeating: "x", count: 4096 - 29)) }
        #expect(try prepare(fits).payload.count == 4096)
        let over = valid { $0.alert = .init(body: String(repeating: "x", count: 5000 - 29)) }
        #expect(
            message(over)
                == "notifications[3]: payload is 5000 bytes, over the APNs limit of 4096 bytes for push type alert")
        var voip = over
        voip.pushType = .voip
        #expect(try prepare(voip).payload.count == 5000)
        voip.alert = .init(body: String(repeating: "x", count: 5121 - 29))
        #expect(
            message(voip)
                == "notifications[3]: payload is 5121 bytes, over the APNs limit of 5120 bytes for push type voip")
    }

    @Test("payload_json drives inference and is sent verbatim")
    func payloadJSON() throws {
        let payload = #"{"aps" : {"content-available":1}, "k":"v"}"#
        let prepared = try prepare(NotificationRequest(tokens: [Self.token], payloadJSON: payload))
        #expect(prepared.payload == Array(payload.utf8))
        #expect(prepared.pushType == .background)
        #expect(prepared.priority == 5)
    }

    @Test("tokens are checked before anything else, so the first error is stable")
    func order() {
        let n = NotificationRequest(tokens: ["bad"], priority: 3, expiration: -1, id: "x")
        #expect(message(n) == "notifications[3].tokens[0]: APNs device token must be 64-200 hex digits")
    }

    @Test("an empty path leaves fields unprefixed")
    func emptyPath() {
        let result = NotificationValidator.prepare(NotificationRequest(), at: "", bundleID: "b")
        #expect(throws: ValidationError(field: "tokens", message: "at least one token is required")) {
            try result.get()
        }
    }

    @Test("widgets and controls pushes carry content-changed alone, on their topic; an alert is refused")
    func widgetsAndControls() throws {
        for (type, suffix) in [(PushType.widgets, ".push-type.widgets"), (.controls, ".push-type.controls")] {
            let prepared = try prepare(
                valid {
                    $0.alert = nil
                    $0.pushType = type
                })
            #expect(String(decoding: prepared.payload, as: UTF8.self) == #"{"aps":{"content-changed":true}}"#)
            #expect(prepared.topic == "com.example.app" + suffix && prepared.pushType == type)
            #expect(prepared.priority == 10)
            #expect(message(valid { $0.pushType = type })?.hasPrefix("notifications[3].alert: must be empty") == true)
        }
    }

    @Test("filter_criteria goes into aps as filter-criteria, at most 64 bytes")
    func filterCriteria() throws {
        let prepared = try prepare(valid { $0.filterCriteria = "work" })
        #expect(String(decoding: prepared.payload, as: UTF8.self).contains(#""filter-criteria":"work""#))
        #expect(
            message(valid { $0.filterCriteria = String(repeating: "f", count: 65) })?.contains("filter_criteria")
                == true)
    }
}
