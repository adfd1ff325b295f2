// `pushgate bench`: numbers as the table and the JSON print them.

import PushCore

func formatMillis(_ nanoseconds: UInt64?) -> String {
    guard let nanoseconds else { return "-" }
    let ms = Double(nanoseconds) / 1e6
    return ms < 10 ? formatDecimal(ms, places: 3) : formatDecimal(ms, places: ms < 100 ? 2 : 1)
}

func formatDecimal(_ value: Double, places: Int) -> String {
    guard value.isFinite else { return "\(value)" }
    var scale = 1.0
    for _ in 0..<places { scale *= 10 }
    let rounded = (value * scale).rounded() / scale
    var text = "\(rounded)"
    if text.contains("e") { return text }
    let parts = text.split(separator: ".", omittingEmptySubsequences: false)
    var fraction = parts.count > 1 ? String(parts[1]) : ""
    while fraction.count < places { fraction += "0" }
    text = String(parts[0]) + (places > 0 ? "." + fraction.prefix(places) : "")
    return text
}

/// 1234567 → "1,234,567".
func formatCount(_ value: Int) -> String {
    let digits = String(abs(value))
    var out = ""
    for (i, c) in digits.enumerated() {
        if i > 0 && (digits.count - i) % 3 == 0 { out.append(",") }
        out.append(c)
    }
    return (value < 0 ? "-" : "") + out
}

/// A JSON string literal, written by PushCore's JSONWriter (the one JSON writer).
func jsonString(_ text: String) -> String {
    var writer = JSONWriter(reservingCapacity: text.utf8.count + 2)
    writer.string(text)
    return String(decoding: writer.bytes, as: UTF8.self)
}
