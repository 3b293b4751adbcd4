import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Decoding bytes in a ``TextEncoding``.
extension TextEncoding {
    /// The text of `bytes`, decoded as the Encoding Standard's "decode" does: a byte order
    /// mark (UTF-8, UTF-16BE, UTF-16LE) decides over the encoding and is dropped, then the
    /// encoding's decoder reads the rest.
    ///
    /// Bytes that are not characters of the encoding make it `nil` (the standard's "fatal"
    /// error mode), as does an encoding this system cannot decode — with two exceptions the
    /// standard defines: the `replacement` encoding reads any bytes as one U+FFFD, and
    /// x-user-defined reads every byte.
    func decode(_ bytes: some Collection<UInt8>) -> String? {
        let bytes = Array(bytes)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { return TextEncoding.utf8.decodeWithoutMark(bytes[3...]) }
        if bytes.starts(with: [0xFE, 0xFF]) { return TextEncoding.utf16BE.decodeWithoutMark(bytes[2...]) }
        if bytes.starts(with: [0xFF, 0xFE]) { return TextEncoding.utf16LE.decodeWithoutMark(bytes[2...]) }
        return decodeWithoutMark(bytes[...])
    }

    /// The text of `bytes` in this encoding, a leading byte order mark read as a character;
    /// `nil` for bytes that are not characters of the encoding.
    func decodeWithoutMark(_ bytes: ArraySlice<UInt8>) -> String? {
        switch self {
        case .utf8: String(bytes: bytes, encoding: .utf8)
        case .utf16BE: XMLEncoding.Family.utf16BigEndian.decode(bytes)
        case .utf16LE: XMLEncoding.Family.utf16LittleEndian.decode(bytes)
        case .utf32BE: XMLEncoding.Family.utf32BigEndian.decode(bytes)
        case .utf32LE: XMLEncoding.Family.utf32LittleEndian.decode(bytes)
        case .windows1252: Self.windows1252(bytes)
        case .xUserDefined: Self.xUserDefined(bytes)
        case .replacement: bytes.isEmpty ? "" : "\u{FFFD}"
        default:
            if isSingleByte {
                Self.singleByteTables[self].flatMap { Self.decode(bytes, table: $0) }
            } else {
                systemDecode(bytes)
            }
        }
    }

    // MARK: The standard's own decoders

    /// windows-1252's characters for 0x80…0x9F; the five it leaves undefined stand for
    /// themselves (U+0081…), as in the Encoding Standard (and Windows).
    private static let windows1252High: [UInt16] = [
        0x20AC, 0x81, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x8D, 0x017D, 0x8F,
        0x90, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x9D, 0x017E,
        0x0178,
    ]

    /// windows-1252 (which decodes every byte): also how browsers read ISO-8859-1 and
    /// US-ASCII, whose feeds often hold windows-1252's quotes and dashes.
    static func windows1252(_ bytes: some Collection<UInt8>) -> String {
        // Every character is in the Basic Multilingual Plane: one UTF-16 code unit a byte.
        String(decoding: bytes.map { (0x80...0x9F).contains($0) ? windows1252High[Int($0) - 0x80] : UInt16($0) }, as: UTF16.self)
    }

    /// x-user-defined: ASCII as it is, and bytes 0x80…0xFF as U+F780…U+F7FF (private use).
    static func xUserDefined(_ bytes: some Collection<UInt8>) -> String {
        String(decoding: bytes.map { $0 < 0x80 ? UInt16($0) : 0xF780 + UInt16($0 - 0x80) }, as: UTF16.self)
    }

    // MARK: Single-byte encodings, by table

    /// A single-byte encoding's character for each byte; `nil` for a byte it leaves undefined.
    typealias ByteTable = [Unicode.Scalar?]

    /// The table of each single-byte encoding this system decodes, read once from the
    /// system's decoder (one byte at a time), with the standard's ``standardOverrides`` and
    /// C1 controls (``fillsC1Controls``).
    static let singleByteTables: [TextEncoding: ByteTable] = {
        var tables: [TextEncoding: ByteTable] = [:]
        for encoding in TextEncoding.allCases where encoding.isSingleByte {
            if encoding == .windows1252 || encoding == .xUserDefined { continue }
            // An encoding the system cannot decode decodes not even "A".
            guard encoding.systemDecode([0x41]) == "A" else { continue }
            var table: ByteTable = (0..<256).map { byte in
                encoding.systemDecode([UInt8(byte)]).flatMap { $0.unicodeScalars.count == 1 ? $0.unicodeScalars.first : nil }
            }
            for byte in 0x80...0x9F where table[byte] == nil && encoding.fillsC1Controls {
                table[byte] = Unicode.Scalar(UInt8(byte))
            }
            for (byte, scalar) in encoding.standardOverrides { table[Int(byte)] = scalar }
            tables[encoding] = table
        }
        return tables
    }()

    /// `bytes` through a byte table; `nil` when one of them is undefined.
    static func decode(_ bytes: some Collection<UInt8>, table: ByteTable) -> String? {
        var scalars = String.UnicodeScalarView()
        for byte in bytes {
            guard let scalar = table[Int(byte)] else { return nil }
            scalars.append(scalar)
        }
        return String(scalars)
    }

    // MARK: The system's decoders

    /// The text of `bytes` as the system decodes this encoding: iconv where there is glibc,
    /// CoreFoundation elsewhere; `nil` for invalid bytes or an encoding it does not know.
    func systemDecode(_ bytes: some Collection<UInt8>) -> String? {
        #if canImport(Glibc)
        guard let iconvName else { return nil }
        return Iconv.decode(Array(bytes), from: iconvName)
        #else
        guard let coreFoundationEncoding else { return nil }
        return String(bytes: bytes, encoding: Self.foundationEncoding(coreFoundationEncoding))
        #endif
    }

    #if !canImport(Glibc)
    /// The Foundation encoding of a CoreFoundation one.
    static func foundationEncoding(_ encoding: UInt32) -> String.Encoding {
        #if canImport(Darwin)
        String.Encoding(rawValue: CFStringConvertEncodingToNSStringEncoding(encoding))
        #else
        // As CoreFoundation numbers the encodings it has no NSStringEncoding for.
        String.Encoding(rawValue: 0x8000_0000 | UInt(encoding))
        #endif
    }
    #endif
}

#if canImport(Glibc)
/// glibc's iconv, decoding to UTF-8.
enum Iconv {
    /// How many bytes of output one call to `iconv` may write.
    static let chunkSize = 64 << 10

    /// The text of `bytes` in the encoding iconv calls `name`; `nil` when iconv does not
    /// know it, or when the bytes are not characters of it (invalid, or cut short at the end).
    static func decode(_ bytes: [UInt8], from name: String) -> String? {
        let descriptor = iconv_open("UTF-8", name)
        guard let descriptor, descriptor != UnsafeMutableRawPointer(bitPattern: -1) else { return nil }
        defer { iconv_close(descriptor) }
        guard !bytes.isEmpty else { return "" }
        var input = bytes
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count * 2)
        var chunk = [UInt8](repeating: 0, count: chunkSize)
        let complete = input.withUnsafeMutableBufferPointer { inputBuffer in
            chunk.withUnsafeMutableBufferPointer { chunkBuffer in
                var inputPointer = UnsafeMutableRawPointer(inputBuffer.baseAddress).map {
                    $0.assumingMemoryBound(to: CChar.self)
                }
                var inputLeft = inputBuffer.count
                var flushed = false
                while !flushed {
                    var outputPointer = UnsafeMutableRawPointer(chunkBuffer.baseAddress).map {
                        $0.assumingMemoryBound(to: CChar.self)
                    }
                    var outputLeft = chunkBuffer.count
                    // Once the input is read, one more call with none writes what a
                    // stateful encoding still holds.
                    let finishing = inputLeft == 0
                    let result =
                        finishing
                        ? iconv(descriptor, nil, nil, &outputPointer, &outputLeft)
                        : iconv(descriptor, &inputPointer, &inputLeft, &outputPointer, &outputLeft)
                    let failure = result == -1 ? errno : 0
                    output.append(contentsOf: chunkBuffer[0..<(chunkBuffer.count - outputLeft)])
                    if result != -1 {
                        flushed = finishing
                    } else if failure != E2BIG {
                        // EILSEQ: not a character; EINVAL: a character cut short at the end.
                        return false
                    }
                }
                return true
            }
        }
        return complete ? String(decoding: output, as: UTF8.self) : nil
    }
}
#endif
