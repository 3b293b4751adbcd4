import Foundation

extension IdentifierList {
    /// Identifiers as a JSON array of integers (`[3,1,2]`, in the sequence's order), the
    /// form in which a batch of identifiers is bound to one SQL argument and read back with
    /// `json_each`.
    ///
    /// - Complexity: O(n).
    static func jsonArray<S: Sequence<Int64>>(_ identifiers: S) -> String {
        // Digits written into one byte buffer: no string per identifier.
        var bytes: [UInt8] = [UInt8(ascii: "[")]
        bytes.reserveCapacity(2 + 8 * identifiers.underestimatedCount)
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes: a 64-bit integer has at most 20 digits
        for id in identifiers {
            if bytes.count > 1 { bytes.append(UInt8(ascii: ",")) }
            if id < 0 { bytes.append(UInt8(ascii: "-")) }
            var magnitude = id.magnitude
            withUnsafeMutableBytes(of: &digits) { buffer in
                var end = buffer.count
                repeat {
                    end -= 1
                    buffer[end] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                    magnitude /= 10
                } while magnitude > 0
                bytes.append(contentsOf: buffer[end...])
            }
        }
        bytes.append(UInt8(ascii: "]"))
        return String(decoding: bytes, as: UTF8.self)
    }
}
