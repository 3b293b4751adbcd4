import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// Reads a whole XML document into ``XMLTree/Element``s with Foundation's `XMLParser`
/// (FoundationXML on Linux): namespaces resolved, external entities never loaded.
enum XMLTree {
    /// The root element.
    ///
    /// - Throws: ``FeedLoaderError/malformedXML(source:line:column:detail:)`` with where
    ///   and why the document breaks.
    static func parse(_ data: Data, source: String) throws -> Element {
        let parser = XMLParser(data: data)
        parser.shouldProcessNamespaces = true
        parser.shouldReportNamespacePrefixes = false
        parser.shouldResolveExternalEntities = false
        let builder = Builder()
        parser.delegate = builder
        let ok = parser.parse()
        if let failure = builder.failure {
            throw FeedLoaderError.malformedXML(
                source: source, line: failure.line, column: failure.column, detail: failure.detail)
        }
        guard ok, let root = builder.root else {
            throw FeedLoaderError.malformedXML(
                source: source, line: parser.lineNumber, column: parser.columnNumber,
                detail: describe(parser.parserError, data: data))
        }
        return root
    }

    /// What libxml2's error codes mean, in words.
    static func describe(_ error: (any Error)?, data: Data) -> String {
        if data.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) { return "the document is empty" }
        guard let error else { return "the document has no root element" }
        let code = (error as NSError).code
        switch XMLParser.ErrorCode(rawValue: code) {
        case .tagNameMismatchError: return "an end tag does not match its start tag"
        case .undeclaredEntityError, .entityNotFinishedError, .entityRefAtEOFError, .entityRefInDTDError,
            .entityRefLoopError, .entityBoundaryError, .entityIsExternalError, .entityIsParameterError,
            .entityReferenceMissingSemiError, .entityReferenceWithoutNameError, .unparsedEntityError:
            return "a character or entity reference is not valid XML (HTML names such as &nbsp; are not XML)"
        case .prematureDocumentEndError, .ltRequiredError, .gtRequiredError, .notWellBalancedError:
            return "the document ends before its elements are closed"
        case .emptyDocumentError, .documentStartError: return "the document does not start as XML"
        case .lessThanSymbolInAttributeError: return "an attribute value contains “<”"
        case .attributeNotStartedError, .attributeNotFinishedError,
            .attributeRedefinedError, .literalNotStartedError, .literalNotFinishedError:
            return "an attribute is malformed"
        case .invalidCharacterError, .invalidCharacterRefError, .invalidCharacterInEntityError:
            return "the document contains a character XML does not allow"
        case .namespaceDeclarationError: return "a namespace prefix is used but not declared"
        case .xmlDeclNotFinishedError, .xmlDeclNotStartedError: return "the XML declaration is malformed"
        case .extraContentError: return "there is content after the root element"
        case .unfinishedTagError, .nameRequiredError: return "a tag is malformed"
        case .delegateAbortedParseError: return "the document is too deeply nested"
        default:
            let text = (error as NSError).localizedDescription
            return "error \(code)" + (text.isEmpty || text.contains("error \(code)") ? "" : ": \(text)")
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
        static let maximumDepth = 256

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
            if case .text(let previous) = content.last {
                content[content.count - 1] = .text(previous + text)
            } else {
                content.append(.text(text))
            }
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
