import CZlib

/// gzip (RFC 1952) over zlib: whole messages compressed, and inflated with a bound on what they
/// may grow to, so that a small message cannot make its receiver allocate without limit.
public enum Gzip {
    /// Where inflation starts before it doubles (a typical message fits in one step).
    static let initialOutputBytes = 16 << 10

    /// `bytes` as one gzip member, at zlib's `level` (1 fastest … 9 smallest; 6, zlib's default,
    /// unless told). nil only when zlib cannot allocate its state.
    public static func compress(_ bytes: [UInt8], level: Int32 = 6) -> [UInt8]? {
        precondition(bytes.count <= Int(UInt32.max), "gzip input is limited to 4 GiB here")
        var stream = z_stream()
        guard pushgate_deflate_init_gzip(&stream, level) == Z_OK else { return nil }
        defer { deflateEnd(&stream) }
        // One call with room for the worst case: deflateBound covers the gzip header and trailer.
        let bound = Int(deflateBound(&stream, uLong(bytes.count)))
        var output = [UInt8](repeating: 0, count: bound)
        let status = bytes.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer { out in
                stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
                stream.avail_in = uInt(input.count)
                stream.next_out = out.baseAddress
                stream.avail_out = uInt(out.count)
                return deflate(&stream, Z_FINISH)
            }
        }
        guard status == Z_STREAM_END else { return nil }
        output.removeLast(bound - Int(stream.total_out))
        return output
    }

    /// The bytes `gzipped` inflates to, if that is at most `maxSize` bytes.
    ///
    /// The output grows by doubling and never past `maxSize + 1` bytes: reaching that one byte
    /// more is how an oversized message shows, so a bomb costs at most the limit, whatever it
    /// would inflate to. `reserve` is asked before each growth (with its size, the sum of which is
    /// the output's allocated size) and may refuse it, for a caller that counts memory. (While a
    /// growth copies what came before, that half-size buffer exists too, for the copy.)
    ///
    /// - Throws: ``GzipError/tooLarge(limit:)`` past `maxSize`, ``GzipError/refused`` when
    ///   `reserve` said no, ``GzipError/truncated`` or ``GzipError/corrupt(_:)`` for bad input.
    public static func decompress(
        _ gzipped: [UInt8], maxSize: Int, reserve: (Int) -> Bool = { _ in true }
    ) throws(GzipError) -> [UInt8] {
        precondition(maxSize >= 0, "maxSize must not be negative")
        precondition(gzipped.count <= Int(UInt32.max), "gzip input is limited to 4 GiB here")
        var stream = z_stream()
        guard pushgate_inflate_init_gzip(&stream) == Z_OK else { throw .outOfMemory }
        defer { inflateEnd(&stream) }
        let bound = maxSize < Int.max ? maxSize + 1 : maxSize
        var output: [UInt8] = []
        var outcome: Result<Bool, GzipError> = .success(false)  // true: the stream ended
        try gzipped.withUnsafeBufferPointer { (input) throws(GzipError) in
            stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
            stream.avail_in = uInt(input.count)
            while case .success(false) = outcome {
                if output.count == bound { throw .tooLarge(limit: maxSize) }
                let capacity = output.count + min(bound - output.count, max(output.count, initialOutputBytes))
                guard reserve(capacity - output.count) else { throw .refused }
                let previous = output
                // Inflated straight into the new array's storage: no zero-filling, one copy per growth.
                output = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, initialized in
                    previous.withUnsafeBytes { UnsafeMutableRawBufferPointer(buffer).copyMemory(from: $0) }
                    initialized = previous.count
                    outcome = inflate(&stream, into: buffer, filled: &initialized)
                }
            }
        }
        switch outcome {
        case .failure(let error):
            throw error
        case .success:
            if output.count > maxSize { throw .tooLarge(limit: maxSize) }
            if stream.avail_in > 0 { throw .corrupt("\(stream.avail_in) bytes after the end of the gzip data") }
            return output
        }
    }

    /// Inflates into `buffer` after its first `filled` bytes until it is full (false) or the gzip
    /// stream ends (true).
    private static func inflate(
        _ stream: inout z_stream, into buffer: UnsafeMutableBufferPointer<UInt8>, filled: inout Int
    ) -> Result<Bool, GzipError> {
        while filled < buffer.count {
            stream.next_out = buffer.baseAddress! + filled
            let room = min(buffer.count - filled, Int(uInt.max))  // zlib counts in 32 bits
            stream.avail_out = uInt(room)
            let status = CZlib.inflate(&stream, Z_NO_FLUSH)
            filled += room - Int(stream.avail_out)
            switch status {
            case Z_STREAM_END:
                return .success(true)
            case Z_OK:
                continue
            case Z_BUF_ERROR:
                // No progress possible with output room left: the input ran out mid-stream.
                return .failure(.truncated)
            case Z_MEM_ERROR:
                return .failure(.outOfMemory)
            default:  // Z_DATA_ERROR, Z_NEED_DICT, Z_STREAM_ERROR
                return .failure(.corrupt(stream.msg.map { String(cString: $0) } ?? "zlib status \(status)"))
            }
        }
        return .success(false)
    }
}

/// Why gzip data could not be inflated.
public enum GzipError: Error, Equatable, Sendable, CustomStringConvertible {
    /// It inflates to more than `limit` bytes (found at `limit + 1`, without inflating the rest).
    case tooLarge(limit: Int)
    /// The caller's `reserve` refused room for more output.
    case refused
    /// The data ends before the gzip stream does.
    case truncated
    /// Not valid gzip: zlib's reason.
    case corrupt(String)
    /// zlib could not allocate its state.
    case outOfMemory

    public var description: String {
        switch self {
        case .tooLarge(let limit): "inflates to more than \(limit) bytes"
        case .refused: "no room to inflate it"
        case .truncated: "the gzip data is truncated"
        case .corrupt(let reason): "not valid gzip data (\(reason))"
        case .outOfMemory: "zlib could not allocate memory"
        }
    }
}
