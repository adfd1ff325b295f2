import PushGateway
import PushMockAPNs
import PushPosix
import PushTLS

/// The quick start's stand-in for Apple: with no apps configured, `pushgate serve` starts a mock
/// APNs on the gateway's loops and a `demo` app wired to it, so a first `pushgate send` shows a real
/// delivery result (over real TLS and HTTP/2, with a real provider token) on a fresh machine.
/// Nothing reaches Apple; the gateway's log says so loudly. A config with apps replaces it.
/// Wired here, in the executable, so that PushGateway depends on no mock.
enum DemoProvider {
    static let appName = "demo"
    static let bundleID = "com.example.pushgate.demo"
    static let teamID = "DEMOTEAM01"
    static let keyID = "DEMOKEY001"

    static let mode = DemoMode(appName: appName, start: start)

    static func start(group: EventLoopGroup) throws -> DemoApp {
        let key = try ES256Signer.generateP8()
        var mock = MockAPNsConfiguration.defaults
        mock.verifyTokens = [keyID: try ES256Verifier(publicKeyPEM: key.publicKeyPEM)]
        mock.teamID = teamID
        mock.recordRequests = 0
        // The channel API too, so the demo shows a Live Activity broadcast (docs/api.md, broadcast channels).
        mock.channelsListen = ("127.0.0.1", 0)
        let server = try MockAPNsServer(configuration: mock, group: group)
        var apns = AppConfiguration.APNsKeys(bundleID: bundleID)
        apns.teamID = teamID
        apns.keyID = keyID
        apns.keyPEM = key.privateKeyPEM
        if let port = server.channelsPort { apns.channelsURL = "https://127.0.0.1:\(port)" }
        var app = AppConfiguration(name: appName, keys: .apns(apns))
        app.caPEM = server.certificatePEM ?? ""
        app.url = "https://127.0.0.1:\(server.localPort)"
        return DemoApp(
            app: app, standIn: "MOCK APNs",
            address: "127.0.0.1:\(server.localPort)",
            close: { server.close() })
    }
}
