import Testing

@testable import PushGateway

@Suite("Host guard (without api_keys)")
struct HostGuardTests {
    @Test(
        "IP literals, localhost and *.localhost are served, with or without a port",
        arguments: [
            "127.0.0.1", "127.0.0.1:50051", "10.1.2.3:80", "localhost", "LOCALHOST:1", "app.localhost:8080",
            "[::1]:50051", "[::1]",
        ])
    func served(host: String) { #expect(HostGuard.allows(host)) }

    @Test(
        "any other name is not: it could be rebound to 127.0.0.1",
        arguments: [
            "evil.example", "evil.example:50051", "127.0.0.1.nip.io", "localhost.evil.example", "1.2.3",
            "x", "",
        ])
    func refused(host: String) { #expect(!HostGuard.allows(host)) }
}
