import Testing

@testable import PushHTTP2

@Suite("HTTP/2 stream table")
struct HTTP2StreamTableTests {
    final class Box {
        let id: Int32
        init(_ id: Int32) { self.id = id }
    }

    @Test("finds, replaces and removes by id, ids that share a slot too, as a dictionary would")
    func likeADictionary() {
        var table = HTTP2StreamTable<Box>()
        var reference: [Int32: Box] = [:]
        // Ids 1, 3, 5…; every 256th odd id shares a slot (1 and 513, 3 and 515…).
        var generator = SystemRandomNumberGenerator()
        for step in 0..<20_000 {
            let id = Int32(2 * Int.random(in: 0..<700, using: &generator) + 1)
            switch step % 3 {
            case 0, 1:
                let box = Box(id)
                table[id] = box
                reference[id] = box
            default:
                #expect(table.removeValue(forKey: id) === reference.removeValue(forKey: id))
            }
            #expect(table[id] === reference[id])
            #expect(table.count == reference.count)
        }
        for id in reference.keys { #expect(table[id] === reference[id]) }
        #expect(Set(table.keys) == Set(reference.keys))
        for id in Array(table.keys) { table[id] = nil }
        #expect(table.isEmpty && table.keys.isEmpty)
        #expect(table[1] == nil && table[0] == nil)
    }

    @Test("an id added while its slot was taken stays found after the slot frees")
    func overflowStays() {
        var table = HTTP2StreamTable<Box>()
        let first = Box(1)
        let second = Box(513)
        table[1] = first
        table[513] = second
        table[1] = nil
        #expect(table[513] === second)
        let replaced = Box(513)
        table[513] = replaced
        #expect(table[513] === replaced && table.count == 1)
        #expect(table.removeValue(forKey: 513) === replaced && table.isEmpty)
    }
}
