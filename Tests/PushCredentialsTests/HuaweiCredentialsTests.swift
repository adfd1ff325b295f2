import PushTLS
import Testing

@testable import PushCredentials

@Suite("Huawei service account and JWT")
struct HuaweiCredentialsTests {
    static func accountJSON(_ fields: [(String, String)]) -> [UInt8] {
        FlatJSONObject.serialize(fields.map { ($0.0, .string($0.1)) })
    }

    static let fields = [
        ("project_id", "101234567"), ("key_id", "key-1"), ("private_key", sharedRSAKeys.privateKeyPEM),
        ("sub_account", "987654321"), ("token_uri", "https://oauth-login.cloud.huawei.com/oauth2/v3/token"),
    ]

    @Test("the console's key file parses; a missing field or a bad project id is named")
    func parsing() throws {
        let account = try HuaweiServiceAccount(json: Self.accountJSON(Self.fields))
        #expect(account.projectID == "101234567" && account.keyID == "key-1" && account.subAccount == "987654321")
        #expect(!account.description.contains("PRIVATE KEY"))
        #expect(try HuaweiServiceAccount(json: account.serialized()) == account)
        #expect(throws: TLSError.self) {
            try HuaweiServiceAccount(json: Self.accountJSON(Self.fields.filter { $0.0 != "sub_account" }))
        }
        let bad = Self.fields.map { $0.0 == "project_id" ? ($0.0, "../x") : $0 }
        #expect(throws: TLSError.self) { try HuaweiServiceAccount(json: Self.accountJSON(bad)) }
    }

    @Test("the JWT: kid, typ, PS256; iss sub_account, the fixed aud, exp an hour after iat; PS256-signed")
    func jwt() throws {
        let account = try HuaweiServiceAccount(json: Self.accountJSON(Self.fields))
        let token = try HuaweiJWT.make(account: account, issuedAt: 1_700_000_000, signer: account.signer())
        guard case .success(let jws) = CompactJWS.parse(token) else {
            Issue.record("not a compact JWS")
            return
        }
        #expect(jws.header.fields["alg"] == .string("PS256") && jws.header.fields["kid"] == .string("key-1"))
        #expect(jws.header.fields["typ"] == .string("JWT"))
        #expect(jws.claims.fields["iss"] == .string("987654321"))
        #expect(jws.claims.fields["aud"] == .string("https://oauth-login.cloud.huawei.com/oauth2/v3/token"))
        #expect(
            jws.claims.fields["iat"] == .integer(1_700_000_000) && jws.claims.fields["exp"] == .integer(1_700_003_600))
        #expect(
            try RSAVerifier(scheme: .ps256, publicKeyPEM: sharedRSAKeys.publicKeyPEM).verify(
                jws.signature, for: jws.signingInput))
    }
}
