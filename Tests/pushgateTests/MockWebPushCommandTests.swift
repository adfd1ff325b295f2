import PushCore
import PushMockSupport
import PushMockWebPush
import Testing

@testable import pushgate

@Suite("mock-webpush flags")
struct MockWebPushCommandTests {
    private func parse(_ arguments: [String]) throws -> MockWebPushCommand.Options {
        try #require(try MockWebPushCommand.parse(arguments))
    }

    @Test("defaults: port 8446, both HTTP versions, a random seed, every push decrypted")
    func defaults() throws {
        let first = try parse([]).configuration
        #expect(first.port == 8446)
        #expect(first.offersBothVersions)
        #expect(first.decryptEvery == 1 && first.recordMessages == 1000)
        #expect(first.keySeed != (try parse([])).configuration.keySeed, "random unless --seed")
    }

    @Test("--seed, versions, prefixes, faults and cost flags")
    func flags() throws {
        let seed = String(repeating: "0a", count: 32)
        let options = try parse([
            "--seed", seed, "--http1-only", "--gone-prefix", "gone-", "--not-found-prefix", "nf-", "--decrypt-every",
            "0", "--record", "5", "--rate-limit-every", "4", "--fail-503", "0.5", "--retry-after", "0",
            "--seed-faults", "9", "--listen", "0.0.0.0:0", "--print-subscriptions", "3", "--subscription-prefix", "lt-",
            "--subscription-host", "localhost:8446",
        ])
        let configuration = options.configuration
        #expect(configuration.keySeed == [UInt8](repeating: 10, count: 32))
        #expect(configuration.keySeedHex == seed)
        #expect(!configuration.offersBothVersions && configuration.http1)
        #expect(configuration.gonePrefix == "gone-" && configuration.notFoundPrefix == "nf-")
        #expect(configuration.decryptEvery == 0 && configuration.recordMessages == 5)
        #expect(configuration.rateLimitEvery == 4 && configuration.fail503Share == 0.5)
        #expect(configuration.retryAfterSeconds == nil && configuration.faultSeed == 9)
        #expect(configuration.host == "0.0.0.0" && configuration.port == 0)
        #expect(options.printSubscriptions == 3 && options.subscriptionPrefix == "lt-")
        #expect(options.subscriptionHost == "localhost:8446")
        #expect(try parse(["--http2-only"]).configuration.http1 == false)
    }

    @Test("errors name the flag")
    func errors() {
        for (arguments, flag) in [
            (["--seed", "abc"], "--seed"), (["--gone-prefix", "a/b"], "--gone-prefix"),
            (["--decrypt-every", "-1"], "--decrypt-every"), (["--subscription-host", "a/b"], "--subscription-host"),
            (["--fail-500", "2"], "--fail-500"), (["--token-lifetime", "5"], "--token-lifetime"),
        ] {
            #expect(throws: (any Error).self) { try MockWebPushCommand.parse(arguments) }
            do {
                _ = try MockWebPushCommand.parse(arguments)
            } catch {
                #expect("\(error)".contains(flag), "\(arguments): \(error)")
            }
        }
    }
}
