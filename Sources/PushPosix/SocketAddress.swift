import Glibc

/// An IPv4 or IPv6 socket address (a copied `sockaddr_storage`).
struct SocketAddress: @unchecked Sendable {
    // @unchecked: a plain value type; sockaddr_storage just lacks the annotation.
    private var storage = sockaddr_storage()
    private(set) var length: socklen_t = 0

    var family: Int32 { Int32(storage.ss_family) }

    init(_ address: UnsafePointer<sockaddr>, length: socklen_t) {
        let count = min(Int(length), MemoryLayout<sockaddr_storage>.size)
        withUnsafeMutableBytes(of: &storage) { dest in
            dest.copyMemory(from: UnsafeRawBufferPointer(start: address, count: count))
        }
        self.length = socklen_t(count)
    }

    /// A copy of a `sockaddr_in` or `sockaddr_in6` value.
    init<Address>(copying address: Address) {
        let count = min(MemoryLayout<Address>.size, MemoryLayout<sockaddr_storage>.size)
        withUnsafeMutableBytes(of: &storage) { dest in
            withUnsafeBytes(of: address) { dest.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0.prefix(count))) }
        }
        length = socklen_t(count)
    }

    private init() {}

    func withSockAddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) throws -> R) rethrows -> R {
        try withUnsafeBytes(of: storage) { raw in
            try body(raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), length)
        }
    }

    /// IPv4/IPv6 literals (brackets allowed around IPv6) are parsed directly; anything else
    /// ("localhost") goes through getaddrinfo, which may block, on the calling thread (for a
    /// listener at start-up; connections resolve through a ``HostResolver``, off the loops).
    /// `passive` asks for addresses suitable for bind().
    static func resolve(host: String, port: Int, passive: Bool = false) throws(IOError) -> [SocketAddress] {
        guard (0...65535).contains(port) else {
            throw IOError(errno: EINVAL, reason: "port \(port) out of range")
        }
        if let address = literal(host, port: port) { return [address] }
        return try lookUp(unbracketed(host), port: port, passive: passive)
    }

    /// `host` without the brackets an IPv6 literal may carry in a URL.
    static func unbracketed(_ host: String) -> String {
        host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
    }

    /// The address `host` spells, when it is an IPv4 or IPv6 literal (brackets allowed).
    static func literal(_ host: String, port: Int) -> SocketAddress? {
        let name = unbracketed(host)
        var v4 = sockaddr_in()
        if inet_pton(AF_INET, name, &v4.sin_addr) == 1 {
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = in_port_t(UInt16(truncatingIfNeeded: port).bigEndian)
            return SocketAddress(copying: v4)
        }
        var v6 = sockaddr_in6()
        if inet_pton(AF_INET6, name, &v6.sin6_addr) == 1 {
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = in_port_t(UInt16(truncatingIfNeeded: port).bigEndian)
            return SocketAddress(copying: v6)
        }
        return nil
    }

    /// getaddrinfo for `name`: blocks the calling thread for as long as the resolver takes.
    static func lookUp(_ name: String, port: Int = 0, passive: Bool = false) throws(IOError) -> [SocketAddress] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = passive ? AI_PASSIVE : 0
        var list: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(name, String(port), &hints, &list)
        guard rc == 0 else {
            // getaddrinfo reports EAI_* codes, not errno; EAI_SYSTEM means "look at errno".
            let code = rc == EAI_SYSTEM ? Glibc.errno : ENOENT
            throw IOError(errno: code, reason: "resolving \(name): \(String(cString: gai_strerror(rc)))")
        }
        defer { freeaddrinfo(list) }
        var result: [SocketAddress] = []
        var cursor = list
        while let entry = cursor {
            if let address = entry.pointee.ai_addr,
                entry.pointee.ai_family == AF_INET || entry.pointee.ai_family == AF_INET6
            {
                result.append(SocketAddress(address, length: entry.pointee.ai_addrlen))
            }
            cursor = entry.pointee.ai_next
        }
        guard !result.isEmpty else {
            throw IOError(errno: ENOENT, reason: "resolving \(name): no IPv4/IPv6 address")
        }
        return result
    }

    /// The bound address of a socket (getsockname) or its peer (getpeername).
    static func of(fd: Int32, peer: Bool) throws(IOError) -> SocketAddress {
        var address = SocketAddress()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = try syscallChecked(peer ? "getpeername" : "getsockname") {
            withUnsafeMutableBytes(of: &address.storage) { raw in
                let pointer = raw.baseAddress!.assumingMemoryBound(to: sockaddr.self)
                return peer ? getpeername(fd, pointer, &length) : getsockname(fd, pointer, &length)
            }
        }
        address.length = length
        return address
    }

    var port: Int {
        guard let offset = portOffset else { return 0 }
        return withUnsafeBytes(of: storage) {
            Int(UInt16(bigEndian: $0.loadUnaligned(fromByteOffset: offset, as: in_port_t.self)))
        }
    }

    /// Where the port sits in the storage; nil for a family without one.
    private var portOffset: Int? {
        switch family {
        case AF_INET: MemoryLayout<sockaddr_in>.offset(of: \.sin_port)
        case AF_INET6: MemoryLayout<sockaddr_in6>.offset(of: \.sin6_port)
        default: nil
        }
    }

    /// The same address with `port` (a resolver's answers are kept without one).
    func withPort(_ port: Int) -> SocketAddress {
        var copy = self
        guard let offset = portOffset else { return copy }
        withUnsafeMutableBytes(of: &copy.storage) { raw in
            raw.storeBytes(
                of: in_port_t(UInt16(truncatingIfNeeded: port).bigEndian), toByteOffset: offset, as: in_port_t.self)
        }
        return copy
    }

    /// Where the address leads (see ``AddressScope``).
    var scope: AddressScope {
        withSockAddr { pointer, _ in
            switch Int32(pointer.pointee.sa_family) {
            case AF_INET:
                return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                    AddressScope(ipv4: UInt32(bigEndian: $0.pointee.sin_addr.s_addr))
                }
            case AF_INET6:
                return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                    withUnsafeBytes(of: $0.pointee.sin6_addr) { AddressScope(ipv6: $0) }
                }
            default:
                return .reserved
            }
        }
    }

    /// The address without its port: "10.0.0.1", "fd00::1".
    var hostText: String {
        let text = description
        if text.hasPrefix("["), let end = text.lastIndex(of: "]") {
            return String(text[text.index(after: text.startIndex)..<end])
        }
        return String(text.prefix { $0 != ":" })
    }

    /// 127.0.0.0/8, ::1, or an IPv4-mapped 127.x address.
    var isLoopback: Bool {
        withSockAddr { pointer, _ in
            switch Int32(pointer.pointee.sa_family) {
            case AF_INET:
                return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                    UInt32(bigEndian: $0.pointee.sin_addr.s_addr) >> 24 == 127
                }
            case AF_INET6:
                return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                    withUnsafeBytes(of: $0.pointee.sin6_addr) { b in
                        let zeros10 = b.prefix(10).allSatisfy { $0 == 0 }
                        let isOne =
                            zeros10 && b[10] == 0 && b[11] == 0 && b[12...14].allSatisfy { $0 == 0 } && b[15] == 1
                        let mapped127 = zeros10 && b[10] == 0xff && b[11] == 0xff && b[12] == 127
                        return isOne || mapped127
                    }
                }
            default:
                return false
            }
        }
    }
}

extension SocketAddress: CustomStringConvertible {
    /// "127.0.0.1:54321" or "[::1]:54321".
    var description: String {
        withSockAddr { pointer, _ in
            var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
            switch Int32(pointer.pointee.sa_family) {
            case AF_INET:
                return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { sin in
                    var addr = sin.pointee.sin_addr
                    inet_ntop(AF_INET, &addr, &text, socklen_t(text.count))
                    return "\(Self.string(text)):\(port)"
                }
            case AF_INET6:
                return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { sin6 in
                    var addr = sin6.pointee.sin6_addr
                    inet_ntop(AF_INET6, &addr, &text, socklen_t(text.count))
                    return "[\(Self.string(text))]:\(port)"
                }
            default:
                return "unknown(family \(family))"
            }
        }
    }

    private static func string(_ cString: [CChar]) -> String {
        let bytes = cString.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return String(decoding: bytes, as: UTF8.self)
    }
}
