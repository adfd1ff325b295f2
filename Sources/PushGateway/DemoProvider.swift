import PushMockAPNs
import PushPosix
import PushTLS

/// The quick start's stand-in for Apple: with no apps configured, `pushgate serve` starts a mock
/// APNs on loopback and a `demo` app wired to it, so a first `pushgate send` shows a real delivery
/// result (over real TLS and HTTP/2, with a real provider token) on a fresh machine. Nothing
/// reaches Apple; the log says so loudly. A config with apps replaces it.
struct DemoProvider {
    static let appName = "demo"
    static let bundleID = "com.example.pushgate.demo"
    static let teamID = "DEMOTEAM01"
    static let keyID = "DEMOKEY001"

    let server: MockAPNsServer
    let app: AppConfiguration

    init(group: EventLoopGroup) throws {
        let key = try ES256Signer.generateP8()
        var mock = MockAPNsConfiguration.defaults
        mock.verifyTokens = [Self.keyID: try ES256Verifier(publicKeyPEM: key.publicKeyPEM)]
        mock.teamID = Self.teamID
        mock.recordRequests = 0
        server = try MockAPNsServer(configuration: mock, group: group)
        var app = AppConfiguration(name: Self.appName, bundleID: Self.bundleID)
        app.teamID = Self.teamID
        app.keyID = Self.keyID
        app.keyPEM = key.privateKeyPEM
        app.caPEM = server.certificatePEM ?? ""
        app.url = "https://127.0.0.1:\(server.localPort)"
        self.app = app
    }
}
