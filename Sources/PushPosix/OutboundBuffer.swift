import Glibc

/// A connection's unsent bytes: a queue of heap chunks the bytes are copied into. Small writes
/// are packed into the tail chunk (64 KiB), large ones get a chunk of their own, and a flush
/// hands up to 64 chunks to one sendmsg (writev semantics). Chunk memory does not move, so we
/// can build iovecs from it directly. Confined to the owning connection's loop thread.
struct OutboundBuffer {
    private final class Chunk {
        let base: UnsafeMutableRawPointer
        let capacity: Int
        var start = 0  // first unsent byte
        var end = 0  // one past the last queued byte

        init(capacity: Int) {
            self.capacity = capacity
            base = .allocate(byteCount: capacity, alignment: 16)
        }

        deinit { base.deallocate() }
    }

    static let chunkSize = 64 * 1024

    /// Slots before `head` are nil so sent chunks are freed (or reused) immediately.
    private var chunks: [Chunk?] = []
    private var head = 0  // index of the first chunk with unsent bytes
    /// One emptied standard-size chunk kept for reuse so a steady trickle of writes does not
    /// allocate every turn.
    private var spare: Chunk?
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress, bytes.count > 0 else { return }
        var offset = 0
        if head < chunks.count, let tail = chunks[chunks.count - 1] {
            let room = tail.capacity - tail.end
            if room > 0 {
                let n = min(room, bytes.count)
                (tail.base + tail.end).copyMemory(from: source, byteCount: n)
                tail.end += n
                offset = n
            }
        }
        let remaining = bytes.count - offset
        if remaining > 0 {
            let chunk = emptyChunk(holding: remaining)
            (chunk.base).copyMemory(from: source + offset, byteCount: remaining)
            chunk.end = remaining
            chunks.append(chunk)
        }
        count += bytes.count
    }

    /// Lets `fill` write up to `capacity` bytes straight into the queue (a producer with its own
    /// buffer, such as TLS, copies into it once instead of into an array and then here); `fill`
    /// returns how many it wrote.
    mutating func append(capacity: Int, _ fill: (UnsafeMutableRawBufferPointer) -> Int) -> Int {
        guard capacity > 0 else { return 0 }
        if head < chunks.count, let tail = chunks[chunks.count - 1], tail.capacity - tail.end >= capacity {
            return write(capacity, into: tail, fill)
        }
        let chunk = emptyChunk(holding: capacity)
        let written = write(capacity, into: chunk, fill)
        // A chunk joins the queue only with bytes in it.
        if written > 0 {
            chunks.append(chunk)
        } else if chunk.capacity == Self.chunkSize {
            spare = chunk
        }
        return written
    }

    /// A chunk with room for `count` bytes, not yet queued: the spare one when it fits.
    private mutating func emptyChunk(holding count: Int) -> Chunk {
        if count <= Self.chunkSize, let reusable = spare {
            spare = nil
            return reusable
        }
        return Chunk(capacity: max(count, Self.chunkSize))
    }

    private mutating func write(
        _ capacity: Int, into chunk: Chunk, _ fill: (UnsafeMutableRawBufferPointer) -> Int
    ) -> Int {
        let written = fill(UnsafeMutableRawBufferPointer(start: chunk.base + chunk.end, count: capacity))
        precondition(written >= 0 && written <= capacity, "wrote \(written) bytes into room for \(capacity)")
        chunk.end += written
        count += written
        return written
    }

    /// Fills `iovecs` with the unsent chunks, oldest first; returns (entries, bytes).
    func gather(into iovecs: UnsafeMutableBufferPointer<iovec>) -> (count: Int, bytes: Int) {
        var n = 0
        var bytes = 0
        var index = head
        while index < chunks.count && n < iovecs.count {
            let chunk = chunks[index]!
            let length = chunk.end - chunk.start
            iovecs[n] = iovec(iov_base: chunk.base + chunk.start, iov_len: length)
            bytes += length
            n += 1
            index += 1
        }
        return (n, bytes)
    }

    /// Drops `written` bytes from the front after the kernel took them.
    mutating func consume(_ written: Int) {
        precondition(written <= count)
        count -= written
        var left = written
        while left > 0 {
            let chunk = chunks[head]!
            let n = min(left, chunk.end - chunk.start)
            chunk.start += n
            left -= n
            if chunk.start == chunk.end { releaseHead() }
        }
        if count == 0 {
            // Release any emptied head chunks and reuse the array's storage.
            while head < chunks.count { releaseHead() }
            chunks.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 32 && head * 2 >= chunks.count {
            // Compact so a long-lived backlog does not grow the array without bound.
            chunks.removeFirst(head)
            head = 0
        }
    }

    mutating func removeAll() {
        chunks = []
        head = 0
        count = 0
        spare = nil
    }

    private mutating func releaseHead() {
        let chunk = chunks[head]!
        chunks[head] = nil
        if chunk.capacity == Self.chunkSize && spare == nil {
            chunk.start = 0
            chunk.end = 0
            spare = chunk
        }
        head += 1
    }
}
