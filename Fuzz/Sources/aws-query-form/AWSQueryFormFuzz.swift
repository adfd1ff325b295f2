// Fuzzes AWS Query form bodies: QueryParameters.decode on arbitrary bytes, then the list and map
// readers on every top-level name (and on each name's dotted prefixes).
//
// Input: the form body.
//
// Invariants: no crash; a decoded body's formBody decodes to the same pairs; lists and maps hold
// at most the members or entries asked for, map keys are distinct, and an error never quotes more
// than ~40 characters of a name.
import FuzzSupport
import PushAWSQuery

@_cdecl("aws_query_form_main")
func awsQueryFormMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv, fuzz)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let body = Array(UnsafeRawBufferPointer(start: start, count: count))
    let limits = QueryFormLimits(maxFields: 200, maxNameBytes: 64)
    let parameters: QueryParameters
    do {
        parameters = try QueryParameters.decode(form: body, limits: limits)
    } catch {
        fuzzCheck(error.message.count < 250, "error message of \(error.message.count) characters")
        return 0
    }
    fuzzCheck(parameters.count <= 200, "more fields than the limit")

    let again = try? QueryParameters.decode(form: parameters.formBody, limits: limits)
    fuzzCheck(again != nil, "formBody does not decode")
    if let again {
        fuzzCheck(again.pairs.map(\.name) == parameters.pairs.map(\.name), "names changed by a round trip")
        fuzzCheck(again.pairs.map(\.value) == parameters.pairs.map(\.value), "values changed by a round trip")
    }

    var names = parameters.topLevelNames
    for pair in parameters.pairs.prefix(8) {
        var prefix = ""
        for component in pair.name.split(separator: ".", omittingEmptySubsequences: false).prefix(4) {
            prefix += (prefix.isEmpty ? "" : ".") + component
            names.insert(prefix)
        }
    }
    for name in names {
        if let members = try? parameters.list(name, maxMembers: 5) {
            fuzzCheck(members.count <= 5, "list over its limit")
        }
        if let entries = try? parameters.map(name, maxEntries: 5) {
            fuzzCheck(entries.count <= 5, "map over its limit")
            fuzzCheck(Set(entries.map(\.key)).count == entries.count, "repeated map key")
        }
        if let entries = try? parameters.structureMap(name, keyName: "Name", valueName: "Value", maxEntries: 5) {
            fuzzCheck(entries.count <= 5, "structure map over its limit")
        }
        do {
            _ = try parameters.list(name, maxMembers: 5)
        } catch {
            fuzzCheck(error.message.count < 300, "list error of \(error.message.count) characters")
        }
    }
    return 0
}
