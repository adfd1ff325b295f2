import PushAWSQuery
import PushGRPC

/// SNS's XML answers (the AWS Query protocol; docs/sns.md): `<ActionResponse>` with its
/// `<ActionResult>` and `<ResponseMetadata>`, and `<ErrorResponse>`.
enum SNSResponse {
    static let namespace = "http://sns.amazonaws.com/doc/2010-03-31/"

    /// The answer to `action`: `result` writes the members of `<ActionResult>`; nil for the actions
    /// that have no result (DeleteEndpoint, SetEndpointAttributes, …).
    static func success(
        _ action: String, requestID: String, result: ((inout XMLWriter) -> Void)?
    ) -> HTTPRouteResponse {
        var xml = XMLWriter()
        xml.open("\(action)Response", namespace: namespace)
        if let result {
            xml.open("\(action)Result")
            result(&xml)
            xml.close("\(action)Result")
        }
        xml.open("ResponseMetadata")
        xml.element("RequestId", requestID)
        xml.close("ResponseMetadata")
        xml.close("\(action)Response")
        return HTTPRouteResponse(status: 200, headers: headers(requestID), body: xml.bytes)
    }

    static func failure(_ error: SNSError, requestID: String) -> HTTPRouteResponse {
        var xml = XMLWriter()
        xml.open("ErrorResponse", namespace: namespace)
        xml.open("Error")
        xml.element("Type", error.senderFault ? "Sender" : "Receiver")
        xml.element("Code", error.code)
        xml.element("Message", error.message)
        xml.close("Error")
        xml.element("RequestId", requestID)
        xml.close("ErrorResponse")
        return HTTPRouteResponse(status: error.status, headers: headers(requestID), body: xml.bytes)
    }

    private static func headers(_ requestID: String) -> [(name: String, value: String)] {
        [("content-type", "text/xml"), ("x-amzn-requestid", requestID)]
    }
}

extension XMLWriter {
    /// A string map in SNS's form: `<name><entry><key>…</key><value>…</value></entry>…</name>`.
    mutating func attributes(_ entries: [(key: String, value: String)], named name: String = "Attributes") {
        open(name)
        for (key, value) in entries {
            open("entry")
            element("key", key)
            element("value", value)
            close("entry")
        }
        close(name)
    }

    /// `NextToken` when there is a next page.
    mutating func nextToken(_ token: String?) {
        if let token, !token.isEmpty { element("NextToken", token) }
    }
}
