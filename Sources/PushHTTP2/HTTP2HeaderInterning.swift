#if canImport(Glibc)
    import Glibc
#endif

/// Shared byte arrays for received header fields, so the fields that repeat on every request or
/// response of our peers (gRPC, APNs) cost a compare and a retain instead of an allocation, a copy
/// and a free.
///
/// Names come from a fixed table of the names those peers use. Values are remembered per name:
/// a session keeps the last value it received for each known name (``ReceivedValues``), and a value
/// equal to it is shared (APNs requests repeat everything but `:path`; gRPC calls repeat almost
/// everything). A field not in the table gets its own arrays as before.
enum HTTP2HeaderInterning {
    static let names: [[UInt8]] = [
        ":method", ":scheme", ":authority", ":path", ":status", "content-type", "content-length", "te",
        "user-agent", "accept-encoding", "grpc-timeout", "grpc-encoding", "grpc-accept-encoding", "grpc-status",
        "grpc-message", "authorization", "apns-id", "apns-topic", "apns-push-type", "apns-priority",
        "apns-expiration", "apns-collapse-id", "apns-unique-id",
    ].map { Array($0.utf8) }

    /// The names laid end to end in one buffer that lives for the whole process, with each name's
    /// offset, and the indices grouped by length: a lookup is a few `memcmp`s on raw memory, with no
    /// array access (and so no retain/release) per candidate.
    private nonisolated(unsafe) static let packed: (bytes: UnsafePointer<UInt8>, offsets: [Int]) = {
        let total = names.reduce(0) { $0 + $1.count }
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: total)
        var offsets: [Int] = []
        var offset = 0
        for name in names {
            offsets.append(offset)
            (buffer + offset).initialize(from: name, count: name.count)
            offset += name.count
        }
        return (UnsafePointer(buffer), offsets)
    }()

    private static let byLength: [[Int]] = {
        var table = [[Int]](repeating: [], count: 33)
        for (index, name) in names.enumerated() { table[name.count].append(index) }
        return table
    }()

    /// The index of `name` in ``names``, or nil.
    static func index(of name: UnsafeBufferPointer<UInt8>) -> Int? {
        guard name.count < byLength.count, let base = name.baseAddress else { return nil }
        let (bytes, offsets) = packed
        for index in byLength[name.count] where memcmp(bytes + offsets[index], base, name.count) == 0 {
            return index
        }
        return nil
    }
}

/// The last value a session received for each known header name (see ``HTTP2HeaderInterning``).
struct ReceivedValues {
    private var last = [[UInt8]?](repeating: nil, count: HTTP2HeaderInterning.names.count)

    /// The array for `value` received under name `index`: the previous one when equal, else a new
    /// one that becomes the previous.
    mutating func value(_ value: UnsafeBufferPointer<UInt8>, forName index: Int) -> [UInt8] {
        if let previous = last[index], previous.count == value.count {
            let equal =
                value.count == 0
                || previous.withUnsafeBufferPointer {
                    memcmp($0.baseAddress!, value.baseAddress!, value.count) == 0
                }
            if equal { return previous }
        }
        let fresh = Array(value)
        last[index] = fresh
        return fresh
    }
}
