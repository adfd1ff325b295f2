import Glibc

/// A fresh directory under /tmp for one test's files, removed (with its files) by `remove()`.
struct TemporaryDirectory {
    let path: String
    private var files: [String] = []

    init() throws {
        var template = Array("/tmp/pushgate-cli-test-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw TestFileError("mkdtemp failed: errno \(errno)") }
        path = String(cString: made)
    }

    /// Writes `text` to `name` in the directory; its path.
    @discardableResult
    mutating func write(_ name: String, _ text: String) throws -> String {
        let file = path + "/" + name
        let fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard fd >= 0 else { throw TestFileError("\(file): errno \(errno)") }
        defer { close(fd) }
        let bytes = Array(text.utf8)
        guard Glibc.write(fd, bytes, bytes.count) == bytes.count else { throw TestFileError("\(file): short write") }
        files.append(file)
        return file
    }

    /// The path of `name` in the directory (for files a command writes).
    mutating func path(of name: String) -> String {
        files.append(path + "/" + name)
        return path + "/" + name
    }

    /// The contents of `path`, or nil when it cannot be read.
    func read(_ file: String) -> String? {
        let fd = open(file, O_RDONLY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = Glibc.read(fd, &buffer, buffer.count)
            if count <= 0 { break }
            bytes += buffer[..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    func remove() {
        for file in files { unlink(file) }
        rmdir(path)
    }
}

struct TestFileError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The message of the error `body` throws (as a command prints it after its name), or nil if it
/// throws none.
func usageError<T>(_ body: () throws -> T) -> String? {
    do {
        _ = try body()
        return nil
    } catch {
        return "\(error)"
    }
}

/// The permission bits of `path`, or nil when it does not exist.
func fileMode(_ path: String) -> mode_t? {
    var info = stat()
    guard stat(path, &info) == 0 else { return nil }
    return info.st_mode & 0o777
}
