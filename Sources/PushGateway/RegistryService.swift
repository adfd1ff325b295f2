import PushCore
import PushGRPC
import PushProto

/// `pushgate.v1.Registry`. ListApplications serves the configured apps; the store-backed methods
/// arrive with the registry issue and answer UNIMPLEMENTED until then.
enum RegistryService {
    static let storeUnavailable =
        "the registry store is not in this build yet (it arrives with the registry and durable Publish)"
    static let storeMethods = [
        "CreateEndpoint", "GetEndpoint", "UpdateEndpoint", "DeleteEndpoint", "ListEndpoints", "CreateTopic",
        "DeleteTopic", "ListTopics", "Subscribe", "Unsubscribe", "ListSubscriptions",
    ]

    static func make(configuration: GatewayConfiguration) -> GRPCService {
        var methods: [GRPCMethod] = storeMethods.map { .notYetAvailable($0, storeUnavailable) }
        methods.append(
            .unary("ListApplications", PushgateV1.ListApplicationsRequest.self) { request, _ in
                try listApplications(request, apps: configuration.apps)
            })
        return GRPCService(name: "pushgate.v1.Registry", methods: methods)
    }

    static func listApplications(
        _ request: PushgateV1.ListApplicationsRequest, apps: [AppConfiguration]
    ) throws(GRPCStatus) -> PushgateV1.ListApplicationsResponse {
        let page = try Paging(pageSize: request.pageSize, pageToken: request.pageToken)
        var response = PushgateV1.ListApplicationsResponse()
        let slice = apps.dropFirst(page.offset).prefix(page.size)
        response.applications = slice.map { app in
            var application = PushgateV1.Application()
            application.name = app.name
            application.platform = app.sandbox ? .apnsSandbox : .apns
            application.bundleID = app.bundleID
            return application
        }
        let next = page.offset + slice.count
        response.nextPageToken = next < apps.count ? Paging.token(offset: next) : ""
        return response
    }
}

/// page_size / page_token for lists kept in order: the token is an opaque offset.
struct Paging {
    static let defaultSize = 100
    static let maxSize = 1000

    let offset: Int
    let size: Int

    init(pageSize: Int32, pageToken: String) throws(GRPCStatus) {
        guard pageSize >= 0 else {
            throw GRPCStatus(.invalidArgument, "page_size: must not be negative")
        }
        size = pageSize == 0 ? Self.defaultSize : min(Int(pageSize), Self.maxSize)
        if pageToken.isEmpty {
            offset = 0
        } else if pageToken.hasPrefix("o"), let value = Int(pageToken.dropFirst()), value >= 0 {
            offset = value
        } else {
            throw GRPCStatus(.invalidArgument, "page_token: not a page token from this server")
        }
    }

    static func token(offset: Int) -> String { "o\(offset)" }
}
