import Glibc

/// An epoll instance. Each registration carries a 64-bit id (not the fd) in `epoll_data`, so
/// an event queued for a descriptor that was closed during this turn, and whose number was
/// reused, can never reach the new owner: the loop simply no longer knows the old id.
struct Epoll {
    let fd: Int32

    init() throws(IOError) {
        fd = try syscallChecked("epoll_create1") { LinuxCalls.epollCreate1(LinuxCalls.CLOEXEC) }
    }

    func add(fd target: Int32, id: UInt64, events: UInt32) throws(IOError) {
        try control(LinuxCalls.EPOLL_CTL_ADD, target, id, events, "epoll_ctl(ADD)")
    }

    func modify(fd target: Int32, id: UInt64, events: UInt32) throws(IOError) {
        try control(LinuxCalls.EPOLL_CTL_MOD, target, id, events, "epoll_ctl(MOD)")
    }

    func remove(fd target: Int32) throws(IOError) {
        try control(LinuxCalls.EPOLL_CTL_DEL, target, 0, 0, "epoll_ctl(DEL)")
    }

    private func control(
        _ op: Int32, _ target: Int32, _ id: UInt64, _ events: UInt32, _ reason: String
    ) throws(IOError) {
        var event = EpollEvents.zero
        EpollEvents.store(events: events, id: id, into: &event)
        _ = try syscallChecked(reason) {
            withUnsafeMutableBytes(of: &event) { LinuxCalls.epollCtl(fd, op, target, $0.baseAddress) }
        }
    }

    /// Waits up to `timeoutMillis` (-1 = forever). An EINTR returns 0 events so the caller
    /// recomputes its timeout rather than sleeping for the stale one.
    func wait(into buffer: EpollEvents, timeoutMillis: Int32) -> Int {
        let n = LinuxCalls.epollWait(fd, buffer.storage.baseAddress, Int32(buffer.capacity), timeoutMillis)
        if n >= 0 { return Int(n) }
        let code = Glibc.errno
        if code == EINTR { return 0 }
        // EBADF/EFAULT/EINVAL can only come from a bug in this module; carrying on would spin.
        fatalError("PushPosix: \(IOError(errno: code, reason: "epoll_wait"))")
    }
}

/// The array `epoll_wait` fills. `struct epoll_event` is packed on x86_64 (12 bytes, data at
/// offset 4) and natural elsewhere (16 bytes, data at 8); Swift cannot declare a packed
/// struct, so we read and write the bytes at the C offsets.
struct EpollEvents {
    #if arch(x86_64)
    static let stride = 12
    static let dataOffset = 4
    typealias Raw = (UInt32, UInt32, UInt32)
    static var zero: Raw { (0, 0, 0) }
    #else
    static let stride = 16
    static let dataOffset = 8
    typealias Raw = (UInt64, UInt64)
    static var zero: Raw { (0, 0) }
    #endif

    let storage: UnsafeMutableRawBufferPointer
    let capacity: Int

    init(capacity: Int) {
        self.capacity = capacity
        storage = .allocate(byteCount: capacity * Self.stride, alignment: 8)
        storage.initializeMemory(as: UInt8.self, repeating: 0)
    }

    func deallocate() { storage.deallocate() }

    func events(at index: Int) -> UInt32 {
        storage.loadUnaligned(fromByteOffset: index * Self.stride, as: UInt32.self)
    }

    func id(at index: Int) -> UInt64 {
        storage.loadUnaligned(fromByteOffset: index * Self.stride + Self.dataOffset, as: UInt64.self)
    }

    static func store(events: UInt32, id: UInt64, into raw: inout Raw) {
        withUnsafeMutableBytes(of: &raw) { bytes in
            bytes.storeBytes(of: events, toByteOffset: 0, as: UInt32.self)
            bytes.storeBytes(of: id, toByteOffset: dataOffset, as: UInt64.self)
        }
    }
}
