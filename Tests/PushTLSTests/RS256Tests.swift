import Foundation
import PushTLS
import PushTestSupport
import Testing

/// One 2048-bit key for the whole suite: RSA generation costs tens of milliseconds.
let sharedRSAKeys = try! RSAKeyPair.generate()

@Suite("RS256 signing and verification")
struct RS256Tests {
    @Test("sign then verify; a changed message, signature or key fails")
    func roundTrip() throws {
        let keys = sharedRSAKeys
        #expect(keys.privateKeyPEM.hasPrefix("-----BEGIN PRIVATE KEY-----"), "PKCS#8, as service accounts hold")
        #expect(keys.publicKeyPEM.hasPrefix("-----BEGIN PUBLIC KEY-----"))
        let signer = try RSASigner(scheme: .rs256, pem: keys.privateKeyPEM)
        #expect(signer.publicKeyPEM == keys.publicKeyPEM)
        let message = Array("eyJhbGciOiJSUzI1NiJ9.e30".utf8)
        let signature = try signer.sign(message)
        #expect(signature.count == 256, "as long as a 2048-bit modulus")
        #expect(try signer.sign(message) == signature, "PKCS#1 v1.5 is deterministic")

        for verifier in [
            try RSAVerifier(scheme: .rs256, publicKeyPEM: keys.publicKeyPEM),
            try RSAVerifier(scheme: .rs256, privateKeyPEM: keys.privateKeyPEM),
        ] {
            #expect(verifier.verify(signature, for: message))
            #expect(!verifier.verify(signature, for: message + [0x20]))
            var flipped = signature
            flipped[100] ^= 1
            #expect(!verifier.verify(flipped, for: message))
            #expect(!verifier.verify(Array(signature.prefix(255)), for: message))
            #expect(!verifier.verify([], for: message))
        }
        let other = try RSAVerifier(scheme: .rs256, publicKeyPEM: RSAKeyPair.generate().publicKeyPEM)
        #expect(!other.verify(signature, for: message))
    }

    @Test("the OpenSSL CLI makes the same signature byte for byte, and verifies ours")
    func interoperatesWithOpenSSLCLI() throws {
        let keys = sharedRSAKeys
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let key = try directory.write("key.pem", keys.privateKeyPEM)
        let publicKey = try directory.write("pub.pem", keys.publicKeyPEM)
        let message = Array(#"{"alg":"RS256","typ":"JWT"}.{"iss":"a@b.c"}"#.utf8)
        let messageFile = try directory.write("message", message)

        let ours = try RSASigner(scheme: .rs256, pem: keys.privateKeyPEM).sign(message)
        let signatureFile = try directory.write("ours.sig", ours)
        let verified = try runOpenSSL([
            "dgst", "-sha256", "-verify", publicKey, "-signature", signatureFile, messageFile,
        ])
        #expect(verified.status == 0, "openssl: \(verified.output)")

        let cliSignature = directory.path(of: "cli.sig")
        let signed = try runOpenSSL(["dgst", "-sha256", "-sign", key, "-out", cliSignature, messageFile])
        try #require(signed.status == 0, "openssl: \(signed.output)")
        let theirs = Array(try Data(contentsOf: URL(fileURLWithPath: cliSignature)))
        #expect(theirs == ours, "RSASSA-PKCS1-v1_5 with SHA-256, not PSS")
    }

    @Test("a PKCS#1 (BEGIN RSA PRIVATE KEY) key loads and signs like its PKCS#8 form")
    func pkcs1Key() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let key = try directory.write("key.pem", sharedRSAKeys.privateKeyPEM)
        let converted = try runOpenSSL(["rsa", "-in", key, "-traditional"])
        try #require(converted.status == 0, "openssl: \(converted.output)")
        let pkcs1 = String(
            converted.output[converted.output.range(of: "-----BEGIN RSA PRIVATE KEY-----")!.lowerBound...])
        let message = Array("hello".utf8)
        let signer = try RSASigner(scheme: .rs256, pem: pkcs1)
        #expect(try signer.sign(message) == RSASigner(scheme: .rs256, pem: sharedRSAKeys.privateKeyPEM).sign(message))
        #expect(signer.publicKeyPEM == sharedRSAKeys.publicKeyPEM)
        #expect(try RSAVerifier(scheme: .rs256, privateKeyPEM: pkcs1).verify(signer.sign(message), for: message))
    }

    @Test("EC keys, RSA keys under 2048 bits and garbage are refused")
    func refusedKeys() throws {
        let ec = try ES256Signer.generateP8()
        for pem in [ec.privateKeyPEM, NonP256Keys.rsa1024, NonP256Keys.ed25519, "not a key"] {
            #expect(throws: TLSError.self) { try RSASigner(scheme: .rs256, pem: pem) }
            #expect(throws: TLSError.self) { try RSAVerifier(scheme: .rs256, privateKeyPEM: pem) }
        }
        #expect(throws: TLSError.self) { try RSAVerifier(scheme: .rs256, publicKeyPEM: ec.publicKeyPEM) }
        let error = try #require(throws: TLSError.self) { try RSASigner(scheme: .rs256, pem: NonP256Keys.rsa1024) }
        #expect(error.message.contains("at least 2048 bits, got 1024"))
        #expect(throws: TLSError.self) { try RSAKeyPair.generate(bits: 1024) }
    }
}
