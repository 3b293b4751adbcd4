import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// Reads a whole XML document into ``XMLTree/Element``s with Foundation's `XMLParser`
/// (FoundationXML on Linux): namespaces resolved, external entities never loaded.
enum XMLTree {
    /// The root element.
    ///
    /// The document is read in its own encoding and handed to the parser as UTF-8 (see
    /// ``XMLEncoding``): the parser never detects an encoding itself.
    ///
    /// - Parameter charset: the encoding the HTTP `Content-Type` names, which decides over
    ///   the XML declaration (a byte order mark decides over both).
    /// - Throws: ``FeedLoaderError/malformedXML(source:line:column:detail:)`` with where
    ///   and why the document breaks; ``FeedLoaderError/unsupportedEncoding(source:encoding:)``
    ///   ``FeedLoaderError/replacementEncoding(source:encoding:)`` or
    ///   ``FeedLoaderError/undecodable(source:encoding:)`` when it cannot be read as text.
    static func parse(_ data: Data, source: String, charset: String? = nil) throws -> Element {
        let utf8 = try XMLEncoding.utf8Document(data, source: source, charset: charset).data
        // White space before the XML declaration is an error to XML, and a common slip of
        // feed generators: skip it, counting the lines it had.
        var start = utf8.startIndex
        var skippedLines = 0
        while start < utf8.endIndex, [0x20, 0x09, 0x0A, 0x0D].contains(utf8[start]) {
            if utf8[start] == 0x0A { skippedLines += 1 }
            start += 1
        }
        let data = utf8[start...]
        // libxml2 guesses an encoding from the first bytes (UCS-4 in unusual orders, EBCDIC):
        // what does not start with "<" is not handed to it.
        guard data.first == UInt8(ascii: "<") else {
            throw FeedLoaderError.malformedXML(
                source: source, line: skippedLines + 1, column: 1,
                detail: describe(XMLTreeError.notAnElement, data: Data(data)))
        }
        // Nor what crashes FoundationXML (see ``XMLSafety``).
        let parser = XMLParser(data: Data(XMLSafety.sanitized(Array(data))))
        parser.shouldProcessNamespaces = true
        parser.shouldReportNamespacePrefixes = false
        parser.shouldResolveExternalEntities = false
        let builder = Builder()
        parser.delegate = builder
        // FoundationXML's parse() can return true after an error: the error decides.
        let ok = parser.parse() && parser.parserError == nil
        if let failure = builder.failure {
            throw FeedLoaderError.malformedXML(
                source: source, line: failure.line + skippedLines, column: failure.column, detail: failure.detail)
        }
        guard ok, let root = builder.root else {
            throw FeedLoaderError.malformedXML(
                source: source, line: parser.lineNumber + skippedLines, column: parser.columnNumber,
                detail: describe(parser.parserError, data: Data(data)))
        }
        return root
    }

    /// An error found before the parser runs.
    enum XMLTreeError: Error {
        /// The document (after white space) does not start with `<`.
        case notAnElement
    }

    /// What the parser's error means, in words. The codes are libxml2's (`xmlParserErrors`),
    /// which FoundationXML passes on as they are — they are not `XMLParser.ErrorCode`'s.
    static func describe(_ error: (any Error)?, data: Data?) -> String {
        if let data, data.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) {
            return "the document is empty"
        }
        guard let error else { return "the document has no root element" }
        if error is XMLTreeError { return "the document does not start with an XML element" }
        let code = (error as NSError).code
        switch code {
        case 3, 4: return "the document does not start with an XML element"
        case 5: return "the document ends before its elements are closed, or goes on after its root element"
        case 6, 7, 8: return "a character reference (&#…;) is not valid"
        case 9: return "the document contains a character XML does not allow"
        case 22, 23: return "an “&” does not start a reference (write &amp;)"
        case 26, 27:
            return "an entity is not defined (HTML names such as &nbsp; are not XML; write &#160;)"
        case 89: return "entities refer to themselves, or expand too much"
        case 31, 32, 81: return "the document's encoding is unknown or does not match its bytes"
        case 38: return "an attribute value contains “<”"
        case 39, 40, 41, 42, 43, 44: return "an attribute is malformed (its value needs quotes)"
        case 45: return "a comment is not closed"
        case 56, 57, 96: return "the XML declaration is malformed"
        case 63: return "a CDATA section is not closed"
        case 68: return "a “<” does not start a tag (write &lt;)"
        case 72, 73, 74, 77: return "a tag is not closed"
        case 76: return "an end tag does not match its start tag"
        case 85: return "elements are not properly nested"
        case 86: return "there is content after the root element"
        case 201: return "a namespace prefix is used but not declared"
        default: return "XML error \(code)"
        }
    }

    /// Builds the tree from the parser's callbacks (on the calling thread, synchronously).
    private final class Builder: NSObject, XMLParserDelegate {
        struct Failure {
            var line: Int
            var column: Int
            var detail: String
        }

        var root: Element?
        var stack: [Element] = []
        var failure: Failure?
        /// Deeper than any feed; a guard against documents built to exhaust the stack.
        static let maximumDepth = 100

        func parser(
            _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?,
            attributes: [String: String] = [:]
        ) {
            guard stack.count < Self.maximumDepth else {
                failure = Failure(
                    line: parser.lineNumber, column: parser.columnNumber,
                    detail: "elements are nested more than \(Self.maximumDepth) deep")
                parser.abortParsing()
                return
            }
            let element = Element(namespace: namespaceURI ?? "", name: elementName, attributes: attributes)
            if let parent = stack.last {
                parent.append(element)
            } else {
                root = element
            }
            stack.append(element)
        }

        func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?) {
            _ = stack.popLast()
        }

        func parser(_ parser: XMLParser, parseErrorOccurred parseError: any Error) {
            // The first error is where the document breaks; what follows is its echo.
            guard failure == nil else { return }
            failure = Failure(
                line: parser.lineNumber, column: parser.columnNumber, detail: XMLTree.describe(parseError, data: nil))
            parser.abortParsing()
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            stack.last?.append(text: string)
        }

        func parser(_ parser: XMLParser, foundCDATA CDATABlock: Data) {
            stack.last?.append(text: String(decoding: CDATABlock, as: UTF8.self))
        }
    }
}

extension XMLTree {
    /// An XML element as the feed readers need it: its namespace and local name (whatever
    /// prefix the document chose), its attributes, and its content in document order —
    /// character data and CDATA sections (entities decoded) between child elements.
    final class Element {
        enum Content {
            case text(String)
            case element(Element)
        }

        let namespace: String
        let name: String
        /// Attributes by qualified name as written (`href`, `xml:base`, `rdf:about`).
        let attributes: [String: String]
        fileprivate(set) var content: [Content] = []
        /// The child elements, in order.
        fileprivate(set) var children: [Element] = []

        init(namespace: String, name: String, attributes: [String: String]) {
            self.namespace = namespace
            self.name = name
            self.attributes = attributes
        }

        fileprivate func append(text: String) {
            // The parser gives a long text in many pieces: grow the last one in place
            // (copying it for each piece made a long text take quadratic time).
            guard case .text(var previous) = content.last else {
                content.append(.text(text))
                return
            }
            content.removeLast()
            previous += text
            content.append(.text(previous))
        }

        fileprivate func append(_ child: Element) {
            content.append(.element(child))
            children.append(child)
        }

        /// The first child called `name` in `namespace` (`nil`: any namespace).
        func child(_ name: String, in namespace: String? = "") -> Element? {
            children.first { $0.name == name && (namespace == nil || $0.namespace == namespace) }
        }

        /// The children called `name` in `namespace` (`nil`: any namespace).
        func children(_ name: String, in namespace: String? = "") -> [Element] {
            children.filter { $0.name == name && (namespace == nil || $0.namespace == namespace) }
        }

        /// The text of the element and all its descendants, in document order.
        var allText: String {
            content.map { part in
                switch part {
                case .text(let text): text
                case .element(let child): child.allText
                }
            }.joined()
        }

        /// The element's whole text, trimmed; `nil` when empty.
        var trimmedText: String? {
            let trimmed = allText.trimmingCharacters(in: .whitespacesAndNewlines)
            return trimmed.isEmpty ? nil : trimmed
        }
    }

    /// Namespaces feeds use.
    enum Namespace {
        static let atom = "http://www.w3.org/2005/Atom"
        static let atom03 = "http://purl.org/atom/ns#"
        static let rss10 = "http://purl.org/rss/1.0/"
        static let rdf = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
        static let dublinCore = "http://purl.org/dc/elements/1.1/"
        static let content = "http://purl.org/rss/1.0/modules/content/"
        static let media = "http://search.yahoo.com/mrss/"
        static let xhtml = "http://www.w3.org/1999/xhtml"
    }
}
