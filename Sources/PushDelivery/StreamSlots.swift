/// Where a provider connection keeps each open stream: a slot number per stream id, found without
/// hashing in the common case.
///
/// A client's stream ids are odd and rise by 2, and a connection has at most its stream limit open,
/// so the ring place `(id >> 1) & mask` of a ring at least twice as large as what is open is almost
/// always free. An id whose place is held by an older stream still open (one slow answer among
/// many fast ones) goes to a small overflow dictionary. Slots are reused (a free list), so the
/// owner's per-slot arrays stay as large as the most streams ever open at once.
///
/// Not generic on purpose: the engine is generic over its dialect, and keeping the per-header and
/// per-close bookkeeping in concrete types spares unspecialized code the metadata lookups.
struct StreamSlots {
    private var ringIDs: [Int32]
    private var ringSlots: [Int32]
    private var mask: Int
    private var overflow: [Int32: Int32] = [:]
    private var freeSlots: [Int32] = []
    /// Slots handed out so far (the owner's arrays must hold this many).
    private(set) var slotCount = 0
    /// Streams open now.
    private(set) var count = 0

    init(capacity: Int = 256) {
        var size = 16
        while size < capacity { size <<= 1 }
        ringIDs = Array(repeating: 0, count: size)
        ringSlots = Array(repeating: 0, count: size)
        mask = size - 1
    }

    var isEmpty: Bool { count == 0 }

    /// A slot for stream `id` (positive, not open yet). `isNew`: the owner must append a slot to its
    /// arrays (the slot equals their count).
    mutating func open(_ id: Int32) -> (slot: Int, isNew: Bool) {
        let slot: Int32
        let isNew: Bool
        if let reused = freeSlots.popLast() {
            slot = reused
            isNew = false
        } else {
            slot = Int32(slotCount)
            slotCount += 1
            isNew = true
        }
        count += 1
        if count * 2 > ringIDs.count { grow() }
        place(id, slot)
        return (Int(slot), isNew)
    }

    /// The slot of open stream `id`, if it is open.
    func slot(of id: Int32) -> Int? {
        let place = Int(id >> 1) & mask
        if ringIDs[place] == id { return Int(ringSlots[place]) }
        if overflow.isEmpty { return nil }
        return overflow[id].map(Int.init)
    }

    /// Forgets stream `id` and frees its slot; returns the slot, or nil if it was not open.
    mutating func close(_ id: Int32) -> Int? {
        let place = Int(id >> 1) & mask
        let slot: Int32
        if ringIDs[place] == id {
            ringIDs[place] = 0
            slot = ringSlots[place]
        } else if !overflow.isEmpty, let found = overflow.removeValue(forKey: id) {
            slot = found
        } else {
            return nil
        }
        freeSlots.append(slot)
        count -= 1
        return Int(slot)
    }

    /// Every open stream's id and slot (for when the connection dies).
    var open: [(id: Int32, slot: Int)] {
        var all: [(id: Int32, slot: Int)] = []
        all.reserveCapacity(count)
        for place in ringIDs.indices where ringIDs[place] != 0 { all.append((ringIDs[place], Int(ringSlots[place]))) }
        for (id, slot) in overflow { all.append((id, Int(slot))) }
        return all
    }

    /// Closes every stream (slots are kept for reuse).
    mutating func removeAll() {
        for (_, slot) in open { freeSlots.append(Int32(slot)) }
        for place in ringIDs.indices { ringIDs[place] = 0 }
        overflow.removeAll()
        count = 0
    }

    private mutating func place(_ id: Int32, _ slot: Int32) {
        let place = Int(id >> 1) & mask
        if ringIDs[place] == 0 {
            ringIDs[place] = id
            ringSlots[place] = slot
        } else {
            overflow[id] = slot
        }
    }

    /// Doubles the ring and places every open stream again.
    private mutating func grow() {
        let entries = open
        let size = ringIDs.count * 2
        ringIDs = Array(repeating: 0, count: size)
        ringSlots = Array(repeating: 0, count: size)
        mask = size - 1
        overflow.removeAll()
        for (id, slot) in entries { place(id, Int32(slot)) }
    }
}
