public import Glibc

/// A value behind a pthread mutex: the lock every Pushgate module uses instead of
/// `Synchronization.Mutex`, with the same `withLock` shape.
///
/// Why not `Mutex`: on Linux it locks with its own atomics and futex calls inside the
/// Synchronization library, which is not built with ThreadSanitizer. When the lock is contended the
/// kernel hands it over without any instrumented acquire, so TSan sees no happens-before edge
/// between two holders and reports every access inside `withLock` as a race (`make test-tsan`
/// did, on the event loop's task queue and the metrics tables). TSan intercepts
/// `pthread_mutex_lock`/`unlock`, so with this type it sees the lock and still reports a real race:
/// an access made without the lock.
///
/// Cost: one allocation when the value is created (the value and the mutex share it), none per
/// `withLock`; an uncontended lock/unlock is one atomic each, as with `Mutex`. Copies share the
/// same value and lock.
///
/// Sendable for the same reason `Mutex` is: the value goes in as `sending` and only ever comes out
/// through `withLock`, whose body gets it `inout sending` and must return a `sending` result.
public struct Locked<Value>: @unchecked Sendable {
    @usableFromInline let storage: LockedStorage<Value>

    @inlinable
    public init(_ value: sending Value) {
        storage = LockedStorage.make(value)
    }

    /// Runs `body` with exclusive access to the value. Not reentrant: calling `withLock` on the
    /// same value from inside `body` deadlocks.
    @inlinable
    public func withLock<Result, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        let mutex = storage.mutex
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&storage.value.pointee)
    }
}

/// The value (header) and its mutex (the one element) in one heap object, so both have stable
/// addresses: a pthread_mutex_t must not move once initialised.
@usableFromInline
final class LockedStorage<Value>: ManagedBuffer<Value, pthread_mutex_t> {
    @usableFromInline
    static func make(_ value: sending Value) -> LockedStorage {
        let buffer = create(minimumCapacity: 1) { buffer in
            buffer.withUnsafeMutablePointerToElements { mutex in
                mutex.initialize(to: pthread_mutex_t())
                let rc = pthread_mutex_init(mutex, nil)
                precondition(rc == 0, "pthread_mutex_init: \(rc)")
            }
            return value
        }
        return unsafeDowncast(buffer, to: LockedStorage.self)
    }

    // Valid while the storage is alive: `Locked.withLock` holds it for the whole call.
    @inlinable var mutex: UnsafeMutablePointer<pthread_mutex_t> { withUnsafeMutablePointerToElements { $0 } }
    @inlinable var value: UnsafeMutablePointer<Value> { withUnsafeMutablePointerToHeader { $0 } }

    deinit {
        // ManagedBuffer destroys the header (the value) itself; the elements are ours.
        withUnsafeMutablePointerToElements { mutex in
            pthread_mutex_destroy(mutex)
            _ = mutex.deinitialize(count: 1)
        }
    }
}
