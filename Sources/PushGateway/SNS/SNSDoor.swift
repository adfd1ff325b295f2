import PushAWSQuery
import PushCore
import PushGRPC
import PushStore

/// Amazon SNS's API on the API port (docs/sns.md): `POST /` with an AWS Query form body, signed with
/// AWS Signature Version 4, answered in SNS's XML, over HTTP/1.1 and HTTP/2 like every route.
///
/// The signature's head (its algorithm, scope and access key) is checked before any body byte is
/// kept, the signature itself once the body is there (it signs the body's hash). With neither
/// `sns.credentials` nor `api_keys` configured, loopback clients are served as `api_keys` serves
/// them then: as an admin, whatever they sign with.
struct SNSDoor: Sendable {
    static let path = "/"
    /// SNS takes 256 KiB messages; form encoding may triple a byte, and attributes come on top.
    static let maxBodyBytes = 1 << 20
    static let formLimits = QueryFormLimits(maxFields: 1000, maxNameBytes: 256)

    let live: LiveSettings
    let store: any Store
    let publish: PublishService
    let metrics: GatewayMetrics?

    func route() -> HTTPRoute {
        HTTPRoute(
            path: Self.path, methods: ["POST"], maxBodyBytes: Self.maxBodyBytes,
            admission: { head in
                do throws(SNSError) {
                    try Self.checkContentType(head)
                    _ = try Self.authenticate(head, configuration: live.configuration, signature: nil)
                    return nil
                } catch {
                    metrics?.snsRequest(action: "-", code: error.code)
                    return SNSResponse.failure(error, requestID: RandomUUID.make())
                }
            },
            refusal: { status, message in
                let code = status == 413 ? "RequestEntityTooLarge" : status == 429 ? "Throttled" : "InvalidRequest"
                return SNSResponse.failure(SNSError(code, status: status, message), requestID: RandomUUID.make())
            },
            handler: { request, responder in
                let configuration = live.configuration
                let requestID = RandomUUID.make()
                let call: SNSCall
                let action: SNSAction
                var parameters: QueryParameters?
                do throws(SNSError) {
                    (call, action) = try prepare(request, configuration: configuration, parameters: &parameters)
                } catch {
                    metrics?.snsRequest(action: Self.actionLabel(parameters), code: error.code)
                    return responder.respond(SNSResponse.failure(error, requestID: requestID))
                }
                Task {
                    do throws(SNSError) {
                        let result = try await action.run(call)
                        metrics?.snsRequest(action: action.name, code: "OK")
                        responder.respond(SNSResponse.success(action.name, requestID: requestID, result: result))
                    } catch {
                        metrics?.snsRequest(action: action.name, code: error.code)
                        responder.respond(SNSResponse.failure(error, requestID: requestID))
                    }
                }
            })
    }

    /// The request's signature checked, its parameters read (into `parameters`), its action found:
    /// what is left is to run it. The signature comes first, so an unsigned body is never decoded.
    private func prepare(
        _ request: HTTPRouteRequest, configuration: GatewayConfiguration, parameters decoded: inout QueryParameters?
    ) throws(SNSError) -> (SNSCall, SNSAction) {
        if request.target != Self.path {
            throw SNSError.invalidParameter("query string", "SNS parameters go in the form body, not the URL")
        }
        // Keys may have been reloaded while the body arrived: resolved again, with the signature.
        let caller = try Self.authenticate(request, configuration: configuration, signature: request.body)
        let parameters: QueryParameters
        do {
            parameters = try QueryParameters.decode(form: request.body, limits: Self.formLimits)
        } catch {
            throw SNSError("MalformedQueryString", status: 400, error.message)
        }
        decoded = parameters
        let action = try SNSActions.action(for: parameters)
        let call = SNSCall(
            action: action.name, parameters: parameters, caller: caller, configuration: configuration, store: store,
            publish: publish)
        return (call, action)
    }

    /// The metrics label of a request refused before its action ran: `-` when its parameters were
    /// not read (its signature failed), its action if it names one Pushgate knows (supported or
    /// refused), else `unknown`.
    private static func actionLabel(_ parameters: QueryParameters?) -> String {
        guard let parameters else { return "-" }
        guard let name = parameters["Action"], SNSActions.supported[name] != nil || SNSActions.refused[name] != nil
        else { return "unknown" }
        return name
    }

    private static func checkContentType(_ head: HTTPRouteRequest) throws(SNSError) {
        let type = head.header("content-type")?.split(separator: ";").first.map {
            $0.trimmingCharacters(in: " ").lowercased()
        }
        guard type == "application/x-www-form-urlencoded" else {
            throw SNSError(
                "InvalidRequest", status: 400,
                "Content-Type: expected application/x-www-form-urlencoded (an AWS Query request), not "
                    + TextCap.quoted(type ?? ""))
        }
        // SNS takes no compressed requests; refused before a compressed body is read at all.
        if let encoding = head.header("content-encoding"), encoding.lowercased() != "identity" {
            throw SNSError(
                "InvalidRequest", status: 400,
                "Content-Encoding: \(TextCap.quoted(encoding)) is not taken; send the form as it is")
        }
    }

    /// The caller a request is signed by. `signature` nil: only the head is checked (admission);
    /// otherwise the body, and the whole signature with it.
    static func authenticate(
        _ request: HTTPRouteRequest, configuration: GatewayConfiguration, signature body: [UInt8]?
    ) throws(SNSError) -> Caller {
        let sns = configuration.sns
        if sns.credentials.isEmpty {
            guard configuration.security.apiKeys.isEmpty, request.isLoopbackPeer else {
                throw SNSError(
                    "InvalidClientTokenId", status: 403,
                    configuration.security.apiKeys.isEmpty
                        ? "no sns.credentials configured: only loopback clients are served"
                        : "no sns.credentials configured: the SNS API takes no requests (api_keys are for gRPC)")
            }
            return Caller(name: "loopback", isAdmin: true, apps: .all)
        }
        let verifier = SigV4Verifier(region: sns.region, service: "sns")
        let accessKeyID: String
        do throws(SigV4Failure) {
            if let body {
                let signed = SigV4Request(
                    method: request.method, target: request.target, headers: request.headers, body: body)
                accessKeyID = try verifier.verify(signed, now: unixMilliseconds() / 1000) { id in
                    sns.credential(accessKeyID: id)?.secretAccessKey
                }
            } else {
                accessKeyID = try verifier.authorization(headers: request.headers, target: request.target).accessKeyID
            }
        } catch {
            throw SNSError(error)
        }
        guard let credential = sns.credential(accessKeyID: accessKeyID) else { throw SNSError(.unknownAccessKey) }
        return Caller(name: credential.accessKeyID, isAdmin: credential.admin, apps: credential.apps)
    }
}

extension SNSError {
    /// AWS's answers to a request whose signature does not check out (docs/sns.md).
    init(_ failure: SigV4Failure) {
        switch failure {
        case .missingAuthentication:
            self.init("MissingAuthenticationToken", status: 403, "Request is missing Authentication Token")
        case .incomplete(let why): self.init("IncompleteSignature", status: 400, why)
        case .unknownAccessKey:
            self.init("InvalidClientTokenId", status: 403, "The security token included in the request is invalid.")
        case .signatureMismatch(let why): self.init("SignatureDoesNotMatch", status: 403, why)
        case .expired(let why): self.init("SignatureDoesNotMatch", status: 403, why)
        case .unsupported(let why): self.init("IncompleteSignature", status: 400, why)
        }
    }
}

extension Substring {
    fileprivate func trimmingCharacters(in set: Character) -> Substring {
        let start = firstIndex { $0 != set } ?? endIndex
        let end = lastIndex { $0 != set }.map { index(after: $0) } ?? start
        return self[start..<end]
    }
}
