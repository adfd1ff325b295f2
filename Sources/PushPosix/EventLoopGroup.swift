import Glibc
import Synchronization

/// A fixed set of event loops, one thread each. Work is spread with `next()`.
public final class EventLoopGroup: Sendable {
    public let loops: [EventLoop]
    private let cursor = Atomic<Int>(0)

    /// The number of online cores: the usual loop count.
    public static var coreCount: Int {
        max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
    }

    /// Spawns `loopCount` loops named "\(namePrefix)-0", "-1", ... Callers normally pass
    /// `EventLoopGroup.coreCount`. If one fails to start, the others are shut down.
    public init(loopCount: Int, namePrefix: String = "loop") throws {
        precondition(loopCount >= 1, "EventLoopGroup needs at least one loop")
        var loops: [EventLoop] = []
        do {
            for index in 0..<loopCount {
                loops.append(try EventLoop.spawn(name: "\(namePrefix)-\(index)"))
            }
        } catch {
            for loop in loops { loop.shutdown() }
            throw error
        }
        self.loops = loops
    }

    /// Round robin; thread-safe (one relaxed atomic increment).
    public func next() -> EventLoop {
        let index = cursor.wrappingAdd(1, ordering: .relaxed).oldValue
        return loops[Int(UInt(bitPattern: index) % UInt(loops.count))]
    }

    /// Shuts every loop down and joins its thread (see `EventLoop.shutdown`). Called from one
    /// of the group's own loops, that loop is only told to stop; the others are joined.
    public func shutdown() {
        for loop in loops { loop.shutdown() }
    }
}
