import PushCore
import PushPosix

/// What a handler knows about its call besides the messages.
///
/// A value, kept in one shared, immutable object: a context goes from the connection to the
/// admission, the call and the handler, and a copy is then a retain, not a copy of each field.
/// The deadline is kept on the loop clock (``MonotonicDeadline``): a `ContinuousClock.Instant`,
/// of another module and resilient, was copied and destroyed through the runtime's type
/// metadata, and put the offsets of the fields after it there too.
public struct GRPCCallContext: Sendable {
    /// `/package.Service/Method`.
    public var path: String { storage.path }
    /// When the client stops waiting (from `grpc-timeout`), on the continuous clock; nil: no deadline.
    public var deadline: ContinuousClock.Instant? { storage.deadline.map(MonotonicDeadline.instant(of:)) }
    /// The same in ``PushPosix/EventLoop/monotonicNow``'s nanoseconds, as kept.
    public var deadlineNanoseconds: UInt64? { storage.deadline }
    /// The request's custom metadata and call-definition headers (not pseudo-headers), lowercase names.
    public var metadata: [(name: String, value: String)] { storage.metadata }
    /// The client's address, `host:port`.
    public var peer: String { storage.peer }
    /// Whether the client connects from a loopback address.
    public var isLoopbackPeer: Bool { storage.isLoopbackPeer }
    /// Whether the call came over TLS.
    public var isTLS: Bool { storage.isTLS }
    /// The subject CN of the client's certificate, verified against the server's client CAs (mTLS);
    /// nil without TLS, without client certificates, or when the certificate has no CN.
    public var clientCertificateCommonName: String? { storage.clientCertificateCommonName }
    /// The client's `x-request-id` (up to 64 printable characters), or one made up for the call: it
    /// ties the call's log lines together.
    public var requestID: String { storage.requestID.string }
    /// What the method's ``GRPCAdmission`` returned for this call (nil without one).
    public internal(set) var admission: (any Sendable & AnyObject)? {
        get { storage.admission }
        set {
            // Set once, before the context is shared; a copy if it already is (value semantics).
            if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
            storage.admission = newValue
        }
    }

    private var storage: Storage

    /// The fields. Only `admission` changes, and only while one context holds it (see above), so
    /// the object is never written while shared.
    private final class Storage: @unchecked Sendable {
        let path: String
        let deadline: UInt64?
        let metadata: [(name: String, value: String)]
        let peer: String
        let isLoopbackPeer: Bool
        let isTLS: Bool
        let clientCertificateCommonName: String?
        let requestID: GRPCCallRequestID
        var admission: (any Sendable & AnyObject)?

        init(
            path: String, deadline: UInt64?, metadata: [(name: String, value: String)],
            peer: String, isLoopbackPeer: Bool, isTLS: Bool, clientCertificateCommonName: String?,
            requestID: GRPCCallRequestID, admission: (any Sendable & AnyObject)?
        ) {
            self.path = path
            self.deadline = deadline
            self.metadata = metadata
            self.peer = peer
            self.isLoopbackPeer = isLoopbackPeer
            self.isTLS = isTLS
            self.clientCertificateCommonName = clientCertificateCommonName
            self.requestID = requestID
            self.admission = admission
        }

        func copy() -> Storage {
            Storage(
                path: path, deadline: deadline, metadata: metadata, peer: peer, isLoopbackPeer: isLoopbackPeer,
                isTLS: isTLS, clientCertificateCommonName: clientCertificateCommonName, requestID: requestID,
                admission: admission)
        }
    }

    public init(
        path: String, deadline: ContinuousClock.Instant?, metadata: [(name: String, value: String)],
        peer: String, isLoopbackPeer: Bool, isTLS: Bool = false, clientCertificateCommonName: String? = nil,
        requestID: String = ""
    ) {
        self.init(
            path: path, deadlineNanoseconds: deadline.map(MonotonicDeadline.nanoseconds(of:)), metadata: metadata,
            peer: peer, isLoopbackPeer: isLoopbackPeer, isTLS: isTLS,
            clientCertificateCommonName: clientCertificateCommonName, callRequestID: .given(requestID))
    }

    /// `deadline` in ``PushPosix/EventLoop/monotonicNow``'s nanoseconds.
    init(
        path: String, deadlineNanoseconds deadline: UInt64?, metadata: [(name: String, value: String)],
        peer: String, isLoopbackPeer: Bool, isTLS: Bool, clientCertificateCommonName: String?,
        callRequestID: GRPCCallRequestID
    ) {
        storage = Storage(
            path: path, deadline: deadline, metadata: metadata, peer: peer, isLoopbackPeer: isLoopbackPeer,
            isTLS: isTLS, clientCertificateCommonName: clientCertificateCommonName, requestID: callRequestID,
            admission: nil)
    }

    /// The first value of a metadata entry.
    public func metadataValue(_ name: String) -> String? {
        metadata.first { $0.name == name }?.value
    }
}

/// Request ids for calls without a usable `x-request-id`: 16 hex digits from a per-connection
/// generator seeded once from the system's random source, so a call costs no `getrandom` system
/// call (which every call paid before). Ids only tie log lines together; they need not be secret.
struct GRPCRequestID {
    private var generator = SplitMix64()

    /// The client's id when it is 1-64 printable ASCII characters without spaces, else a new one.
    mutating func make(from metadata: [(name: String, value: String)]) -> String {
        make(given: metadata.first(where: { $0.name == "x-request-id" })?.value)
    }

    /// The same from the first `x-request-id`'s value, if any.
    mutating func make(given: String?) -> String {
        id(given: given).string
    }

    /// The same, with a made-up id kept as its number until its text is read.
    mutating func id(given: String?) -> GRPCCallRequestID {
        if let given, (1...64).contains(given.utf8.count), given.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7f }) {
            return .given(given)
        }
        return .made(generator.next())
    }

    static func hex(_ value: UInt64) -> String {
        String(unsafeUninitializedCapacity: 16) { buffer in
            let digits: StaticString = "0123456789abcdef"
            digits.withUTF8Buffer { digits in
                for index in 0..<16 {
                    buffer[index] = digits[Int((value >> (60 - 4 * UInt64(index))) & 0xf)]
                }
            }
            return 16
        }
    }
}

/// A call's request id as a call keeps it: the client's, or a made-up number whose 16 hex digits
/// (``GRPCRequestID/hex(_:)``, too long for a string without a heap allocation) are written only
/// when read; most calls' ids are never logged.
enum GRPCCallRequestID: Sendable {
    case given(String)
    case made(UInt64)

    var string: String {
        switch self {
        case .given(let id): id
        case .made(let number): GRPCRequestID.hex(number)
        }
    }
}
