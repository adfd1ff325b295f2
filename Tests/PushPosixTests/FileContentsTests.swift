import Glibc
import PushPosix
import Testing

@Suite("FileContents")
struct FileContentsTests {
    /// A new temporary file holding `bytes`.
    private func write(_ bytes: [UInt8]) -> String {
        var template = Array("/tmp/pushgate-file-XXXXXX".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        precondition(fd >= 0)
        bytes.withUnsafeBytes { _ = Glibc.write(fd, $0.baseAddress, $0.count) }
        close(fd)
        return String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    @Test("reads a whole file, larger than one read, byte for byte")
    func wholeFile() throws {
        let bytes = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let path = write(bytes)
        defer { unlink(path) }
        #expect(try FileContents.read(path) == bytes)
        let text = write(Array("héllo\n".utf8))
        defer { unlink(text) }
        #expect(try FileContents.readText(text) == "héllo\n")
    }

    @Test("a missing file names the path and the system's reason")
    func missing() {
        let error = #expect(throws: FileContents.ReadError.self) { try FileContents.read("/nonexistent/key.p8") }
        #expect(error?.description == "cannot open /nonexistent/key.p8: No such file or directory")
    }

    @Test("a file over the limit is refused, naming the limit; a directory cannot be read")
    func limits() {
        let path = write([UInt8](repeating: 7, count: 100))
        defer { unlink(path) }
        let error = #expect(throws: FileContents.ReadError.self) { try FileContents.read(path, limit: 99) }
        #expect(error?.description == "\(path) is larger than 99 bytes")
        #expect((try? FileContents.read(path, limit: 100))?.count == 100)
        let directory = #expect(throws: FileContents.ReadError.self) { try FileContents.read("/tmp") }
        #expect(directory?.description.hasPrefix("cannot read /tmp: ") == true)
    }

    @Test("files the kernel reports as empty (/proc) are read to their end")
    func procFiles() throws {
        let status = try FileContents.readText("/proc/self/status")
        #expect(status.contains("Name:"))
    }
}
