public import Glibc

/// A pthread mutex at an address of its own (one small allocation), for a class that keeps the
/// state it guards in its own stored properties: ``Locked`` puts its value in an object of its
/// own, and a type with state that is made and dropped per request pays for that object (and for
/// destroying its generic value through type metadata) each time.
///
/// Not a value to copy: every copy is the same mutex, and its owner calls ``destroy()`` once, in
/// its `deinit`. Locked and unlocked as ``Locked`` is (so ThreadSanitizer sees the lock, see there).
public struct PThreadMutex: @unchecked Sendable {
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>

    public init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        let rc = pthread_mutex_init(mutex, nil)
        precondition(rc == 0, "pthread_mutex_init: \(rc)")
    }

    /// Runs `body` with the mutex held. Not reentrant.
    @inlinable
    public func withLock<Result, E: Error>(_ body: () throws(E) -> Result) throws(E) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    /// Frees the mutex; nothing may use it after.
    public func destroy() {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }
}
