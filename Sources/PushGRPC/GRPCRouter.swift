import PushCore

/// Finds the method for a `:path` of the form `/package.Service/Method` (case-sensitive).
struct GRPCRouter: Sendable {
    private let methods: [String: GRPCMethod]
    private let serviceNames: Set<String>

    init(services: [GRPCService]) {
        var methods: [String: GRPCMethod] = [:]
        for service in services {
            for (name, method) in service.methods {
                methods["/\(service.name)/\(name)"] = method
            }
        }
        self.methods = methods
        self.serviceNames = Set(services.map(\.name))
    }

    func method(forPath path: String) -> GRPCMethod? {
        methods[path]
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
