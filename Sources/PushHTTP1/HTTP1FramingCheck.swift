/// The line endings of a request's head, chunk lines and trailers, as RFC 9112 wants them:
/// libhttp-parser takes a bare LF for CRLF, a bare CR, and folded header lines (obs-fold), and a
/// proxy in front of us that reads the same bytes otherwise is how requests are smuggled (§2.2,
/// §5.2, §11.2). It parses nothing: the parser tells it which bytes are framing (everything but
/// body data) and it looks at their line endings only. A plain value; tested without a parser.
struct HTTP1FramingCheck {
    enum Violation: Equatable, Sendable {
        case bareLF, bareCR, obsFold, chunkEnd

        var error: HTTP1Error {
            switch self {
            case .bareLF:
                HTTP1Error(name: "bare_lf", description: "a line ends in LF without CR (RFC 9112 §2.2)")
            case .bareCR:
                HTTP1Error(name: "bare_cr", description: "a CR not followed by LF (RFC 9112 §2.2)")
            case .obsFold:
                HTTP1Error(name: "obs_fold", description: "a header field folded over lines (RFC 9112 §5.2)")
            case .chunkEnd:
                HTTP1Error(name: "chunk_end", description: "a chunk's data does not end in CRLF (RFC 9112 §7.1)")
            }
        }
    }

    /// The last framing byte looked at (0 at a line's start after body data, or before any).
    private var previous: UInt8 = 0
    /// Nothing but CR since the last LF: the next LF ends an empty line.
    private var lineEmpty = false

    /// Bytes a chunk's data must be followed by, still to come (libhttp-parser, built lenient,
    /// takes any two bytes there: a front end that reads them otherwise frames the body otherwise).
    private var chunkEndLeft = 0

    /// Body data came between framing bytes: what follows is not at a line's start, and after a
    /// chunk's data comes its CRLF.
    mutating func bodyData(chunked: Bool = false) {
        previous = 0
        lineEmpty = false
        chunkEndLeft = chunked ? 2 : 0
    }

    /// Looks at framing bytes. With `toBlankLine`, stops right after the LF of the first empty
    /// line (the end of a head or of a chunked body's trailers): what comes after it is the next
    /// part of the message, not framing. Returns how many bytes it took.
    mutating func scan(_ bytes: UnsafeRawBufferPointer, toBlankLine: Bool = false) -> Result<Int, HTTP1Error> {
        for (offset, byte) in bytes.enumerated() {
            if chunkEndLeft > 0 {
                guard byte == (chunkEndLeft == 2 ? 0x0D : 0x0A) else { return .failure(Violation.chunkEnd.error) }
                chunkEndLeft -= 1
            }
            if previous == 0x0D && byte != 0x0A { return .failure(Violation.bareCR.error) }
            switch byte {
            case 0x0A:
                if previous != 0x0D { return .failure(Violation.bareLF.error) }
                let endsEmptyLine = lineEmpty
                previous = byte
                lineEmpty = true
                if endsEmptyLine && toBlankLine {
                    lineEmpty = false
                    return .success(offset + 1)
                }
                continue
            case 0x20, 0x09:
                // A line of the head that begins with white space continues the field above it.
                if previous == 0x0A { return .failure(Violation.obsFold.error) }
                lineEmpty = false
            case 0x0D:
                break
            default:
                lineEmpty = false
            }
            previous = byte
        }
        return .success(bytes.count)
    }

    /// A new message begins: its first line is not an empty line's continuation.
    mutating func messageBegan() {
        lineEmpty = false
    }
}

/// RFC 9110 §5.6.2's token characters (what a field name is made of).
enum HTTP1Token {
    static func isTokenCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default:
            "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }
}
