public import PushCredentials
public import PushTLS

extension HuaweiServiceAccount {
    /// A fresh account for the mock (`pushgate mock-hms --write-service-account`): an RSA key of
    /// `bits` bits (2048 by default: Huawei's sample key looks like RSA-4096, but 2048 is made and
    /// verified several times faster, and PS256 is the same either way), an 18-digit project id (or
    /// `projectID`), a 32-hex-digit key id and a 10-digit sub-account. ``serialized()`` writes it in
    /// the console's format.
    public static func generated(projectID: String? = nil, bits: Int = 2048) throws(TLSError) -> HuaweiServiceAccount {
        let keys = try RSAKeyPair.generate(bits: bits)
        let random = try SecureRandom.bytes(count: 44)
        func digits(_ bytes: ArraySlice<UInt8>) -> String {
            // The first digit is never 0, as in Huawei's ids.
            bytes.enumerated().map { String($0.offset == 0 ? 1 + Int($0.element) % 9 : Int($0.element) % 10) }
                .joined()
        }
        let keyID = random[18..<34].map { String($0, radix: 16).leftPadded(2) }.joined()
        return try HuaweiServiceAccount(
            projectID: projectID ?? digits(random[0..<18]), keyID: keyID, subAccount: digits(random[34..<44]),
            privateKey: keys.privateKeyPEM)
    }

    /// The verifier of this account's PS256 JWTs (the public half of `private_key`).
    public func verifier() throws(TLSError) -> RSAVerifier {
        try RSAVerifier(scheme: .ps256, privateKeyPEM: privateKey)
    }
}

extension String {
    func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
