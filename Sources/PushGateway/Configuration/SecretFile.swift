#if canImport(Glibc)
import Glibc
#endif

/// A small file holding one secret (an ADM client secret): read once at start or reload, the
/// whitespace around it dropped. Errors name the file, never its contents.
enum SecretFile {
    struct ReadError: Error, CustomStringConvertible {
        let description: String
    }

    static let maxBytes = 64 << 10

    static func read(_ path: String) throws(ReadError) -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw ReadError(description: "cannot open \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let got = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if got < 0 {
                if errno == EINTR { continue }
                throw ReadError(description: "cannot read \(path): \(String(cString: strerror(errno)))")
            }
            if got == 0 { break }
            bytes.append(contentsOf: chunk[..<got])
            guard bytes.count <= maxBytes else { throw ReadError(description: "\(path) is larger than \(maxBytes) bytes") }
        }
        let isSpace: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 || $0 == 0x0a || $0 == 0x0d }
        let start = bytes.firstIndex { !isSpace($0) } ?? bytes.endIndex
        let end = bytes.lastIndex { !isSpace($0) }.map { $0 + 1 } ?? start
        return String(decoding: bytes[start..<max(start, end)], as: UTF8.self)
    }
}
