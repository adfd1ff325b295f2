import PushCore
import PushGRPC
import PushTestSupport
import Testing

@testable import PushGateway

/// The `sns` section, and who the SNS door lets in without verifying a signature.
@Suite("SNS configuration")
struct SNSConfigurationTests {
    static func parse(_ json: String) throws(ConfigurationError) -> GatewayConfiguration {
        try GatewayConfiguration.parse(json: Array(json.utf8))
    }

    static func refusal(_ json: String) -> String? {
        do {
            _ = try parse(json)
            return nil
        } catch {
            return error.description
        }
    }

    @Test func credentialsAreReadWithTheirSecretFiles() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let secret = try directory.write("sns.secret", "  abcdefghijklmnopqrstuvwxyz0123456789ABCD\n")
        let config = try Self.parse(
            """
            {"apps": [{"name": "prod", "platform": "apns", "bundle_id": "b", "team_id": "T", "key_id": "K",
                       "key_file": "/dev/null"}],
             "sns": {"region": "eu-central-1", "account_id": "123456789012",
                     "credentials": [{"access_key_id": "AKPGAAAAAAAAAAAAAAAA", "secret_access_key_file": "\(secret)",
                                      "apps": ["prod"], "admin": true}]}}
            """)
        #expect(config.sns.region == "eu-central-1")
        #expect(config.sns.arns.topic("t") == "arn:aws:sns:eu-central-1:123456789012:t")
        let credential = try #require(config.sns.credential(accessKeyID: "AKPGAAAAAAAAAAAAAAAA"))
        #expect(credential.secretAccessKey == "abcdefghijklmnopqrstuvwxyz0123456789ABCD")
        #expect(credential.admin && credential.apps == .only(["prod"]))
    }

    @Test func mistakesNameTheKey() throws {
        #expect(Self.refusal(#"{"sns": {"region": "US East"}}"#)?.contains("config.sns.region") == true)
        #expect(Self.refusal(#"{"sns": {"account_id": "12"}}"#)?.contains("config.sns.account_id") == true)
        #expect(Self.refusal(#"{"sns": {"colour": 1}}"#) != nil)
        let missing = Self.refusal(
            #"{"sns": {"credentials": [{"access_key_id": "AKPGAAAAAAAAAAAAAAAA", "secret_access_key_file": "/nonexistent/x"}]}}"#
        )
        #expect(missing?.contains("config.sns.credentials[0].secret_access_key_file") == true)
        #expect(missing?.contains("AKPG") == false)
        let slash = Self.refusal(#"{"apps": [{"name": "team/prod", "platform": "apns", "bundle_id": "b"}]}"#)
        #expect(slash?.contains("config.apps[0].name") == true)
        let lower = Self.refusal(
            #"{"sns": {"credentials": [{"access_key_id": "akpg", "secret_access_key_file": "x"}]}}"#)
        #expect(lower?.contains("access_key_id") == true)
    }

    @Test func generatedPairsHaveAWSShapes() throws {
        let (id, secret) = try SNSCredential.generate()
        #expect(id.count == 20 && id.hasPrefix("AKPG"))
        #expect(id.utf8.allSatisfy { ($0 >= 0x41 && $0 <= 0x5a) || ($0 >= 0x32 && $0 <= 0x37) })
        #expect(secret.count == 40)
        #expect(try SNSCredential.generate().accessKeyID != id)
    }

    static func head(loopback: Bool) -> HTTPRouteRequest {
        HTTPRouteRequest(
            method: "POST", target: "/", headers: [("content-type", "application/x-www-form-urlencoded")], body: [],
            peer: loopback ? "127.0.0.1:1" : "10.0.0.1:1", isLoopbackPeer: loopback, isTLS: false)
    }

    @Test func withoutCredentialsOnlyLoopbackIsServedAndOnlyWithoutAPIKeys() throws {
        var configuration = GatewayConfiguration()
        let caller = try SNSDoor.authenticate(Self.head(loopback: true), configuration: configuration, signature: nil)
        #expect(caller.isAdmin)
        #expect(throws: SNSError.self) {
            try SNSDoor.authenticate(Self.head(loopback: false), configuration: configuration, signature: nil)
        }
        configuration.security.apiKeys = APIKeys([
            APIKey(name: "k", sha256: [UInt8](repeating: 1, count: 32), apps: .all, admin: true)
        ])
        do {
            _ = try SNSDoor.authenticate(Self.head(loopback: true), configuration: configuration, signature: nil)
            Issue.record("a loopback client was served although api_keys are configured")
        } catch {
            #expect(error.code == "InvalidClientTokenId")
        }
        configuration.sns.credentials = [
            SNSCredential(accessKeyID: "AKPGAAAAAAAAAAAAAAAA", secretAccessKey: "s" * 20, apps: .all, admin: false)
        ]
        do {
            _ = try SNSDoor.authenticate(Self.head(loopback: true), configuration: configuration, signature: nil)
            Issue.record("an unsigned request was admitted")
        } catch {
            #expect(error.code == "MissingAuthenticationToken")
            #expect(error.status == 403)
        }
    }
}

extension String {
    fileprivate static func * (text: String, count: Int) -> String { String(repeating: text, count: count) }
}
