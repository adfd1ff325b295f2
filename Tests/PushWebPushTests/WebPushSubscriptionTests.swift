import PushCore
import PushTLS
import PushTransport
import Testing

@testable import PushWebPush

/// Subscriptions are checked field by field before anything is sent (docs/providers.md F.1, F.8).
@Suite struct WebPushSubscriptionTests {
    /// RFC 8291 Appendix A's receiver key and auth secret.
    static let p256dh = "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"
    static let auth = "BTBZMqHH6r4Tts7J_aSIgg"

    static func token(
        endpoint: String = "https://updates.push.services.mozilla.com/wpush/v2/gAAAAABf", p256dh: String = p256dh,
        auth: String = auth, extra: String = ""
    ) -> String {
        #"{"endpoint":"\#(endpoint)","expirationTime":null,"keys":{"p256dh":"\#(p256dh)","auth":"\#(auth)"}\#(extra)}"#
    }

    let hosts = try! WebPushHostPolicy()

    func error(_ token: String, hosts: WebPushHostPolicy? = nil) -> String? {
        do {
            _ = try WebPushSubscription(token, field: "tokens[0]", hosts: hosts ?? self.hosts)
            return nil
        } catch {
            return error.description
        }
    }

    @Test func browserSubscriptionParses() throws {
        let subscription = try WebPushSubscription(Self.token(), field: "tokens[0]", hosts: hosts)
        #expect(subscription.origin == HTTPSOrigin(host: "updates.push.services.mozilla.com", port: 443))
        #expect(subscription.target == "/wpush/v2/gAAAAABf")
        #expect(subscription.p256dh.count == 65)
        #expect(subscription.auth.count == 16)
        #expect(
            subscription.canonicalJSON
                == #"{"endpoint":"https://updates.push.services.mozilla.com/wpush/v2/gAAAAABf","keys":{"p256dh":"\#(Self.p256dh)","auth":"\#(Self.auth)"}}"#
        )
    }

    @Test func paddedKeysAndWNSQueryAreAccepted() throws {
        let token = Self.token(
            endpoint: "https://wns2-par02p.notify.windows.com/w/?token=BQYAAAB%2b", auth: Self.auth + "==")
        let subscription = try WebPushSubscription(token, field: "tokens[0]", hosts: hosts)
        #expect(subscription.origin.host == "wns2-par02p.notify.windows.com")
        #expect(subscription.target == "/w/?token=BQYAAAB%2b")
    }

    @Test func everyBadFieldIsNamed() {
        #expect(error("not json")?.hasPrefix("tokens[0]: must be a push subscription") == true)
        #expect(error("[1]")?.hasPrefix("tokens[0]: must be a JSON object") == true)
        #expect(error(#"{"keys":{}}"#)?.hasPrefix("tokens[0].endpoint: is required") == true)
        #expect(
            error(Self.token(endpoint: "http://fcm.googleapis.com/fcm/send/x"))?.hasPrefix(
                "tokens[0].endpoint: must be an https:// URL") == true)
        #expect(
            error(Self.token(endpoint: "https://evil.example/x"))?.hasPrefix(
                #"tokens[0].endpoint: "evil.example" is not an allowed push service"#) == true)
        #expect(
            error(Self.token(endpoint: "https://10.0.0.5/admin"))?.hasPrefix(
                "tokens[0].endpoint: 10.0.0.5 is an IP address") == true)
        #expect(
            error(Self.token(endpoint: "https://[::1]/admin"))?.hasPrefix("tokens[0].endpoint: [::1] is an IP address")
                == true)
        #expect(
            error(Self.token(endpoint: "https://fcm.googleapis.com:8080/fcm/send/x"))?.hasPrefix(
                "tokens[0].endpoint: port 8080 of fcm.googleapis.com is not allowed") == true)
        #expect(
            error(Self.token(endpoint: "https://user@fcm.googleapis.com/fcm/send/x"))?.hasPrefix(
                "tokens[0].endpoint: has no valid host") == true)
        #expect(
            error(Self.token(endpoint: "https://fcm.googleapis.com/fcm/send/a b"))?.hasPrefix(
                "tokens[0].endpoint: has a byte not allowed") == true)
        #expect(
            error(Self.token(endpoint: "https://fcm.googleapis.com"))?.hasPrefix("tokens[0].endpoint: has no path")
                == true)
        #expect(
            error(Self.token(endpoint: "https://notify.windows.com.evil.example/w/"))?.contains(
                "is not an allowed push service") == true)
        #expect(
            error(Self.token(p256dh: "BCVx"))?.hasPrefix("tokens[0].keys.p256dh: is 3 bytes; it must be 65") == true)
        #expect(error(Self.token(p256dh: "BCVx.!"))?.hasPrefix("tokens[0].keys.p256dh: is not base64url") == true)
        #expect(
            error(Self.token(endpoint: "https://permanently-removed.invalid/fcm/send/x"))?.contains("subscribe again")
                == true)
        // 65 bytes, but not on the curve.
        let offCurve = base64URLEncode([0x04] + [UInt8](repeating: 1, count: 64))
        #expect(
            error(Self.token(p256dh: offCurve))?.hasPrefix("tokens[0].keys.p256dh: is not a point on P-256") == true)
        #expect(error(Self.token(auth: "AAAA"))?.hasPrefix("tokens[0].keys.auth: is 3 bytes; it must be 16") == true)
        #expect(
            error(Self.token(extra: #","contentEncoding":"aes128gcm""#))?.hasPrefix(
                "tokens[0].contentEncoding: is not a member") == true)
        #expect(
            error(#"{"endpoint":"https://fcm.googleapis.com/fcm/send/x","expirationTime":"soon","keys":{}}"#)?
                .hasPrefix("tokens[0].expirationTime: must be null or a number") == true)
        #expect(
            error(#"{"endpoint":"https://fcm.googleapis.com/fcm/send/x"}"#)?.hasPrefix("tokens[0].keys: is required")
                == true)
        #expect(error(String(repeating: " ", count: 5000))?.hasPrefix("tokens[0]: is 5000 bytes") == true)
    }

    @Test func allowedHostsEntries() throws {
        let policy = try WebPushHostPolicy(["localhost:8443", "*.push.example.com", "127.0.0.1:9000"])
        #expect(error(Self.token(endpoint: "https://localhost:8443/wpush/v2/a"), hosts: policy) == nil)
        #expect(error(Self.token(endpoint: "https://LOCALHOST:8443/wpush/v2/a"), hosts: policy) == nil)
        #expect(
            error(Self.token(endpoint: "https://localhost/wpush/v2/a"), hosts: policy)?.contains(
                "port 443 of localhost is not allowed") == true)
        #expect(error(Self.token(endpoint: "https://a.b.push.example.com/x"), hosts: policy) == nil)
        #expect(error(Self.token(endpoint: "https://push.example.com/x"), hosts: policy) != nil)
        #expect(error(Self.token(endpoint: "https://127.0.0.1:9000/x"), hosts: policy) == nil, "an IP listed exactly")
        #expect(
            error(Self.token(endpoint: "https://fcm.googleapis.com/fcm/send/x"), hosts: policy) != nil,
            "the defaults are replaced")
        #expect(throws: WebPushHostPolicyError.self) { try WebPushHostPolicy(["https://x.example"]) }
        #expect(throws: WebPushHostPolicyError.self) { try WebPushHostPolicy(["*.10.0.0.1"]) }
        #expect(throws: WebPushHostPolicyError.self) { try WebPushHostPolicy(["a.*.example"]) }
        #expect(throws: WebPushHostPolicyError.self) { try WebPushHostPolicy([""]) }
    }
}

@Suite struct WebPushSubscriptionCacheTests {
    @Test func parsesOnceAndStaysBounded() throws {
        let hosts = try WebPushHostPolicy()
        let cache = WebPushSubscriptionCache(limit: 2)
        let token = WebPushSubscriptionTests.token()
        let first = try cache.subscription(token, hosts: hosts)
        #expect(try cache.subscription(token, hosts: hosts) == first)
        #expect(cache.count == 1)
        for i in 0..<3 {
            _ = try cache.subscription(
                WebPushSubscriptionTests.token(endpoint: "https://fcm.googleapis.com/fcm/send/\(i)"), hosts: hosts)
        }
        #expect(cache.count <= 2)
        #expect(throws: ValidationError.self) { try cache.subscription("{}", hosts: hosts) }
    }
}
