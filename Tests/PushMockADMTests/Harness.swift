import PushCore
import PushCredentials
import PushMockADM
import PushMockSupport
import PushMockTesting
import PushPosix
import PushTLS

let testCredentials = MockADMCredentials(
    clientID: "amzn1.application-oa2-client.0123456789abcdef0123456789abcdef", clientSecret: "s3cret+/&=secret")
let sampleRegistrationID = "amzn1.adm-registration.v3.Y29tLmV4YW1wbGUuYXBw" + String(repeating: "Qk", count: 40)

/// A send body: `data` (JSON text) and extra members (JSON text starting with a comma).
func admBody(data: String = #"{"k":"v"}"#, extra: String = "") -> [UInt8] {
    Array(#"{"data":\#(data)\#(extra)}"#.utf8)
}

/// A mock ADM server on two loops, and helpers for the token and send calls. It speaks HTTP/2 here
/// (the ADM rules are the same in both versions; this client speaks HTTP/2); its default,
/// HTTP/1.1, is tested with curl in Tests/interop.
final class Harness: @unchecked Sendable {
    let group: EventLoopGroup
    let server: MockADMServer

    init(_ configure: (inout MockADMConfiguration) -> Void = { _ in }) throws {
        var configuration = MockADMConfiguration(credentials: testCredentials)
        configuration.http1 = false
        configure(&configuration)
        let group = try EventLoopGroup(loopCount: 2, namePrefix: "mock-adm-test")
        do {
            server = try MockADMServer(configuration: configuration, group: group)
        } catch {
            group.shutdown()
            throw error
        }
        self.group = group
    }

    func client() throws -> H2Client {
        try H2Client.connect(port: server.localPort, caPEM: server.certificatePEM!, loop: group.next())
    }

    /// A Login-with-Amazon client-credentials request; nil leaves a parameter out.
    func tokenRequest(
        clientID: String? = testCredentials.clientID, clientSecret: String? = testCredentials.clientSecret,
        scope: String? = "messaging:push", grantType: String = "client_credentials",
        contentType: String = "application/x-www-form-urlencoded;charset=UTF-8", path: String = "/auth/o2/token"
    ) -> H2Request {
        var form = [("grant_type", grantType)]
        for (name, value) in [("scope", scope), ("client_id", clientID), ("client_secret", clientSecret)] {
            if let value { form.append((name, value)) }
        }
        return H2Request(
            path: path, headers: [("content-type", contentType)], body: Array(FormURLEncoding.encode(form).utf8))
    }

    /// Exchanges the client credentials for an access token.
    func accessToken(_ client: H2Client) throws -> String {
        let response = try client.send(tokenRequest())
        guard response.status == 200, case .string(let token)? = response.json?["access_token"] else {
            throw ClientError("token request failed: \(response.status ?? 0) \(response.text)")
        }
        return token
    }

    /// A send with ADM's headers; nil leaves a header out.
    func sendRequest(
        accessToken: String?, registrationID: String = sampleRegistrationID, body: [UInt8] = admBody(),
        typeVersion: String? = "com.amazon.device.messaging.ADMMessage@1.0",
        acceptType: String? = "com.amazon.device.messaging.ADMSendResult@1.0"
    ) -> H2Request {
        var headers = [("content-type", "application/json"), ("accept", "application/json")]
        if let accessToken { headers.append(("authorization", "Bearer \(accessToken)")) }
        if let typeVersion { headers.append(("x-amzn-type-version", typeVersion)) }
        if let acceptType { headers.append(("x-amzn-accept-type", acceptType)) }
        return H2Request(path: "/messaging/registrations/\(registrationID)/messages", headers: headers, body: body)
    }

    func shutdown() {
        server.close()
        group.shutdown()
    }

    deinit { group.shutdown() }
}

extension H2Response {
    /// ADM's `{"reason":"…"}`.
    var reason: String? { jsonString("reason") }
}
