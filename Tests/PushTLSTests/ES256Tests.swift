import Foundation
import PushTLS
import PushTestSupport
import Testing

@Suite("ES256 signing")
struct ES256Tests {
    @Test("sign then verify; a changed message or signature fails")
    func roundTrip() throws {
        let (privateKeyPEM, publicKeyPEM) = try ES256Signer.generateP8()
        #expect(privateKeyPEM.hasPrefix("-----BEGIN PRIVATE KEY-----"))
        #expect(publicKeyPEM.hasPrefix("-----BEGIN PUBLIC KEY-----"))
        let signer = try ES256Signer(p8PEM: privateKeyPEM)
        let message = Array("eyJhbGciOiJFUzI1NiJ9.e30".utf8)
        let signature = try signer.sign(message)
        #expect(signature.count == 64)

        for verifier in [try ES256Verifier(publicKeyPEM: publicKeyPEM), try ES256Verifier(p8PEM: privateKeyPEM)] {
            #expect(verifier.verify(message, rawSignature: signature))
            #expect(!verifier.verify(message + [0x20], rawSignature: signature))
            var flipped = signature
            flipped[10] ^= 1
            #expect(!verifier.verify(message, rawSignature: flipped))
            #expect(!verifier.verify(message, rawSignature: Array(signature.prefix(63))))
        }
        let other = try ES256Verifier(publicKeyPEM: ES256Signer.generateP8().publicKeyPEM)
        #expect(!other.verify(message, rawSignature: signature))
        #expect(try signer.publicKeyPEM() == publicKeyPEM)
    }

    @Test("the OpenSSL CLI verifies our r‖s once DER-wrapped, and we verify its DER once unwrapped")
    func interoperatesWithOpenSSLCLI() throws {
        let (privateKeyPEM, publicKeyPEM) = try ES256Signer.generateP8()
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let key = try directory.write("key.p8", privateKeyPEM)
        let publicKey = try directory.write("pub.pem", publicKeyPEM)
        let message = Array(#"{"alg":"ES256"}.{"iss":"TEAM123456"}"#.utf8)
        let messageFile = try directory.write("message", message)

        // Ours → CLI. Many signatures so that short r or s (leading zero bytes) are exercised.
        let signer = try ES256Signer(p8PEM: privateKeyPEM)
        for round in 0..<8 {
            let raw = try signer.sign(message)
            let signatureFile = try directory.write("sig\(round).der", DER.ecdsaSignature(raw: raw))
            let result = try runOpenSSL([
                "dgst", "-sha256", "-verify", publicKey, "-signature", signatureFile, messageFile,
            ])
            #expect(result.status == 0, "openssl: \(result.output)")
        }

        // CLI → ours.
        let cliSignature = directory.path(of: "cli.der")
        let signed = try runOpenSSL(["dgst", "-sha256", "-sign", key, "-out", cliSignature, messageFile])
        try #require(signed.status == 0, "openssl: \(signed.output)")
        let raw = try #require(DER.rawECDSASignature(der: Array(Data(contentsOf: URL(fileURLWithPath: cliSignature)))))
        #expect(try ES256Verifier(publicKeyPEM: publicKeyPEM).verify(message, rawSignature: raw))
    }

    @Test(
        "keys that are not EC P-256 are rejected with a clear message",
        arguments: [
            ("P-384", NonP256Keys.p384, "curve secp384r1"),
            ("RSA", NonP256Keys.rsa1024, "key type rsaEncryption"),
            ("Ed25519", NonP256Keys.ed25519, "key type ED25519"),
        ])
    func rejectsOtherKeys(name: String, pem: String, reason: String) throws {
        let error = try #require(throws: TLSError.self) { try ES256Signer(p8PEM: pem) }
        #expect(error.kind == .certificate)
        #expect(error.message.contains("must be an EC P-256 key"), "\(error)")
        #expect(error.message.contains(reason), "\(error)")
        #expect(throws: TLSError.self) { try ES256Verifier(p8PEM: pem) }
    }

    @Test("garbage PEM fails with OpenSSL's reason")
    func garbage() throws {
        let error = try #require(throws: TLSError.self) {
            try ES256Signer(p8PEM: "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n")
        }
        #expect(error.kind == .certificate)
        #expect(error.message.contains("cannot parse private key PEM"))
    }

    @Test("the traditional SEC1 \"EC PRIVATE KEY\" form of a P-256 key loads and signs")
    func sec1Key() throws {
        let signer = try ES256Signer(p8PEM: NonP256Keys.p256SEC1)
        let verifier = try ES256Verifier(p8PEM: NonP256Keys.p256SEC1)
        #expect(verifier.verify([1, 2, 3], rawSignature: try signer.sign([1, 2, 3])))
    }

    @Test("one signer signs concurrently from many tasks")
    func concurrentSigning() async throws {
        let keys = try ES256Signer.generateP8()
        let signer = try ES256Signer(p8PEM: keys.privateKeyPEM)
        let verifier = try ES256Verifier(publicKeyPEM: keys.publicKeyPEM)
        let allValid = try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<64 {
                group.addTask {
                    let message = Array("message \(index)".utf8)
                    return verifier.verify(message, rawSignature: try signer.sign(message))
                }
            }
            return try await group.reduce(true) { $0 && $1 }
        }
        #expect(allValid)
    }
}
