import PushCore
import PushStore

#if canImport(Glibc)
    import Glibc
#endif

extension GRPCStatus {
    /// The gRPC status for a store failure; `field` names the request field the failure is about.
    init(_ error: StoreError, field: String) {
        switch error.code {
        case .notFound: self.init(.notFound, "\(field): \(error.message)")
        case .alreadyExists: self.init(.alreadyExists, "\(field): \(error.message)")
        case .invalidArgument: self.init(.invalidArgument, "\(field): \(error.message)")
        case .conflict: self.init(.aborted, error.message)
        case .failedPrecondition: self.init(.failedPrecondition, "\(field): \(error.message)")
        case .incompatible:
            self.init(.unavailable, "the store was written by a newer Pushgate (details in the gateway's log)")
        default:
            // The store's own words (file paths, SQL, the database server's text) go to the log,
            // not to clients.
            self.init(.unavailable, "the store cannot be used right now (details in the gateway's log)")
        }
    }
}

/// Runs a store call, turning its failure into a gRPC status that names `field`.
func storeCall<T>(_ field: String, _ body: () async throws(StoreError) -> T) async throws(GRPCStatus) -> T {
    do {
        return try await body()
    } catch {
        throw GRPCStatus(error, field: field)
    }
}

/// Unix milliseconds now.
func unixMilliseconds() -> Int64 { unixMicroseconds() / 1000 }

/// Unix microseconds now (a rate cap's slots are finer than a millisecond).
func unixMicroseconds() -> Int64 {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    return Int64(now.tv_sec) * 1_000_000 + Int64(now.tv_nsec) / 1_000
}
