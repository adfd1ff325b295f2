import PushMockSupport
import Testing

/// A mock configuration with one member of its own besides the shared settings.
private struct TestConfiguration: MockServerConfiguration {
    var server = MockServerSettings()
    var own = 1
}

@Suite("Mock server settings")
struct MockServerSettingsTests {
    @Test("the defaults: loopback, an ephemeral port, HTTP/2 with 100 streams, no delay, no GOAWAY, 64 KiB bodies")
    func defaults() {
        let settings = MockServerSettings()
        #expect(settings.host == "127.0.0.1")
        #expect(settings.port == 0)
        #expect(!settings.http1)
        #expect(settings.maxConcurrentStreams == 100)
        #expect(settings.responseDelay == .zero)
        #expect(settings.goAwayAfterStreams == nil)
        #expect(settings.maxBodyBytes == 65_536)
        guard case .generate(let names) = settings.identity else {
            Issue.record("the default identity is not a generated certificate: \(settings.identity)")
            return
        }
        #expect(names == ["127.0.0.1", "localhost"])
    }

    @Test("the loopback identity is a generated certificate for 127.0.0.1 and localhost")
    func loopbackIdentity() {
        guard case .generate(let names) = MockServerIdentity.loopback else {
            Issue.record("not generated")
            return
        }
        #expect(names == ["127.0.0.1", "localhost"])
    }

    @Test("a configuration reads and writes the shared settings as its own members")
    func dynamicMembers() {
        var configuration = TestConfiguration()
        #expect(configuration.maxConcurrentStreams == 100)
        configuration.maxConcurrentStreams = 40
        configuration.responseDelay = .milliseconds(250)
        configuration.http1 = true
        configuration.goAwayAfterStreams = 3
        configuration.port = 8444
        #expect(configuration.server.maxConcurrentStreams == 40)
        #expect(configuration.server.responseDelay == .milliseconds(250))
        #expect(configuration.server.http1)
        #expect(configuration.server.goAwayAfterStreams == 3)
        #expect(configuration.server.port == 8444)
        #expect(configuration.server.host == "127.0.0.1", "members not written keep their defaults")
        #expect(configuration.own == 1)
        configuration.server.maxBodyBytes = 10
        #expect(configuration.maxBodyBytes == 10)
    }
}
