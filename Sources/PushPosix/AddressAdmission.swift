/// Which resolved addresses a connection may go to. A list of allowed host names is no wall
/// around the internal network by itself: a name is whatever its DNS says, and DNS can answer
/// `10.0.0.1` (or `127.0.0.1`) for any name. So a connection whose host someone outside chose (a
/// Web Push subscription's push service) checks the addresses themselves, after resolving and
/// right before connecting: no later answer can slip in between.
public enum AddressAdmission: Sendable, Equatable {
    /// Any address: the operator's own provider endpoints, proxies, mocks on loopback.
    case any
    /// Only ``AddressScope/global`` addresses; the others are dropped from the list, and when
    /// none is left the connection fails with an ``AddressRefusal``.
    case globalOnly

    /// The addresses to try, in their order, or the refusal naming the first one refused.
    func admit(_ addresses: [SocketAddress], host: String) -> Result<[SocketAddress], AddressRefusal> {
        guard self == .globalOnly else { return .success(addresses) }
        var admitted: [SocketAddress] = []
        var refused: (address: SocketAddress, scope: AddressScope)?
        for address in addresses {
            let scope = address.scope
            if scope == .global {
                admitted.append(address)
            } else if refused == nil {
                refused = (address, scope)
            }
        }
        if admitted.isEmpty, let refused {
            return .failure(AddressRefusal(host: host, address: refused.address.hostText, scope: refused.scope))
        }
        return .success(admitted)
    }

    /// The refusal of `host` when it is an IP literal this admission refuses; nil for a name (which
    /// resolves later, elsewhere: through a proxy, the proxy's) or an address let through.
    public func refusal(ofLiteral host: String) -> AddressRefusal? {
        guard let address = SocketAddress.literal(host, port: 0) else { return nil }
        if case .failure(let refusal) = admit([address], host: SocketAddress.unbracketed(host)) { return refusal }
        return nil
    }
}

/// A connection not made: every address its host resolved to (or the address it is) leads to a
/// network that is not the internet (see ``AddressAdmission/globalOnly``). Not worth retrying: the
/// same answer comes again.
public struct AddressRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    /// The host as the connection named it.
    public let host: String
    /// The first address refused, without a port: "10.0.0.1".
    public let address: String
    public let scope: AddressScope

    public init(host: String, address: String, scope: AddressScope) {
        self.host = host
        self.address = address
        self.scope = scope
    }

    /// "example.com resolved to 10.0.0.1, a private address"; for an IP literal, "10.0.0.1 is a
    /// private address".
    public var description: String {
        host == address ? "\(host) is \(scope)" : "\(host) resolved to \(address), \(scope)"
    }
}
