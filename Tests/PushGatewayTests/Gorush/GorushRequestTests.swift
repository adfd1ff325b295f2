import PushCore
import PushProto
import Testing

@testable import PushGateway

@Suite("gorush /api/push mapping")
struct GorushRequestTests {
    static let iosToken = String(repeating: "ab", count: 32)
    static let androidToken = "fcm-token-" + String(repeating: "x", count: 140)

    static var configuration: GatewayConfiguration {
        var config = GatewayConfiguration()
        var sandbox = AppConfiguration.APNsKeys(bundleID: "com.example.app")
        sandbox.sandbox = true
        config.apps = [
            AppConfiguration(name: "fire", keys: .adm(AppConfiguration.ADMKeys())),
            AppConfiguration(name: "ios-prod", bundleID: "com.example.app"),
            AppConfiguration(name: "ios-dev", keys: .apns(sandbox)),
            AppConfiguration(name: "android", keys: .fcm(AppConfiguration.FCMKeys())),
        ]
        return config
    }

    func map(_ json: String) throws(GorushRequest.Refusal) -> GorushRequest {
        try GorushRequest(body: Array(json.utf8), configuration: Self.configuration)
    }

    func refusal(_ json: String) -> String? {
        do throws(GorushRequest.Refusal) {
            _ = try map(json)
            return nil
        } catch {
            return error.message
        }
    }

    /// The mapped Send passes the gateway's own validation (what /api/push hands to delivery).
    func validates(_ request: GorushRequest) -> Bool {
        (try? SendRequestValidation.validate(request.send, configuration: Self.configuration)) != nil
    }

    @Test func iosMessageBecomesTheAlertBodyOfTheFirstAPNsApp() throws {
        let request = try map(
            #"{"notifications":[{"tokens":["\#(Self.iosToken)"],"platform":1,"message":"Hello World iOS!"}]}"#)
        let n = try #require(request.send.notifications.first)
        #expect(n.app == "ios-prod")
        #expect(n.tokens == [Self.iosToken])
        #expect(n.alert?.body == "Hello World iOS!")
        #expect(n.alert?.title == "")
        #expect(request.echoes == [.init(platform: "ios", message: "Hello World iOS!", notifID: "")])
        #expect(validates(request))
    }

    @Test("a notif_id over 256 bytes is refused by name; a long message is echoed cut, whole characters and …")
    func echoesAreBounded() throws {
        let long = String(repeating: "n", count: 257)
        #expect(
            refusal(#"{"notifications":[{"tokens":["\#(Self.iosToken)"],"platform":1,"notif_id":"\#(long)"}]}"#)
                == "notifications[0].notif_id: 257 bytes, over 256")
        let message = String(repeating: "é", count: 200)  // 400 bytes
        let request = try map(
            #"{"notifications":[{"tokens":["\#(Self.iosToken)"],"platform":1,"message":"\#(message)","#
                + #""notif_id":"\#(String(repeating: "i", count: 256))"}]}"#)
        let echo = try #require(request.echoes.first)
        #expect(echo.message == String(repeating: "é", count: 128) + "…")
        #expect(echo.notifID.utf8.count == 256)
        #expect(request.send.notifications.first?.alert?.body == message)
        #expect(GorushRequest.echoed("short") == "short")
    }

    @Test func iosAlertObjectBadgeSoundAndData() throws {
        let request = try map(
            #"""
            {"notifications":[{"tokens":["\#(Self.iosToken)"],"platform":1,"badge":5,"message":"m",
              "alert":{"title":"Game Request","body":"Bob wants to play poker","subtitle":"s","loc-args":["a"]},
              "sound":{"name":"default"},"data":{"key1":"welcome","key2":2},"thread-id":"t","category":"c",
              "priority":"normal","apns_id":"123e4567-e89b-12d3-a456-426614174000","collapse_id":"k",
              "expiration":4102444800,"content_available":true,"mutable_content":true,"interruption_level":"active",
              "notif_id":"n-1","retry":3}]}
            """#)
        let n = try #require(request.send.notifications.first)
        #expect(n.alert?.title == "Game Request")
        #expect(n.alert?.body == "Bob wants to play poker")
        #expect(n.alert?.subtitle == "s")
        #expect(n.alert?.locArgs == ["a"])
        #expect(n.badge == 5)
        #expect(n.sound == "default")
        #expect(n.dataJSON == #"{"key1":"welcome","key2":2}"#)
        #expect(n.threadID == "t" && n.category == "c" && n.priority == 5 && n.collapseID == "k")
        #expect(n.id == "123e4567-e89b-12d3-a456-426614174000" && n.expiration == 4_102_444_800)
        #expect(n.contentAvailable && n.mutableContent && n.interruptionLevel == "active")
        #expect(request.echoes.first?.notifID == "n-1")
        #expect(validates(request))
    }

    @Test func productionAndDevelopmentPickTheAppOfThatEnvironment() throws {
        let token = Self.iosToken
        let request = try map(
            #"""
            {"notifications":[{"tokens":["\#(token)"],"platform":1,"production":true,"message":"p"},
                              {"tokens":["\#(token)"],"platform":1,"development":true,"message":"d"}]}
            """#)
        #expect(request.send.notifications.map(\.app) == ["ios-prod", "ios-dev"])
        #expect(
            refusal(#"{"notifications":[{"tokens":["\#(token)"],"platform":1,"app":"ios-prod","development":true}]}"#)
                == #"notifications[0].app: "ios-prod" is not a sandbox APNs app"#)
        #expect(
            refusal(#"{"notifications":[{"tokens":["t"],"platform":2,"production":true}]}"#)
                == "notifications[0].production: only for platform 1 (iOS)")
    }

    @Test func theAppKeyNamesAnAppOfThePlatform() throws {
        let request = try map(#"{"notifications":[{"tokens":["\#(Self.iosToken)"],"platform":1,"app":"ios-dev"}]}"#)
        #expect(request.send.notifications.first?.app == "ios-dev")
        #expect(
            refusal(#"{"notifications":[{"tokens":["x"],"platform":1,"app":"android"}]}"#)
                == #"notifications[0].app: "android" is a fcm app, not apns"#)
        #expect(
            refusal(#"{"notifications":[{"tokens":["x"],"platform":1,"app":"nope"}]}"#)
                == #"notifications[0].app: unknown app "nope""#)
    }

    @Test func liveActivityKeysBecomeTheTypedLiveActivity() throws {
        let request = try map(
            #"""
            {"notifications":[{"tokens":["\#(Self.iosToken)"],"platform":1,"push_type":"liveactivity",
              "topic":"com.example.app.push-type.liveactivity","event":"start","timestamp":1685952000,
              "content-state":{"homeScore":0,"period":"1H"},"attributes-type":"FootballMatchAttributes",
              "attributes":{"homeTeam":"Team 1"},"relevance-score":0.5,"stale-date":1685955600,
              "alert":{"title":"Team 1 vs Team 2","body":"Kick-off!"}}]}
            """#)
        let n = try #require(request.send.notifications.first)
        let activity = try #require(n.liveActivity)
        #expect(n.pushType == PushgateV1.PushType(.liveactivity))
        #expect(activity.event == "start" && activity.timestamp == 1_685_952_000 && activity.staleDate == 1_685_955_600)
        #expect(activity.contentStateJSON == #"{"homeScore":0,"period":"1H"}"#)
        #expect(activity.attributesType == "FootballMatchAttributes")
        #expect(activity.attributesJSON == #"{"homeTeam":"Team 1"}"#)
        #expect(activity.relevanceScore == 0.5)
        #expect(n.alert?.title == "Team 1 vs Team 2")
    }

    @Test func androidTitleMessageImageAndStringifiedData() throws {
        let request = try map(
            #"""
            {"notifications":[{"tokens":["\#(Self.androidToken)"],"platform":2,"message":"Hello World Android!",
              "title":"You got message","image":"https://example.com/i.png","priority":"high",
              "data":{"Nick":"Mario","score":2,"tags":["a"],"ok":true}}]}
            """#)
        let n = try #require(request.send.notifications.first)
        #expect(n.app == "android")
        #expect(n.alert?.title == "You got message" && n.alert?.body == "Hello World Android!")
        #expect(n.alert?.image == "https://example.com/i.png")
        #expect(n.priority == 10)
        #expect(n.dataJSON == #"{"Nick":"Mario","score":"2","tags":"[\"a\"]","ok":"true"}"#)
        #expect(request.echoes.first?.platform == "android")
        #expect(validates(request))
    }

    @Test func androidNotificationObjectFillsWhatTheTopLevelKeysLeave() throws {
        let request = try map(
            #"""
            {"notifications":[{"to":"\#(Self.androidToken)","platform":2,"title":"T",
              "notification":{"title":"ignored","body":"B","body_loc_key":"k","body_loc_args":["x"]}}]}
            """#)
        let n = try #require(request.send.notifications.first)
        #expect(n.tokens == [Self.androidToken])
        #expect(n.alert?.title == "T" && n.alert?.body == "B" && n.alert?.locKey == "k" && n.alert?.locArgs == ["x"])
    }

    @Test(
        arguments: [
            (#"{}"#, "Missing notifications field."),
            (#"not json"#, nil),
            (#"{"notifications":[]}"#, "Notifications field is empty."),
            (#"{"notifications":{}}"#, "notifications: expected an array"),
            (
                #"{"notifications":[{"tokens":["a"]}]}"#,
                "notifications[0].platform: required (1 = iOS, 2 = Android, 3 = Huawei)"
            ),
            (
                #"{"notifications":[{"tokens":["a"],"platform":3}]}"#,
                "notifications[0].platform: no hms app is configured for platform 3"
            ),
            (
                #"{"notifications":[{"tokens":["a"],"platform":7}]}"#,
                "notifications[0].platform: must be 1 (iOS), 2 (Android) or 3 (Huawei)"
            ),
            (
                #"{"notifications":[{"platform":1}]}"#,
                "notifications[0].tokens: please provide at least one device token (or, for Android, a topic)"
            ),
            (
                #"{"notifications":[{"tokens":["a"],"platform":2,"condition":"'a' in topics"}]}"#,
                "notifications[0].condition: FCM condition messages are not supported; send to tokens or a topic"
            ),
            (
                #"{"notifications":[{"tokens":["a"],"platform":1,"priority":"urgent"}]}"#,
                #"notifications[0].priority: must be normal or high, not "urgent""#
            ),
            (
                #"{"notifications":[{"tokens":["a"],"platform":1,"badge":-1}]}"#,
                "notifications[0].badge: must be between 0 and 2147483647"
            ),
            (
                #"{"notifications":[{"tokens":["a"],"platform":1,"tokenz":["a"]}]}"#,
                #"notifications[0]: unknown key "tokenz" (docs/api.md lists the gorush keys Pushgate takes)"#
            ),
            (
                #"{"notifications":[{"tokens":["a"],"platform":3,"huawei_data":"{}"}]}"#,
                "notifications[0].huawei_data: raw Huawei blocks are not supported; use data, title, message and image"
            ),
            (
                #"{"notifications":[{"tokens":["a"],"platform":1,"alert":{"action":"Open"}}]}"#,
                "notifications[0].alert.action: Safari's legacy push (action) is not supported"
            ),
            (
                #"{"notifications":[{"tokens":["a"],"platform":1,"sound":{"critical":0,"name":"default","volume":1}}]}"#,
                "notifications[0].sound.volume: APNs plays a volume only for a critical sound (critical: 1)"
            ),
            (
                #"{"notifications":[{"tokens":["a"],"platform":2,"notification":{"sound":"x"}}]}"#,
                #"notifications[0].notification: unknown key "sound" (known: body, body_loc_args, body_loc_key, channel_id, click_action, color, icon, image, tag, title, title_loc_args, title_loc_key)"#
            ),
            (
                #"{"notifications":[{"tokens":["a"],"platform":1,"fcm_options":{"analytics_label":"x"}}]}"#,
                "notifications[0].fcm_options: only for platform 2 (Android)"
            ),
            (
                #"{"notifications":[{"tokens":["a"],"platform":2,"alert":{"title":"x"}}]}"#,
                "notifications[0].alert: only for platform 1 (iOS)"
            ),
            (
                #"{"notifications":[{"tokens":["a"],"platform":1,"push_type":"banner"}]}"#,
                #"notifications[0].push_type: unknown APNs push type "banner" (one of alert, background, voip, complication, fileprovider, mdm, location, liveactivity, pushtotalk, widgets, controls)"#
            ),
            (
                #"{"notifications":[{"tokens":["a"],"platform":1,"content-state":[1]}]}"#,
                "notifications[0].content-state: expected a JSON object"
            ),
            (#"{"notifications":[{"tokens":"a","platform":1}]}"#, "notifications[0].tokens: expected an array"),
        ] as [(String, String?)])
    func refusedRequestsNameTheKey(json: String, message: String?) {
        let got = refusal(json)
        if let message {
            #expect(got == message)
        } else {
            #expect(got?.hasPrefix("Missing notifications field. (the body is not JSON") == true)
        }
    }

    @Test func criticalSoundAndActionLocKeyAsInGorushsExamples() throws {
        let request = try map(
            #"""
            {"notifications":[{"tokens":["\#(Self.iosToken)"],"platform":1,"message":"You got your emails.","badge":9,
              "sound":{"critical":1,"name":"default","volume":1.0},"alert":{"title":"Game Request","action-loc-key":"PLAY"}}]}
            """#)
        let n = try #require(request.send.notifications.first)
        #expect(n.sound == "default")
        #expect(n.criticalSound?.volume == 1.0)
        #expect(n.alert?.actionLocKey == "PLAY")
        #expect(n.alert?.body == "You got your emails.")
        #expect(validates(request))
    }

    @Test func androidNotificationLookAndAnalyticsLabelBecomeFCMOptions() throws {
        let request = try map(
            ##"""
            {"notifications":[{"tokens":["\##(Self.androidToken)"],"platform":2,"message":"m",
              "notification":{"icon":"myicon","color":"#112244","tag":"t","channel_id":"news","click_action":"OPEN"},
              "fcm_options":{"analytics_label":"example"}}]}
            """##)
        let n = try #require(request.send.notifications.first)
        let fcm = try #require(n.fcm)
        #expect(fcm.androidIcon == "myicon" && fcm.androidColor == "#112244" && fcm.androidTag == "t")
        #expect(fcm.androidChannelID == "news" && fcm.analyticsLabel == "example")
        #expect(n.category == "OPEN")
        #expect(validates(request))
    }

    @Test func anAndroidTopicIsOneMoreTargetSentFirst() throws {
        let request = try map(
            #"{"notifications":[{"topic":"highScores","platform":2,"message":"m","tokens":["\#(Self.androidToken)"]}]}"#
        )
        let n = try #require(request.send.notifications.first)
        #expect(n.tokens == ["/topics/highScores", Self.androidToken])
        #expect(n.topic == "")
        #expect(validates(request))
    }

    @Test func nullReadsAsNotSet() throws {
        let request = try map(
            #"{"notifications":[{"tokens":["\#(Self.iosToken)"],"platform":1,"badge":null,"message":"m","sound":null}]}"#
        )
        #expect(request.send.notifications.first?.badge == nil)
    }

    @Test func theAnswerCountsEveryTokenAndLogsTheFailedOnes() {
        var delivered = PushgateV1.Result()
        delivered.token = "a"
        delivered.status = .delivered
        var rejected = PushgateV1.Result()
        rejected.notificationIndex = 1
        rejected.token = "b"
        rejected.status = .rejected
        rejected.reason = "BadDeviceToken"
        var failed = PushgateV1.Result()
        failed.notificationIndex = 1
        failed.token = "c"
        failed.status = .failed
        let echoes: [GorushRequest.Echo] = [
            .init(platform: "ios", message: "one", notifID: ""),
            .init(platform: "android", message: "two", notifID: "n2"),
        ]
        let body = String(
            decoding: GorushResponse.delivered([delivered, rejected, failed], echoes: echoes), as: UTF8.self)
        #expect(
            body
                == #"{"counts":3,"logs":[{"notif_id":"n2","type":"failed-push","platform":"android","token":"b","message":"two","error":"BadDeviceToken"},{"notif_id":"n2","type":"failed-push","platform":"android","token":"c","message":"two","error":"Failed"}],"success":"ok"}"#
        )
        #expect(
            String(
                decoding: GorushResponse.refused(status: 400, message: "Notifications field is empty."), as: UTF8.self)
                == #"{"code":400,"message":"Notifications field is empty."}"#)
    }
}
