/// Objects by stream id, for the streams a connection has open at once: each id has a slot in a
/// small table, and only an id whose slot another holds goes to a dictionary. The streams one side
/// opens have consecutive odd ids, so those open together (up to ``slotCount``) take different
/// slots, and a lookup is an index and a compare instead of hashing the id. Inlinable, so that
/// other modules get it specialized for their type (not through type metadata).
public struct HTTP2StreamTable<Value: AnyObject> {
    @inlinable public static var slotCount: Int { 256 }

    @usableFromInline
    struct Entry {
        @usableFromInline var id: Int32 = 0
        @usableFromInline var value: Value?

        @inlinable init(id: Int32 = 0, value: Value? = nil) {
            self.id = id
            self.value = value
        }
    }

    @usableFromInline var slots = ContiguousArray(repeating: Entry(), count: slotCount)
    @usableFromInline var overflow: [Int32: Value] = [:]
    @usableFromInline var storedCount = 0
    @inlinable public var count: Int { storedCount }

    @inlinable public init() {}

    @inlinable public var isEmpty: Bool { count == 0 }

    @inlinable @inline(__always)
    static func slot(_ id: Int32) -> Int { Int(truncatingIfNeeded: id >> 1) & (slotCount - 1) }

    @inlinable public subscript(id: Int32) -> Value? {
        get {
            let slot = Self.slot(id)
            if slots[slot].id == id, let value = slots[slot].value { return value }
            return overflow.isEmpty ? nil : overflow[id]
        }
        set {
            if let newValue { insert(newValue, for: id) } else { removeValue(forKey: id) }
        }
    }

    /// Sets `id`'s value (adding `id`, or replacing its value).
    @inlinable public mutating func insert(_ value: Value, for id: Int32) {
        let slot = Self.slot(id)
        if slots[slot].value != nil && slots[slot].id != id {
            if overflow.updateValue(value, forKey: id) == nil { storedCount += 1 }
            return
        }
        if slots[slot].value == nil {
            // Added while the slot was taken: it stays where it is.
            if !overflow.isEmpty, overflow[id] != nil {
                overflow[id] = value
                return
            }
            storedCount += 1
        }
        slots[slot] = Entry(id: id, value: value)
    }

    @inlinable @discardableResult
    public mutating func removeValue(forKey id: Int32) -> Value? {
        let slot = Self.slot(id)
        if slots[slot].id == id, let value = slots[slot].value {
            slots[slot].value = nil
            storedCount -= 1
            return value
        }
        guard !overflow.isEmpty, let value = overflow.removeValue(forKey: id) else { return nil }
        storedCount -= 1
        return value
    }

    /// The ids present, in no particular order.
    @inlinable public var keys: [Int32] {
        slots.compactMap { $0.value == nil ? nil : $0.id } + overflow.keys
    }
}
