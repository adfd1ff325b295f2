import Glibc
import PushCore
import PushCredentials
import PushMockHMS
import PushMockSupport
import PushMockTesting
import PushPosix
import PushTLS

/// One generated account for the whole suite: an RSA-2048 key takes a moment to make.
let testAccount: HuaweiServiceAccount = try! HuaweiServiceAccount.generated(projectID: "736430079244623135")
let testSigner: RSASigner = try! testAccount.signer()

func unixNow() -> Int64 { Int64(time(nil)) }

/// A v3 JWT as Huawei's console account signs it; each argument overrides one part.
func makeJWT(
    alg: String = "PS256", kid: String = testAccount.keyID, iss: String = testAccount.subAccount,
    aud: String = HuaweiServiceAccount.audience, iat: Int64 = unixNow(), lifetime: Int64 = 3600,
    signer: RSASigner = testSigner
) throws -> String {
    let header = #"{"kid":"\#(kid)","typ":"JWT","alg":"\#(alg)"}"#
    let claims = #"{"iss":"\#(iss)","aud":"\#(aud)","iat":\#(iat),"exp":\#(iat + lifetime)}"#
    let input = base64URLEncode(Array(header.utf8)) + "." + base64URLEncode(Array(claims.utf8))
    return input + "." + base64URLEncode(try signer.sign(Array(input.utf8)))
}

/// A v3 alert body to `tokens` (push-type 0).
func v3Body(_ tokens: [String], extra: String = "") -> [UInt8] {
    let list = tokens.map { #""\#($0)""# }.joined(separator: ",")
    return Array(
        #"""
        {"payload":{"notification":{"category":"IM","title":"Hi","body":"there","clickAction":{"actionType":0}}},"target":{"token":[\#(list)]}\#(extra)}
        """#.utf8)
}

/// A v1 body to `tokens`; `message` members besides the token come from `fields`.
func v1Body(
    _ tokens: [String], fields: String = #""notification":{"title":"Hi","body":"there"}"#, validateOnly: Bool = false
) -> [UInt8] {
    let list = tokens.map { #""\#($0)""# }.joined(separator: ",")
    return Array(#"{"validate_only":\#(validateOnly),"message":{\#(fields),"token":[\#(list)]}}"#.utf8)
}

/// A mock HMS server on two loops, speaking HTTP/2 here (this client speaks HTTP/2; the rules are the
/// same in both versions, and HTTP/1.1, the default, is served by the same mock core as mock-adm's).
final class Harness: @unchecked Sendable {
    let group: EventLoopGroup
    let server: MockHMSServer

    init(_ configure: (inout MockHMSConfiguration) -> Void = { _ in }) throws {
        var configuration = try MockHMSConfiguration(serviceAccount: testAccount)
        configuration.http1 = false
        configure(&configuration)
        let group = try EventLoopGroup(loopCount: 2, namePrefix: "mock-hms-test")
        do {
            server = try MockHMSServer(configuration: configuration, group: group)
        } catch {
            group.shutdown()
            throw error
        }
        self.group = group
    }

    func client() throws -> H2Client {
        try H2Client.connect(port: server.localPort, caPEM: server.certificatePEM!, loop: group.next())
    }

    /// A v3 send; nil leaves the header out.
    func v3(
        jwt: String?, body: [UInt8], pushType: String? = "0", project: String = testAccount.projectID
    ) -> H2Request {
        var headers = [("content-type", "application/json")]
        if let jwt { headers.append(("authorization", "Bearer \(jwt)")) }
        if let pushType { headers.append(("push-type", pushType)) }
        return H2Request(path: "/v3/\(project)/messages:send", headers: headers, body: body)
    }

    /// A client-credentials token request.
    func tokenRequest(clientID: String? = nil, clientSecret: String? = nil) -> H2Request {
        let form = [
            ("grant_type", "client_credentials"), ("client_id", clientID ?? server.configuration.appID),
            ("client_secret", clientSecret ?? server.configuration.clientSecret),
        ]
        return H2Request(
            path: "/oauth2/v3/token", headers: [("content-type", "application/x-www-form-urlencoded")],
            body: Array(FormURLEncoding.encode(form).utf8))
    }

    func accessToken(_ client: H2Client) throws -> String {
        let response = try client.send(tokenRequest())
        guard response.status == 200, case .string(let token)? = response.json?["access_token"] else {
            throw ClientError("token request failed: \(response.status ?? 0) \(response.text)")
        }
        return token
    }

    /// A v1 send.
    func v1(accessToken: String?, body: [UInt8], app: String? = nil) -> H2Request {
        var headers = [("content-type", "application/json; charset=UTF-8")]
        if let accessToken { headers.append(("authorization", "Bearer \(accessToken)")) }
        return H2Request(
            path: "/v1/\(app ?? server.configuration.appID)/messages:send", headers: headers, body: body)
    }

    func shutdown() {
        server.close()
        group.shutdown()
    }

    deinit { group.shutdown() }
}

extension H2Response {
    /// Push Kit's business `code` (a JSON string).
    var code: String? { jsonString("code") }
    var msg: String? { jsonString("msg") }
    /// `msg` parsed as JSON (partial and total token failures).
    var msgJSON: JSONValue? { msg.flatMap { try? JSONParser.parse(Array($0.utf8)) } }
}
