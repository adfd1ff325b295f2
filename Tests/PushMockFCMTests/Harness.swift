import Glibc
import PushCore
import PushCredentials
import PushMockFCM
import PushMockTesting
import PushPosix
import PushTLS

/// One RSA key for every test (generation costs tens of milliseconds).
let testKey = try! RSAKeyPair.generate()
let testProject = "pushgate-mock"
let testClientEmail = "pushgate-mock@pushgate-mock.iam.gserviceaccount.com"
let sampleToken = "fcm-token-" + String(repeating: "a1B2", count: 35)

/// A `messages:send` body for `token` with optional extra message members (JSON text).
func sendBody(token: String = sampleToken, extra: String = #","data":{"k":"v"}"#, validateOnly: Bool? = nil) -> [UInt8]
{
    let flag = validateOnly.map { #","validate_only":\#($0)"# } ?? ""
    return Array(#"{"message":{"token":"\#(token)"\#(extra)}\#(flag)}"#.utf8)
}

/// A mock FCM server on two loops, its service account, and helpers for the token and send calls.
final class Harness: @unchecked Sendable {
    let group: EventLoopGroup
    let server: MockFCMServer
    let account: GoogleServiceAccount
    let signer: RSASigner

    init(_ configure: (inout MockFCMConfiguration) -> Void = { _ in }) throws {
        var configuration = MockFCMConfiguration(
            projectID: testProject, clientEmail: testClientEmail,
            assertionVerifier: try RSAVerifier(scheme: .rs256, publicKeyPEM: testKey.publicKeyPEM))
        configure(&configuration)
        group = try EventLoopGroup(loopCount: 2, namePrefix: "mock-fcm-test")
        do {
            server = try MockFCMServer(configuration: configuration, group: group)
            account = try server.serviceAccount(privateKeyPEM: testKey.privateKeyPEM)
            signer = try account.signer()
        } catch {
            group.shutdown()
            throw error
        }
    }

    func client() throws -> H2Client {
        try H2Client.connect(port: server.localPort, caPEM: server.certificatePEM!, loop: group.next())
    }

    /// An assertion of this harness's account (or another's `signer`), valid now by default.
    func assertion(
        audience: String? = nil, scope: String = OAuthAssertion.firebaseMessagingScope, issuedAt: Int64 = wallSeconds(),
        lifetime: Int64 = 3600, account: GoogleServiceAccount? = nil, signer: RSASigner? = nil
    ) throws -> String {
        try OAuthAssertion.make(
            account: account ?? self.account, audience: audience ?? server.tokenURL, scope: scope, issuedAt: issuedAt,
            lifetime: lifetime, signer: signer ?? self.signer)
    }

    func tokenRequest(
        assertion: String, grantType: String = "urn:ietf:params:oauth:grant-type:jwt-bearer",
        contentType: String = "application/x-www-form-urlencoded"
    ) -> H2Request {
        H2Request(
            path: "/token", headers: [("content-type", contentType)],
            body: Array(FormURLEncoding.encode([("grant_type", grantType), ("assertion", assertion)]).utf8))
    }

    /// Exchanges a fresh assertion for an access token.
    func accessToken(_ client: H2Client) throws -> String {
        let response = try client.send(tokenRequest(assertion: try assertion()))
        guard response.status == 200, case .string(let token)? = response.json?["access_token"] else {
            throw ClientError("token request failed: \(response.status ?? 0) \(response.text)")
        }
        return token
    }

    func sendRequest(accessToken: String?, body: [UInt8] = sendBody(), project: String = testProject) -> H2Request {
        var headers = [("content-type", "application/json")]
        if let accessToken { headers.append(("authorization", "Bearer \(accessToken)")) }
        return H2Request(path: "/v1/projects/\(project)/messages:send", headers: headers, body: body)
    }

    func shutdown() {
        server.close()
        group.shutdown()
    }

    deinit { group.shutdown() }
}

extension H2Response {
    /// `error.status`, `details[FcmError].errorCode` and the first BadRequest field of an FCM error.
    var fcmStatus: String? {
        if case .string(let status)? = json?["error"]?["status"] { return status }
        return nil
    }

    var fcmErrorCode: String? {
        guard case .array(let details)? = json?["error"]?["details"] else { return nil }
        for detail in details {
            if case .string("type.googleapis.com/google.firebase.fcm.v1.FcmError")? = detail["@type"],
                case .string(let code)? = detail["errorCode"]
            {
                return code
            }
        }
        return nil
    }

    var violatedField: String? {
        guard case .array(let details)? = json?["error"]?["details"] else { return nil }
        for detail in details {
            if case .array(let violations)? = detail["fieldViolations"],
                case .string(let field)? = violations.first?["field"]
            {
                return field
            }
        }
        return nil
    }
}
