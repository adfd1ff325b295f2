import Testing

@testable import PushGRPC

@Suite("Request budget and the request-message queue")
struct GRPCRequestBudgetTests {
    @Test("a reservation fits or is refused whole, and a connection draws on the server's budget")
    func reserveAndRelease() {
        let server = GRPCRequestBudget(limit: 100, owner: "server")
        let first = GRPCRequestBudget(limit: 60, owner: "connection", parent: server)
        let second = GRPCRequestBudget(limit: 60, owner: "connection", parent: server)
        #expect(first.reserve(50))
        #expect(!first.reserve(20))  // the connection's own limit
        #expect(first.reserved == 50 && server.reserved == 50)
        #expect(second.reserve(50))
        #expect(!second.reserve(5))  // 55 of 60 here would be fine; 105 of 100 there is not
        #expect(second.reserved == 50 && server.reserved == 100)
        first.release(50)
        #expect(second.reserve(5))
        #expect(server.reserved == 55)
    }

    @Test("a refusal by the server's budget leaves the connection's untouched")
    func parentRefusal() {
        let server = GRPCRequestBudget(limit: 10, owner: "server")
        let connection = GRPCRequestBudget(limit: 100, owner: "connection", parent: server)
        #expect(connection.refusal(reserving: 11) === server)
        #expect(connection.reserved == 0 && server.reserved == 0)
        #expect(connection.reserve(10))
        connection.release(10)
        #expect(connection.reserved == 0 && server.reserved == 0)
    }

    @Test("messages give their reservation back when taken, dropped, or freed")
    func queueReleases() async {
        let budget = GRPCRequestBudget(limit: 1_000, owner: "connection")
        let drained = Counter()
        let messages = GRPCRequestMessages(budget: budget) { drained.add() }
        #expect(budget.reserve(300))
        messages.yield([1], reserved: 100)
        messages.yield([2], reserved: 100)
        messages.yield([3], reserved: 100)
        #expect(messages.isBacklogged)
        #expect(await messages.next() == [1])
        #expect(budget.reserved == 200 && drained.value == 0)
        #expect(await messages.next() == [2])
        #expect(await messages.next() == [3])
        #expect(budget.reserved == 0 && drained.value == 1 && !messages.isBacklogged)

        #expect(budget.reserve(200))
        messages.yield([4], reserved: 200)
        messages.cancel()
        #expect(budget.reserved == 0)
        #expect(await messages.next() == nil)
        // Added after the end: released at once.
        #expect(budget.reserve(5))
        messages.yield([5], reserved: 5)
        #expect(budget.reserved == 0)

        var queue: GRPCRequestMessages? = GRPCRequestMessages(budget: budget)
        #expect(budget.reserve(7))
        queue?.yield([6], reserved: 7)
        queue = nil
        #expect(budget.reserved == 0)
    }

    final class Counter: @unchecked Sendable {
        private(set) var value = 0
        func add() { value += 1 }
    }
}
