/// Where an IP address leads: the public internet (``global``), or one of the networks that are
/// not it (RFC 6890's special-purpose registries): what a Web Push subscription, written by anyone,
/// must not make the gateway connect to.
///
/// Pure: it reads the address's bytes, nothing else. IPv6 forms that carry an IPv4 address
/// (mapped `::ffff:a.b.c.d`, compatible `::a.b.c.d`, NAT64 `64:ff9b::/96`, 6to4 `2002::/16`) take
/// the scope of that IPv4 address: the kernel, a NAT64 gateway or a 6to4 relay would deliver to it.
/// Teredo (`2001::/32`) hides its IPv4 address behind an XOR and a relay; it counts as global.
public enum AddressScope: Sendable, Equatable, CustomStringConvertible {
    /// Routable on the public internet.
    case global
    /// `0.0.0.0`, `::`: "this host" as a destination.
    case unspecified
    /// `127.0.0.0/8`, `::1`.
    case loopback
    /// RFC 1918 (`10/8`, `172.16/12`, `192.168/16`), IPv6 unique local `fc00::/7` and the old
    /// site-local `fec0::/10`.
    case privateNetwork
    /// Carrier-grade NAT, `100.64.0.0/10` (RFC 6598).
    case sharedAddressSpace
    /// `169.254/16`, `fe80::/10`.
    case linkLocal
    /// `224/4`, `ff00::/8`.
    case multicast
    /// `255.255.255.255`.
    case broadcast
    /// `0.0.0.0/8` but `0.0.0.0`: "this network" (RFC 791, 1122).
    case thisNetwork
    /// Anything else not global: documentation, benchmarking, protocol assignments, `240/4`,
    /// IPv6 outside `2000::/3`, deprecated IPv4-compatible forms of global addresses.
    case reserved

    /// As the refusal names it: "a private address".
    public var description: String {
        switch self {
        case .global: "a global address"
        case .unspecified: "an unspecified address"
        case .loopback: "a loopback address"
        case .privateNetwork: "a private address"
        case .sharedAddressSpace: "a shared (carrier-grade NAT) address"
        case .linkLocal: "a link-local address"
        case .multicast: "a multicast address"
        case .broadcast: "the broadcast address"
        case .thisNetwork: "a this-network address (0.0.0.0/8)"
        case .reserved: "a reserved, non-global address"
        }
    }

    /// The scope of an IPv4 address given as a number (`10.0.0.1` is `0x0A00_0001`).
    public init(ipv4 address: UInt32) {
        func within(_ network: UInt32, _ prefix: Int) -> Bool {
            address >> (32 - prefix) == network >> (32 - prefix)
        }
        self =
            switch address {
            case 0: .unspecified
            case 0xFFFF_FFFF: .broadcast
            case _ where within(0x0000_0000, 8): .thisNetwork
            case _ where within(0x7F00_0000, 8): .loopback
            case _ where within(0x0A00_0000, 8) || within(0xAC10_0000, 12) || within(0xC0A8_0000, 16):
                .privateNetwork
            case _ where within(0x6440_0000, 10): .sharedAddressSpace
            case _ where within(0xA9FE_0000, 16): .linkLocal
            case _ where within(0xE000_0000, 4): .multicast
            // 192.0.0/24 protocol assignments; 192.0.2/24, 198.51.100/24, 203.0.113/24
            // documentation; 198.18/15 benchmarking; 240/4 future use.
            case _
            where within(0xC000_0000, 24) || within(0xC000_0200, 24) || within(0xC633_6400, 24)
                || within(0xCB00_7100, 24) || within(0xC612_0000, 15) || within(0xF000_0000, 4):
                .reserved
            default: .global
            }
    }

    /// The scope of an IPv6 address given as its 16 bytes, network order.
    public init<Bytes: Collection<UInt8>>(ipv6 bytes: Bytes) {
        let b = Array(bytes)
        precondition(b.count == 16, "an IPv6 address has 16 bytes")
        func ipv4(at offset: Int) -> UInt32 {
            b[offset..<offset + 4].reduce(0) { $0 << 8 | UInt32($1) }
        }
        let zeroPrefix = b[0..<10].allSatisfy { $0 == 0 }
        if zeroPrefix && b[10] == 0xFF && b[11] == 0xFF {  // ::ffff:a.b.c.d, IPv4-mapped
            self.init(ipv4: ipv4(at: 12))
        } else if zeroPrefix && b[10] == 0 && b[11] == 0 {
            switch ipv4(at: 12) {
            case 0: self = .unspecified
            case 1: self = .loopback
            // ::a.b.c.d, IPv4-compatible (deprecated by RFC 4291): never global itself.
            case let embedded:
                let scope = AddressScope(ipv4: embedded)
                self = scope == .global ? .reserved : scope
            }
        } else if b[0..<12] == [0x00, 0x64, 0xFF, 0x9B, 0, 0, 0, 0, 0, 0, 0, 0] {  // 64:ff9b::/96, NAT64
            self.init(ipv4: ipv4(at: 12))
        } else if b[0] == 0x20 && b[1] == 0x02 {  // 2002::/16, 6to4
            self.init(ipv4: ipv4(at: 2))
        } else if b[0] & 0xFE == 0xFC || (b[0] == 0xFE && b[1] & 0xC0 == 0xC0) {
            self = .privateNetwork
        } else if b[0] == 0xFE && b[1] & 0xC0 == 0x80 {
            self = .linkLocal
        } else if b[0] == 0xFF {
            self = .multicast
        } else if b[0] & 0xE0 != 0x20 || (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x0D && b[3] == 0xB8)
            || (b[0] == 0x3F && b[1] == 0xFF && b[2] & 0xF0 == 0)
        {
            // Outside 2000::/3, global unicast (64:ff9b:1::/48, 100::/64 …), or documentation
            // (2001:db8::/32, 3fff::/20).
            self = .reserved
        } else {
            self = .global
        }
    }
}
