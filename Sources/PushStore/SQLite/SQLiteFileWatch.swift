#if canImport(Glibc)
    import Glibc
#endif

/// Notices an SQLite file deleted or replaced while the store has it open. SQLite keeps writing
/// to the open (now unlinked) file and answers every commit OK, so without this a Publish would
/// be accepted into a file that is gone at the next start.
///
/// It holds a descriptor of its own on the file it was made for: a link count of 0 means the file
/// was deleted, another device or inode at the path means it was replaced (or its directory moved).
final class SQLiteFileWatch: Sendable {
    private let path: String
    private let descriptor: Int32
    private let device: UInt64
    private let inode: UInt64

    /// nil for an in-memory database or a file that cannot be opened (nothing to watch).
    init?(path: String) {
        guard !path.isEmpty, path != ":memory:", !path.hasPrefix("file::memory:") else { return nil }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        var status = stat()
        guard fstat(fd, &status) == 0 else {
            close(fd)
            return nil
        }
        self.path = path
        descriptor = fd
        device = UInt64(status.st_dev)
        inode = UInt64(status.st_ino)
    }

    deinit { close(descriptor) }

    /// Throws `io` once the file is no longer the one that was opened.
    func check() throws(StoreError) {
        var open = stat()
        if fstat(descriptor, &open) == 0, open.st_nlink == 0 {
            throw StoreError(
                .io,
                message: "the database file \(path) was deleted while Pushgate had it open; "
                    + "nothing more is written to it (restart Pushgate on a store it can keep)")
        }
        var atPath = stat()
        if stat(path, &atPath) != 0 || UInt64(atPath.st_dev) != device || UInt64(atPath.st_ino) != inode {
            throw StoreError(
                .io,
                message: "the database file \(path) was moved, replaced or its directory removed while "
                    + "Pushgate had it open; nothing more is written to it (restart Pushgate)")
        }
    }
}
