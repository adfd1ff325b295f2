import PushTLS

/// A subscription's receiver key pair and auth secret, derived from the server's key seed and the
/// subscription id, so that subscriptions cost no memory and the same seed gives the same ones:
/// `HKDF-SHA-256(salt: "pushgate mock-webpush v1", ikm: seed, info: "subscription" 0x00 id 0x00
/// counter, 48 bytes)`, the first 32 the private scalar, the last 16 the auth secret; the counter
/// (from 0) goes up while the scalar is not in 1..n-1 (about one seed in 2^32).
struct SubscriptionKeys: Sendable {
    let receiver: P256KeyAgreementKey
    let privateScalar: [UInt8]
    let authSecret: [UInt8]

    static let salt = Array("pushgate mock-webpush v1".utf8)

    static func derive(seed: [UInt8], id: String) throws(TLSError) -> SubscriptionKeys {
        for counter in UInt8(0)...UInt8(255) {
            let info = Array("subscription".utf8) + [0] + Array(id.utf8) + [0, counter]
            let bytes = try HKDF.sha256(salt: salt, ikm: seed, info: info, count: 48)
            let scalar = Array(bytes[0..<32])
            if let receiver = P256KeyAgreementKey.keyPair(privateScalar: scalar) {
                return SubscriptionKeys(receiver: receiver, privateScalar: scalar, authSecret: Array(bytes[32..<48]))
            }
        }
        throw TLSError(.certificate, "no P-256 scalar for subscription \(id) in 256 tries")
    }
}
