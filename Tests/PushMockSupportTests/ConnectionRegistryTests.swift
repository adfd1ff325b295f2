import PushMockSupport
import Testing

@Suite("Connection registry")
struct ConnectionRegistryTests {
    private final class Connection: Sendable {
        let name: String
        init(_ name: String) { self.name = name }
    }

    @Test("ids count from 1 in the order they are asked for")
    func ids() {
        let registry = ConnectionRegistry<Connection>()
        #expect((0..<5).map { _ in registry.nextID() } == [1, 2, 3, 4, 5])
    }

    @Test("open lists the registered connections until each is unregistered")
    func registerAndUnregister() {
        let registry = ConnectionRegistry<Connection>()
        #expect(registry.open.isEmpty)
        for name in ["a", "b", "c"] { registry.register(Connection(name), id: registry.nextID()) }
        #expect(Set(registry.open.map(\.name)) == ["a", "b", "c"])
        registry.unregister(id: 2)
        #expect(Set(registry.open.map(\.name)) == ["a", "c"])
        registry.unregister(id: 2)
        registry.unregister(id: 99)
        #expect(registry.open.count == 2, "unregistering twice or an unknown id changes nothing")
        registry.register(Connection("c2"), id: 3)
        #expect(Set(registry.open.map(\.name)) == ["a", "c2"], "an id registered again replaces its connection")
    }
}
