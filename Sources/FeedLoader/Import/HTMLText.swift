import Foundation

/// Plain text out of the HTML that feeds put in summaries (and sometimes titles): tags
/// dropped (`script` and `style` with their content), character references decoded,
/// white space collapsed to single spaces. The list shows one line per item, the detail
/// a wrapped paragraph, so no markup survives.
enum HTMLText {
    /// `<p>Apple&rsquo;s <b>new</b> chip</p>` → `Apple’s new chip`.
    static func plain(_ html: String) -> String {
        collapse(decode(stripTags(html)))
    }

    /// One line: runs of white space (new lines included) become one space, and the ends
    /// are trimmed.
    static func collapse(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        var pendingSpace = false
        for character in text {
            if character.isWhitespace {
                pendingSpace = !out.isEmpty
            } else {
                if pendingSpace { out.append(" ") }
                pendingSpace = false
                out.append(character)
            }
        }
        return out
    }

    /// Drops tags and comments; block-level tags leave a space so that words do not run
    /// together; `script` and `style` go with their content.
    static func stripTags(_ html: String) -> String {
        guard html.contains("<") else { return html }
        var out = ""
        var rest = html[...]
        while let open = rest.firstIndex(of: "<") {
            out += rest[..<open]
            let tail = rest[open...]
            if tail.hasPrefix("<!--") {
                guard let end = tail.range(of: "-->") else { return out }
                rest = tail[end.upperBound...]
                continue
            }
            // `<` not starting a tag (`a < b`) is text.
            let next = tail.dropFirst().first
            guard let next, next.isLetter || next == "/" || next == "!" || next == "?" else {
                out += "<"
                rest = tail.dropFirst()
                continue
            }
            guard let close = tail.firstIndex(of: ">") else { return out }
            let tag = tail[tail.index(after: open)..<close].lowercased()
            let name = tag.drop { $0 == "/" }.prefix { $0.isLetter || $0.isNumber }
            rest = tail[tail.index(after: close)...]
            if !tag.hasPrefix("/"), name == "script" || name == "style" {
                if let end = rest.range(of: "</\(name)", options: .caseInsensitive),
                    let after = rest[end.upperBound...].firstIndex(of: ">")
                {
                    rest = rest[rest.index(after: after)...]
                } else {
                    return out
                }
            }
            if blockTags.contains(String(name)) { out += " " }
        }
        out += rest
        return out
    }

    /// Whether an element of this (lowercased) name is a block, that separates words.
    static func isBlock(_ name: String) -> Bool { blockTags.contains(name) }

    private static let blockTags: Set<String> = [
        "p", "br", "div", "li", "ul", "ol", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "tr", "td", "th", "table",
        "hr", "figure", "figcaption", "section", "article", "pre", "dd", "dt",
    ]

    /// Decodes `&amp;`, `&#8217;`, `&#x2019;` and the named references feeds use; an
    /// unknown or unterminated reference stays as it is (`AT&T`).
    static func decode(_ text: String) -> String {
        guard text.contains("&") else { return text }
        var out = ""
        var rest = text[...]
        while let amp = rest.firstIndex(of: "&") {
            out += rest[..<amp]
            let after = rest.index(after: amp)
            // A reference is at most 32 characters up to its `;`.
            if let semicolon = rest[after...].prefix(32).firstIndex(of: ";"),
                let value = reference(rest[after..<semicolon])
            {
                out += value
                rest = rest[rest.index(after: semicolon)...]
            } else {
                out += "&"
                rest = rest[after...]
            }
        }
        out += rest
        return out
    }

    private static func reference(_ name: Substring) -> String? {
        if name.hasPrefix("#") {
            let digits = name.dropFirst()
            let value: UInt32?
            if digits.first == "x" || digits.first == "X" {
                value = UInt32(digits.dropFirst(), radix: 16)
            } else {
                value = UInt32(digits, radix: 10)
            }
            // NUL and surrogates are not characters; U+FFFD says something was there.
            guard let value else { return nil }
            guard value != 0, let scalar = Unicode.Scalar(value) else { return "\u{FFFD}" }
            return String(Character(scalar))
        }
        return named[String(name)]
    }

    private static let named: [String: String] = [
        "amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'", "nbsp": "\u{00A0}",
        "ndash": "–", "mdash": "—", "lsquo": "‘", "rsquo": "’", "sbquo": "‚", "ldquo": "“", "rdquo": "”", "bdquo": "„",
        "hellip": "…", "laquo": "«", "raquo": "»", "lsaquo": "‹", "rsaquo": "›", "bull": "•", "middot": "·",
        "copy": "©", "reg": "®", "trade": "™", "deg": "°", "plusmn": "±", "times": "×", "divide": "÷",
        "euro": "€", "pound": "£", "yen": "¥", "cent": "¢", "sect": "§", "para": "¶", "dagger": "†", "Dagger": "‡",
        "prime": "′", "Prime": "″", "frac12": "½", "frac14": "¼", "frac34": "¾", "iexcl": "¡", "iquest": "¿",
        "shy": "\u{00AD}", "zwj": "\u{200D}", "zwnj": "\u{200C}", "ensp": "\u{2002}", "emsp": "\u{2003}",
        "thinsp": "\u{2009}", "larr": "←", "rarr": "→", "uarr": "↑", "darr": "↓", "hearts": "♥",
        "aacute": "á", "Aacute": "Á", "agrave": "à", "Agrave": "À", "acirc": "â", "auml": "ä", "Auml": "Ä",
        "atilde": "ã", "aring": "å", "aelig": "æ", "ccedil": "ç", "Ccedil": "Ç", "eacute": "é", "Eacute": "É",
        "egrave": "è", "Egrave": "È", "ecirc": "ê", "euml": "ë", "iacute": "í", "igrave": "ì", "icirc": "î",
        "iuml": "ï", "ntilde": "ñ", "Ntilde": "Ñ", "oacute": "ó", "Oacute": "Ó", "ograve": "ò", "ocirc": "ô",
        "ouml": "ö", "Ouml": "Ö", "otilde": "õ", "oslash": "ø", "Oslash": "Ø", "uacute": "ú", "ugrave": "ù",
        "ucirc": "û", "uuml": "ü", "Uuml": "Ü", "yacute": "ý", "yuml": "ÿ", "szlig": "ß",
    ]
}
