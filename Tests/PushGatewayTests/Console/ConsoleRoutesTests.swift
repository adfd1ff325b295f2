import PushSync
import Testing

@testable import PushGRPC
@testable import PushGateway

@Suite("Console routes")
struct ConsoleRoutesTests {
    private static func answer(_ route: HTTPRoute) -> HTTPRouteResponse? {
        let request = HTTPRouteRequest(
            method: "GET", target: route.path, headers: [], body: [], peer: "127.0.0.1:1", isLoopbackPeer: true,
            isTLS: false)
        let answer = Locked<HTTPRouteResponse?>(nil)
        route.handler(request, HTTPRouteResponder { response in answer.withLock { $0 = response } })
        return answer.withLock { $0 }
    }

    @Test("every embedded file has a GET route without a body under /console/, the page also at /console/")
    func routes() throws {
        let routes = ConsoleRoutes.routes()
        let paths = Set(routes.map(\.path))
        for file in ConsoleAssets.files {
            #expect(paths.contains("/console/" + file.name), "\(file.name)")
        }
        #expect(paths.contains("/console/") && paths.contains("/console"))
        #expect(routes.allSatisfy { $0.methods == ["GET"] && $0.maxBodyBytes == 0 })
        let page = try #require(routes.first { $0.path == "/console/" }.flatMap(Self.answer))
        #expect(page.status == 200)
        #expect(String(decoding: page.body, as: UTF8.self).contains(#"<script type="module" src="app.js">"#))
        let redirect = try #require(routes.first { $0.path == "/console" }.flatMap(Self.answer))
        #expect(redirect.status == 308 && redirect.headers.contains { $0 == ("location", "/console/") })
    }

    @Test("answers carry the strict policy: scripts and requests from this origin only, never framed")
    func securityHeaders() throws {
        let script = try #require(ConsoleRoutes.routes().first { $0.path == "/console/app.js" }.flatMap(Self.answer))
        let headers = Dictionary(script.headers.map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first })
        #expect(headers["content-type"] == "text/javascript; charset=utf-8")
        let policy = try #require(headers["content-security-policy"])
        #expect(policy.contains("default-src 'none'") && policy.contains("script-src 'self'"))
        #expect(policy.contains("connect-src 'self'") && policy.contains("frame-ancestors 'none'"))
        #expect(!policy.contains("unsafe"))
        #expect(headers["x-frame-options"] == "DENY" && headers["x-content-type-options"] == "nosniff")
    }

    @Test("no page sets markup from values: the console writes text nodes only")
    func noMarkupSinks() {
        for file in ConsoleAssets.files where file.name.hasSuffix(".js") || file.name.hasSuffix(".html") {
            let text = String(decoding: file.bytes, as: UTF8.self)
            for sink in ["innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function"] {
                #expect(!text.contains(sink), "\(file.name) uses \(sink)")
            }
            if file.name.hasSuffix(".html") {
                #expect(!text.contains("<script>") && !text.contains("style="), "\(file.name) has inline code")
            }
        }
    }
}
