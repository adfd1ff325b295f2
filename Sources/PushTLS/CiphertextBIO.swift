import COpenSSL

/// The BIO OpenSSL writes a connection's ciphertext to: each record goes straight to the sink the
/// connection writes for (``TLSConnection/writePlaintext(_:sendingTo:)``), or into its
/// ``OutgoingCiphertext``, which ``TLSConnection/readCiphertext(into:)`` takes from.
/// Not a memory BIO: that one zero-fills the room for every record before copying it in
/// (`BUF_MEM_grow_clean`), work on bytes that are overwritten at once.
enum CiphertextBIO {
    /// One method for every connection, made on first use and kept for the process's life.
    nonisolated(unsafe) static let method: OpaquePointer = makeMethod()

    /// A BIO that appends what is written to it to `owner`'s outgoing ciphertext. `owner` is not
    /// retained: the BIO belongs to the owner's `SSL`, which the owner frees in its deinit.
    static func make(owner: TLSConnection) -> OpaquePointer? {
        guard let bio = BIO_new(method) else { return nil }
        BIO_set_data(bio, Unmanaged.passUnretained(owner).toOpaque())
        return bio
    }

    private static func makeMethod() -> OpaquePointer {
        guard let method = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "pushgate ciphertext") else {
            fatalError("BIO_meth_new failed: out of memory at start-up")
        }
        BIO_meth_set_create(method) { bio in
            BIO_set_init(bio, 1)
            return 1
        }
        BIO_meth_set_write_ex(method) { bio, data, length, written in
            guard let owner = BIO_get_data(bio), let data, let written else { return 0 }
            // Called only inside the owner's own SSL_write/SSL_read/SSL_do_handshake/SSL_shutdown.
            Unmanaged<TLSConnection>.fromOpaque(owner)._withUnsafeGuaranteedRef {
                $0.ciphertextWritten(UnsafeRawBufferPointer(start: data, count: length))
            }
            written.pointee = length
            return 1
        }
        BIO_meth_set_ctrl(method) { _, command, _, _ in
            // OpenSSL flushes its write BIO after each handshake flight; the bytes are already
            // queued, so a flush always succeeds. Everything else (push, pop, pending, EOF, kTLS
            // queries) is "not supported", as a plain sink answers.
            command == BIO_CTRL_FLUSH ? 1 : 0
        }
        return method
    }
}

/// Where a connection's records go as OpenSSL makes them (``TLSConnection/writePlaintext(_:sendingTo:)``):
/// a class to subclass, not a protocol, so the BIO calls it without a retain and release per record
/// (as an existential would be).
open class TLSCiphertextSink {
    public init() {}

    /// Takes one record's bytes; they are valid only during the call.
    open func send(_ ciphertext: UnsafeRawBufferPointer) {}
}

/// Ciphertext OpenSSL has produced and the owner has not yet taken: a byte queue written at its
/// end and read from its front, kept between turns so steady traffic allocates nothing.
struct OutgoingCiphertext: ~Copyable {
    private var base: UnsafeMutableRawPointer?
    private var start = 0
    private var end = 0
    private var capacity = 0

    /// Room kept once empty; a burst larger than this gives its buffer back when drained.
    private static let keptCapacity = 1 << 20

    init() {}

    deinit { base?.deallocate() }

    var count: Int { end - start }

    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
        if capacity - end < bytes.count { makeRoom(for: bytes.count) }
        (base! + end).copyMemory(from: source, byteCount: bytes.count)
        end += bytes.count
    }

    /// Moves up to `buffer.count` bytes from the front into `buffer`; returns how many.
    mutating func take(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        let taken = Swift.min(count, buffer.count)
        guard taken > 0, let destination = buffer.baseAddress else { return 0 }
        destination.copyMemory(from: base! + start, byteCount: taken)
        start += taken
        if start == end {
            start = 0
            end = 0
            if capacity > Self.keptCapacity {
                base?.deallocate()
                base = nil
                capacity = 0
            }
        }
        return taken
    }

    /// Makes room for `extra` more bytes: the pending ones moved to the front, into a larger
    /// buffer when they and `extra` do not fit.
    private mutating func makeRoom(for extra: Int) {
        let pending = count
        if pending + extra <= capacity, let base {
            base.copyMemory(from: base + start, byteCount: pending)
        } else {
            let newCapacity = Swift.max(pending + extra, capacity * 2, 16 * 1024)
            let newBase = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 16)
            if let base {
                newBase.copyMemory(from: base + start, byteCount: pending)
                base.deallocate()
            }
            base = newBase
            capacity = newCapacity
        }
        start = 0
        end = pending
    }
}
