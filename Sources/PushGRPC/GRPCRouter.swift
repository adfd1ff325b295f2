import PushCore

/// A method at its path: what a call's `:path` resolves to, made once per method so a call holds
/// a reference to it instead of a copy of the method (its closures and strings).
final class GRPCRoute: Sendable {
    /// `/package.Service/Method`.
    let path: String
    let method: GRPCMethod
    /// The method's place in its router, the same for every call of it (a slot for per-method state).
    let index: Int

    init(path: String, method: GRPCMethod, index: Int) {
        self.path = path
        self.method = method
        self.index = index
    }
}

/// Finds the method for a `:path` of the form `/package.Service/Method` (case-sensitive).
struct GRPCRouter: Sendable {
    private let routes: [String: GRPCRoute]
    private let serviceNames: Set<String>

    init(services: [GRPCService]) {
        var routes: [String: GRPCRoute] = [:]
        for service in services {
            for (name, method) in service.methods.sorted(by: { $0.key < $1.key }) {
                let path = "/\(service.name)/\(name)"
                routes[path] = GRPCRoute(path: path, method: method, index: routes[path]?.index ?? routes.count)
            }
        }
        self.routes = routes
        self.serviceNames = Set(services.map(\.name))
    }

    func route(forPath path: String) -> GRPCRoute? {
        routes[path]
    }

    func method(forPath path: String) -> GRPCMethod? {
        routes[path]?.method
    }

    func unimplementedMessage(forPath path: String) -> String {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        if parts.count == 3, parts[0].isEmpty, serviceNames.contains(String(parts[1])) {
            return "unknown method \(parts[2]) of service \(parts[1])"
        }
        if parts.count == 3, parts[0].isEmpty {
            return "unknown service \(parts[1])"
        }
        return "malformed method path \(TextCap.quoted(path)): expected /package.Service/Method"
    }
}
