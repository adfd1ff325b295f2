import Foundation
import PushTLS
import PushTestSupport
import Testing

@Suite("PS256 signing and verification")
struct PS256Tests {
    @Test("sign then verify; PSS is randomized; RS256 and PS256 do not verify each other")
    func roundTrip() throws {
        let keys = sharedRSAKeys
        let signer = try RSASigner(scheme: .ps256, pem: keys.privateKeyPEM)
        let message = Array("eyJhbGciOiJQUzI1NiJ9.e30".utf8)
        let signature = try signer.sign(message)
        #expect(signature.count == 256)
        #expect(try signer.sign(message) != signature, "a fresh salt each time")
        let verifier = try RSAVerifier(scheme: .ps256, publicKeyPEM: keys.publicKeyPEM)
        #expect(verifier.verify(signature, for: message))
        #expect(try RSAVerifier(scheme: .ps256, privateKeyPEM: keys.privateKeyPEM).verify(signature, for: message))
        #expect(!verifier.verify(signature, for: message + [0x20]))
        #expect(!(try RSAVerifier(scheme: .rs256, publicKeyPEM: keys.publicKeyPEM)).verify(signature, for: message))
        #expect(!verifier.verify(try RSASigner(scheme: .rs256, pem: keys.privateKeyPEM).sign(message), for: message))
    }

    @Test("the OpenSSL CLI verifies ours as RSASSA-PSS, SHA-256, salt length 32, and we verify its")
    func interoperatesWithOpenSSLCLI() throws {
        let keys = sharedRSAKeys
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let key = try directory.write("key.pem", keys.privateKeyPEM)
        let publicKey = try directory.write("pub.pem", keys.publicKeyPEM)
        let message = Array(#"{"alg":"PS256","typ":"JWT"}.{"iss":"1234"}"#.utf8)
        let messageFile = try directory.write("message", message)
        let pss = ["-sigopt", "rsa_padding_mode:pss", "-sigopt", "rsa_pss_saltlen:32"]
        let signatureFile = try directory.write(
            "ours.sig", try RSASigner(scheme: .ps256, pem: keys.privateKeyPEM).sign(message))
        let verified = try runOpenSSL(
            ["dgst", "-sha256"] + pss + ["-verify", publicKey, "-signature", signatureFile, messageFile])
        #expect(verified.status == 0, "openssl: \(verified.output)")
        let cliSignature = directory.path(of: "cli.sig")
        let signed = try runOpenSSL(["dgst", "-sha256"] + pss + ["-sign", key, "-out", cliSignature, messageFile])
        try #require(signed.status == 0, "openssl: \(signed.output)")
        let theirs = Array(try Data(contentsOf: URL(fileURLWithPath: cliSignature)))
        #expect(try RSAVerifier(scheme: .ps256, publicKeyPEM: keys.publicKeyPEM).verify(theirs, for: message))
    }
}
