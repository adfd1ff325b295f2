import PushPosix

#if canImport(Glibc)
    import Glibc
#endif

// `pushgate bench`: the numbers — a scanner that counts Results
// without building them, and the /proc readings of a child process.

/// Counts the Results of a serialized `SendResponse` straight from the protobuf wire format
/// (field 1: Result; in a Result, 3: status, 5: reason), so a 1,000-token response costs the bench
/// client no allocations unless something was not delivered.
struct ResultTally {
    var results = 0
    var delivered = 0
    var rejected = 0
    var failed = 0
    var other = 0
    /// "REJECTED BadDeviceToken", "FAILED DeadlineExceeded", "RPC RESOURCE_EXHAUSTED", ...
    var reasons: [String: Int] = [:]

    var errors: Int { rejected + failed + other }

    mutating func merge(_ other: ResultTally) {
        results += other.results
        delivered += other.delivered
        rejected += other.rejected
        failed += other.failed
        self.other += other.other
        for (reason, count) in other.reasons { reasons[reason, default: 0] += count }
    }

    /// Adds the results of one SendResponse; false if the bytes are not a valid SendResponse.
    mutating func scanSendResponse(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBufferPointer { buffer in
            var reader = WireReader(buffer[...])
            while !reader.atEnd {
                guard let (field, wireType) = reader.tag() else { return false }
                if field == 1 && wireType == 2 {
                    guard let result = reader.lengthDelimited() else { return false }
                    guard scanResult(result) else { return false }
                } else if !reader.skip(wireType) {
                    return false
                }
            }
            return true
        }
    }

    private mutating func scanResult(_ bytes: Slice<UnsafeBufferPointer<UInt8>>) -> Bool {
        var reader = WireReader(bytes)
        var status: UInt64 = 0
        var reason: Slice<UnsafeBufferPointer<UInt8>>?
        while !reader.atEnd {
            guard let (field, wireType) = reader.tag() else { return false }
            switch (field, wireType) {
            case (3, 0):
                guard let value = reader.varint() else { return false }
                status = value
            case (5, 2):
                guard let value = reader.lengthDelimited() else { return false }
                reason = value
            default:
                guard reader.skip(wireType) else { return false }
            }
        }
        results += 1
        let name: String
        switch status {
        case 1:
            delivered += 1
            return true
        case 2:
            rejected += 1
            name = "REJECTED"
        case 3:
            failed += 1
            name = "FAILED"
        default:
            other += 1
            name = "STATUS_\(status)"
        }
        let text = reason.map { String(decoding: $0, as: UTF8.self) } ?? ""
        reasons["\(name) \(text.isEmpty ? "(no reason)" : text)", default: 0] += 1
        return true
    }
}

/// A cursor over protobuf wire-format bytes.
struct WireReader {
    private var bytes: Slice<UnsafeBufferPointer<UInt8>>
    private var position: Int

    init(_ bytes: Slice<UnsafeBufferPointer<UInt8>>) {
        self.bytes = bytes
        position = bytes.startIndex
    }

    var atEnd: Bool { position >= bytes.endIndex }

    mutating func varint() -> UInt64? {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while position < bytes.endIndex, shift < 64 {
            let byte = bytes[position]
            position += 1
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
        }
        return nil
    }

    mutating func tag() -> (field: UInt64, wireType: UInt64)? {
        guard let key = varint() else { return nil }
        return (key >> 3, key & 7)
    }

    mutating func lengthDelimited() -> Slice<UnsafeBufferPointer<UInt8>>? {
        guard let length = varint(), length <= UInt64(bytes.endIndex - position) else { return nil }
        let start = position
        position += Int(length)
        return bytes[start..<position]
    }

    mutating func skip(_ wireType: UInt64) -> Bool {
        switch wireType {
        case 0: return varint() != nil
        case 1: return advance(8)
        case 2: return lengthDelimited() != nil
        case 5: return advance(4)
        default: return false
        }
    }

    private mutating func advance(_ count: Int) -> Bool {
        guard bytes.endIndex - position >= count else { return false }
        position += count
        return true
    }
}

/// A small file as text, nil if it cannot be read (a process that has gone, a log not written yet).
func readSmallFile(_ path: String) -> String? {
    try? FileContents.readText(path)
}

/// Monotonic nanoseconds (CLOCK_MONOTONIC, the clock the event loops use).
func monotonicNanoseconds() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}
