import PushProto
import Testing

@testable import pushgate

@Suite("send flags")
struct SendCommandTests {
    private func parse(_ arguments: [String]) throws -> SendCommand.Options {
        try #require(try SendCommand.parse(arguments))
    }

    /// The one notification a parsed Send carries.
    private func notification(_ arguments: [String]) throws -> PushgateV1.Notification {
        let request = try parse(arguments).request
        #expect(request.notifications.count == 1)
        return try #require(request.notifications.first)
    }

    @Test("one token: the gateway on 127.0.0.1:50051, a 30-second deadline, a notification with only the token")
    func defaults() throws {
        let options = try parse(["--token", "ab12"])
        #expect(options.server == "127.0.0.1:50051")
        #expect(options.timeout == 30)
        var expected = PushgateV1.Notification()
        expected.tokens = ["ab12"]
        #expect(options.request.notifications == [expected])
        #expect(options.request.notifications.first?.alert == nil, "no alert flags, no alert")
    }

    @Test("-h and --help ask for the usage, even without a token", arguments: [["-h"], ["--token", "x", "--help"]])
    func help(arguments: [String]) throws {
        #expect(try SendCommand.parse(arguments) == nil)
        #expect(SendCommand.usage.contains("--push-type TYPE"))
    }

    @Test("every flag lands in the request; --token repeats")
    func everyFlag() throws {
        let options = try parse([
            "--server", "[::1]:6000", "--app", "ios", "--token", "t1", "--token=t2", "--title", "Hi", "--subtitle",
            "there", "--body", "Body", "--image", "https://img/x.png", "--badge", "3", "--sound", "ping.aiff",
            "--category", "C", "--thread-id", "T", "--content-available", "--mutable-content", "--interruption-level",
            "time-sensitive", "--push-type", "voip", "--priority", "5", "--expiration", "1700000000", "--collapse-id",
            "c", "--topic", "com.example.app", "--id", "0f0e0d0c-0000-4000-8000-000000000000", "--data", #"{"k":1}"#,
            "--payload", #"{"aps":{}}"#, "--timeout", "2.5",
        ])
        #expect(options.server == "[::1]:6000")
        #expect(options.timeout == 2.5)
        let n = try #require(options.request.notifications.first)
        #expect(n.app == "ios")
        #expect(n.tokens == ["t1", "t2"])
        var alert = PushgateV1.Alert()
        alert.title = "Hi"
        alert.subtitle = "there"
        alert.body = "Body"
        alert.image = "https://img/x.png"
        #expect(n.alert == alert)
        #expect(n.badge == 3)
        #expect(n.sound == "ping.aiff")
        #expect(n.category == "C")
        #expect(n.threadID == "T")
        #expect(n.contentAvailable && n.mutableContent)
        #expect(n.interruptionLevel == "time-sensitive")
        #expect(n.pushType == .voip)
        #expect(n.priority == 5)
        #expect(n.expiration == 1_700_000_000)
        #expect(n.collapseID == "c")
        #expect(n.topic == "com.example.app")
        #expect(n.id == "0f0e0d0c-0000-4000-8000-000000000000")
        #expect(n.dataJSON == #"{"k":1}"#)
        #expect(n.payloadJSON == #"{"aps":{}}"#)
    }

    @Test("Live Activity flags fill live_activity; --channel makes it a broadcast")
    func liveActivity() throws {
        let options = try #require(
            try SendCommand.parse([
                "--channel", "dHN0LXNyY2gtY2hubA==", "--live-activity", "update", "--content-state", #"{"a":1}"#,
                "--timestamp", "7", "--stale-date", "8", "--relevance-score", "0.5",
            ]))
        #expect(options.channel == "dHN0LXNyY2gtY2hubA==")
        let activity = try #require(options.request.notifications.first?.liveActivity)
        #expect(activity.event == "update" && activity.contentStateJSON == #"{"a":1}"#)
        #expect(activity.timestamp == 7 && activity.staleDate == 8 && activity.relevanceScore == 0.5)
        let start = try #require(
            try SendCommand.parse([
                "--token", "x", "--live-activity", "start", "--attributes-type", "T", "--attributes", "{}",
                "--input-push-token", "--input-push-channel", "Yw==", "--dismissal-date", "9",
            ]))
        let started = try #require(start.request.notifications.first?.liveActivity)
        #expect(started.attributesType == "T" && started.attributesJSON == "{}" && started.inputPushToken)
        #expect(started.inputPushChannel == "Yw==" && started.dismissalDate == 9 && start.channel == nil)
    }

    @Test("a badge of 0 is sent (it clears the badge), unlike no badge")
    func badgeZero() throws {
        #expect(try notification(["--token", "x", "--badge", "0"]).badge == 0)
        #expect(try notification(["--token", "x"]).badge == nil)
    }

    @Test("one alert flag makes an alert of just that field")
    func alertOnly() throws {
        var alert = PushgateV1.Alert()
        alert.body = "only"
        #expect(try notification(["--token", "x", "--body", "only"]).alert == alert)
    }

    @Test(
        "each push type by its name",
        arguments: [
            ("alert", PushgateV1.PushType.alert), ("background", .background),
            ("liveactivity", .liveactivity), ("controls", .controls),
        ])
    func pushTypes(name: String, type: PushgateV1.PushType) throws {
        #expect(try notification(["--token", "x", "--push-type", name]).pushType == type)
    }

    @Test(
        "usage errors name the flag",
        arguments: [
            ([], "--token: at least one is required (or --channel for a broadcast)"),
            (["--title", "no token"], "--token: at least one is required (or --channel for a broadcast)"),
            (["--channel", "Yw==", "--token", "x"], "--channel: a broadcast goes to the channel; leave out --token"),
            (
                ["--token", "x", "--content-state", "{}"],
                "--live-activity: required with the other Live Activity flags"
            ),
            (["--token"], "--token: needs a value"),
            (["--token", "x", "--badge", "-1"], "--badge: must be an integer between 0 and 2147483647"),
            (["--token", "x", "--priority", "11"], "--priority: must be an integer between 0 and 10"),
            (["--token", "x", "--push-type", "sms"], #"--push-type: unknown push type "sms""#),
            (["--token", "x", "--timeout", "0"], "--timeout: must be a positive number of seconds"),
            (["--token", "x", "--timeout", "soon"], "--timeout: must be a positive number of seconds"),
            (["--token", "x", "--to", "y"], #"unknown flag "--to" (see pushgate send --help)"#),
        ] as [([String], String)])
    func errors(arguments: [String], message: String) {
        #expect(usageError { try SendCommand.parse(arguments) } == message)
    }

    @Test("a result line: status, token, then what the answer said")
    func resultLines() {
        var delivered = PushgateV1.Result()
        delivered.status = .delivered
        delivered.token = "ab"
        delivered.httpStatus = 200
        delivered.id = "5D0E-1"
        delivered.attempts = 1
        #expect(SendCommand.line(for: delivered) == "DELIVERED token=ab http=200 apns-id=5D0E-1 attempts=1")

        var fcm = PushgateV1.Result()
        fcm.status = .delivered
        fcm.token = "f"
        fcm.id = "projects/p/messages/0:1"
        fcm.attempts = 2
        #expect(SendCommand.line(for: fcm) == "DELIVERED token=f name=projects/p/messages/0:1 attempts=2")

        var rejected = PushgateV1.Result()
        rejected.status = .rejected
        rejected.token = "cd"
        rejected.httpStatus = 410
        rejected.reason = "Unregistered"
        rejected.unregisteredAt = 1_700_000_000_000
        rejected.attempts = 1
        #expect(
            SendCommand.line(for: rejected)
                == "REJECTED token=cd http=410 reason=Unregistered unregistered_at=1700000000000 attempts=1")

        var failed = PushgateV1.Result()
        failed.status = .failed
        failed.token = "ef"
        failed.reason = "DeadlineExceeded"
        #expect(SendCommand.line(for: failed) == "FAILED token=ef reason=DeadlineExceeded attempts=0")

        var unknown = PushgateV1.Result()
        unknown.status = PushgateV1.Status(rawValue: 9)
        unknown.token = "z"
        #expect(SendCommand.line(for: unknown) == "9 token=z attempts=0")
    }
}
