import PushCore
import PushHTTP2
import PushMockSupport
import PushMockTesting
import PushMockWebPush
import PushPosix
import PushTLS
import PushTransport
import PushWebPushCrypto

let testSeed = [UInt8](0..<32)

/// A mock push service on two loops, a VAPID key, and helpers that build pushes the way a sender
/// does (RFC 8291 encryption with ``WebPushEncryption``, an ES256 VAPID JWT).
final class Harness: @unchecked Sendable {
    let group: EventLoopGroup
    let server: MockWebPushServer
    let vapidKey: ES256Signer

    init(seed: [UInt8] = testSeed, _ configure: (inout MockWebPushConfiguration) -> Void = { _ in }) throws {
        var configuration = MockWebPushConfiguration(keySeed: seed)
        configure(&configuration)
        let group = try EventLoopGroup(loopCount: 2, namePrefix: "mock-webpush-test")
        do {
            server = try MockWebPushServer(configuration: configuration, group: group)
        } catch {
            group.shutdown()
            throw error
        }
        self.group = group
        vapidKey = try ES256Signer(p8PEM: try ES256Signer.generateP8().privateKeyPEM)
    }

    var origin: String { "https://127.0.0.1:\(server.localPort)" }

    func client() throws -> H2Client {
        try H2Client.connect(port: server.localPort, caPEM: server.certificatePEM!, loop: group.next())
    }

    /// A compact ES256 JWT with these claims (nil leaves one out), signed by `signer`.
    func jwt(
        aud: String? = nil, exp: Int64? = nil, sub: String? = "mailto:ops@example.com",
        header: String = #"{"typ":"JWT","alg":"ES256"}"#, signer: ES256Signer? = nil
    ) throws -> String {
        var writer = JSONWriter()
        writer.beginObject()
        writer.key("aud")
        writer.string(aud ?? origin)
        writer.key("exp")
        writer.int(exp ?? wallClockSeconds() + 12 * 3600)
        if let sub {
            writer.key("sub")
            writer.string(sub)
        }
        writer.endObject()
        let input = base64URLEncode(Array(header.utf8)) + "." + base64URLEncode(writer.bytes)
        return input + "." + base64URLEncode(try (signer ?? vapidKey).sign(Array(input.utf8)))
    }

    /// `vapid t=<jwt>, k=<this harness's public point>`.
    func authorization(_ jwt: String) throws -> String {
        "vapid t=\(jwt), k=\(base64URLEncode(try vapidKey.publicPoint()))"
    }

    /// `plaintext` encrypted for `subscription` (fresh sender key and salt).
    static func encrypt(_ plaintext: String, for subscription: MockWebPushSubscription) throws -> [UInt8] {
        let receiver = P256KeyAgreementKey.publicKey(point: subscription.p256dh)!
        return try WebPushEncryption.encrypt(
            Array(plaintext.utf8), receiver: receiver, authSecret: subscription.auth, sender: try .generate(),
            salt: try SecureRandom.bytes(count: 16))
    }

    /// A push to subscription `id`; `headers` replace or (with a nil value) remove the defaults
    /// (TTL 60, Content-Encoding aes128gcm, a valid VAPID Authorization).
    func push(
        to id: String = "alice", _ plaintext: String = "hello", body: [UInt8]? = nil,
        headers overrides: [(String, String?)] = []
    ) throws -> H2Request {
        let subscription = try server.subscription(id: id)
        var headers: [(String, String?)] = [
            ("ttl", "60"), ("content-encoding", "aes128gcm"), ("authorization", try authorization(try jwt())),
        ]
        for (name, value) in overrides {
            if let index = headers.firstIndex(where: { $0.0 == name }) {
                headers[index].1 = value
            } else {
                headers.append((name, value))
            }
        }
        return H2Request(
            path: "/wpush/v2/\(id)", headers: headers.compactMap { name, value in value.map { (name, $0) } },
            body: try body ?? Self.encrypt(plaintext, for: subscription))
    }

    func shutdown() {
        server.close()
        group.shutdown()
    }

    deinit { group.shutdown() }
}

extension H2Response {
    /// autopush's error members.
    var errno: Int? {
        if case .number(let text)? = json?["errno"] { return Int(text) }
        return nil
    }
    var message: String? { jsonString("message") }
}
