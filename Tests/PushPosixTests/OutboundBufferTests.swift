import Glibc
import Testing

@testable import PushPosix

@Suite("Outbound buffer")
struct OutboundBufferTests {
    /// Every unsent byte, oldest first, as a sendmsg would take them.
    static func contents(_ buffer: OutboundBuffer) -> [UInt8] {
        var iovecs = [iovec](repeating: iovec(), count: 64)
        let (count, _) = iovecs.withUnsafeMutableBufferPointer { buffer.gather(into: $0) }
        return iovecs[..<count].flatMap { Array(UnsafeRawBufferPointer(start: $0.iov_base, count: $0.iov_len)) }
    }

    static func fill(_ bytes: [UInt8]) -> (UnsafeMutableRawBufferPointer) -> Int {
        { room in
            let count = min(bytes.count, room.count)
            bytes.withUnsafeBytes { room.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[..<count])) }
            return count
        }
    }

    @Test("a producer writes in place: into the tail's room, a new chunk when it has none, nothing queued for 0")
    func appendInPlace() {
        var buffer = OutboundBuffer()
        ([1, 2, 3] as [UInt8]).withUnsafeBytes { buffer.append($0) }
        // Room for 10, 4 written: only those count.
        #expect(buffer.append(capacity: 10, Self.fill([4, 5, 6, 7])) == 4)
        #expect(buffer.count == 7)
        #expect(Self.contents(buffer) == [1, 2, 3, 4, 5, 6, 7])
        // More than the tail's room: a chunk of its own, after the tail's bytes.
        let large = [UInt8](repeating: 9, count: OutboundBuffer.chunkSize + 5)
        #expect(buffer.append(capacity: large.count, Self.fill(large)) == large.count)
        #expect(Self.contents(buffer) == [1, 2, 3, 4, 5, 6, 7] + large)
        // Nothing written: nothing queued, no empty chunk.
        #expect(buffer.append(capacity: 100, { _ in 0 }) == 0)
        #expect(buffer.count == 7 + large.count)
        buffer.consume(buffer.count)
        #expect(buffer.isEmpty)
        #expect(buffer.append(capacity: 100, { _ in 0 }) == 0)
        #expect(buffer.isEmpty && Self.contents(buffer).isEmpty)
        #expect(buffer.append(capacity: 2, Self.fill([8, 8])) == 2)
        #expect(Self.contents(buffer) == [8, 8])
    }
}
