import PushCommandLine
import PushCore
import PushTLS
import PushWebPushCrypto

#if canImport(Glibc)
    import Glibc
#endif

/// `pushgate bench --mode encrypt`: what Web Push costs per message and subscriber before any
/// byte is sent, on one thread: a fresh sender key pair, the ECDH with the subscriber's key, the
/// two HKDF steps and the AES-128-GCM seal of one record (WebPushEncryption), with the key and
/// salt drawn as the gateway draws them. No gateway, no mock, no socket.
enum BenchEncryption {
    /// A plaintext the size the bench's Sends build (`{"title":…,"body":…,"data":…}`).
    static let plaintext = Array(#"{"title":"Bench","body":"Hello from pushgate bench","data":{"bench":"1"}}"#.utf8)

    static func measure(_ options: BenchOptions) -> Int32 {
        let receiver: P256KeyAgreementKey
        let auth: [UInt8]
        do {
            receiver = try P256KeyAgreementKey.generate()
            auth = try SecureRandom.bytes(count: 16)
            // Warm-up: OpenSSL's first use of the curve builds its tables.
            for _ in 0..<100 { _ = try encryptOnce(receiver, auth) }
        } catch {
            printError("pushgate bench: \(error)")
            return 3
        }
        let seconds = options.duration ?? 3
        let limit = options.count ?? Int.max
        let start = monotonicSeconds()
        var messages = 0
        var bytes = 0
        do {
            while messages < limit, monotonicSeconds() - start < seconds {
                bytes = try encryptOnce(receiver, auth).count
                messages += 1
            }
        } catch {
            printError("pushgate bench: \(error)")
            return 1
        }
        let elapsed = monotonicSeconds() - start
        let perMessage = elapsed / Double(max(messages, 1)) * 1e6
        let rate = Double(messages) / elapsed
        if options.json {
            var writer = JSONWriter()
            writer.beginObject()
            writer.key("mode")
            writer.string("encrypt")
            writer.key("messages")
            writer.int(messages)
            writer.key("seconds")
            writer.raw(String(format3(elapsed)))
            writer.key("us_per_message")
            writer.raw(String(format3(perMessage)))
            writer.key("messages_per_s")
            writer.int(Int(rate))
            writer.key("plaintext_bytes")
            writer.int(plaintext.count)
            writer.key("body_bytes")
            writer.int(bytes)
            writer.endObject()
            print(String(decoding: writer.bytes, as: UTF8.self))
        } else {
            print(
                "Web Push encryption, 1 thread: \(messages) messages in \(format3(elapsed)) s: "
                    + "\(format3(perMessage)) µs per message and subscriber (\(Int(rate)) messages/s); "
                    + "plaintext \(plaintext.count) bytes → body \(bytes) bytes")
        }
        return 0
    }

    /// One message for one subscriber, as the dialect makes it.
    private static func encryptOnce(_ receiver: P256KeyAgreementKey, _ auth: [UInt8]) throws -> [UInt8] {
        try WebPushEncryption.encrypt(
            plaintext, receiver: receiver, authSecret: auth, sender: try P256KeyAgreementKey.generate(),
            salt: try SecureRandom.bytes(count: 16))
    }

    private static func monotonicSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    private static func format3(_ value: Double) -> String {
        let scaled = (value * 1000).rounded() / 1000
        return String(scaled)
    }
}
