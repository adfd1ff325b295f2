/// Bytes a session has produced for the peer and the transport has not taken yet: appended whole,
/// drained in pieces, the storage kept for reuse while it stays small.
struct HTTP1Output {
    private var bytes: [UInt8] = []
    private var head = 0

    var isEmpty: Bool { head == bytes.count }
    var count: Int { bytes.count - head }

    mutating func append(_ more: some Sequence<UInt8>) { bytes.append(contentsOf: more) }

    /// Moves up to `maxBytes` into `buffer`; returns how many.
    mutating func drain(into buffer: inout [UInt8], maxBytes: Int) -> Int {
        let count = min(maxBytes, bytes.count - head)
        guard count > 0 else { return 0 }
        buffer.append(contentsOf: bytes[head..<(head + count)])
        head += count
        if head == bytes.count {
            bytes.removeAll(keepingCapacity: bytes.capacity <= 1 << 16)
            head = 0
        }
        return count
    }
}
