import Glibc
import PushCommandLine
import PushCore
import PushMockSupport
import PushTestSupport
import Testing

@testable import pushgate

@Suite("Mock command helpers")
struct MockCommandSupportTests {
    @Test(
        "listen addresses: HOST:PORT, [v6]:PORT, and an empty host for every interface",
        arguments: [
            ("127.0.0.1:8443", "127.0.0.1", 8443), ("[::1]:9000", "::1", 9000), (":8444", "0.0.0.0", 8444),
            ("localhost:0", "localhost", 0), ("0.0.0.0:65535", "0.0.0.0", 65535),
        ])
    func listenAddress(value: String, host: String, port: Int) throws {
        let address = try MockCommandSupport.listenAddress(value, example: "127.0.0.1:8443")
        #expect(address.host == host)
        #expect(address.port == port)
    }

    @Test(
        "a listen address without a port in 0-65535 names --listen and the example",
        arguments: [
            "127.0.0.1", "127.0.0.1:", "127.0.0.1:65536", "127.0.0.1:-1", "host:port", "",
        ])
    func badListenAddress(value: String) {
        #expect(
            usageError { try MockCommandSupport.listenAddress(value, example: "127.0.0.1:8445") }
                == "--listen: expected HOST:PORT, e.g. 127.0.0.1:8445")
    }

    @Test("a share is a number from 0 to 1", arguments: [("0", 0.0), ("1", 1.0), ("0.25", 0.25), ("1e-3", 0.001)])
    func share(text: String, value: Double) throws {
        var flags = FlagReader(["--fail-500", text])
        #expect(flags.next() == "--fail-500")
        #expect(try MockCommandSupport.share(&flags, "--fail-500") == value)
    }

    @Test("a share outside 0-1, or not a number, names the flag", arguments: ["1.5", "-0.1", "ten", "nan"])
    func badShare(text: String) {
        var flags = FlagReader(["--fail-503", text])
        _ = flags.next()
        #expect(
            usageError { try MockCommandSupport.share(&flags, "--fail-503") }
                == "--fail-503: must be a share between 0 and 1, e.g. 0.1")
    }

    @Test("token files: one per line, trimmed; blank lines and # comments skipped")
    func tokens() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let file = try directory.write(
            "tokens.txt", "# unregistered\n  aaaa  \n\nbbbb\r\n\t# indented comment\ncc dd\n")
        #expect(try MockCommandSupport.tokens(in: file) == ["aaaa", "bbbb", "cc dd"])
        let empty = try directory.write("empty.txt", "")
        #expect(try MockCommandSupport.tokens(in: empty) == [])
        let missing = directory.path + "/none.txt"
        #expect(usageError { try MockCommandSupport.tokens(in: missing) }?.contains(missing) == true)
    }

    @Test("the stats file: numbers, then objects with sorted keys, one JSON line, written whole")
    func statsJSON() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let file = directory.path(of: "stats.json")
        _ = directory.path(of: "stats.json.tmp")
        MockCommandSupport.writeStatsJSON(
            to: file, tool: "mock-test", numbers: [("requests", 3), ("delivered", 2)],
            objects: [
                ("by_status", [("503", 1), ("200", 2)]), ("empty", []), ("by \"quoted\"", [("b", 1), ("a", 0)]),
            ])
        let text = try #require(directory.read(file))
        #expect(
            text
                == #"{"requests":3,"delivered":2,"by_status":{"200":2,"503":1},"empty":{},"by \"quoted\"":{"a":0,"b":1}}"#
                + "\n")
        #expect(try JSONParser.parse(Array(text.utf8))["by_status"]?["503"] == .number("1"))
        #expect(directory.read(file + ".tmp") == nil, "the temporary file was renamed over the target")
    }

    @Test("a request/response mock's stats file starts with the shared counters")
    func sharedCountersJSON() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let file = directory.path(of: "stats.json")
        var counters = MockServerCounters()
        counters.requests = 5
        counters.streamsOpened = 6
        counters.streamsCancelled = 1
        counters.connectionsOpened = 2
        counters.connectionsClosed = 1
        counters.handshakeFailures = 1
        counters.goAwaysSent = 1
        counters.maxInFlight = 4
        counters.byStatus = [200: 4, 429: 1]
        counters.byError = ["QUOTA_EXCEEDED": 1]
        MockCommandSupport.writeStatsJSON(
            to: file, tool: "mock-test", counters: counters, numbers: [("sends", 5)],
            objects: [("delivered_per_token", [("t", 4)])])
        #expect(
            directory.read(file)
                == #"{"requests":5,"streams_opened":6,"streams_cancelled":1,"connections_opened":2,"#
                + #""connections_closed":1,"handshake_failures":1,"goaways_sent":1,"max_in_flight":4,"sends":5,"#
                + #""by_status":{"200":4,"429":1},"by_error":{"QUOTA_EXCEEDED":1},"delivered_per_token":{"t":4}}"#
                + "\n")
    }

    @Test("writeFile creates or truncates, with the mode asked for")
    func writeFileModes() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let file = directory.path(of: "secret")
        try writeFile(file, Array("a longer first text".utf8), mode: 0o600)
        try writeFile(file, Array("short".utf8), mode: 0o644)
        #expect(directory.read(file) == "short")
        #expect(fileMode(file) == 0o600, "an existing file never gains permissions")
        try writeFile(file, Array("public".utf8), mode: 0o644)
        #expect(chmod(file, 0o644) == 0)
        try writeFile(file, Array("a private key".utf8), mode: 0o600)
        #expect(fileMode(file) == 0o600, "a private key written over a 0644 file is 0600")
        #expect(usageError { try writeFile(directory.path + "/no/such/dir", []) }?.contains("/no/such/dir") == true)
    }
}
