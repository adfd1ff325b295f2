#if canImport(Glibc)
    import Glibc
#endif

/// The one way Pushgate reads a whole file (config, keys, secrets, service accounts, `/proc`):
/// plain POSIX calls, a size limit so that a wrong path (a device, a huge log) fails instead of
/// filling memory, and errors that name the file and the system's reason, never its contents.
public enum FileContents {
    public struct ReadError: Error, Sendable, CustomStringConvertible {
        public let description: String
    }

    /// Files larger than this are refused unless a caller asks for more: far above any config
    /// or key, far below memory.
    public static let defaultLimit = 16 << 20

    /// The whole file at `path`.
    public static func read(_ path: String, limit: Int = defaultLimit) throws(ReadError) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw ReadError(description: "cannot open \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw ReadError(description: "cannot read \(path): \(String(cString: strerror(errno)))")
            }
            if count == 0 { return bytes }
            bytes.append(contentsOf: chunk[0..<count])
            guard bytes.count <= limit else { throw ReadError(description: "\(path) is larger than \(limit) bytes") }
        }
    }

    /// The whole file at `path` as UTF-8 text (invalid sequences replaced).
    public static func readText(_ path: String, limit: Int = defaultLimit) throws(ReadError) -> String {
        String(decoding: try read(path, limit: limit), as: UTF8.self)
    }
}
