import Glibc

/// Small socket-option helpers shared by connect and accept.
enum Socket {
    /// A non-blocking, close-on-exec TCP socket of the address's family.
    static func makeTCP(family: Int32) throws(IOError) -> Int32 {
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        return try syscallChecked("socket") { Glibc.socket(family, type, 0) }
    }

    static func setOption(_ fd: Int32, _ level: Int32, _ name: Int32, _ value: Int32, _ label: String) throws(IOError) {
        var value = value
        _ = try syscallChecked("setsockopt(\(label))") {
            setsockopt(fd, level, name, &value, socklen_t(MemoryLayout<Int32>.size))
        }
    }

    /// Request/response frames must not wait for Nagle's algorithm; we batch ourselves.
    static func setNoDelay(_ fd: Int32) throws(IOError) {
        try setOption(fd, Int32(IPPROTO_TCP), TCP_NODELAY, 1, "TCP_NODELAY")
    }

    /// The pending error of a socket (SO_ERROR), 0 if none.
    static func pendingError(_ fd: Int32) -> Int32 {
        var code: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        if getsockopt(fd, SOL_SOCKET, SO_ERROR, &code, &length) != 0 { return Glibc.errno }
        return code
    }
}
