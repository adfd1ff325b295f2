import Testing

@testable import PushCore

/// `critical_sound`, `alert.action_loc_key` and `fcm`: built by the provider that has them,
/// refused by the others with the field's name.
@Suite("Critical sounds, action-loc-key and FCM options")
struct SoundAndOptionsTests {
    static let apnsToken = String(repeating: "ab", count: 32)
    static let fcmToken = "fcm:APA91b_token-1.x"
    static let subscription = #"{"endpoint":"https://fcm.googleapis.com/fcm/send/x","keys":{}}"#
    static let now: Int64 = 1_700_000_000

    func apnsPayload(_ n: NotificationRequest) throws -> String {
        var n = n
        n.tokens = [Self.apnsToken]
        let prepared = try NotificationValidator.prepare(n, at: "n", bundleID: "com.example", now: Self.now).get()
        return String(decoding: prepared.payload, as: UTF8.self)
    }

    func apnsError(_ n: NotificationRequest) -> String? {
        var n = n
        n.tokens = [Self.apnsToken]
        if case .failure(let error) = NotificationValidator.prepare(n, at: "n", bundleID: "com.example") {
            return error.description
        }
        return nil
    }

    func fcmMessage(_ n: NotificationRequest) throws -> String {
        var n = n
        n.tokens = [Self.fcmToken]
        let prepared = try FCMMessageBuilder.prepare(n, at: "n", now: Self.now).get()
        return String(decoding: prepared.body(token: Self.fcmToken), as: UTF8.self)
    }

    func fcmError(_ n: NotificationRequest) -> String? {
        var n = n
        n.tokens = [Self.fcmToken]
        if case .failure(let error) = FCMMessageBuilder.prepare(n, at: "n", now: Self.now) { return error.description }
        return nil
    }

    func admError(_ n: NotificationRequest) -> String? {
        var n = n
        n.tokens = [
            "amzn1.adm-registration.v3.Y29tLmFtYXpvbi5EZXZpY2VNZXNzYWdpbmcuUmVnaXN0cmF0aW9uSWRFbmNyeXB0aW9uS2V5ITEhOE9rZ2h5TXlhVEFFczg2ejNWL3JMcmhTa255Uk5BclhBbE1XMFZzcnU1aFF6cTlvdU5FbVEwclZmdk5oTFBVRXVDN1luQlRSNnRVRUViREdQSlBvSzRNaXVRRUlyUy9NYWZCYS9VWTJUaGZwb3ZVTHhlRTM0MGhvampBK01hVktsMEhxakdmQStOSXRjUXBTQUhNU1NlVVVUVkFreVRhRTBCYktaQ2ZkUFdqSmIwcHgzRDhMQnllVXdxQ2EwdHNXRmFVNklYL0U4UXovcHg0K3lpOWJoOGh0UmRWT2JXWnZ3VVhIMFRZcWpFL0hjRHdxaEkwbzRSWEMzcDdjL1JjY2ZHdlRIU0VyOGZxM1pZVzFhMWpnSWRzRjNYeXZ6ejlNMW1qVkZLSkFjTjNEdWdXdWhDUFdhY3JYWEhjT2NrdGNvd2x6ajNXMFhjbmxMVkVPSlF6V0h4QjZrY3BkWDF4MVZRM3hUUGdITkYvTEtPR0RCdDFYTEtOQ1B4bUthNVNaUT09IVJTbmNFZmk3MjNYNm1jVHBXaHBmVWc9PQ"
        ]
        if case .failure(let error) = ADMMessageBuilder.prepare(n, at: "n", now: Self.now) { return error.description }
        return nil
    }

    func webPushError(_ n: NotificationRequest) -> String? {
        var n = n
        n.tokens = [Self.subscription]
        if case .failure(let error) = WebPushMessageBuilder.prepare(n, at: "n", now: Self.now) {
            return error.description
        }
        return nil
    }

    @Test func criticalSoundIsTheSoundDictionary() throws {
        let n = NotificationRequest(
            alert: .init(body: "Wake up"), sound: "alarm.caf", criticalSound: CriticalSound(volume: 0.5))
        #expect(
            try apnsPayload(n)
                == #"{"aps":{"alert":{"body":"Wake up"},"sound":{"critical":1,"name":"alarm.caf","volume":0.5}}}"#)
        let noVolume = NotificationRequest(alert: .init(body: "x"), sound: "default", criticalSound: CriticalSound())
        #expect(try apnsPayload(noVolume).contains(#""sound":{"critical":1,"name":"default"}"#))
        // Through FCM the dictionary reaches iOS in apns.payload.aps; Android plays the name.
        let viaFCM = try fcmMessage(n)
        #expect(viaFCM.contains(#""aps":{"sound":{"critical":1,"name":"alarm.caf","volume":0.5}}"#))
        #expect(viaFCM.contains(#""android":{"priority":"HIGH","notification":{"sound":"alarm.caf"}}"#))
    }

    @Test func criticalSoundNeedsANameAndAVolumeInRange() {
        #expect(
            apnsError(NotificationRequest(alert: .init(body: "x"), criticalSound: CriticalSound()))
                == #"n.critical_sound: needs sound: the sound file's name, or "default""#)
        #expect(
            apnsError(NotificationRequest(alert: .init(body: "x"), sound: "a", criticalSound: CriticalSound(volume: 2)))
                == "n.critical_sound.volume: must be between 0 and 1")
        #expect(
            apnsError(
                NotificationRequest(
                    sound: "a", payloadJSON: #"{"aps":{}}"#, criticalSound: CriticalSound()))
                == "n.sound: must be empty when payload_json is set")
    }

    @Test func actionLocKeyIsWrittenInTheAlert() throws {
        let n = NotificationRequest(alert: .init(title: "Game Request", body: "Bob", actionLocKey: "PLAY"))
        #expect(
            try apnsPayload(n) == #"{"aps":{"alert":{"title":"Game Request","body":"Bob","action-loc-key":"PLAY"}}}"#)
        #expect(
            try fcmMessage(n).contains(
                #""aps":{"alert":{"title":"Game Request","body":"Bob","action-loc-key":"PLAY"}}"#))
    }

    @Test func fcmOptionsGoToTheAndroidNotificationAndFCMOptions() throws {
        let n = NotificationRequest(
            alert: .init(title: "T"),
            fcm: FCMOptions(
                androidIcon: "myicon", androidColor: "#112244", androidTag: "t", androidChannelID: "news",
                analyticsLabel: "example"))
        #expect(
            try fcmMessage(n)
                == ##"{"message":{"token":"fcm:APA91b_token-1.x","notification":{"title":"T"},"android":{"priority":"HIGH","notification":{"icon":"myicon","color":"#112244","tag":"t","channel_id":"news"}},"apns":{"headers":{"apns-priority":"10"}},"fcm_options":{"analytics_label":"example"}}}"##
        )
    }

    @Test(arguments: [
        (FCMOptions(androidColor: "112244"), "n.fcm.android_color: must be #rrggbb (six hex digits)"),
        (FCMOptions(androidColor: "#11224g"), "n.fcm.android_color: must be #rrggbb (six hex digits)"),
        (
            FCMOptions(analyticsLabel: "has space"),
            "n.fcm.analytics_label: must be 1 to 50 of the characters a-z A-Z 0-9 - _ . ~ %"
        ),
        (
            FCMOptions(analyticsLabel: String(repeating: "a", count: 51)),
            "n.fcm.analytics_label: must be 1 to 50 of the characters a-z A-Z 0-9 - _ . ~ %"
        ),
    ])
    func badFCMOptionsNameTheField(options: FCMOptions, message: String) {
        #expect(fcmError(NotificationRequest(alert: .init(title: "T"), fcm: options)) == message)
    }

    @Test func theOtherProvidersRefuseWhatTheyCannotCarry() {
        let fcm = NotificationRequest(alert: .init(title: "T"), fcm: FCMOptions(androidIcon: "i"))
        let critical = NotificationRequest(alert: .init(title: "T"), sound: "a", criticalSound: CriticalSound())
        let action = NotificationRequest(alert: .init(title: "T", actionLocKey: "PLAY"))
        #expect(apnsError(fcm) == "n.fcm: is for FCM messages; APNs cannot carry it")
        #expect(admError(fcm) == "n.fcm: cannot be sent to ADM: it is for FCM messages")
        #expect(admError(critical) == "n.critical_sound: cannot be sent to ADM: critical alerts are APNs's")
        #expect(admError(action)?.hasPrefix("n.alert.action_loc_key: cannot be sent to ADM") == true)
        #expect(webPushError(fcm)?.hasPrefix("n.fcm:") == true)
        #expect(webPushError(action)?.hasPrefix("n.alert.action_loc_key:") == true)
        #expect(
            fcmError(NotificationRequest(payloadJSON: #"{"data":{}}"#, fcm: FCMOptions(androidTag: "t")))
                == "n.fcm: must be empty when payload_json is set")
    }
}

@Suite("FCM topic targets")
struct FCMTopicTargetTests {
    @Test func aTopicTargetIsSentAsMessageTopic() throws {
        let n = NotificationRequest(tokens: ["/topics/highScores", "tok-1"], alert: .init(body: "b"))
        let prepared = try FCMMessageBuilder.prepare(n, at: "n", now: 0).get()
        #expect(
            String(decoding: prepared.body(token: "/topics/highScores"), as: UTF8.self)
                == #"{"message":{"topic":"highScores","notification":{"body":"b"},"android":{"priority":"HIGH"},"apns":{"headers":{"apns-priority":"10"}}}}"#
        )
        #expect(
            String(decoding: prepared.body(token: "tok-1"), as: UTF8.self).hasPrefix(#"{"message":{"token":"tok-1","#))
    }

    @Test(arguments: ["/topics/", "/topics/a b", "/topics/a\"b", "/topics/" + String(repeating: "a", count: 901)])
    func badTopicsAreRefusedByPlace(token: String) {
        let n = NotificationRequest(tokens: ["ok", token], alert: .init(body: "b"))
        guard case .failure(let error) = FCMMessageBuilder.prepare(n, at: "n", now: 0) else {
            Issue.record("accepted \(token)")
            return
        }
        #expect(error.description == "n.tokens[1]: " + FCMToken.topicRequirement)
    }

    @Test func theRegistryStillTakesOnlyDevices() {
        #expect(throws: ValidationError.self) { try FCMToken.validate("/topics/news", field: "token") }
    }
}
