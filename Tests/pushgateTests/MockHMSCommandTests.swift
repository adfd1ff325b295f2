import PushCredentials
import PushMockHMS
import PushMockSupport
import PushTestSupport
import Testing

@testable import pushgate

@Suite("mock-hms flags")
struct MockHMSCommandTests {
    private func parse(_ arguments: [String]) throws -> MockHMSCommand.Options {
        try #require(try MockHMSCommand.parse(arguments))
    }

    @Test("defaults: port 8447, HTTP/1.1, a generated account, Huawei's token path")
    func defaults() throws {
        let options = try parse(["--write-service-account", "/tmp/hms.json", "--project", "42"])
        let configuration = options.configuration
        #expect(options.writeServiceAccount == "/tmp/hms.json")
        #expect(configuration.serviceAccount.projectID == "42")
        #expect(configuration.port == 8447)
        #expect(configuration.http1, "HTTP/1.1, as Huawei's clients speak it")
        #expect(configuration.tokenPath == "/oauth2/v3/token")
        #expect(configuration.recordMessages == 0)
        #expect(configuration.retryAfterSeconds == nil)
        #expect(configuration.allInvalidStatus == 400)
        #expect(options.run.name == "mock-hms")
    }

    @Test("-h and --help ask for the usage", arguments: [["-h"], ["--http2", "--help"]])
    func help(arguments: [String]) throws {
        #expect(try MockHMSCommand.parse(arguments) == nil)
        for flag in ["--write-service-account", "--bad-tokens", "--fail-503", "--app-id", "--stats-file", "--http2"] {
            #expect(MockHMSCommand.usage.contains(flag))
        }
    }

    @Test("mock-hms's own flags, the shared ones and the run flags together")
    func flags() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let account = try directory.write("sa.json", try HuaweiServiceAccount.generated(projectID: "77").serialized())
        let bad = try directory.write("bad.txt", "bad-1\n# comment\nbad-2\n")
        let secret = try directory.write("secret", " s3cret\n")
        let options = try parse([
            "--service-account", account, "--app-id", "1234", "--client-secret-file", secret, "--bad-tokens", bad,
            "--bad-token-prefix", "dead-", "--all-invalid-status", "200", "--http2", "--token-lifetime", "5",
            "--max-jwt-lifetime", "86400", "--fail-503", "0.25", "--fail-500", "0.1", "--retry-after", "2",
            "--delay-ms", "3", "--stats-file", "/tmp/s.json", "--write-client-secret", "/tmp/w",
        ])
        let configuration = options.configuration
        #expect(configuration.serviceAccount.projectID == "77")
        #expect(configuration.appID == "1234")
        #expect(configuration.clientSecret == "s3cret")
        #expect(configuration.badTokens == ["bad-1", "bad-2"])
        #expect(configuration.badTokenPrefix == "dead-")
        #expect(configuration.allInvalidStatus == 200)
        #expect(!configuration.http1)
        #expect(configuration.accessTokenLifetime == 5)
        #expect(configuration.maxJWTLifetime == 86400)
        #expect(configuration.fail503Share == 0.25 && configuration.fail500Share == 0.1)
        #expect(configuration.retryAfterSeconds == 2)
        #expect(configuration.responseDelay == .milliseconds(3))
        #expect(options.run.statsFile == "/tmp/s.json")
        #expect(options.writeClientSecret == "/tmp/w")
    }

    @Test("usage errors name the flag")
    func errors() {
        #expect(usageError { try MockHMSCommand.parse(["--app-id", "abc"]) }?.contains("--app-id") == true)
        #expect(usageError { try MockHMSCommand.parse(["--nope"]) }?.contains("--nope") == true)
        #expect(
            usageError { try MockHMSCommand.parse(["--service-account", "a", "--write-service-account", "b"]) }?
                .contains("exclude") == true)
    }
}
