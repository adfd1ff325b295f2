import Testing

@testable import PushTLS

@Suite("The outgoing ciphertext queue")
struct OutgoingCiphertextTests {
    /// Takes everything queued, `chunk` bytes at a time.
    private func takeAll(_ queue: inout OutgoingCiphertext, chunk: Int) -> [UInt8] {
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: chunk)
        while true {
            let taken = buffer.withUnsafeMutableBytes { queue.take(into: $0) }
            if taken == 0 { return out }
            out += buffer[..<taken]
        }
    }

    @Test("bytes come out in order across partial takes, compaction and growth")
    func order() {
        var queue = OutgoingCiphertext()
        var expected: [UInt8] = []
        var got: [UInt8] = []
        var next: UInt8 = 0
        // Writes of many sizes (up to past the first 16 KiB of room), each followed by a partial
        // take, so the front moves and the pending bytes are moved or copied to a larger buffer.
        for size in [1, 7, 100, 5_000, 16_000, 40_000, 3, 70_000] {
            let bytes = (0..<size).map { _ in
                next &+= 1
                return next
            }
            bytes.withUnsafeBytes { queue.append($0) }
            expected += bytes
            var buffer = [UInt8](repeating: 0, count: size / 2 + 1)
            let taken = buffer.withUnsafeMutableBytes { queue.take(into: $0) }
            got += buffer[..<taken]
            #expect(queue.count == expected.count - got.count)
        }
        got += takeAll(&queue, chunk: 4_096)
        #expect(got == expected)
        #expect(queue.count == 0)
    }

    @Test("an empty queue gives nothing, and a drained burst past 1 MiB leaves it working")
    func burst() {
        var queue = OutgoingCiphertext()
        var one = [UInt8](repeating: 0, count: 1)
        #expect(one.withUnsafeMutableBytes { queue.take(into: $0) } == 0)
        let burst = [UInt8](repeating: 0xAB, count: 3 << 20)
        burst.withUnsafeBytes { queue.append($0) }
        #expect(takeAll(&queue, chunk: 1 << 16) == burst)
        [UInt8]([1, 2, 3]).withUnsafeBytes { queue.append($0) }
        #expect(takeAll(&queue, chunk: 2) == [1, 2, 3])
    }
}
