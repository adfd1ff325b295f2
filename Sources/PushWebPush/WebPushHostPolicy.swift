import PushCore
public import PushTransport

/// Which push services an app's subscriptions may name (`allowed_hosts`). A subscription comes
/// from a browser, that is from anyone: without this list, a crafted `endpoint` would make the
/// gateway POST into its own network (`https://10.0.0.5/admin`).
///
/// An entry is a host name (`fcm.googleapis.com`), optionally with a port
/// (`push.example.com:8443`; without one only 443 is allowed), or `*.` and a domain for any host
/// under it (`*.notify.windows.com`). An IP address is allowed only when an entry names it
/// exactly. Names compare without regard to case.
public struct WebPushHostPolicy: Sendable, Equatable {
    /// The browsers' push services (docs/providers.md F.1): Chrome (and Opera), Firefox, Safari
    /// (Apple asks to allow any `*.push.apple.com`), Edge (WNS, `wns2-<dc>.notify.windows.com`).
    public static let defaultHosts = [
        "fcm.googleapis.com", "updates.push.services.mozilla.com", "*.push.apple.com", "*.notify.windows.com",
    ]

    struct Entry: Sendable, Equatable {
        /// Lower-cased; for a wildcard, the domain after `*.`.
        var host: String
        var port: Int
        var wildcard: Bool
    }

    let entries: [Entry]
    /// The entries as configured, for error messages.
    public let names: [String]

    /// The policy for `hosts`; the error names the first entry that is not a host (with an
    /// optional port) or `*.domain`.
    public init(_ hosts: [String] = defaultHosts) throws(WebPushHostPolicyError) {
        var entries: [Entry] = []
        for (index, text) in hosts.enumerated() {
            let wildcard = text.hasPrefix("*.")
            let rest = wildcard ? String(text.dropFirst(2)) : text
            guard !rest.isEmpty, !rest.contains("*"), let origin = HTTPSOrigin(url: "https://" + rest),
                !wildcard || !Self.isIPLiteral(origin.host)
            else {
                throw WebPushHostPolicyError(
                    index: index,
                    message: "\(text.debugDescription) is not a host name, host:port or *.domain")
            }
            entries.append(Entry(host: origin.host.lowercased(), port: origin.port, wildcard: wildcard))
        }
        self.entries = entries
        names = hosts
    }

    /// Why a subscription on `origin` may not be sent to, or nil when it may.
    public func refusal(of origin: HTTPSOrigin) -> String? {
        let host = origin.host.lowercased()
        let literal = Self.isIPLiteral(host)
        for entry in entries where entry.port == origin.port {
            if entry.wildcard {
                if !literal, host.hasSuffix("." + entry.host) { return nil }
            } else if entry.host == host {
                return nil
            }
        }
        let allowed = names.isEmpty ? "none" : names.joined(separator: ", ")
        if host == "permanently-removed.invalid" {
            return "the browser marked this subscription removed (permanently-removed.invalid); subscribe again"
        }
        if literal {
            return "\(origin.authority) is an IP address; push services are named hosts (allowed_hosts: \(allowed))"
        }
        if entries.contains(where: { $0.host == host || ($0.wildcard && host.hasSuffix("." + $0.host)) }) {
            return "port \(origin.port) of \(origin.host) is not allowed (allowed_hosts: \(allowed))"
        }
        return "\(TextCap.hostQuoted(origin.host)) is not an allowed push service (allowed_hosts: \(allowed))"
    }

    /// An IPv4 address in dotted digits, or an IPv6 address (HTTPSOrigin keeps it without brackets).
    static func isIPLiteral(_ host: String) -> Bool {
        host.contains(":") || host.utf8.allSatisfy { $0 == UInt8(ascii: ".") || ($0 >= 0x30 && $0 <= 0x39) }
    }
}

/// An `allowed_hosts` entry that is not a host.
public struct WebPushHostPolicyError: Error, Sendable, CustomStringConvertible {
    /// The entry's index in the list.
    public let index: Int
    public let message: String
    public var description: String { "allowed_hosts[\(index)]: \(message)" }
}

extension TextCap {
    /// A host from a subscription, quoted and shortened for an error message.
    fileprivate static func hostQuoted(_ host: String) -> String { quoted(host, maxCharacters: 64) }
}
