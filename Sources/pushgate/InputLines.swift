#if canImport(Glibc)
    import Glibc
#endif

/// An input file (or stdin) read a line at a time through one buffer: memory is the buffer, however
/// long the file. A line longer than `maxLineBytes` is skipped to its end and reported as overlong.
final class InputLines {
    enum Line {
        /// The line's bytes (with its line end, when it has one) are `buffer[range]` until the next call.
        case line(Range<Int>)
        case overlong
        case end
    }

    private let descriptor: Int32
    private let maxLineBytes: Int
    private var buffer: [UInt8]
    private var start = 0
    private var end = 0
    private var atEOF = false
    /// The number of the line last answered (1-based).
    private(set) var number = 0
    /// Bytes read so far.
    private(set) var bytesRead = 0

    init(descriptor: Int32, maxLineBytes: Int) {
        self.descriptor = descriptor
        self.maxLineBytes = maxLineBytes
        buffer = [UInt8](repeating: 0, count: max(1 << 20, maxLineBytes * 2))
    }

    /// The next line; throws when reading fails.
    func next() throws -> Line {
        while true {
            if let newline = findNewline(from: start) {
                let range = start..<(newline + 1)
                start = newline + 1
                number += 1
                return range.count > maxLineBytes ? .overlong : .line(range)
            }
            if atEOF {
                guard start < end else { return .end }
                let range = start..<end
                start = end
                number += 1
                return range.count > maxLineBytes ? .overlong : .line(range)
            }
            if end - start > maxLineBytes {
                // Too long already: skip to its end without keeping it.
                number += 1
                try skipLine()
                return .overlong
            }
            try fill()
        }
    }

    func withBytes<T>(_ range: Range<Int>, _ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
        try buffer.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[range])) }
    }

    private func findNewline(from index: Int) -> Int? {
        guard index < end else { return nil }
        return buffer.withUnsafeBytes { bytes -> Int? in
            guard let found = memchr(bytes.baseAddress! + index, 0x0A, end - index) else { return nil }
            return UnsafeRawPointer(found) - bytes.baseAddress!
        }
    }

    private func skipLine() throws {
        while true {
            if let newline = findNewline(from: start) {
                start = newline + 1
                return
            }
            start = end
            if atEOF { return }
            try fill()
        }
    }

    /// Moves what is left to the front and reads more after it.
    private func fill() throws {
        if start > 0 {
            buffer.withUnsafeMutableBytes { bytes in
                _ = memmove(bytes.baseAddress!, bytes.baseAddress! + start, end - start)
            }
            end -= start
            start = 0
        }
        let count = buffer.withUnsafeMutableBytes { bytes in
            read(descriptor, bytes.baseAddress! + end, bytes.count - end)
        }
        if count < 0 {
            if errno == EINTR { return }
            throw InputError(message: "cannot read the input: \(String(cString: strerror(errno)))")
        }
        if count == 0 { atEOF = true }
        end += count
        bytesRead += count
    }

    struct InputError: Error, CustomStringConvertible {
        let message: String
        var description: String { message }
    }
}
