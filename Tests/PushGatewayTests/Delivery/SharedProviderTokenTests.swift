import PushPosix
import PushTLS
import Testing

@testable import PushGateway

/// APNs apps of one team and key id share one provider token: one key id is one key at Apple.
@Suite("APNs apps sharing a key id")
struct SharedProviderTokenTests {
    static func app(_ name: String, keyPEM: String, keyID: String = "KEY1234567") -> AppConfiguration {
        var keys = AppConfiguration.APNsKeys(bundleID: "com.example.\(name)")
        keys.teamID = "TEAM123456"
        keys.keyID = keyID
        keys.keyPEM = keyPEM
        return AppConfiguration(name: name, keys: .apns(keys))
    }

    static func clients(_ apps: [AppConfiguration]) throws(ConfigurationError) -> Int {
        var configuration = GatewayConfiguration()
        configuration.apps = apps
        let group = try! EventLoopGroup(loopCount: 1, namePrefix: "shared-token")
        defer { group.shutdown() }
        return try DeliveryClientFactory.makeClients(configuration, group: group, log: Log(level: .error)).count
    }

    @Test("two keys under one key id are refused at load, naming both apps; one key under it is shared")
    func oneKeyIDOneKey() throws {
        let first = try ES256Signer.generateP8().privateKeyPEM
        let second = try ES256Signer.generateP8().privateKeyPEM
        #expect(try Self.clients([Self.app("a", keyPEM: first), Self.app("b", keyPEM: first)]) == 2)
        #expect(
            try Self.clients([Self.app("a", keyPEM: first), Self.app("b", keyPEM: second, keyID: "KEY7654321")]) == 2)
        do {
            _ = try Self.clients([Self.app("a", keyPEM: first), Self.app("b", keyPEM: second)])
            Issue.record("two keys under one key id were loaded")
        } catch {
            #expect(
                error.description
                    == "config.apps[1]: key_id KEY1234567 of team TEAM123456 is also config.apps[0]'s, with another "
                    + "key: one key id is one key (check key_id and key_file)")
        }
    }
}
