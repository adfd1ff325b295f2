import Glibc
import PushMockAPNs
import Testing

/// Runs a program (searched in PATH) with stdout and stderr to a temporary file; returns the exit
/// status and the output. nil if it could not be started.
func runProgram(_ arguments: [String]) -> (status: Int32, output: String)? {
    var template = Array("/tmp/pushmock-out-XXXXXX".utf8CString)
    let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
    guard fd >= 0 else { return nil }
    let path = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    defer {
        close(fd)
        unlink(path)
    }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_adddup2(&actions, fd, 1)
    posix_spawn_file_actions_adddup2(&actions, fd, 2)
    var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
    defer { for pointer in argv { free(pointer) } }
    var pid: pid_t = 0
    guard posix_spawnp(&pid, arguments[0], &actions, nil, &argv, environ) == 0 else { return nil }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    var output: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    lseek(fd, 0, SEEK_SET)
    while true {
        let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if n <= 0 { break }
        output += chunk[0..<n]
    }
    return ((status >> 8) & 0xFF, String(decoding: output, as: UTF8.self))
}

@Suite("Mock APNs driven by nghttp2's h2load", .timeLimit(.minutes(1)))
struct H2LoadTests {
    @Test(
        "h2load gets 100 2xx and the mock counts 100 requests",
        .enabled(if: access("/usr/bin/h2load", X_OK) == 0, "h2load (Debian nghttp2-client) is not installed"))
    func h2load() throws {
        let harness = try Harness()
        defer { harness.shutdown() }
        let payloadPath = "/tmp/pushmock-payload-\(getpid()).json"
        let fd = open(payloadPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        try #require(fd >= 0)
        _ = samplePayload.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        defer { unlink(payloadPath) }

        let url = "https://127.0.0.1:\(harness.server.localPort)/3/device/\(sampleToken)"
        let result = try #require(
            runProgram([
                "h2load", "-n", "100", "-c", "1", "-m", "10", "--header=apns-topic: com.example", "-d", payloadPath,
                url,
            ]))
        #expect(result.status == 0, "h2load output:\n\(result.output)")
        #expect(
            result.output.contains("status codes: 100 2xx, 0 3xx, 0 4xx, 0 5xx"), "h2load output:\n\(result.output)")
        #expect(result.output.contains("Application protocol: h2"))
        let stats = harness.server.stats
        #expect(stats.requests == 100)
        #expect(stats.deliveredPerToken[sampleToken] == 100)
        #expect(stats.maxInFlight <= 10)
        #expect(stats.recentRequests.last?.header(":method") == "POST")
        #expect(stats.recentRequests.last?.payload == samplePayload)
    }
}
