import PushCore
import PushProto
import Testing

@testable import PushGateway

@Suite("Paging and ListApplications")
struct PagingTests {
    @Test("pages through the configured apps")
    func pages() throws {
        let apps = (0..<5).map { AppConfiguration(name: "app\($0)") }
        var request = PushgateV1ListApplicationsRequestBuilder.make(pageSize: 2, token: "")
        var names: [String] = []
        var pages = 0
        while true {
            let response = try RegistryService.listApplications(request, apps: apps)
            names += response.applications.map(\.name)
            pages += 1
            if response.nextPageToken.isEmpty { break }
            request = PushgateV1ListApplicationsRequestBuilder.make(pageSize: 2, token: response.nextPageToken)
        }
        #expect(names == apps.map(\.name))
        #expect(pages == 3)
    }

    @Test("bad page arguments name the field")
    func badArguments() {
        #expect(throws: GRPCStatus(.invalidArgument, "page_token: not a page token from this server")) {
            try Paging(pageSize: 0, pageToken: "garbage")
        }
        #expect(throws: GRPCStatus(.invalidArgument, "page_size: must not be negative")) {
            try Paging(pageSize: -1, pageToken: "")
        }
        #expect(throws: Never.self) { try Paging(pageSize: 5000, pageToken: "") }
    }
}

enum PushgateV1ListApplicationsRequestBuilder {
    static func make(pageSize: Int32, token: String) -> PushgateV1.ListApplicationsRequest {
        var request = PushgateV1.ListApplicationsRequest()
        request.pageSize = pageSize
        request.pageToken = token
        return request
    }
}
