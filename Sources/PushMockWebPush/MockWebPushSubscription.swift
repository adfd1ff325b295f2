import PushCore
import PushTLS

/// A subscription of the mock push service, as a browser's `PushSubscription` describes it.
public struct MockWebPushSubscription: Sendable, Equatable {
    public let id: String
    /// `https://<authority>/wpush/v2/<id>` (Mozilla's path shape).
    public let endpoint: String
    /// The receiver's public key, 65 bytes uncompressed (`keys.p256dh`).
    public let p256dh: [UInt8]
    /// The 16-byte auth secret (`keys.auth`).
    public let auth: [UInt8]
    /// The receiver's 32-byte private scalar, which a browser keeps to itself: given out by the
    /// mock so that an independent decryptor can read the messages.
    public let privateKey: [UInt8]

    init(id: String, authority: String, keys: SubscriptionKeys) {
        self.id = id
        endpoint = "https://\(authority)/wpush/v2/\(id)"
        p256dh = keys.receiver.publicPoint
        auth = keys.authSecret
        privateKey = keys.privateScalar
    }

    /// Exactly `PushSubscription.toJSON()`:
    /// `{"endpoint":"…","expirationTime":null,"keys":{"p256dh":"…","auth":"…"}}`.
    public var browserJSON: [UInt8] {
        var writer = JSONWriter(reservingCapacity: 256)
        write(to: &writer, privateKey: false)
        return writer.bytes
    }

    /// ``browserJSON`` with a `"private_key"` member (base64url of the scalar) after `keys`.
    public var json: [UInt8] {
        var writer = JSONWriter(reservingCapacity: 320)
        write(to: &writer, privateKey: true)
        return writer.bytes
    }

    func write(to writer: inout JSONWriter, privateKey withPrivateKey: Bool) {
        writer.beginObject()
        writer.key("endpoint")
        writer.string(endpoint)
        writer.key("expirationTime")
        writer.null()
        writer.key("keys")
        writer.beginObject()
        writer.key("p256dh")
        writer.string(base64URLEncode(p256dh))
        writer.key("auth")
        writer.string(base64URLEncode(auth))
        writer.endObject()
        if withPrivateKey {
            writer.key("private_key")
            writer.string(base64URLEncode(privateKey))
        }
        writer.endObject()
    }
}
