import Foundation

extension SectionCache {
    /// Why a cache's section key is not the one wanted: for day sections whose time zone
    /// changed, which (`time zone differs (Europe/Paris, now America/New_York)`), or that
    /// the zone's rules did (`time zone rules differ (Europe/Paris)`: a new time-zone
    /// database); otherwise `section key differs`.
    ///
    /// The fingerprints hold the zone as `zone(identifier count digest)`
    /// (``DayZone/fingerprint``), since the zone's transitions are not in the SQL.
    static func sectionKeyDifference(_ stored: String, _ wanted: String) -> String {
        guard let old = zone(in: stored), let new = zone(in: wanted) else { return "section key differs" }
        let oldName = old.split(separator: " ").first.map(String.init) ?? old
        let newName = new.split(separator: " ").first.map(String.init) ?? new
        if !oldName.hasSameBytes(as: newName) { return "time zone differs (\(oldName), now \(newName))" }
        if !old.hasSameBytes(as: new) { return "time zone rules differ (\(newName))" }
        return "section key differs"
    }

    /// The `identifier count digest` of a fingerprint's `day=zone(…)`, if it has one.
    private static func zone(in fingerprint: String) -> String? {
        guard let start = fingerprint.range(of: " day=zone("),
            let end = fingerprint[start.upperBound...].range(of: ")")
        else { return nil }
        return String(fingerprint[start.upperBound..<end.lowerBound])
    }
}
