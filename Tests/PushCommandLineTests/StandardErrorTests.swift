import Glibc
import PushCommandLine
import Testing

@Suite("Standard error")
struct StandardErrorTests {
    @Test("printError writes the message and a newline to file descriptor 2, UTF-8 intact")
    func printErrorWritesALine() throws {
        let marker = "pushgate-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let captured = try capturingStandardError { printError("mock-fcm: stopping (SIGTERM) \(marker) – ünïcode") }
        #expect(captured.contains("mock-fcm: stopping (SIGTERM) \(marker) – ünïcode\n"), "\(captured.debugDescription)")
    }
}

/// Runs `body` with file descriptor 2 pointing into a pipe and answers what it wrote. Other
/// threads of the test process may write to standard error meanwhile (the test runner's own
/// report): whatever is not `body`'s goes back to the real standard error afterwards, so nothing
/// of theirs is lost. `body` must write less than a pipe holds (64 KiB).
private func capturingStandardError(_ body: () -> Void) throws -> String {
    var ends: [Int32] = [-1, -1]
    try #require(pipe(&ends) == 0)
    let saved = dup(2)
    try #require(saved >= 0)
    try #require(dup2(ends[1], 2) == 2)
    body()
    _ = dup2(saved, 2)
    close(saved)
    close(ends[1])
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
        let count = read(ends[0], &chunk, chunk.count)
        if count <= 0 { break }
        bytes += chunk[..<count]
    }
    close(ends[0])
    let text = String(decoding: bytes, as: UTF8.self)
    let others = text.split(separator: "\n", omittingEmptySubsequences: false)
        .filter { !$0.contains("pushgate-test-") }.joined(separator: "\n")
    if !others.isEmpty { _ = others.withCString { write(2, $0, strlen($0)) } }
    return text
}
