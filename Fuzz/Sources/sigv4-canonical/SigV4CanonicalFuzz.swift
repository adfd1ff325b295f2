// Fuzzes Signature Version 4: the canonical request of arbitrary requests, and verification of
// requests signed here with the right secret and checked with a wrong one.
//
// Input: the method and the request target (each up to a NUL byte), a byte whose low 3 bits count
// the headers, each header a short name and a short value, then the body.
//
// Invariants: no crash; the canonical request is the same when computed twice; a request signed
// with the right secret never fails as a signature mismatch, and one checked with a wrong secret
// never passes.
import FuzzSupport
import PushAWSQuery
import PushTLS

@_cdecl("sigv4_canonical_main")
func sigv4CanonicalMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv, fuzz)
}

private let secret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
private let timestamp = "20150830T123600Z"
private let now: Int64 = 1_440_938_160

private func hex(_ bytes: [UInt8]) -> String {
    bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    var input = FuzzInput(start, count)
    let method = String(decoding: input.field(), as: UTF8.self)
    let target = String(decoding: input.field(), as: UTF8.self)
    var headers: [(name: String, value: String)] = [("host", "sns.us-east-1.amazonaws.com"), ("x-amz-date", timestamp)]
    for _ in 0..<(input.byte() & 7) {
        headers.append((input.shortString().lowercased(), input.shortString()))
    }
    let body = Array(input.rest())
    var request = SigV4Request(method: method, target: target, headers: headers, body: body)

    // Headers whose names an Authorization header can list.
    let signable = headers.map(\.name).filter { name in
        !name.isEmpty && name.utf8.allSatisfy { (97...122).contains($0) || (48...57).contains($0) || $0 == 45 }
    }
    let signed = Array(Set(signable)).sorted()
    let payloadHash = hex(SHA256.hash(body))
    let canonical: String
    do {
        canonical = try SigV4Verifier.canonicalRequest(request, signedHeaders: signed, payloadHash: payloadHash)
    } catch {
        fuzzCheck(false, "a present header could not be canonicalized: \(error)")
        return 0
    }
    let twice = try? SigV4Verifier.canonicalRequest(request, signedHeaders: signed.reversed(), payloadHash: payloadHash)
    fuzzCheck(twice == canonical, "canonical request not deterministic")
    _ = try? SigV4Verifier.canonicalRequest(request, signedHeaders: headers.map(\.name), payloadHash: payloadHash)

    let scope = "20150830/us-east-1/sns/aws4_request"
    let key = SigV4Verifier.signingKey(secret: secret, date: "20150830", region: "us-east-1", service: "sns")
    let signature = HMACSHA256.authenticationCode(
        key: key,
        message: Array(SigV4Verifier.stringToSign(timestamp: timestamp, scope: scope, canonicalRequest: canonical).utf8)
    )
    request.headers.append(
        (
            "authorization",
            "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/\(scope), SignedHeaders=\(signed.joined(separator: ";")),"
                + " Signature=\(hex(signature))"
        ))
    let verifier = SigV4Verifier(region: "us-east-1", service: "sns")
    do {
        _ = try verifier.verify(request, now: now, secret: { _ in secret })
    } catch {
        // Fuzzed headers may add a second Authorization, a token, another date or a payload hash;
        // but what was signed with the right secret must never differ in its signature.
        if case .signatureMismatch(let text) = error {
            fuzzCheck(!text.hasPrefix("The request signature we calculated"), "own signature refused")
        }
        fuzzCheck(!error.description.contains(secret), "the secret in an error")
    }
    do {
        _ = try verifier.verify(request, now: now, secret: { _ in secret + "x" })
        fuzzCheck(false, "a wrong secret verified")
    } catch {
        fuzzCheck(!error.description.contains(secret), "the secret in an error")
    }
    return 0
}
