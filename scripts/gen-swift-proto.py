#!/usr/bin/env python3
"""Generates the Swift views over the protoc-c structs (Sources/PushProto/Generated/*.pb.swift).

Input: a FileDescriptorSet written by `protoc-c --descriptor_set_out` for the files in proto/.
Each proto message becomes a Swift value type with `init(serializedBytes:)` (protobuf-c unpack into
an arena, then copy into Swift values in place, then release the arena) and `serializedBytes()`
(build the C struct in an arena, protobuf-c pack, release). C structs never leave PushProto.
Proto3 open enums become RawRepresentable structs so unknown values survive. A one-field `oneof` is how these protos spell an optional scalar
(protoc-c 1.4 refuses proto3 `optional`): it becomes a Swift optional named after the field. A
`oneof` of several fields (the reflection protocol's requests and responses) becomes an optional
Swift enum named after the oneof, one case per field.

Every message also gets the proto3 JSON mapping (`ProtoJSONMessage`: `init(jsonBytes:)`,
`jsonBytes()`): a table of its fields' JSON and proto names, a reader that switches on the field
number, and a writer, all calling the hand-written runtime in Sources/PushProto/ProtoJSON*.swift
(scalar forms, base64, 64-bit integers as strings, field paths in errors). Every enum gets its
value names for that mapping.

Usage: gen-swift-proto.py DESCRIPTOR_SET OUTDIR
"""
import os
import re
import sys

from google.protobuf import descriptor_pb2

FD = descriptor_pb2.FieldDescriptorProto
# ProtoC.fieldOverhead: what a field adds beyond its content, at most (tag, length or varint).
ProtoC_OVERHEAD = 16

ACRONYMS = {"id": "ID", "json": "JSON", "url": "URL", "grpc": "GRPC", "apns": "APNs", "fcm": "FCM"}
SWIFT_KEYWORDS = {"default", "class", "struct", "enum", "protocol", "func", "var", "let", "self", "in",
                  "is", "as", "repeat", "return", "switch", "case", "where", "while", "for", "if",
                  "else", "import", "init", "internal", "public", "private", "static", "subscript",
                  "throw", "throws", "try", "operator", "extension", "deinit", "break", "continue",
                  "do", "fallthrough", "guard", "inout", "nil", "true", "false", "Type", "Protocol"}


def camel(snake, upper_first=False):
    parts = [p for p in snake.lower().split("_") if p]
    out = []
    for i, p in enumerate(parts):
        if p in ACRONYMS and (i > 0 or upper_first):
            out.append(ACRONYMS[p])
        elif i == 0 and not upper_first:
            out.append(p)
        else:
            out.append(p[:1].upper() + p[1:])
    name = "".join(out)
    if name in SWIFT_KEYWORDS:
        name = "`%s`" % name
    return name


def c_lower(name):
    """protoc-c's CamelCase → lower_case rule for function names."""
    out = []
    for i, ch in enumerate(name):
        if ch.isupper():
            if i > 0 and not name[i - 1].isupper() and name[i - 1] != "_":
                out.append("_")
            out.append(ch.lower())
        else:
            out.append(ch)
    return "".join(out)


def c_full_name(package, path):
    pkg = "__".join(p[:1].upper() + p[1:] for p in package.split(".")) if package else ""
    return "__".join(([pkg] if pkg else []) + path)


def c_func_prefix(package, path):
    pkg = "__".join(p.lower() for p in package.split(".")) if package else ""
    return "__".join(([pkg] if pkg else []) + [c_lower(p) for p in path]) + "__"


def swift_namespace(package):
    return "".join(ACRONYMS.get(p, p[:1].upper() + p[1:]) for p in package.split("."))



# The field names protoc-c's C structs rename (its keyword list: C++'s reserved words).
CXX_KEYWORDS = set("""and and_eq asm auto bitand bitor bool break case catch char class compl const const_cast
continue default delete do double dynamic_cast else enum explicit extern false float for friend goto if
inline int long mutable namespace new not not_eq operator or or_eq private protected public register
reinterpret_cast return short signed sizeof static static_cast struct switch template this throw true try
typedef typeid typename union unsigned using virtual void volatile wchar_t while xor xor_eq""".split())

class Registry:
    def __init__(self, fds):
        self.messages = {}  # full proto name -> (file, package, path, DescriptorProto)
        self.enums = {}
        for f in fds.file:
            for m in f.message_type:
                self._add_message(f, [m.name], m)
            for e in f.enum_type:
                self.enums["." + ".".join(filter(None, [f.package, e.name]))] = (f, f.package, [e.name], e)

    def _add_message(self, f, path, m):
        self.messages["." + ".".join(filter(None, [f.package] + path))] = (f, f.package, path, m)
        for n in m.nested_type:
            self._add_message(f, path + [n.name], n)
        for e in m.enum_type:
            self.enums["." + ".".join(filter(None, [f.package] + path + [e.name]))] = (f, f.package, path + [e.name], e)

    def swift_type(self, full):
        f, pkg, path, _ = self.messages.get(full) or self.enums[full]
        return swift_namespace(pkg) + "." + ".".join(path)

    def c_type(self, full):
        _, pkg, path, _ = self.messages[full]
        return c_full_name(pkg, path)

    def is_map_entry(self, full):
        return self.messages[full][3].options.map_entry


SCALARS = {
    FD.TYPE_INT32: ("Int32", "0"), FD.TYPE_SINT32: ("Int32", "0"), FD.TYPE_SFIXED32: ("Int32", "0"),
    FD.TYPE_INT64: ("Int64", "0"), FD.TYPE_SINT64: ("Int64", "0"), FD.TYPE_SFIXED64: ("Int64", "0"),
    FD.TYPE_UINT32: ("UInt32", "0"), FD.TYPE_FIXED32: ("UInt32", "0"),
    FD.TYPE_UINT64: ("UInt64", "0"), FD.TYPE_FIXED64: ("UInt64", "0"),
    FD.TYPE_FLOAT: ("Float", "0"), FD.TYPE_DOUBLE: ("Double", "0"),
    FD.TYPE_BOOL: ("Bool", "false"), FD.TYPE_STRING: ("String", '""'), FD.TYPE_BYTES: ("[UInt8]", "[]"),
}


class Field:
    def __init__(self, reg, msg, fd):
        self.fd = fd
        self.reg = reg
        # protoc-c appends "_" to a field named like a C++ keyword (`mutable` → `mutable_`).
        self.cname = fd.name + "_" if fd.name in CXX_KEYWORDS else fd.name
        self.swift = camel(fd.name)
        self.repeated = fd.label == FD.LABEL_REPEATED
        self.is_map = self.repeated and fd.type == FD.TYPE_MESSAGE and reg.is_map_entry(fd.type_name)
        self.oneof = None  # a one-field oneof: an optional scalar
        self.group = None  # a oneof of several fields: this field is a case of its Swift enum
        if fd.HasField("oneof_index"):
            oneof = msg.oneof_decl[fd.oneof_index]
            members = [x for x in msg.field if x.HasField("oneof_index") and x.oneof_index == fd.oneof_index]
            if len(members) == 1:
                self.oneof = oneof.name
            else:
                self.group = oneof.name
        if self.is_map:
            entry = reg.messages[fd.type_name][3]
            k, v = entry.field[0], entry.field[1]
            if k.type != FD.TYPE_STRING or v.type != FD.TYPE_STRING:
                raise SystemExit("%s: only map<string, string> is supported" % fd.name)

    def element_swift(self):
        t = self.fd.type
        if t == FD.TYPE_MESSAGE or t == FD.TYPE_ENUM:
            return self.reg.swift_type(self.fd.type_name)
        return SCALARS[t][0]

    def swift_decl(self):
        if self.is_map:
            return "[String: String]", "[:]"
        el = self.element_swift()
        if self.repeated:
            return "[%s]" % el, "[]"
        if self.fd.type == FD.TYPE_MESSAGE or self.oneof:
            return el + "?", "nil"
        if self.fd.type == FD.TYPE_ENUM:
            return el, ".init(rawValue: 0)"
        return el, SCALARS[self.fd.type][1]

    # --- reading from the unpacked C struct `m` ---
    def read_element(self, expr):
        t = self.fd.type
        if t == FD.TYPE_STRING:
            return 'try ProtoC.string(%s, field: "%s")' % (expr, self.fd.name)
        if t == FD.TYPE_BYTES:
            return "ProtoC.bytes(%s)" % expr
        if t == FD.TYPE_BOOL:
            return "(%s != 0)" % expr
        if t == FD.TYPE_ENUM:
            return "%s(rawValue: Int32(truncatingIfNeeded: %s.rawValue))" % (self.element_swift(), expr)
        if t == FD.TYPE_MESSAGE:
            t = self.element_swift()
            return "try ProtoC.message(%s, empty: %s()) { (c, message) throws(ProtoDecodingError) in try %s.decode(c, into: &message) }" % (
                expr, t, t)
        return expr

    def read(self):
        """The statement that copies the field out of `m` (a pointer to the unpacked C struct) into
        `value`, which holds the defaults: an absent field (the common case, in messages of many
        optional fields) costs a test, not a store. Messages are decoded in place (see
        emit_message)."""
        n = self.cname
        c = "m.pointee." + n
        v = "value." + self.swift
        if self.is_map:
            return ("if m.pointee.n_%s > 0 {\n"
                    "            %s = try ProtoC.stringMap(%s, count: m.pointee.n_%s) { (e) throws(ProtoDecodingError) in\n"
                    '                (try ProtoC.string(e.pointee.key, field: "key"), try ProtoC.string(e.pointee.value, field: "value"))\n'
                    "            }\n"
                    "        }") % (n, v, c, n)
        if self.repeated:
            if self.fd.type == FD.TYPE_MESSAGE:
                t = self.element_swift()
                return ("if m.pointee.n_%s > 0 {\n"
                        "            %s = try ProtoC.messages(%s, count: m.pointee.n_%s, empty: { %s() }) {\n"
                        "                (e, element) throws(ProtoDecodingError) in try %s.decode(e, into: &element)\n"
                        "            }\n"
                        "        }") % (n, v, c, n, t, t)
            return ("if m.pointee.n_%s > 0 {\n"
                    "            %s = try ProtoC.array(%s, count: m.pointee.n_%s) { (e) throws(ProtoDecodingError) in %s }\n"
                    "        }") % (n, v, c, n, self.read_element("e"))
        if self.fd.type == FD.TYPE_MESSAGE:
            t = self.element_swift()
            return "if let e = %s {\n            %s = %s()\n            try %s.decode(e, into: &%s!)\n        }" % (
                c, v, t, t, v)
        if self.oneof:
            return "if m.pointee.%s_case.rawValue == %d { %s = %s }" % (
                self.oneof, self.fd.number, v, self.read_element(c))
        if self.fd.type == FD.TYPE_STRING:
            return 'try ProtoC.string(%s, field: "%s", into: &%s)' % (c, self.fd.name, v)
        if self.fd.type == FD.TYPE_BYTES:
            return "if %s.len > 0 { %s = %s }" % (c, v, self.read_element(c))
        return "%s = %s" % (v, self.read_element(c))

    # --- writing into the arena-owned C struct `c` ---
    def write_element(self, expr):
        t = self.fd.type
        if t == FD.TYPE_STRING:
            return "arena.string(%s)" % expr
        if t == FD.TYPE_BYTES:
            return "arena.bytes(%s)" % expr
        if t == FD.TYPE_BOOL:
            return "(%s ? 1 : 0)" % expr
        if t == FD.TYPE_ENUM:
            return ".init(rawValue: .init(truncatingIfNeeded: %s.rawValue))" % expr
        if t == FD.TYPE_MESSAGE:
            return "%s.cMessage(in: arena)" % expr
        return expr

    # --- an upper bound of the field's encoded size (see emit_message) ---
    def bound(self):
        """(constant bytes, statement adding the rest to `size` or None)."""
        s = "self." + self.swift
        t = self.fd.type
        if self.is_map:
            return 0, "for entry in %s { size += 3 * ProtoC.fieldOverhead + entry.key.utf8.count + entry.value.utf8.count }" % s
        if self.repeated:
            if t == FD.TYPE_MESSAGE:
                return ProtoC_OVERHEAD, ("for index in %s.indices { size += ProtoC.fieldOverhead + %s[index].packedSizeBound }"
                                         % (s, s))
            if t == FD.TYPE_STRING:
                return ProtoC_OVERHEAD, ("for index in %s.indices { size += ProtoC.fieldOverhead + %s[index].utf8.count }"
                                         % (s, s))
            if t == FD.TYPE_BYTES:
                return ProtoC_OVERHEAD, ("for index in %s.indices { size += ProtoC.fieldOverhead + %s[index].count }"
                                         % (s, s))
            return ProtoC_OVERHEAD, "size += ProtoC.fieldOverhead * %s.count" % s
        if t == FD.TYPE_MESSAGE:
            return ProtoC_OVERHEAD, "if let v = %s { size += v.packedSizeBound }" % s
        if t == FD.TYPE_STRING:
            if self.oneof:
                return ProtoC_OVERHEAD, "if let v = %s { size += v.utf8.count }" % s
            return ProtoC_OVERHEAD, "size += %s.utf8.count" % s
        if t == FD.TYPE_BYTES:
            if self.oneof:
                return ProtoC_OVERHEAD, "if let v = %s { size += v.count }" % s
            return ProtoC_OVERHEAD, "size += %s.count" % s
        return ProtoC_OVERHEAD, None

    def write(self):
        n = self.cname
        s = "value.pointee." + self.swift
        if self.is_map:
            entry = self.reg.c_type(self.fd.type_name)
            init = c_func_prefix(*self.reg.messages[self.fd.type_name][1:3]) + "init"
            return ("if !%s.isEmpty {\n"
                    "            let entries = %s.sorted { $0.key < $1.key }\n"
                    "            c.pointee.n_%s = entries.count\n"
                    "            c.pointee.%s = arena.array(entries) { entry in\n"
                    "                let e = arena.allocate(%s.self)\n"
                    "                %s(e)\n"
                    "                e.pointee.key = arena.string(entry.pointee.key)\n"
                    "                e.pointee.value = arena.string(entry.pointee.value)\n"
                    "                return e\n"
                    "            }\n"
                    "        }") % (s, s, n, n, entry, init)
        if self.repeated:
            if self.fd.type == FD.TYPE_MESSAGE:
                element = "%s.cMessage(of: $0, in: arena)" % self.element_swift()
            else:
                element = self.write_element("$0.pointee")
            return ("if !%s.isEmpty {\n"
                    "            c.pointee.n_%s = %s.count\n"
                    "            c.pointee.%s = arena.array(%s) { %s }\n"
                    "        }") % (s, n, s, n, s, element)
        if self.fd.type == FD.TYPE_MESSAGE:
            return "if let v = %s { c.pointee.%s = %s }" % (s, n, self.write_element("v"))
        if self.oneof:
            return ("if let v = %s {\n"
                    "            c.pointee.%s_case = .init(rawValue: %d)\n"
                    "            c.pointee.%s = %s\n"
                    "        }") % (s, self.oneof, self.fd.number, n, self.write_element("v"))
        if self.fd.type == FD.TYPE_STRING:
            return "if !%s.isEmpty { c.pointee.%s = %s }" % (s, n, self.write_element(s))
        return "c.pointee.%s = %s" % (n, self.write_element(s))


class OneofGroup:
    """A oneof of several fields: an optional Swift enum (`nil` when none is set), one case per field."""

    def __init__(self, name, members):
        self.name = name
        self.members = members
        self.swift = camel(name)
        self.type = camel(name, upper_first=True)

    def emit_enum(self, out, indent):
        i = " " * indent
        out.append("%s/// The proto oneof `%s`: at most one of its fields is set." % (i, self.name))
        out.append("%spublic enum %s: Sendable, Equatable {" % (i, self.type))
        for f in self.members:
            out.append("%s    case %s(%s)" % (i, f.swift, f.element_swift()))
        out.append("%s}" % i)

    def read(self):
        lines = ["switch m.pointee.%s_case.rawValue {" % self.name]
        for f in self.members:
            if f.fd.type == FD.TYPE_MESSAGE:
                value = "if let e = m.pointee.%s { value.%s = .%s(%s) }" % (
                    f.cname, self.swift, f.swift, f.read_element("e"))
            else:
                value = "value.%s = .%s(%s)" % (self.swift, f.swift, f.read_element("m.pointee." + f.cname))
            lines.append("        case %d: %s" % (f.fd.number, value))
        lines.append("        default: break")
        lines.append("        }")
        return "\n".join(lines)

    def bound(self):
        lines = ["switch self.%s {" % self.swift]
        for f in self.members:
            t = f.fd.type
            if t == FD.TYPE_MESSAGE:
                add = "size += v.packedSizeBound"
            elif t == FD.TYPE_STRING:
                add = "size += v.utf8.count"
            elif t == FD.TYPE_BYTES:
                add = "size += v.count"
            else:
                add = "_ = v"
            lines.append("        case .%s(let v)?: %s" % (f.swift, add))
        lines.append("        case nil: break")
        lines.append("        }")
        return ProtoC_OVERHEAD, "\n".join(lines)

    def write(self):
        lines = ["switch value.pointee.%s {" % self.swift]
        for f in self.members:
            lines.append("        case .%s(let v)?:" % f.swift)
            lines.append("            c.pointee.%s_case = .init(rawValue: %d)" % (self.name, f.fd.number))
            lines.append("            c.pointee.%s = %s" % (f.cname, f.write_element("v")))
        lines.append("        case nil: break")
        lines.append("        }")
        return "\n".join(lines)


def members_and_groups(fields):
    """The message's fields in proto order, a oneof group in place of its first field."""
    out, seen = [], {}
    for f in fields:
        if f.group is None:
            out.append(f)
        elif f.group not in seen:
            seen[f.group] = OneofGroup(f.group, [x for x in fields if x.group == f.group])
            out.append(seen[f.group])
    return out, list(seen.values())


def json_read(field):
    """The statement that decodes `value`, a non-null JSON member, into the field."""
    s = "self." + field.swift
    if field.is_map:
        return "%s = try ProtoJSON.map(value, of: String.self)" % s
    if field.repeated:
        return "%s = try ProtoJSON.array(value, of: %s.self)" % (s, field.element_swift())
    return "%s = try %s(protoJSON: value)" % (s, field.element_swift())


def json_write(field):
    name, s = field.fd.json_name, field.swift
    if field.is_map:
        return 'writer.field("%s", map: %s)' % (name, s)
    if field.repeated:
        return 'writer.field("%s", repeated: %s)' % (name, s)
    if field.fd.type == FD.TYPE_MESSAGE or field.oneof:
        return 'writer.field("%s", present: %s)' % (name, s)
    return 'writer.field("%s", %s)' % (name, s)


def json_read_case(group, field):
    """The statement that decodes a member of a several-field oneof: its case, unless another case
    was already given (ProtoJSON: at most one field of a oneof)."""
    return ('if self.%s != nil { throw ProtoJSONError(message: "only one field of oneof %s may be set") }; '
            'self.%s = .%s(try %s(protoJSON: value))') % (
        group.swift, group.name, group.swift, field.swift, field.element_swift())


def json_write_group(group):
    """The statements that write the set case of a several-field oneof (even a default value:
    the case itself is what is set)."""
    lines = ["switch self.%s {" % group.swift]
    for f in group.members:
        lines.append('        case .%s(let v)?: writer.field("%s", present: v)' % (f.swift, f.fd.json_name))
    lines.append("        case nil: break")
    lines.append("        }")
    return "\n".join(lines)


def emit_message_json(ext, swift_full, proto_full, members):
    # The JSON object names every proto field, a oneof group's members too.
    fields = []
    for m in members:
        fields.extend(m.members if isinstance(m, OneofGroup) else [m])
    group_of = {f.fd.number: m for m in members if isinstance(m, OneofGroup) for f in m.members}
    ext.append("")
    ext.append("extension %s: ProtoJSONMessage, ProtoJSONCodable {" % swift_full)
    ext.append("    public init(jsonBytes: some Collection<UInt8>) throws(ProtoJSONError) {")
    ext.append("        self = try ProtoJSON.decode(jsonBytes)")
    ext.append("    }")
    ext.append("")
    ext.append("    public func jsonBytes() -> [UInt8] { ProtoJSON.encode(self) }")
    ext.append("")
    if fields:
        ext.append('    static let protoJSONFields = ProtoJSONFields(')
        ext.append('        "%s",' % proto_full)
        ext.append("        [")
        for f in fields:
            ext.append('            (%d, "%s", "%s"),' % (f.fd.number, f.fd.json_name, f.fd.name))
        ext.append("        ])")
    else:
        ext.append('    static let protoJSONFields = ProtoJSONFields("%s", [])' % proto_full)
    ext.append("")
    ext.append("    init(protoJSON json: JSONValue) throws(ProtoJSONError) {")
    ext.append("        self.init()")
    if fields:
        ext.append("        try Self.protoJSONFields.read(json) { number, value throws(ProtoJSONError) in")
        ext.append("            switch number {")
        for f in fields:
            group = group_of.get(f.fd.number)
            read = json_read_case(group, f) if group else json_read(f)
            ext.append("            case %d: %s" % (f.fd.number, read))
        ext.append("            default: break")
        ext.append("            }")
        ext.append("        }")
    else:
        ext.append("        try Self.protoJSONFields.read(json) { _, _ throws(ProtoJSONError) in }")
    ext.append("    }")
    ext.append("")
    ext.append("    func writeProtoJSON(to writer: inout ProtoJSONWriter) {")
    ext.append("        writer.beginMessage()")
    for m in members:
        ext.append("        " + (json_write_group(m) if isinstance(m, OneofGroup) else json_write(m)))
    ext.append("        writer.endMessage()")
    ext.append("    }")
    ext.append("}")


def emit_enum_json(ext, reg, pkg, path, e):
    swift_full = swift_namespace(pkg) + "." + ".".join(path)
    ext.append("")
    ext.append("extension %s: ProtoJSONEnum {" % swift_full)
    ext.append('    static let protoName = "%s"' % ".".join([pkg] + path))
    ext.append("    static let protoValues: [(name: String, number: Int32)] = [")
    for v in e.value:
        ext.append('        ("%s", %d),' % (v.name, v.number))
    ext.append("    ]")
    ext.append("}")


def emit_enum(out, reg, pkg, path, e, indent):
    i = " " * indent
    name = path[-1]
    prefix = c_lower(name).upper() + "_"
    out.append("%s/// The proto enum `%s`. Open: unknown values are kept as they are." % (i, ".".join([pkg] + path)))
    out.append("%spublic struct %s: RawRepresentable, Hashable, Sendable, CustomStringConvertible {" % (i, name))
    out.append("%s    public var rawValue: Int32" % i)
    out.append("%s    public init(rawValue: Int32) { self.rawValue = rawValue }" % i)
    cases = []
    for v in e.value:
        vname = v.name[len(prefix):] if v.name.startswith(prefix) else v.name
        swift = camel(vname)
        cases.append((swift, v.name, v.number))
        out.append("%s    public static let %s = Self(rawValue: %d)" % (i, swift, v.number))
    out.append("%s    /// The proto name of the value, or its number when unknown." % i)
    out.append("%s    public var description: String {" % i)
    out.append("%s        switch rawValue {" % i)
    for swift, proto, num in cases:
        out.append('%s        case %d: return "%s"' % (i, num, proto))
    out.append('%s        default: return String(rawValue)' % i)
    out.append("%s        }" % i)
    out.append("%s    }" % i)
    out.append("%s}" % i)


def emit_message(out, ext, reg, pkg, path, m, indent):
    i = " " * indent
    name = path[-1]
    fields, groups = members_and_groups([Field(reg, m, f) for f in m.field])
    out.append("%s/// The proto message `%s`." % (i, ".".join([pkg] + path)))
    out.append("%spublic struct %s: Sendable, Equatable {" % (i, name))
    for f in fields:
        if isinstance(f, OneofGroup):
            out.append("%s    public var %s: %s? = nil" % (i, f.swift, f.type))
            continue
        t, d = f.swift_decl()
        out.append("%s    public var %s: %s = %s" % (i, f.swift, t, d))
    out.append("%s    public init() {}" % i)
    for g in groups:
        out.append("")
        g.emit_enum(out, indent + 4)
    for n in m.nested_type:
        if n.options.map_entry:
            continue
        out.append("")
        emit_message(out, ext, reg, pkg, path + [n.name], n, indent + 4)
    for e in m.enum_type:
        out.append("")
        emit_enum(out, reg, pkg, path + [e.name], e, indent + 4)
    out.append("%s}" % i)

    ctype = c_full_name(pkg, path)
    fn = c_func_prefix(pkg, path)
    swift_full = swift_namespace(pkg) + "." + ".".join(path)
    ext.append("")
    ext.append("extension %s: ProtoMessage {" % swift_full)
    ext.append("    public init(serializedBytes bytes: UnsafeRawBufferPointer) throws(ProtoDecodingError) {")
    # Each string is checked as it becomes a Swift String (once: ProtoC.string), not in a pass of
    # its own before; a failure names the field, and ProtoC.decode names the message.
    ext.append("        self.init()")
    ext.append('        try ProtoC.decode(bytes, messageName: "%s", into: &self, unpack: { %sunpack($0, $1, $2) }) {' % (
        ".".join([pkg] + path), fn))
    ext.append("            (m, value) throws(ProtoDecodingError) in try Self.decode(m, into: &value)")
    ext.append("        }")
    ext.append("    }")
    ext.append("")
    ext.append("    public func serializedBytes() -> [UInt8] { serializedBytes(reservingPrefix: 0) }")
    ext.append("")
    ext.append("    public func serializedBytes(reservingPrefix prefix: Int) -> [UInt8] {")
    ext.append("        ProtoCArena.with { arena in")
    ext.append("            let c = cMessage(in: arena)")
    ext.append("            return ProtoC.pack(")
    ext.append("                bound: packedSizeBound, reservingPrefix: prefix, size: { %sget_packed_size(c) }" % fn)
    ext.append("            ) { %spack(c, $0) }" % fn)
    ext.append("        }")
    ext.append("    }")
    ext.append("")
    # protobuf-c's pack needs room for the whole message up front; its get_packed_size is a walk
    # of every field as long as pack's (~700 instructions of a 1-token Send's answer), this one a
    # sum over the Swift value.
    ext.append("    /// At least the size of the message's encoding: ProtoC.fieldOverhead per field (and per")
    ext.append("    /// element, entry) beyond its content.")
    ext.append("    var packedSizeBound: Int {")
    constant = 0
    statements = []
    for f in fields:
        k, st = f.bound()
        constant += k
        if st:
            statements.append(st)
    if statements:
        ext.append("        var size = %d" % constant)
        for st in statements:
            ext.append("        " + st)
        ext.append("        return size")
    else:
        ext.append("        %d" % constant)
    ext.append("    }")
    ext.append("")
    # Into a value that holds the defaults, the fields present; the C struct is read through its
    # pointer, not copied. In place, not an init: an init returning a struct of more than four
    # words (most messages) copied it out with a retain of every field and a release of the
    # original (Swift 6.3), ~1,000 instructions for a Notification.
    ext.append("    static func decode(_ m: UnsafePointer<%s>, into value: inout Self) throws(ProtoDecodingError) {" % ctype)
    for f in fields:
        ext.append("        " + f.read())
    ext.append("    }")
    ext.append("")
    ext.append("    func cMessage(in arena: ProtoCArena) -> UnsafeMutablePointer<%s> {" % ctype)
    ext.append("        withUnsafePointer(to: self) { Self.cMessage(of: $0, in: arena) }")
    ext.append("    }")
    ext.append("")
    # From a pointer to the value, so an array's elements are read where they are: given to an
    # instance method, each was copied first (a retain of every field) and destroyed after.
    ext.append("    static func cMessage(of value: UnsafePointer<Self>, in arena: ProtoCArena) -> UnsafeMutablePointer<%s> {" % ctype)
    ext.append("        let c = arena.allocate(%s.self)" % ctype)
    ext.append("        %sinit(c)" % fn)
    for f in fields:
        ext.append("        " + f.write())
    ext.append("        return c")
    ext.append("    }")
    ext.append("}")
    emit_message_json(ext, swift_full, ".".join([pkg] + path), fields)
    for e in m.enum_type:
        emit_enum_json(ext, reg, pkg, path + [e.name], e)
    for n in m.nested_type:
        if not n.options.map_entry:
            emit_message([], ext, reg, pkg, path + [n.name], n, 0)


def main():
    ds_path, outdir = sys.argv[1], sys.argv[2]
    fds = descriptor_pb2.FileDescriptorSet()
    with open(ds_path, "rb") as fh:
        fds.ParseFromString(fh.read())
    reg = Registry(fds)
    os.makedirs(outdir, exist_ok=True)
    namespaces = set()
    for f in fds.file:
        ns = swift_namespace(f.package)
        out = ["// Generated by scripts/gen-swift-proto.py from %s. DO NOT EDIT." % f.name, "",
               "import CPushgateProto", "import PushCore", ""]
        if ns not in namespaces:
            namespaces.add(ns)
            out += ["/// Messages and enums of the proto package `%s`." % f.package,
                    "public enum %s {}" % ns, ""]
        out.append("extension %s {" % ns)
        body = []
        ext = []
        for e in f.enum_type:
            body.append("")
            emit_enum(body, reg, f.package, [e.name], e, 4)
            emit_enum_json(ext, reg, f.package, [e.name], e)
        for m in f.message_type:
            body.append("")
            emit_message(body, ext, reg, f.package, [m.name], m, 4)
        out += body[1:] if body and body[0] == "" else body
        out.append("}")
        out += ext
        base = re.sub(r"\.proto$", "", f.name).replace("/", "_")
        with open(os.path.join(outdir, base + ".pb.swift"), "w") as fh:
            fh.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
