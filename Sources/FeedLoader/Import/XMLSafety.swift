import Foundation

/// Removes from a UTF-8 XML document what FoundationXML on Linux cannot be given.
///
/// FoundationXML's callbacks for some of libxml2's events take C pointers as
/// non-optional Swift pointers; libxml2 passes null for a part that is absent, and the
/// callback crashes the process reading it (`strlen` of null). So a processing
/// instruction without data (`<?pi?>`), an attribute list declaration without a default
/// (`<!ATTLIST a b CDATA #IMPLIED>`), a notation (`<!NOTATION n SYSTEM "x">`) and an
/// unparsed entity (`<!ENTITY e SYSTEM "x" NDATA n>`) each crashed FeedLoader.
///
/// What the parser is given instead: every processing instruction has data (a space is
/// added where there is none), and a document type's internal subset keeps only the
/// declarations of internal general entities whose text has no markup (`<!ENTITY nbsp
/// "&#160;">`, which feeds use); other declarations, parameter entities, comments and
/// processing instructions in it are dropped (a feed reader needs none of them), their
/// line breaks kept so that errors name the same lines.
enum XMLSafety {
    private static let lt = UInt8(ascii: "<")
    private static let gt = UInt8(ascii: ">")

    /// The document, safe to hand to FoundationXML.
    static func sanitized(_ bytes: [UInt8]) -> [UInt8] {
        // Most feeds have nothing to change: no `<?` after the declaration, no `<!D`.
        guard needsWork(bytes) else { return bytes }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + 16)
        var index = 0
        while index < bytes.count {
            guard let next = bytes[index...].firstIndex(of: lt) else {
                out += bytes[index...]
                break
            }
            out += bytes[index..<next]
            index = next
            if starts(bytes, "<!--", at: index) {
                index = copy(bytes, through: "-->", from: index, into: &out)
            } else if starts(bytes, "<![CDATA[", at: index) {
                index = copy(bytes, through: "]]>", from: index, into: &out)
            } else if starts(bytes, "<?", at: index) {
                index = instruction(bytes, from: index, into: &out)
            } else if starts(bytes, "<!DOCTYPE", at: index) {
                index = doctype(bytes, from: index, into: &out)
            } else {
                out.append(lt)
                index += 1
            }
        }
        return out
    }

    private static func needsWork(_ bytes: [UInt8]) -> Bool {
        var index = 0
        while let next = bytes[index...].firstIndex(of: lt) {
            guard next + 1 < bytes.count else { return false }
            let after = bytes[next + 1]
            if after == UInt8(ascii: "?"), next > 0 || !starts(bytes, "<?xml ", at: next) { return true }
            if after == UInt8(ascii: "!"), next + 2 < bytes.count, bytes[next + 2] == UInt8(ascii: "D") { return true }
            index = next + 1
        }
        return false
    }

    private static func starts(_ bytes: [UInt8], _ prefix: String, at index: Int) -> Bool {
        let prefix = Array(prefix.utf8)
        return index + prefix.count <= bytes.count && bytes[index..<index + prefix.count].elementsEqual(prefix)
    }

    /// Where `marker` starts at or after `index`; `nil` when it does not.
    private static func find(_ bytes: [UInt8], _ marker: String, from index: Int) -> Int? {
        let marker = Array(marker.utf8)
        var position = index
        while position + marker.count <= bytes.count, let next = bytes[position...].firstIndex(of: marker[0]) {
            if starts(bytes, String(decoding: marker, as: UTF8.self), at: next) { return next }
            position = next + 1
        }
        return nil
    }

    /// Copies up to and including `marker` (or to the end); returns where to go on.
    private static func copy(_ bytes: [UInt8], through marker: String, from index: Int, into out: inout [UInt8]) -> Int {
        let end = find(bytes, marker, from: index + 2).map { $0 + marker.utf8.count } ?? bytes.count
        out += bytes[index..<end]
        return end
    }

    private static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }

    /// A processing instruction, with a space before its `?>` when it has no data.
    private static func instruction(_ bytes: [UInt8], from index: Int, into out: inout [UInt8]) -> Int {
        guard let end = find(bytes, "?>", from: index + 2) else {
            out += bytes[index...]
            return bytes.count
        }
        out += bytes[index..<end]
        if !bytes[index + 2..<end].contains(where: isSpace) { out.append(0x20) }
        out += Array("?>".utf8)
        return end + 2
    }

    /// The end of a declaration (`>` outside quotes) from `index`; `nil` when there is none.
    private static func declarationEnd(_ bytes: [UInt8], from index: Int, stopAtBracket: Bool = false) -> Int? {
        var quote: UInt8?
        var position = index
        while position < bytes.count {
            let byte = bytes[position]
            if let open = quote {
                if byte == open { quote = nil }
            } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                quote = byte
            } else if byte == gt || (stopAtBracket && byte == UInt8(ascii: "[")) {
                return position
            }
            position += 1
        }
        return nil
    }

    /// Keeps of `dropped` only its line breaks.
    private static func keepLines(_ dropped: ArraySlice<UInt8>, into out: inout [UInt8]) {
        out += dropped.filter { $0 == 0x0A }
    }

    /// A document type declaration, its internal subset filtered.
    private static func doctype(_ bytes: [UInt8], from index: Int, into out: inout [UInt8]) -> Int {
        guard let open = declarationEnd(bytes, from: index, stopAtBracket: true) else {
            out += bytes[index...]
            return bytes.count
        }
        out += bytes[index...open]
        guard bytes[open] == UInt8(ascii: "[") else { return open + 1 }
        var position = open + 1
        while position < bytes.count {
            let byte = bytes[position]
            if isSpace(byte) {
                out.append(byte)
                position += 1
            } else if byte == UInt8(ascii: "]") {
                // The end of the subset, then of the declaration.
                let end = declarationEnd(bytes, from: position).map { $0 + 1 } ?? bytes.count
                out += bytes[position..<end]
                return end
            } else if starts(bytes, "<!--", at: position) {
                let end = find(bytes, "-->", from: position + 4).map { $0 + 3 } ?? bytes.count
                keepLines(bytes[position..<end], into: &out)
                position = end
            } else if starts(bytes, "<?", at: position) {
                let end = find(bytes, "?>", from: position + 2).map { $0 + 2 } ?? bytes.count
                keepLines(bytes[position..<end], into: &out)
                position = end
            } else if byte == lt {
                let end = declarationEnd(bytes, from: position).map { $0 + 1 } ?? bytes.count
                let declaration = bytes[position..<end]
                if isSafeEntity(declaration) { out += declaration } else { keepLines(declaration, into: &out) }
                position = end
            } else if byte == UInt8(ascii: "%") {
                // A parameter entity reference: its declaration was dropped.
                let end = bytes[position...].firstIndex(of: UInt8(ascii: ";")).map { $0 + 1 } ?? bytes.count
                position = end
            } else {
                // Not a declaration: the parser will say so, having been given nothing unsafe.
                out += bytes[position...]
                return bytes.count
            }
        }
        return position
    }

    /// `<!ENTITY name "text">` whose text has no markup (no `<`, not even as a character
    /// reference) and no parameter entity.
    static func isSafeEntity(_ declaration: ArraySlice<UInt8>) -> Bool {
        let text = String(decoding: declaration, as: UTF8.self)
        guard text.range(of: #"^<!ENTITY\s+[^\s%"'<>]+\s+("[^"]*"|'[^']*')\s*>$"#, options: .regularExpression) != nil
        else { return false }
        guard let quote = text.firstIndex(where: { $0 == "\"" || $0 == "'" }) else { return false }
        let value = text[quote...]
        return !value.contains("<") && !value.contains("%")
            && value.range(of: #"&#(0*60|[xX]0*3[cC]);"#, options: .regularExpression) == nil
    }
}
