import PushPosix

/// A small file holding one secret (an ADM client secret): read once at start or reload, the
/// whitespace around it dropped. Errors name the file, never its contents.
enum SecretFile {
    struct ReadError: Error, CustomStringConvertible {
        let description: String
    }

    static let maxBytes = 64 << 10

    static func read(_ path: String) throws(ReadError) -> String {
        String(decoding: try readBytes(path), as: UTF8.self)
    }

    /// The secret as bytes, exactly as in the file but for the whitespace around it (a binary key,
    /// e.g. `openssl rand 32`, is not text).
    static func readBytes(_ path: String) throws(ReadError) -> [UInt8] {
        let bytes: [UInt8]
        do {
            bytes = try FileContents.read(path, limit: maxBytes)
        } catch {
            throw ReadError(description: error.description)
        }
        let isSpace: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 || $0 == 0x0a || $0 == 0x0d }
        let start = bytes.firstIndex { !isSpace($0) } ?? bytes.endIndex
        let end = bytes.lastIndex { !isSpace($0) }.map { $0 + 1 } ?? start
        return Array(bytes[start..<max(start, end)])
    }
}
