import PushCore
import PushGRPC
import PushPosix
public import PushProto
import PushSync

/// The serving status of each service name, with watchers (grpc.health.v1).
///
/// `""` is the server as a whole. Thread-safe: statuses change rarely (start, shutdown) and are read
/// by health calls only, so a mutex is fine here.
public final class HealthStatusBoard: Sendable {
    public typealias Status = GRPCHealthV1.HealthCheckResponse.ServingStatus

    private struct State {
        var statuses: [String: Status] = [:]
        var watchers: [Int: (service: String, continuation: AsyncStream<Status>.Continuation)] = [:]
        var nextWatcher = 0
    }

    private let state = Locked(State())

    public init() {}

    /// Sets a service's status and tells its watchers.
    public func set(_ service: String, _ status: Status) {
        state.withLock { state in
            let old = state.statuses[service]
            state.statuses[service] = status
            guard old != status else { return }
            for watcher in state.watchers.values where watcher.service == service {
                watcher.continuation.yield(status)
            }
        }
    }

    /// The status, or nil for a service that was never registered.
    public func status(of service: String) -> Status? {
        state.withLock { $0.statuses[service] }
    }

    /// Ends every Watch (shutdown: the streams must not hold the server open).
    public func endWatches() {
        let watchers = state.withLock { state in
            defer { state.watchers.removeAll() }
            return Array(state.watchers.values)
        }
        for watcher in watchers { watcher.continuation.finish() }
    }

    /// The current status (SERVICE_UNKNOWN when unregistered) now, then every change.
    func watch(_ service: String) -> AsyncStream<Status> {
        let (stream, continuation) = AsyncStream<Status>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let id = state.withLock { state in
            let id = state.nextWatcher
            state.nextWatcher += 1
            state.watchers[id] = (service, continuation)
            continuation.yield(state.statuses[service] ?? .serviceUnknown)
            return id
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.watchers.removeValue(forKey: id) }
        }
        return stream
    }
}

/// `grpc.health.v1.Health`: Check and Watch.
enum HealthService {
    /// Health is keyless (probes and load balancers call it without a key), so its requests, a
    /// service name, are held to a size that lets nobody make the server buffer much.
    static let maxRequestBytes = 4096

    static func make(board: HealthStatusBoard) -> GRPCService {
        GRPCService(
            name: "grpc.health.v1.Health",
            methods: [
                GRPCMethod.protoUnary("Check", GRPCHealthV1.HealthCheckRequest.self) { request, _ in
                    guard let status = board.status(of: request.service) else {
                        throw GRPCStatus(.notFound, "service: unknown service \(TextCap.quoted(request.service))")
                    }
                    var response = GRPCHealthV1.HealthCheckResponse()
                    response.status = status
                    return response
                }
                .limitingRequestMessages(to: maxRequestBytes),
                GRPCMethod.protoServerStreaming(
                    "Watch", GRPCHealthV1.HealthCheckRequest.self, GRPCHealthV1.HealthCheckResponse.self
                ) {
                    request, writer, _ in
                    // Watch keeps the stream open for as long as the client wants it, also for unknown
                    // services (SERVICE_UNKNOWN), per the health-checking protocol.
                    for await status in board.watch(request.service) {
                        var response = GRPCHealthV1.HealthCheckResponse()
                        response.status = status
                        await writer.send(response)
                    }
                }
                .limitingRequestMessages(to: maxRequestBytes),
            ])
    }
}
