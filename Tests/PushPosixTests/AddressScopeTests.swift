import Glibc
import Testing

@testable import PushPosix

@Suite("Address scopes: which addresses a Web Push connection may go to")
struct AddressScopeTests {
    private func scope(_ text: String) throws -> AddressScope {
        try #require(SocketAddress.literal(text, port: 443), "\(text) is not an IP literal").scope
    }

    @Test("IPv4: every special-purpose range, its edges, and global neighbours")
    func ipv4() throws {
        let cases: [(String, AddressScope)] = [
            ("0.0.0.0", .unspecified), ("0.0.0.1", .thisNetwork), ("0.255.255.255", .thisNetwork),
            ("1.0.0.0", .global),
            ("127.0.0.1", .loopback), ("127.255.255.254", .loopback), ("126.255.255.255", .global),
            ("10.0.0.1", .privateNetwork), ("10.255.255.255", .privateNetwork), ("9.255.255.255", .global),
            ("11.0.0.0", .global),
            ("172.16.0.0", .privateNetwork), ("172.31.255.255", .privateNetwork), ("172.15.255.255", .global),
            ("172.32.0.0", .global),
            ("192.168.0.1", .privateNetwork), ("192.168.255.255", .privateNetwork), ("192.169.0.0", .global),
            ("100.64.0.0", .sharedAddressSpace), ("100.127.255.255", .sharedAddressSpace),
            ("100.63.255.255", .global), ("100.128.0.0", .global),
            ("169.254.169.254", .linkLocal), ("169.253.0.0", .global),
            ("224.0.0.1", .multicast), ("239.255.255.255", .multicast),
            ("255.255.255.255", .broadcast), ("240.0.0.1", .reserved), ("255.255.255.254", .reserved),
            ("192.0.0.8", .reserved), ("192.0.2.1", .reserved), ("198.51.100.7", .reserved),
            ("203.0.113.9", .reserved), ("198.18.0.1", .reserved), ("198.19.255.255", .reserved),
            ("198.20.0.0", .global),
            ("8.8.8.8", .global), ("142.250.185.10", .global), ("17.253.144.10", .global),
        ]
        for (text, expected) in cases {
            #expect(try scope(text) == expected, "\(text)")
        }
    }

    @Test("IPv6: loopback, unspecified, ULA, link-local, site-local, multicast, documentation, outside 2000::/3")
    func ipv6() throws {
        let cases: [(String, AddressScope)] = [
            ("::", .unspecified), ("::1", .loopback),
            ("fc00::1", .privateNetwork), ("fd12:3456:789a::1", .privateNetwork),
            ("fbff:ffff::1", .reserved),
            ("fe80::1", .linkLocal), ("febf:ffff::1", .linkLocal), ("fec0::1", .privateNetwork),
            ("ff02::1", .multicast), ("ff0e::101", .multicast),
            ("2001:db8::1", .reserved), ("3fff:0fff::1", .reserved), ("100::1", .reserved), ("64:ff9b:1::1", .reserved),
            ("2a00:1450:4001:80b::200a", .global), ("2001:4860:4860::8888", .global),
            ("3fff:ffff::1", .global), ("4000::1", .reserved),
        ]
        for (text, expected) in cases {
            #expect(try scope(text) == expected, "\(text)")
        }
    }

    @Test("IPv6 forms carrying an IPv4 address take its scope: mapped, compatible, NAT64, 6to4")
    func embeddedIPv4() throws {
        let cases: [(String, AddressScope)] = [
            ("::ffff:127.0.0.1", .loopback), ("::ffff:10.0.0.1", .privateNetwork),
            ("::ffff:172.16.5.4", .privateNetwork), ("::ffff:192.168.1.1", .privateNetwork),
            ("::ffff:100.64.1.1", .sharedAddressSpace), ("::ffff:169.254.1.1", .linkLocal),
            ("::ffff:224.0.0.1", .multicast), ("::ffff:0.0.0.0", .unspecified), ("::ffff:0.1.2.3", .thisNetwork),
            ("::ffff:255.255.255.255", .broadcast), ("::ffff:8.8.8.8", .global),
            // IPv4-compatible (deprecated): the embedded scope, and never global.
            ("::127.0.0.1", .loopback), ("::10.0.0.1", .privateNetwork), ("::169.254.0.1", .linkLocal),
            ("::8.8.8.8", .reserved),
            ("64:ff9b::10.0.0.1", .privateNetwork), ("64:ff9b::7f00:1", .loopback), ("64:ff9b::8.8.8.8", .global),
            ("2002:0a00:0001::1", .privateNetwork), ("2002:7f00:0001::", .loopback), ("2002:0808:0808::1", .global),
        ]
        for (text, expected) in cases {
            #expect(try scope(text) == expected, "\(text)")
        }
    }

    @Test("the scope as a refusal names it")
    func descriptions() {
        #expect(AddressScope.privateNetwork.description == "a private address")
        #expect(AddressScope.loopback.description == "a loopback address")
        #expect(AddressScope(ipv4: 0x0A00_0001) == .privateNetwork)
    }

    @Test("globalOnly drops non-global addresses, refuses when none is left, naming host and address")
    func admission() throws {
        let private10 = try #require(SocketAddress.literal("10.0.0.1", port: 443))
        let loopback = try #require(SocketAddress.literal("127.0.0.1", port: 443))
        let ula = try #require(SocketAddress.literal("fd00::5", port: 443))
        let global = try #require(SocketAddress.literal("93.184.216.34", port: 443))

        let refused = AddressAdmission.globalOnly.admit([private10, loopback], host: "example.com")
        #expect(
            refused.failure
                == AddressRefusal(host: "example.com", address: "10.0.0.1", scope: .privateNetwork))
        #expect(refused.failure?.description == "example.com resolved to 10.0.0.1, a private address")
        #expect(
            AddressAdmission.globalOnly.admit([ula], host: "example.com").failure?.description
                == "example.com resolved to fd00::5, a private address")

        let mixed = AddressAdmission.globalOnly.admit([loopback, global, private10], host: "example.com")
        #expect(try mixed.get().map(\.description) == ["93.184.216.34:443"])
        #expect(try AddressAdmission.any.admit([loopback, private10], host: "x").get().count == 2)

        #expect(
            AddressAdmission.globalOnly.refusal(ofLiteral: "127.0.0.1")?.description
                == "127.0.0.1 is a loopback address")
        #expect(AddressAdmission.globalOnly.refusal(ofLiteral: "[::ffff:10.1.2.3]")?.scope == .privateNetwork)
        #expect(AddressAdmission.globalOnly.refusal(ofLiteral: "example.com") == nil)
        #expect(AddressAdmission.globalOnly.refusal(ofLiteral: "8.8.8.8") == nil)
        #expect(AddressAdmission.any.refusal(ofLiteral: "127.0.0.1") == nil)
    }
}

extension Result {
    fileprivate var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
