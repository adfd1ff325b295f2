import Testing

@testable import PushCore

/// Broadcasts on a channel: the rules beyond a token push's, each refusal naming its field, and the
/// channel ids and channel requests as they go to APNs.
@Suite("Broadcast validation and channel requests")
struct BroadcastValidationTests {
    static let channel = "dHN0LXNyY2gtY2hubA=="

    func prepare(_ n: NotificationRequest, policy: MessageStoragePolicy = .mostRecent) -> Result<
        PreparedNotification, ValidationError
    > {
        NotificationValidator.prepareBroadcast(
            n, at: "notification", bundleID: "com.x", channelID: Self.channel, policy: policy, now: 100)
    }

    func error(_ n: NotificationRequest, policy: MessageStoragePolicy = .mostRecent) -> String? {
        if case .failure(let error) = prepare(n, policy: policy) { return error.description }
        return nil
    }

    static let update = NotificationRequest.LiveActivity(event: "update", contentStateJSON: #"{"home":1}"#)

    @Test("an update is prepared for the channel: one token (the id), no topic, the app's bundle in the path")
    func prepared() throws {
        let n = NotificationRequest(
            alert: .init(title: "Goal"), priority: 5, expiration: 300, liveActivity: Self.update)
        let prepared = try prepare(n).get()
        #expect(prepared.tokens == [Self.channel])
        #expect(prepared.broadcastBundleID == "com.x")
        #expect(prepared.pushType == .liveactivity && prepared.priority == 5 && prepared.expiration == 300)
        let text = String(decoding: prepared.payload, as: UTF8.self)
        #expect(text.contains(#""event":"update""#) && text.contains(#""timestamp":100"#))
        #expect(try prepare(NotificationRequest(liveActivity: .init(event: "end"))).get().tokens == [Self.channel])
    }

    @Test("storage policy 0 takes expiration 0 only; every broadcast sends apns-expiration (0 by default)")
    func noStorage() throws {
        #expect(
            error(NotificationRequest(expiration: 300, liveActivity: Self.update), policy: .noStorage)?
                .hasPrefix("notification.expiration: must be 0") == true)
        #expect(try prepare(NotificationRequest(liveActivity: Self.update), policy: .noStorage).get().expiration == 0)
        #expect(try prepare(NotificationRequest(liveActivity: Self.update)).get().expiration == 0)
        #expect(
            try prepare(NotificationRequest(expiration: 1_900_000_000, liveActivity: Self.update)).get().expiration
                == 1_900_000_000)
    }

    @Test("a broadcast may carry 5,120 bytes, over a token push's 4,096")
    func broadcastLimit() throws {
        let state = #"{"text":"\#(String(repeating: "x", count: 4_600))"}"#
        let big = NotificationRequest(
            liveActivity: .init(event: "update", contentStateJSON: state))
        let payload = try prepare(big).get().payload
        #expect(payload.count > 4_096 && payload.count <= 5_120)
        let huge = NotificationRequest(
            liveActivity: .init(
                event: "update", contentStateJSON: #"{"text":"\#(String(repeating: "x", count: 5_200))"}"#))
        #expect(error(huge)?.contains("over the APNs limit of 5120 bytes for a broadcast") == true)
    }

    @Test("refusals name their field")
    func refusals() {
        #expect(
            error(NotificationRequest(tokens: [String(repeating: "ab", count: 32)], liveActivity: Self.update))
                == "notification.tokens: must be empty for a broadcast: the channel is the target")
        #expect(
            error(NotificationRequest(topic: "com.x", liveActivity: Self.update))?.hasPrefix("notification.topic:")
                == true)
        #expect(
            error(NotificationRequest(alert: .init(title: "x")))?.hasPrefix("notification.live_activity: is required")
                == true)
        #expect(
            error(NotificationRequest(liveActivity: .init(event: "start", contentStateJSON: "{}")))?
                .hasPrefix("notification.live_activity.event: must be update or end") == true)
        #expect(
            error(NotificationRequest(priority: 7, liveActivity: Self.update))?.hasPrefix("notification.priority")
                == true)
        #expect(
            error(NotificationRequest(badge: 1, liveActivity: Self.update))
                == "notification.badge: cannot be set with live_activity")
    }

    @Test("channel ids are base64 of bounded length")
    func channelIDs() {
        #expect(ChannelID.isValid(Self.channel))
        #expect(ChannelID.isValid("c29tZUNoYW5uZWw="))
        #expect(ChannelID.isValid("abc+/9"))
        #expect(!ChannelID.isValid(""))
        #expect(!ChannelID.isValid("not base64!"))
        #expect(!ChannelID.isValid("ab=c"), "padding only at the end")
        #expect(!ChannelID.isValid("abc==="))
        #expect(!ChannelID.isValid(String(repeating: "a", count: ChannelID.maxLength + 1)))
        #expect(!ChannelID.isValid("a\r\nx"))
    }

    @Test("channel requests: methods, paths, bodies")
    func requests() {
        let create = APNsChannelRequest(.create(.noStorage), bundleID: "com.x")
        #expect(create.method == "POST" && create.path == "/1/apps/com.x/channels" && !create.namesChannel)
        #expect(
            String(decoding: create.body, as: UTF8.self) == #"{"message-storage-policy":0,"push-type":"LiveActivity"}"#)
        #expect(APNsChannelRequest(.read, bundleID: "com.x", channelID: Self.channel).method == "GET")
        #expect(APNsChannelRequest(.delete, bundleID: "com.x", channelID: Self.channel).namesChannel)
        #expect(APNsChannelRequest(.list, bundleID: "com.x").path == "/1/apps/com.x/all-channels")
        #expect(PreparedPush.apnsChannel(APNsChannelRequest(.read, bundleID: "b", channelID: "c")).tokens == ["c"])
    }
}
