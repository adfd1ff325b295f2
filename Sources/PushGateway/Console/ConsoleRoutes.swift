import PushGRPC

/// The operator's console (docs/console.md): static pages embedded in the binary
/// (ConsoleAssets, generated from console/ by scripts/gen-console.py), served on the API listener at
/// `/console/` like every route (HTTP/1.1 and HTTP/2, TLS when the listener has it). The pages hold
/// no secret and need no key: they call the Connect API with the key the operator types in.
///
/// Every answer carries a strict Content-Security-Policy (scripts and styles from these files
/// only, no inline script, requests to this origin only, never framed): values shown are user
/// input (tokens, reasons, custom data), and the pages write them as text, never as markup.
enum ConsoleRoutes {
    static let prefix = "/console/"

    static let securityHeaders: [(name: String, value: String)] = [
        (
            "content-security-policy",
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
                + "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
        ),
        ("x-frame-options", "DENY"),
        ("x-content-type-options", "nosniff"),
        ("referrer-policy", "no-referrer"),
        ("cross-origin-opener-policy", "same-origin"),
        ("cross-origin-resource-policy", "same-origin"),
    ]

    /// One route per file (`index.html` also at `/console/`), and `/console` redirecting there.
    static func routes() -> [HTTPRoute] {
        var routes = ConsoleAssets.files.flatMap { file in
            let answer = response(file)
            let paths = file.name == "index.html" ? [prefix, prefix + file.name] : [prefix + file.name]
            return paths.map { path in
                HTTPRoute(path: path, methods: ["GET"], maxBodyBytes: 0) { _, responder in responder.respond(answer) }
            }
        }
        routes.append(
            HTTPRoute(path: "/console", methods: ["GET"], maxBodyBytes: 0) { _, responder in
                responder.respond(
                    HTTPRouteResponse(
                        status: 308,
                        headers: [("location", prefix), ("content-type", "text/plain; charset=utf-8")]
                            + securityHeaders,
                        body: Array("see \(prefix)\n".utf8)))
            })
        return routes
    }

    private static func response(_ file: ConsoleAssets.File) -> HTTPRouteResponse {
        HTTPRouteResponse(
            status: 200,
            // no-cache: a browser asks again each time, so an upgraded gateway serves its own pages
            // (the files are small; the answer is built once).
            headers: [("content-type", file.contentType), ("cache-control", "no-cache")] + securityHeaders,
            body: file.bytes)
    }

}
